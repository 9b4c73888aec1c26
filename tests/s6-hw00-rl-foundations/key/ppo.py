"""The answer key of the part `ppo` (instructor only: the student's copy holds none of it; grader.key)."""
import numpy as np


def deltas_oracle(rewards, values, last_value, gamma):
    r, v = np.asarray(rewards, float), np.asarray(values, float)
    return np.array([r[t] + gamma * (v[t + 1] if t + 1 < len(v) else last_value) - v[t] for t in range(len(r))])


def td_mistakes(rewards, values, last_value, gamma):
    """What typical wrong td_errors return for these arguments."""
    r, v = np.asarray(rewards, float), np.asarray(values, float)
    nxt = np.append(v[1:], last_value)
    return {"γ не умножен на V(s_{t+1})": r + nxt - v,
            "знак перевёрнут: V(s_t) − r_t − γV(s_{t+1})": v - r - gamma * nxt,
            "следующая ценность взята со сдвигом не в ту сторону (V(s_{t−1}) вместо V(s_{t+1}))":
                r + gamma * np.append(last_value, v[:-1]) - v,
            "last_value проигнорирован: после последнего шага всегда 0": r + gamma * np.append(v[1:], 0.0) - v}
