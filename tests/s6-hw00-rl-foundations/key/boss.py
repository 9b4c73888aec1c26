"""The answer key of the part `boss` (instructor only: the student's copy holds none of it; grader.grading.key).

Oracles written differently from the reference (per-answer loops, GAE as the explicit sum Σ(γλ)^l δ_{t+l}, the
scatter of ppo_update as a dense one-hot matrix product), the replays of typical mistakes that name them, and, for
the checks that run only in the grade, the audit of one run of the student's train (every batch and update
recomputed by the key's rule from the student's own draws, the draws tested against the policy that made them) and
the replays of what the student's own code did (GRPO's train, sample_answers on a random policy).
"""
import math

import numpy as np

# ---- log_softmax and sampling -------------------------------------------------------------------------------


def log_softmax_oracle(z):
    """z − log Σ exp(z) with NumPy's log-add-exp reduction: finite where a probability underflows to 0 in float64
    (log π < −745)."""
    z = np.asarray(z, float)
    return z - np.logaddexp.reduce(z, axis=-1, keepdims=True)


def chosen_logp(logits, actions):
    """log π(a | s) of the given tokens under softmax(logits) (to build the inputs of a check)."""
    return np.take_along_axis(log_softmax_oracle(logits), np.asarray(actions, int)[..., None], -1)[..., 0]


def softmax_probs(logits):
    return np.exp(log_softmax_oracle(logits))


def _replay_sample(theta, w, ref, prompts, tokens, eos, bos):
    """What a batch must hold once its tokens are known: mask, lengths, prev, logp, ref_logp, values and the
    values a typical mistake gives."""
    tokens = np.asarray(tokens).astype(int)
    prompts = np.asarray(prompts, int)
    B, L = tokens.shape
    exp_mask = np.ones((B, L))
    for i in range(B):
        ends = np.flatnonzero(tokens[i] == eos)
        if len(ends):
            exp_mask[i, ends[0] + 1:] = 0.0
    has_eos = (tokens == eos).any(axis=1)
    exp_prev = np.full((B, L), eos)
    exp_prev[:, 0] = bos
    exp_prev[:, 1:] = np.where(exp_mask[:, 1:] > 0, tokens[:, :-1], eos)
    where = (prompts[:, None], np.arange(L)[None, :], exp_prev)
    own_all = np.take_along_axis(log_softmax_oracle(theta[where]), tokens[..., None], -1)[..., 0]
    ref_all = np.take_along_axis(log_softmax_oracle(ref[where]), tokens[..., None], -1)[..., 0]
    pad = exp_mask == 0
    return {"mask": exp_mask, "mask_without_eos": exp_mask * (tokens != eos),
            "lengths": exp_mask.sum(axis=1), "lengths_without_eos": exp_mask.sum(axis=1) - has_eos,
            "lengths_argmax": np.where(has_eos, exp_mask.sum(axis=1), 1),
            "prev": exp_prev * exp_mask, "prev_bos": bos * exp_mask, "prev_self": tokens * exp_mask,
            "logp": own_all * exp_mask, "ref_logp": ref_all * exp_mask, "values": w[where] * exp_mask,
            "logp_pad": own_all[pad], "ref_logp_pad": ref_all[pad], "values_pad": w[where][pad]}


def forced_lengths(forced, eos, bos):
    """The length of the answer each prompt gets when state (p, t, prev) always gives forced[p, t, prev]
    (L + 1: cut off without EOS)."""
    forced = np.asarray(forced, int)
    out = []
    for p in range(forced.shape[0]):
        prev, n = bos, forced.shape[1] + 1
        for t in range(forced.shape[1]):
            if forced[p, t, prev] == eos:
                n = t + 1
                break
            prev = forced[p, t, prev]
        out.append(n)
    return out


def sample_forced(theta, w, ref, prompts, eos, bos):
    """The batch sample_answers must return when every state has one token of probability 1 − 1e-20 (the policy
    is deterministic, so every correct sampler draws the same answers): the tokens and what they imply."""
    theta, prompts = np.asarray(theta, float), np.asarray(prompts, int)
    B, L = len(prompts), theta.shape[1]

    def follow(update_prev):
        tokens = np.full((B, L), eos)
        for i, p in enumerate(prompts):
            prev = bos
            for t in range(L):
                a = int(np.argmax(theta[p, t, prev]))
                tokens[i, t] = a
                if a == eos:
                    break
                prev = a if update_prev else bos
        return tokens

    tokens = follow(True)
    out = _replay_sample(theta, np.asarray(w, float), np.asarray(ref, float), prompts, tokens, eos, bos)
    return {"tokens": tokens * out["mask"], "tokens_prev_bos": follow(False) * out["mask"], **out}


def sample_replay(theta, w, ref, prompts, tokens, eos, bos):
    """Grade only: what the batch must hold given the tokens the student's sample_answers drew."""
    return _replay_sample(np.asarray(theta, float), np.asarray(w, float), np.asarray(ref, float), prompts, tokens,
                          eos, bos)


# ---- per-token rewards ------------------------------------------------------------------------------------


def rewards_oracle(scores, logp, ref_logp, mask, beta):
    out = np.zeros(np.shape(mask))
    for b in range(out.shape[0]):
        n = int(round(np.sum(mask[b])))
        for t in range(n):
            out[b, t] = -beta * (logp[b, t] - ref_logp[b, t])
        out[b, n - 1] += scores[b]
    return out


def reward_sums(scores, logp, ref_logp, mask, beta):
    """Σ_t r_t of each answer: its score minus β·Σ(log π − log π_ref) over its tokens."""
    return np.array([scores[b] - beta * sum(logp[b, t] - ref_logp[b, t] for t in range(len(mask[b])) if mask[b, t])
                     for b in range(len(scores))])


def rewards_variant(scores, logp, ref_logp, mask, beta, *, kl="diff", at="last", assign=False, on_padding=False):
    """A typical wrong token_rewards, to name it: another per-token KL estimate, the score elsewhere or written
    with `=` over the penalty, the penalty left on the padding."""
    mask = np.asarray(mask, float)
    d = np.asarray(logp, float) - np.asarray(ref_logp, float)
    per_token = {"diff": d, "k3": np.exp(-d) + d - 1, "k3_swapped": np.exp(d) - d - 1, "abs": np.abs(d)}[kl]
    out = -beta * per_token * (1.0 if on_padding else mask)
    L = out.shape[1]
    for b in range(len(out)):
        n = int(round(mask[b].sum()))
        for t in {"last": [n - 1], "first": [0], "L-1": [L - 1], "every": range(n)}[at]:
            out[b, t] = scores[b] if assign else out[b, t] + scores[b]
    return out


