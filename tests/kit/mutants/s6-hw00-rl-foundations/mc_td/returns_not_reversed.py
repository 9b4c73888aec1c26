"""Returns computed from the end of the episode and appended to a list that is never reversed: G comes out
in reverse order (G_{T−1}, …, G_0)."""
BREAKS = "discounted_returns"
NAMED_BY = ["отдачи в обратном порядке"]
import numpy as np


def discounted_returns(rewards, gamma):
    out, running = [], 0.0
    for r in reversed(list(rewards)):
        running = float(r) + gamma * running
        out.append(running)  # the mistake: out[::-1] is never taken
    return np.array(out)