def reward_mistakes(scores, logp, ref_logp, mask, beta):
    def v(**kw):
        return rewards_variant(scores, logp, ref_logp, mask, kw.pop("beta", beta), **kw)
    k3 = ("KL-штраф посчитан оценкой k3 = exp(Δ) − Δ − 1 (Δ = {}), "
          "а в награде InstructGPT — сама разность log π − log π_ref")
    return {"оценка RM записана поверх KL-штрафа последнего токена (= вместо +=), а не прибавлена к нему":
                v(assign=True),
            k3.format("log π_ref − log π"): v(kl="k3"),
            k3.format("log π − log π_ref"): v(kl="k3_swapped"),
            "KL-штраф посчитан по |log π − log π_ref|, а не по самой разности (она бывает и отрицательной)":
                v(kl="abs"),
            "оценка на первом токене ответа": v(at="first"),
            "знак KL-штрафа перевёрнут": v(beta=-beta),
            "оценка всегда на последней позиции L − 1, а не на последнем настоящем токене ответа": v(at="L-1"),
            "KL-штраф начислен и на паддинге": v(on_padding=True),
            "оценка RM прибавлена к каждому токену ответа": v(at="every")}


# ---- token GAE ----------------------------------------------------------------------------------------------


def gae_oracle(rewards, values, mask, gamma, lam):
    """Per answer: δ with V = 0 after the last token, then Â_t = Σ_l (γλ)^l δ_{t+l} as one matrix product."""
    B, L = np.shape(mask)
    lam = np.broadcast_to(np.asarray(lam, float), (B,))
    adv = np.zeros((B, L))
    for b in range(B):
        n = int(round(np.sum(mask[b])))
        r, v = np.asarray(rewards[b][:n], float), np.asarray(values[b][:n], float)
        delta = r + gamma * np.append(v[1:], 0.0) - v
        k = np.arange(n)
        power = k[None, :] - k[:, None]
        weights = np.where(power >= 0, (gamma * lam[b]) ** np.clip(power, 0, None), 0.0)
        adv[b, :n] = weights @ delta
    return adv, adv + np.asarray(values, float) * np.asarray(mask, float)


def gae_mistakes(rewards, values, mask, gamma, lam, defaults=False):
    """Typical wrong token GAE advantages, each computed per answer: the value is only used to name a mistake;
    ``defaults``: also γ and λ left at their defaults."""
    rewards, values, mask = np.asarray(rewards, float), np.asarray(values, float), np.asarray(mask, float)
    B, L = mask.shape
    forward, boot, no_next = np.zeros((B, L)), np.zeros((B, L)), np.zeros((B, L))
    for b in range(B):
        n = int(round(mask[b].sum()))
        r, v = rewards[b, :n], values[b, :n]
        nxt = np.append(v[1:], 0.0)
        delta = r + gamma * nxt - v
        running = 0.0
        for t in range(n):  # the recursion run from the start of the answer
            running = delta[t] + gamma * lam * running
            forward[b, t] = running
        boot_next = np.append(v[1:], values[b, n] if n < L else 0.0)  # V of the padding after the last token
        no_next[b, :n] = gae_oracle((r - v)[None], np.zeros((1, n)), np.ones((1, n)), gamma, lam)[0][0]
        boot[b, :n] = gae_oracle((r + gamma * (boot_next - nxt))[None], v[None], np.ones((1, n)), gamma, lam)[0][0]
    out = {"λ не входит в рекурсию: Â_t = δ_t + γ·Â_{t+1}": gae_oracle(rewards, values, mask, gamma, 1.0)[0],
           "γ и λ перепутаны местами": gae_oracle(rewards, values, mask, lam, gamma)[0],
           "в δ_t нет γ·V(s_{t+1}): δ_t = r_t − V(s_t)": no_next,
           "в рекурсии награды вместо δ: Â_t = r_t + γλ·Â_{t+1}": gae_oracle(rewards, 0 * values, mask, gamma, lam)[0],
           "GAE не остановлен на конце ответа: в преимущества утекает паддинг":
               gae_oracle(rewards, values, np.ones((B, L)), gamma, lam)[0] * mask,
           "последний токен бутстрапит V паддинга, а не V = 0": boot,
           "рекурсия идёт с начала ответа, а не с конца": forward}
    if defaults:
        out["γ и λ не переданы дальше: взяты значения по умолчанию γ = 1, λ = 0.95"] = \
            gae_oracle(rewards, values, mask, 1.0, 0.95)[0]
    return out


def gae_returns_mistakes(rewards, values, mask, gamma, lam):
    adv, _ = gae_oracle(rewards, values, mask, gamma, lam)
    return {"returns = advantages, без + V(s_t)": adv,
            "returns на паддинге не обнулены (мусор из values)": adv + np.asarray(values, float),
            "returns — сумма наград до конца ответа (Монте-Карло), а не Â + V":
                gae_oracle(rewards, values, mask, gamma, 1.0)[1]}


# ---- advantage normalization --------------------------------------------------------------------------------


def normalize_oracle(x, mask):
    x, mask = np.asarray(x, float), np.asarray(mask, float)
    real = [x[idx] for idx in np.ndindex(x.shape) if mask[idx] > 0]
    mean = sum(real) / len(real)
    std = math.sqrt(sum((r - mean) ** 2 for r in real) / len(real))
    return np.where(mask > 0, (x - mean) / (std + 1e-8), 0.0)


def normalize_mistakes(x, mask):
    real = x[mask > 0]
    rows = []
    for row, m in zip(x, mask):  # each answer normalized on its own
        sel = row[m > 0]
        rows.append(np.where(m > 0, (row - sel.mean()) / (sel.std() + 1e-8), 0.0))
    return {"нормировали по всем позициям, вместе с паддингом": (x - x.mean()) / x.std() * mask,
            "std с ddof = 1": (x - real.mean()) / real.std(ddof=1) * mask,
            "на паддинге не 0: результат не умножен на mask": (x - real.mean()) / real.std(),
            "mean и std — по каждому ответу отдельно, а не по всем настоящим токенам мини-батча": np.array(rows)}


# ---- hand-written gradients ---------------------------------------------------------------------------------


def finite_diff(f, x, h=1e-6):
    x = np.array(x, float)
    grad = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[idx] += h
        down[idx] -= h
        grad[idx] = (f(up) - f(down)) / (2 * h)
    return grad


def policy_loss_oracle(logits, actions, logp_old, adv, mask, eps, c_e, *, use_max=False, inverted=False,
                       per_position=False):
    """Loss only (no gradient), token by token. The keywords replay typical mistakes, to name them: max instead of
    min, ρ = π_old/π_θ, the sum divided by every position instead of the number of real tokens."""
    logp_all = log_softmax_oracle(logits)
    flat = [(idx, logp_all[idx]) for idx in np.ndindex(np.shape(mask)) if mask[idx] > 0]
    total_obj, total_h = 0.0, 0.0
    for idx, lp in flat:
        ratio = math.exp((-1 if inverted else 1) * (lp[actions[idx]] - logp_old[idx]))
        a = adv[idx]
        if use_max:
            total_obj += max(ratio * a, min(max(ratio, 1 - eps), 1 + eps) * a)
        else:
            g = (1 + eps) * a if a >= 0 else (1 - eps) * a  # Spinning Up's g(ε, A)
            total_obj += min(ratio * a, g)
        total_h += -float(np.sum(np.exp(lp) * lp))
    return -(total_obj + c_e * total_h) / (np.size(mask) if per_position else len(flat))


def policy_loss_mistakes(logits, actions, logp_old, adv, mask, eps, c_e):
    def loss_as(**kw):
        return policy_loss_oracle(logits, actions, logp_old, adv, mask, kw.pop("eps", eps), kw.pop("c_e", c_e), **kw)
    return {"энтропийный бонус прибавлен к loss, а не вычтен": loss_as(c_e=-c_e),
            "нет энтропийного бонуса": loss_as(c_e=0.0),
            "без клиппинга: −mean(ρ·Â)": loss_as(eps=1e9),
            "max вместо min в клиппированной цели": loss_as(use_max=True),
            "ρ перевёрнуто: π_old/π_θ вместо π_θ/π_old": loss_as(inverted=True),
            "сумма поделена на все позиции (B·L), а не на число настоящих токенов n": loss_as(per_position=True),
            "знак loss перевёрнут: вернули цель для максимизации, а loss — это −цель": -loss_as()}


def policy_loss_fd(logits, actions, logp_old, adv, mask, eps, c_e):
    """∂L/∂logits by central finite differences of the loss oracle."""
    return finite_diff(lambda z: policy_loss_oracle(z, actions, logp_old, adv, mask, eps, c_e), logits)


def policy_grad_mistakes(logits, actions, logp_old, adv, mask, eps, c_e):
    """Typical wrong hand-written gradients of policy_loss, written out analytically: only to name a mistake
    (the check itself compares with finite differences)."""
    logits, mask = np.asarray(logits, float), np.asarray(mask, float)
    logp_all = log_softmax_oracle(logits)
    pi = np.exp(logp_all)
    onehot = np.eye(logits.shape[-1])[np.asarray(actions, int)]
    logp = (logp_all * onehot).sum(axis=-1)
    ratio = np.exp(logp - logp_old)
    active = ratio * adv <= np.clip(ratio, 1 - eps, 1 + eps) * adv  # min picks the unclipped branch
    entropy = -(pi * logp_all).sum(axis=-1)
    n = mask.sum()

    def grad(d_logp, d_entropy_term, dlogp_dz=onehot - pi):
        return (-(mask * d_logp)[..., None] * dlogp_dz + c_e * mask[..., None] * d_entropy_term) / n

    right_ent = pi * (logp_all + entropy[..., None])
    right = grad(active * ratio * adv, right_ent)
    return {"градиент клиппированной ветки не обнулён": grad(ratio * adv, right_ent),
            "в градиенте цели Â вместо ρ·Â: ∂(ρ·Â)/∂log π = ρ·Â": grad(active * adv, right_ent),
            "знак градиента перевёрнут: это градиент цели, а loss — цель с минусом": -right,
            "∂log π(a)/∂z взят как onehot(a), без − π": grad(active * ratio * adv, right_ent, onehot),
            "у градиента энтропийного бонуса обратный знак": grad(active * ratio * adv, -right_ent),
            "в градиенте энтропии потеряно + H: −∂H/∂z = π·(log π + H)": grad(active * ratio * adv, pi * logp_all),
            "градиент поделён на все позиции, а не на число настоящих токенов": right * n / mask.size}


def clip_case_mistakes(ratio, adv, d_obj, pi_chosen, n):
    """The lesson's five clipping cases: ∂L/∂z of the chosen token as typical mistakes give it."""
    ratio, adv, d_obj = (np.asarray(x, float) for x in (ratio, adv, d_obj))
    moved = (d_obj != 0).astype(float)
    return {"градиент клиппированной ветки не обнулён": -ratio * adv * (1 - pi_chosen) / n,
            "в градиенте цели Â вместо ρ·Â: ∂(ρ·Â)/∂log π = ρ·Â": -moved * adv * (1 - pi_chosen) / n,
            "знак градиента перевёрнут": d_obj * (1 - pi_chosen) / n}


def critic_oracle(values, returns, mask, c_v):
    real = np.asarray(mask) > 0
    return c_v * float(np.mean((np.asarray(values)[real] - np.asarray(returns)[real]) ** 2))


def critic_loss_mistakes(values, returns, mask, c_v):
    right, n = critic_oracle(values, returns, mask, c_v), np.sum(mask)
    return {"усреднили по всем позициям, вместе с паддингом": c_v * np.mean(((values - returns) * mask) ** 2),
            "нет множителя c_v": right / c_v,
            "сумма без деления на n": right * n,
            "0.5·c_v·mean((V − R̂)²): лишняя половина": right / 2}


def critic_fd(values, returns, mask, c_v):
    return finite_diff(lambda v: critic_oracle(v, returns, mask, c_v), values)


def critic_grad_mistakes(values, returns, mask, c_v):
    fd, n = critic_fd(values, returns, mask, c_v), np.sum(mask)
    return {"потерян множитель 2": fd / 2,
            "знак градиента перевёрнут: 2(R̂ − V) вместо 2(V − R̂)": -fd,
            "c_v не входит в градиент": fd / c_v,
            "градиент поделён на все позиции, а не на число настоящих токенов": fd * n / np.size(mask)}


# ---- Adam -------------------------------------------------------------------------------------------------


def _adam(param, grad, m, v, t, lr):
    m = 0.9 * m + 0.1 * grad
    v = 0.999 * v + 0.001 * grad ** 2
    return param - lr * (m / (1 - 0.9 ** t)) / (np.sqrt(v / (1 - 0.999 ** t)) + 1e-8), m, v


def adam_first_step(param, grad, lr):
    """The first Adam step from zero moments, its moments, and what typical mistakes give."""
    param, g = np.asarray(param, float), np.asarray(grad, float)
    p1, m1, v1 = _adam(param, g, np.zeros_like(g), np.zeros_like(g), 1, lr)
    return {"param": p1, "m": m1, "v": v1, "m_hat": g, "v_hat": g ** 2,
            "mistakes": {"нет поправки смещения (1 − β^t)":
                             param - lr * 0.1 * g / (np.sqrt(0.001) * np.abs(g) + 1e-8),
                         "eps под корнем: √(v̂ + eps) вместо √v̂ + eps": param - lr * g / np.sqrt(g ** 2 + 1e-8),
                         "поправка смещения только у m, а v не поправлен":
                             param - lr * g / (np.sqrt(0.001) * np.abs(g) + 1e-8),
                         "поправка смещения только у v, а m не поправлен": param - lr * 0.1 * g / (np.abs(g) + 1e-8),
                         "шаг в сторону градиента: param + lr·m̂/(√v̂ + eps), а Adam здесь минимизирует":
                             param + lr * g / (np.abs(g) + 1e-8),
                         "обычный SGD вместо Adam": param - lr * g}}


def adam_steps(grads, lr, b1=0.9, b2=0.999, eps=1e-8):
    """The parameter after len(grads) steps from zero, by the closed form of the moments after t steps:
    m_t = (1 − β1)·Σ_k β1^{t−k} g_k, same for v."""
    p = np.zeros_like(np.asarray(grads[0], float))
    for t in range(1, len(grads) + 1):
        m = (1 - b1) * sum(b1 ** (t - k) * grads[k - 1] for k in range(1, t + 1))
        v = (1 - b2) * sum(b2 ** (t - k) * grads[k - 1] ** 2 for k in range(1, t + 1))
        p = p - lr * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps)
    return p


# ---- the PPO update ------------------------------------------------------------------------------------------


def update_oracle(theta, w, batch, seed, opt, lr, n_epochs, n_minibatches, eps, c_v, c_e, *, algo="ppo", beta=0.02,
                  old="logp", norm=None, entropy=None, kl=None, learn_v=None, stale=False, stale_w=False,
                  targets="returns", scatter="dense", shuffle="every_epoch", t_start=None, t_lag=0):
    """Replays ppo_update: the scatter into the tables is a dense one-hot matrix product.

    ``algo="grpo"`` (the bonus), by the rule of ppo_update's docstring: the same epochs, minibatches and Adam, but
    Â as the batch holds it (no normalisation), the loss of grpo_policy_loss with weight β on the KL estimate
    k3 = π_ref/π_θ − log(π_ref/π_θ) − 1 of each real token and no entropy bonus, and no critic (w and its moments
    returned as they came, value_loss 0). ``norm``, ``entropy``, ``kl`` and ``learn_v`` are the defaults of ``algo``
    unless given: GRPO's typical mistakes (the PPO loss for GRPO, no KL term, Â normalised again, a critic trained).

    Returns the tables, the Adam state and the stats, and also the stats as they would be if computed after each
    Adam step, taken from the last minibatch only, or counted over every position (padding included), to name those
    mistakes. The keywords replay typical mistakes: ``old`` ("ref_logp": ρ against π_ref; "recompute": logp_old
    recomputed from the current table, so ρ = 1), ``norm`` ("once" over the whole batch; "none"), ``stale`` (logits
    and V from the tables passed in, not the current ones), ``stale_w`` (only V), ``targets="adv"`` (the critic
    regresses onto Â), ``scatter="assign"`` (``g[idx] += d``: a repeated state keeps one contribution), ``shuffle``
    ("once" for every epoch; "none"), ``t_start`` (Adam's counter from this value, not opt["t"]), ``t_lag=1``
    (adam_step given the counter before it is advanced).
    """
    grpo = algo == "grpo"
    norm = ("none" if grpo else "minibatch") if norm is None else norm
    entropy = (not grpo) if entropy is None else entropy  # the entropy bonus c_e·H: PPO's loss only
    kl = grpo if kl is None else kl  # −β·k3 in the objective: GRPO's loss only
    learn_v = (not grpo) if learn_v is None else learn_v  # the critic's loss and its Adam step: PPO only
    c_e = c_e if entropy else 0.0
    P, L, NP, V = theta.shape
    th0, wv0 = theta.reshape(-1, V).copy(), w.reshape(-1).copy()
    th, wv = th0.copy(), wv0.copy()
    mt, vt = opt["m_theta"].reshape(-1, V).copy(), opt["v_theta"].reshape(-1, V).copy()
    mw, vw = opt["m_w"].ravel().copy(), opt["v_w"].ravel().copy()
    step = opt["t"] if t_start is None else t_start
    mask, adv_all = batch["mask"], batch["adv"]
    if norm == "once":
        real_adv = adv_all[mask > 0]
        adv_all = (adv_all - real_adv.mean()) / (real_adv.std() + 1e-8) * mask
    state = (batch["prompt"][:, None] * L + np.arange(L)[None, :]) * NP + batch["prev"]  # [B, L]
    B = len(state)
    rng = np.random.default_rng(seed)
    perm_once = rng.permutation(B) if shuffle == "once" else None
    keys = ("clipfrac", "approx_kl", "value_loss", "clipfrac_after", "approx_kl_after", "value_loss_after",
            "clipfrac_all")
    stats = {k: [] for k in keys}
    for _ in range(n_epochs):
        order = {"none": np.arange(B), "once": perm_once}.get(shuffle)
        for idx in np.array_split(rng.permutation(B) if order is None else order, n_minibatches):
            real = mask[idx].ravel() > 0
            S = state[idx].ravel()[real]
            onehot = np.eye(P * L * NP)[S]  # [n, states]
            n = len(S)
            a = batch["tokens"][idx].ravel()[real]
            recorded = batch["logp"][idx].ravel()[real]
            A = adv_all[idx].ravel()[real]
            if norm == "minibatch":
                A = (A - A.mean()) / (A.std() + 1e-8)
            R = batch[targets][idx].ravel()[real]
            table = th0 if stale else th
            critic = wv0 if (stale or stale_w) else wv
            logp_all = log_softmax_oracle(onehot @ table)
            pi = np.exp(logp_all)
            logp = logp_all[np.arange(n), a]
            logp_old = {"logp": recorded, "ref_logp": batch["ref_logp"][idx].ravel()[real], "recompute": logp}[old]
            ratio = np.exp(logp - logp_old)
            v_pred = onehot @ critic
            every = np.exp(
                log_softmax_oracle(th[state[idx].ravel()])[np.arange(real.size), batch["tokens"][idx].ravel()]
                - batch["logp"][idx].ravel())
            stats["clipfrac"].append(np.mean(np.abs(np.exp(logp - recorded) - 1) > eps))
            stats["approx_kl"].append(np.mean(recorded - logp))
            stats["value_loss"].append(c_v * np.mean((v_pred - R) ** 2) if learn_v else 0.0)
            stats["clipfrac_all"].append(np.mean(np.abs(every - 1) > eps))
            active = ratio * A <= np.clip(ratio, 1 - eps, 1 + eps) * A
            ent = -(pi * logp_all).sum(axis=1)
            d_obj = active * ratio * A  # ∂ objective / ∂ log π_θ(a_t|s_t), token by token
            if kl:  # ∂(−β·k3)/∂log π_θ = −β·(1 − π_ref/π_θ)
                ref_over_pi = np.exp(batch["ref_logp"][idx].ravel()[real] - logp)
                d_obj = d_obj - beta * (1 - ref_over_pi)
            g_z = -d_obj[:, None] * (np.eye(V)[a] - pi) / n + c_e * pi * (logp_all + ent[:, None]) / n
            g_v = 2 * c_v * (v_pred - R) / n
            if scatter == "assign":
                G_th, G_w = np.zeros_like(th), np.zeros_like(wv)
                G_th[S] += g_z
                G_w[S] += g_v
            else:
                G_th, G_w = onehot.T @ g_z, onehot.T @ g_v
            step += 1
            th, mt, vt = _adam(th, G_th, mt, vt, step - t_lag, lr)
            if learn_v:
                wv, mw, vw = _adam(wv, G_w, mw, vw, step - t_lag, lr)
            logp_new = log_softmax_oracle(onehot @ th)[np.arange(n), a]
            stats["clipfrac_after"].append(np.mean(np.abs(np.exp(logp_new - recorded) - 1) > eps))
            stats["approx_kl_after"].append(np.mean(recorded - logp_new))
            stats["value_loss_after"].append(c_v * np.mean((onehot @ wv - R) ** 2) if learn_v else 0.0)
    out = {"theta": th.reshape(theta.shape), "w": wv.reshape(w.shape), "t": step,
           "m_theta": mt.reshape(theta.shape), "v_theta": vt.reshape(theta.shape), "m_w": mw.reshape(w.shape),
           "v_w": vw.reshape(w.shape)}
    out.update({k: float(np.mean(x)) for k, x in stats.items()})
    out.update({k + "_last": float(x[-1]) for k, x in stats.items()})
    return out


UPDATE_DEFAULTS = dict(lr=0.05, n_epochs=4, n_minibatches=4, eps=0.2, c_v=0.5, c_e=0.01)  # ppo_update's signature
DROPPED = {"lr": "lr не передан в adam_step (взят шаг 0.05)",
           "eps": "ε не передан в policy_loss (взято 0.2 по умолчанию)",
           "c_e": "c_e не передан в policy_loss (взято 0.01 по умолчанию)",
           "n_epochs": "n_epochs не используется (взято 4 эпохи)",
           "n_minibatches": "n_minibatches не используется (взято 4)",
           "c_v": "c_v не передан в critic_loss (взято 0.5 по умолчанию)"}
THETA_MISTAKES = {
    "ρ посчитано от log π_ref (batch['ref_logp']), а не от logp_old = batch['logp']": dict(old="ref_logp"),
    "logp_old пересчитан из текущей theta в каждом мини-батче: ρ всегда 1 и клиппинг не работает":
        dict(old="recompute"),
    "Â нормировано один раз по всему батчу, а не в каждом мини-батче": dict(norm="once"),
    "Â не нормировано: masked_normalize в мини-батче не вызван": dict(norm="none"),
    "логиты берутся из theta до обновления, а не из текущей таблицы": dict(stale=True),
    "градиенты сложены в таблицу через g[idx] += d, а не np.add.at: из повторов одного состояния остаётся один вклад":
        dict(scatter="assign"),
    "одна перестановка на все эпохи: перестановку ответов берут из rng один раз, а не в каждой эпохе":
        dict(shuffle="once"),
    "мини-батчи без перемешивания, по порядку ответов": dict(shuffle="none"),
    "счётчик шагов Adam начат заново с 0, а не продолжен с opt['t']": dict(t_start=0),
    "opt['t'] увеличен после шага Adam: adam_step получил номер шага на 1 меньше": dict(t_lag=1),
}
W_MISTAKES = {
    "критик учится на преимуществах batch['adv'], а не на целях batch['returns']": dict(targets="adv"),
    "V(s_t) берётся из w до обновления (или из batch['values']), а не из текущей таблицы": dict(stale_w=True),
}


GRPO_AS_PPO = ("loss PPO вместо loss GRPO: algo='grpo' не учтён — Â нормировано в мини-батче, энтропийный бонус "
               "вместо KL-слагаемого β·k3, критик учится")
GRPO_THETA_MISTAKES = {
    GRPO_AS_PPO: dict(norm="minibatch", entropy=True, kl=False, learn_v=True),
    "нет KL-слагаемого β·k3 в loss GRPO: loss GRPO без штрафа за уход от π_ref": dict(kl=False),
    "Â нормировано ещё раз в мини-батче (masked_normalize), а у GRPO преимущество группы берётся как есть":
        dict(norm="minibatch"),
    "энтропийный бонус c_e в loss GRPO: у grpo_policy_loss его нет": dict(entropy=True),
    **{name: opts for name, opts in THETA_MISTAKES.items() if "norm" not in opts},
}
GRPO_W_MISTAKES = {
    GRPO_AS_PPO: dict(norm="minibatch", entropy=True, kl=False, learn_v=True),
    "критик учится и в GRPO (critic_loss и шаг Adam для w), а у GRPO критика нет": dict(learn_v=True),
}
GRPO_DROPPED = {**{arg: name for arg, name in DROPPED.items() if arg not in ("eps", "c_e", "c_v")},
                "eps": "ε не передан в grpo_policy_loss (взято 0.2 по умолчанию)",
                "beta": "β не передан в grpo_policy_loss (взято 0.02)"}


def update_expected(theta, w, batch, seed, opt, settings):
    """What ppo_update(theta, w, batch, default_rng(seed), opt, **settings) returns (``algo="grpo"`` and ``beta`` among
    the settings: its GRPO branch), with the stats typical mistakes give (the keys ending in _after, _last, _all)."""
    return update_oracle(theta, w, batch, seed, opt, **settings)


def update_mistakes(theta, w, batch, seed, opt, settings, table):
    """The table ("theta" or "w") the typical mistakes of ppo_update give, by name (those of its GRPO branch when
    ``settings`` say ``algo="grpo"``)."""
    grpo = settings.get("algo") == "grpo"
    if table == "theta":
        variants = GRPO_THETA_MISTAKES if grpo else THETA_MISTAKES
    else:
        variants = GRPO_W_MISTAKES if grpo else W_MISTAKES
    out = {name: update_oracle(theta, w, batch, seed, opt, **{**settings, **opts})[table]
           for name, opts in variants.items()}
    defaults = {**UPDATE_DEFAULTS, "beta": 0.02}
    for arg, name in (GRPO_DROPPED if grpo else DROPPED).items():
        if settings[arg] != defaults[arg]:
            out[name] = update_oracle(theta, w, batch, seed, opt, **{**settings, arg: defaults[arg]})[table]
    return out


def update_grpo_stats_mistakes(theta, w, batch, seed, opt, settings):
    """stats["value_loss"] of GRPO's typical mistakes, by name (GRPO's own is 0: it has no critic)."""
    return {name: update_oracle(theta, w, batch, seed, opt, **{**settings, **GRPO_W_MISTAKES[name]})["value_loss"]
            for name in GRPO_W_MISTAKES}


# ---- monitoring ---------------------------------------------------------------------------------------------


def kl_entropy_oracle(logits, ref_logits, mask):
    """(KL(π ‖ π_ref) summed over each answer's tokens, mean over answers; entropy, mean over real tokens),
    state by state."""
    logits, ref_logits, mask = (np.asarray(x, float) for x in (logits, ref_logits, mask))
    B, L = mask.shape
    kl_answers, ent, n = [], 0.0, 0
    for b in range(B):
        kl_b = 0.0
        for t in range(L):
            if mask[b, t] > 0:
                lp, lq = log_softmax_oracle(logits[b, t]), log_softmax_oracle(ref_logits[b, t])
                p = np.exp(lp)
                kl_b += float(np.sum(p * (lp - lq)))
                ent += -float(np.sum(p * lp))
                n += 1
        kl_answers.append(kl_b)
    return float(np.mean(kl_answers)), ent / n


def kl_entropy_mistakes(logits, ref_logits, mask):
    """The (kl_ref, entropy) typical mistakes give: KL(π_ref ‖ π), a mean over tokens, the padding counted."""
    kl, ent = kl_entropy_oracle(logits, ref_logits, mask)
    rev, _ = kl_entropy_oracle(ref_logits, logits, mask)
    ones = np.ones(np.shape(mask))
    _, ent_all = kl_entropy_oracle(logits, ref_logits, ones)
    n_tokens = float(np.sum(mask)) / np.shape(mask)[0]
    return {"kl": {"KL(π_ref ‖ π) вместо KL(π ‖ π_ref)": rev,
                   "среднее по токенам, а не сумма по ответу": kl / n_tokens},
            "entropy": {"энтропия — сумма по ответу, а не среднее на токен": ent * n_tokens,
                        "среднее по всем позициям, вместе с паддингом": ent_all,
                        "энтропия референсной политики, а не π": kl_entropy_oracle(ref_logits, logits, mask)[1]}}


def entropy_of(logits):
    lp = log_softmax_oracle(logits)
    return -float(np.sum(np.exp(lp) * lp))


# ---- train (grade only: audits one run of the student's train) ----------------------------------------------


REPLAY_KEYS = ("score", "kl_ref", "entropy", "clipfrac", "approx_kl", "value_loss", "n_answers")


class BadDraw(Exception):
    """The student's sample_answers returned no batch of valid tokens: nothing to audit (its message says why)."""


def key_batch(theta, w, ref, prompts, tokens, eos, bos):
    """The batch sample_answers must return once its tokens are drawn, by the key's rule (the docstring's fields:
    EOS on the padding of tokens and prev, zeros elsewhere)."""
    r = _replay_sample(theta, w, ref, prompts, tokens, eos, bos)
    mask = r["mask"]
    tokens = np.where(mask > 0, np.asarray(tokens).astype(int), eos)
    return {"prompt": np.asarray(prompts, int), "tokens": tokens,
            "prev": (r["prev"] + eos * (1 - mask)).astype(int), "mask": mask,
            "lengths": mask.sum(axis=1).astype(int), "logp": r["logp"], "ref_logp": r["ref_logp"],
            "values": r["values"]}


class KeyPieces:
    """train's pieces by the key's rule, to audit one run of the student's train: the token choices are the
    student's own sample_answers' (the run's randomness, drawn with the run's rng, which the call advances), and
    everything they imply (mask, log π, rewards, GAE, monitoring, every PPO update) is recomputed here.
    ``draws``: for each batch, the log-probabilities of the policy that drew it in each state of a real token
    [n, V] and the token drawn there [n], for the test of the choices (:func:`sampling_audit`)."""

    def __init__(self, boss, lm):
        self.boss, self.lm, self.draws = boss, lm, []

    def sample_answers(self, theta, w, ref, prompts, rng):
        got = self.boss.sample_answers(theta, w, ref, prompts, rng)
        B, L, V = len(prompts), theta.shape[1], theta.shape[-1]
        tokens = np.asarray(got.get("tokens") if isinstance(got, dict) else None)
        if tokens.shape != (B, L) or not np.all(np.isfinite(tokens.astype(float))) \
                or not np.array_equal(tokens, np.round(tokens)) or tokens.min() < 0 or tokens.max() >= V:
            raise BadDraw(f"sample_answers вернул не батч из {B} ответов по {L} токенов с номерами 0…{V - 1} "
                          f"в batch['tokens']")
        batch = key_batch(theta, w, ref, prompts, tokens, self.lm.EOS, self.lm.BOS)
        real = batch["mask"] > 0
        where = (batch["prompt"][:, None], np.arange(L)[None, :], batch["prev"])
        self.draws.append((log_softmax_oracle(theta[where][real]), batch["tokens"][real]))
        return batch

    @staticmethod
    def token_rewards(scores, logp, ref_logp, mask, beta):
        return rewards_oracle(scores, logp, ref_logp, mask, beta)

    @staticmethod
    def token_gae(rewards, values, mask, gamma, lam):
        return gae_oracle(rewards, values, mask, gamma, lam)

    @staticmethod
    def kl_and_entropy(logits, ref_logits, mask):
        return kl_entropy_oracle(logits, ref_logits, mask)

    @staticmethod
    def grpo_advantages(scores, group_size):
        return grpo_advantages_oracle(scores, group_size)

    @staticmethod
    def ppo_update(theta, w, batch, rng, opt, *, lr, n_epochs, n_minibatches, eps, c_v, c_e, **more):
        # default_rng(rng) is rng itself: the permutations come from the run's generator, as the docstring says
        out = update_oracle(theta, w, batch, rng, opt, lr, n_epochs, n_minibatches, eps, c_v, c_e, **more)
        return (out["theta"], out["w"], {k: out[k] for k in ("t", "m_theta", "v_theta", "m_w", "v_w")},
                {k: out[k] for k in ("clipfrac", "approx_kl", "value_loss")})


def train_audit(boss, lm, n_updates, seed, **settings):
    """One run of train(n_updates, seed, **settings) by the key's rule, its token choices drawn by the student's
    own sample_answers with the run's rng: {"rows": [n_updates, len(REPLAY_KEYS)] the history must hold, "theta",
    "w": the final tables, "sampling": the test of the choices (:func:`sampling_audit`)}; or {"problem": why not},
    when sample_answers drew no valid tokens."""
    pieces = KeyPieces(boss, lm)
    try:
        rows, theta, w = _train_run(pieces, lm, n_updates, seed, **settings)
    except BadDraw as exc:
        return {"problem": str(exc)}
    return {"rows": rows, "theta": theta, "w": w, "sampling": sampling_audit(pieces.draws)}


def train_replay(boss, lm, n_updates, seed, **settings):
    """Replays train() step by step with the student's own functions, in the order its docstring states, and returns
    the rows [n_updates, len(REPLAY_KEYS)] its history must hold (GRPO's replay: only train's own plumbing is
    judged, a wrong piece is the same wrong piece in both). The keywords replay train's typical mistakes."""
    return _train_run(boss, lm, n_updates, seed, **settings)[0]


SAMPLING_RISK = 1e-6  # the chance that a correct sampler fails sampling_audit, at most (see there)


def sampling_audit(draws, risk=SAMPLING_RISK):
    """Tests the token choices of an audited run against the policy that drew them: for each token k of the
    vocabulary, S_k = Σ_i (1[a_i = k] − π_i(k)) over every real token i of every batch, whose predictable variance
    is W_k = Σ_i π_i(k)(1 − π_i(k)); and the log-likelihood S = Σ_i (log π_i(a_i) − E_{π_i}[log π_i]), W = Σ_i
    Var_{π_i}[log π_i(a)], its increments bounded by b = max_i max_a |log π_i(a) − E_{π_i}[log π_i]|. Under a
    correct sampler each S is a martingale (each choice drawn from π_i given the past), so Freedman's inequality
    gives P(|S| ≥ x and W ≤ v) ≤ 2·exp(−x² / (2(v + b·x/3))); each statistic is judged at x for the smallest v = 2^j
    (j = 0 … 40) not below its W, with the risk shared out over the V + 1 statistics and the 41 values of j, so a
    correct sampler fails with probability at most ``risk`` (no normal approximation).

    Returns one row per statistic: (name, S, W, x, passed), the token's number for a count, "log π" for the
    log-likelihood."""
    logp = np.concatenate([d[0] for d in draws])
    tokens = np.concatenate([d[1] for d in draws]).astype(int)
    n, V = logp.shape
    probs = np.exp(logp)
    each = np.log(2 * (V + 1) * 41 / risk)  # log(1/δ) of one statistic at one v, both signs
    finite = np.where(probs > 0, logp, 0.0)
    mean = np.sum(probs * finite, axis=1)
    dev = np.where(probs > 0, logp - mean[:, None], 0.0)  # a token of probability 0 is never drawn by a sampler
    chosen = np.zeros((n, V))
    chosen[np.arange(n), tokens] = 1.0
    stats = [(k, float(np.sum(chosen[:, k] - probs[:, k])), float(np.sum(probs[:, k] * (1 - probs[:, k]))), 1.0)
             for k in range(V)]
    picked = logp[np.arange(n), tokens]
    stats.append(("log π", float(np.sum(picked - mean)) if np.all(np.isfinite(picked)) else -np.inf,
                  float(np.sum(probs * dev ** 2)), float(np.max(np.abs(dev))) if n else 0.0))
    out = []
    for name, s, var, b in stats:
        v = 2.0 ** max(0, math.ceil(math.log2(max(var, 1.0))))
        x = b * each / 3 + math.sqrt((b * each / 3) ** 2 + 2 * v * each)  # x² = 2·log(1/δ)·(v + b·x/3)
        out.append((name, s, var, x, bool(abs(s) < x)))
    return out


def _train_run(boss, lm, n_updates, seed, *, batch_size, beta, gamma=1.0, lam=0.95, lr=0.05, n_epochs=4,
               n_minibatches=4, eps=0.2, c_v=0.5, c_e=0.01, algo="ppo", group_size=8, zero_start=False, keep_w=True,
               keep_opt=True, monitor_after=False, tile=False, adv_on_last=False, n_answers="total",
               penalty_on_answer=False):
    rng = np.random.default_rng(seed)
    ref = lm.reference_theta()
    theta = np.zeros_like(ref) if zero_start else ref.copy()
    w = np.zeros(ref.shape[:3])

    def fresh():
        return {"t": 0, "m_theta": np.zeros_like(ref), "v_theta": np.zeros_like(ref), "m_w": np.zeros_like(w),
                "v_w": np.zeros_like(w)}

    opt, rows = fresh(), []
    for update in range(1, n_updates + 1):
        if algo == "grpo":
            drawn = rng.integers(lm.N_PROMPTS, size=batch_size // group_size)
            prompts = np.tile(drawn, group_size) if tile else np.repeat(drawn, group_size)
        else:
            prompts = rng.integers(lm.N_PROMPTS, size=batch_size)
        batch = {k: np.asarray(v) for k, v in boss.sample_answers(theta, w, ref, prompts, rng).items()}
        mask = batch["mask"]
        scores = lm.score_batch(prompts, batch["tokens"])
        if algo == "grpo":
            adv = np.asarray(boss.grpo_advantages(scores, group_size), float)[:, None] * mask
            if adv_on_last:
                adv = adv * (np.arange(mask.shape[1])[None, :] == mask.sum(axis=1)[:, None] - 1)
            batch["adv"], batch["returns"] = adv, np.zeros_like(mask)
            more = {"algo": "grpo", "beta": beta}
        else:
            if penalty_on_answer:  # the penalty of the whole answer, one number on its last token
                penalty = beta * ((batch["logp"] - batch["ref_logp"]) * mask).sum(axis=1)
                rewards = boss.token_rewards(scores - penalty, batch["logp"], batch["ref_logp"], mask, 0.0)
            else:
                rewards = boss.token_rewards(scores, batch["logp"], batch["ref_logp"], mask, beta)
            batch["adv"], batch["returns"] = (np.asarray(x) for x in boss.token_gae(rewards, batch["values"], mask,
                                                                                     gamma, lam))
            more = {}
        where = (prompts[:, None], np.arange(mask.shape[1])[None, :], batch["prev"].astype(int))
        if not monitor_after:
            kl_ref, entropy = boss.kl_and_entropy(theta[where], ref[where], mask)
        new_theta, new_w, new_opt, stats = boss.ppo_update(
            theta, w, batch, rng, opt,
            lr=lr, n_epochs=n_epochs, n_minibatches=n_minibatches, eps=eps, c_v=c_v, c_e=c_e, **more)
        theta = np.asarray(new_theta, float)
        if monitor_after:
            kl_ref, entropy = boss.kl_and_entropy(theta[where], ref[where], mask)
        w = np.asarray(new_w, float) if keep_w else w
        opt = new_opt if keep_opt else fresh()
        rows.append([scores.mean(), kl_ref, entropy, stats["clipfrac"], stats["approx_kl"], stats["value_loss"],
                     (update if n_answers == "total" else 1) * len(prompts)])
    return np.array(rows, float), theta, w


TRAIN_DEFAULTS = dict(batch_size=64, beta=0.02, gamma=1.0, lam=0.95, lr=0.05, n_epochs=4, n_minibatches=4, eps=0.2,
                      c_v=0.5, c_e=0.01)  # train's signature
N_ANSWERS = "n_answers — ответов в этом обновлении, а не сколько сэмплировано с начала обучения"


def train_tables(boss, lm, n_updates, seed, **settings):
    """The final tables {"theta", "w"} of the audited run: what train(..., tables={}) must hand back; and its
    history's rows ("rows"), to tell a table handed back wrong from a training wired wrong."""
    audit = train_audit(boss, lm, n_updates, seed, **settings)
    return {k: audit[k] for k in ("theta", "w", "rows", "problem") if k in audit}


def train_mistakes(boss, lm, n_updates, seed, settings):
    """The histories train's typical mistakes give (PPO), by name: runs by the key's rule wired wrong, their token
    choices drawn by the student's sample_answers."""
    def run(**change):
        return train_audit(boss, lm, n_updates, seed, **{**settings, **change}).get("rows", np.zeros((0, 0)))
    out = {"политика стартует не с копии SFT-модели toy_lm.reference_theta(), а с нулевой таблицы":
               run(zero_start=True),
           "новая таблица критика w из ppo_update отброшена: критик не учится": run(keep_w=False),
           "состояние Adam создаётся заново в каждом обновлении (счётчик t с 0, моменты — нули), а не берётся из "
           "ppo_update": run(keep_opt=False),
           "kl_ref и entropy посчитаны после ppo_update, по новой политике, а не до обновления":
               run(monitor_after=True),
           "β не доходит до token_rewards (β = 0)": run(beta=0.0),
           "KL-штраф вдвое слабее: в token_rewards передана половина β": run(beta=settings["beta"] / 2),
           "KL-штраф начислен за ответ целиком: −β·Σ_t (log π − log π_ref) одним числом на последнем токене, а не на "
           "каждом токене": run(penalty_on_answer=True),
           "γ и λ не переданы в token_gae (γ = 1, λ = 0.95 по умолчанию)": run(gamma=1.0, lam=0.95),
           N_ANSWERS: run(n_answers="per_update")}
    names = {"batch_size": "batch_size не используется: в батче 64 ответа",
             "beta": "β не доходит до token_rewards (взято 0.02)", "gamma": "γ не передан в token_gae (взято 1)",
             "lam": "λ не передан в token_gae (взято 0.95)"}
    for arg, default in TRAIN_DEFAULTS.items():
        out[names.get(arg, f"{arg} не передан в ppo_update (взято {default})")] = run(**{arg: default})
    ppo_args = ("lr", "n_epochs", "n_minibatches", "eps", "c_v", "c_e")
    out["ppo_update вызван без lr, n_epochs, n_minibatches, eps, c_v, c_e: взяты его значения по умолчанию"] = \
        run(**{k: TRAIN_DEFAULTS[k] for k in ppo_args})
    return out


def grpo_mistakes(boss, lm, n_updates, seed, settings):
    def run(**change):
        return train_replay(boss, lm, n_updates, seed, algo="grpo", **{**settings, **change})
    return {"группы собраны np.tile: в группе ответы на разные промпты, и базой служит среднее по чужим промптам":
                run(tile=True),
            "преимущество GRPO досталось только последнему токену ответа, а не всем его токенам": run(adv_on_last=True),
            "β не передан в ppo_update (взято 0.02)": run(beta=0.02),
            N_ANSWERS: run(n_answers="per_update")}


# ---- bonus: GRPO and VAPO ----------------------------------------------------------------------------------


def grpo_advantages_oracle(scores, group_size):
    scores = np.asarray(scores, float)
    out = np.zeros_like(scores)
    for start in range(0, len(scores), group_size):
        g = scores[start:start + group_size]
        mean = sum(g) / len(g)
        std = math.sqrt(sum((x - mean) ** 2 for x in g) / len(g))
        out[start:start + group_size] = [(x - mean) / (std + 1e-8) for x in g]
    return out


def grpo_advantages_mistakes(scores, group_size):
    scores = np.asarray(scores, float)
    return {"нормировка по всему батчу": (scores - scores.mean()) / scores.std()}


def grpo_loss_oracle(logits, actions, logp_old, ref_logp, adv, mask, eps, beta):
    lp = chosen_logp(logits, actions)
    ratio = np.exp(lp - logp_old)
    g = np.where(adv >= 0, (1 + eps) * adv, (1 - eps) * adv)
    k3 = np.exp(ref_logp - lp) - (ref_logp - lp) - 1
    real = mask > 0
    return -float(np.mean((np.minimum(ratio * adv, g) - beta * k3)[real]))


def grpo_loss_fd(logits, actions, logp_old, ref_logp, adv, mask, eps, beta):
    return finite_diff(lambda z: grpo_loss_oracle(z, actions, logp_old, ref_logp, adv, mask, eps, beta), logits)


def vapo_lambda_oracle(lengths, alpha):
    return np.array([min(1.0, max(0.0, 1 - 1 / (alpha * float(n)))) for n in np.ravel(lengths)])


# ---- bonus: what the KL costs (the exact optimum of the KL-regularized objective) ---------------------------


def _optimum(ref_logp, rewards, beta):
    """(π*, E_π*[r], KL(π* ‖ π_ref), J*) of one prompt: log π* = log π_ref + r/β − log Z, log Z by the shift of the
    largest exponent, answer by answer."""
    ref_logp, rewards = np.asarray(ref_logp, float), np.asarray(rewards, float)
    z = [lq + r / beta for lq, r in zip(ref_logp, rewards)]
    top = max(z)
    log_z = top + math.log(math.fsum(math.exp(x - top) for x in z))
    log_p = np.array([x - log_z for x in z])
    probs = np.exp(log_p)
    mean = math.fsum(p * r for p, r in zip(probs, rewards))
    kl = math.fsum(p * (lp - lq) for p, lp, lq in zip(probs, log_p, ref_logp))
    return probs, mean, kl, beta * log_z


def kl_optimal_oracle(ref_logp, rewards, beta):
    """What kl_optimal_policy returns, and J* = β·log E_ref[exp(r/β)]: {"probs", "mean_reward", "kl", "J"}."""
    probs, mean, kl, j = _optimum(ref_logp, rewards, beta)
    return {"probs": probs, "mean_reward": mean, "kl": kl, "J": j}


def kl_optimal_mistakes(ref_logp, rewards, beta):
    """The (probs, mean_reward, kl) typical wrong optima give, by name, each output on its own."""
    ref_logp, rewards = np.asarray(ref_logp, float), np.asarray(rewards, float)

    def as_policy(probs):  # its E[r] and KL(· ‖ π_ref) under the true rewards and reference
        probs = np.asarray(probs, float)
        with np.errstate(divide="ignore", invalid="ignore"):
            kl = float(np.sum(np.where(probs > 0, probs * (np.log(probs) - ref_logp), 0.0)))
        return probs, float(probs @ rewards), kl

    variants = {
        "знак в показателе перевёрнут: π_ref·exp(−r/β) вместо π_ref·exp(r/β)": _optimum(ref_logp, -rewards, beta)[0],
        "β умножает оценку, а не делит её: π_ref·exp(β·r) вместо π_ref·exp(r/β)": _optimum(ref_logp, rewards,
                                                                                         1 / beta)[0],
        "нормировка без весов π_ref: π* ∝ exp(r/β), а не π_ref·exp(r/β)": _optimum(0 * ref_logp, rewards, beta)[0]}
    out = {"probs": {}, "mean_reward": {}, "kl": {}}
    for name, probs in variants.items():
        for key, value in zip(("probs", "mean_reward", "kl"), as_policy(probs)):
            out[key][name] = value
    right = _optimum(ref_logp, rewards, beta)[0]
    with np.errstate(divide="ignore"):
        out["kl"]["KL с переставленными аргументами: KL(π_ref ‖ π*) вместо KL(π* ‖ π_ref)"] = \
            float(np.sum(np.exp(ref_logp) * (ref_logp - np.log(right))))
    return out


def kl_optimal_limits(ref_logp, rewards):
    """The limits of π*: β → 0 puts all the mass on the best answer (one, in the checks' inputs), β → ∞ leaves π_ref."""
    ref_logp, rewards = np.asarray(ref_logp, float), np.asarray(rewards, float)
    best = int(np.argmax(rewards))
    greedy = np.zeros(len(rewards))
    greedy[best] = 1.0
    ref = np.exp(ref_logp)
    return {"greedy_probs": greedy, "greedy_mean": float(rewards[best]), "greedy_kl": float(-ref_logp[best]),
            "ref_probs": ref, "ref_mean": float(ref @ rewards)}


def _answer_logp(theta, tokens, mask, bos):
    """log π(y | p) of every enumerated answer y under the table theta, [P, N]: the table's log-probabilities
    computed once per state, then gathered token by token."""
    theta, tokens, mask = np.asarray(theta, float), np.asarray(tokens, int), np.asarray(mask, float)
    table = log_softmax_oracle(theta)  # [P, L, N_PREV, V]
    prev = np.concatenate([np.full((len(tokens), 1), bos), tokens[:, :-1]], axis=1)
    out = np.zeros((theta.shape[0], len(tokens)))
    for t in range(tokens.shape[1]):
        out += table[:, t, prev[:, t], tokens[:, t]] * mask[None, :, t]
    return out


def policy_stats(theta, ref_theta, tokens, mask, scores, beta, bos):
    """The exact score, KL(π ‖ π_ref) per answer and J = score − β·KL of the policy theta (every prompt weighs the
    same), by enumerating every answer: what the kit observes of a trained policy."""
    lp, lq = _answer_logp(theta, tokens, mask, bos), _answer_logp(ref_theta, tokens, mask, bos)
    probs = np.exp(lp)
    score = float(np.mean(np.sum(probs * np.asarray(scores, float), axis=1)))
    kl = float(np.mean(np.sum(probs * (lp - lq), axis=1)))
    return {"score": score, "kl": kl, "J": score - beta * kl}


def kl_frontier(ref_theta, tokens, mask, scores, beta, bos):
    """The optimum π* at β over every prompt (averaged as policy_stats averages): {"score", "kl", "J"}."""
    lq = _answer_logp(ref_theta, tokens, mask, bos)
    points = [_optimum(lq[p], np.asarray(scores, float)[p], beta)[1:] for p in range(len(lq))]
    score, kl, j = (float(np.mean(x)) for x in zip(*points))
    return {"score": score, "kl": kl, "J": j}
