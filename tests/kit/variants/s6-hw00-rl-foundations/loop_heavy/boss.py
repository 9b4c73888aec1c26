"""A deliberately plain, loop-heavy but correct solution of the part `boss` (a kit test variant, not the reference).

Written the way a student who knows Python better than NumPy would: log-softmax row by row, answers sampled
one answer and one token at a time (rng.random() and the inverse distribution function, answer after answer:
a different order of draws from the reference's, which the statement leaves free), rewards, GAE, losses and
their gradients accumulated token by token, the gradients scattered into the tables by loops (no np.add.at),
Adam element by element. NumPy is used only to read the inputs, to draw permutations and split them as the
docstring prescribes, and to build the returned arrays.
"""
import math

import numpy as np

import toy_lm


def _log_softmax_row(row):
    top = row[0]
    for x in row:
        if x > top:
            top = x
    total = 0.0
    for x in row:
        total += math.exp(x - top)
    log_total = top + math.log(total)
    out = []
    for x in row:
        out.append(x - log_total)
    return out


def _clip(x, low, high):
    if x < low:
        return low
    if x > high:
        return high
    return x


def log_softmax(logits):
    arr = np.asarray(logits, dtype=float)
    V = arr.shape[-1]
    rows = arr.reshape(-1, V).tolist()
    out = []
    for row in rows:
        out.append(_log_softmax_row(row))
    return np.array(out).reshape(arr.shape)


def sample_answers(theta, w, ref_theta, prompt_ids, rng):
    th = np.asarray(theta, dtype=float).tolist()
    critic = np.asarray(w, dtype=float).tolist()
    ref = np.asarray(ref_theta, dtype=float).tolist()
    prompts = [int(p) for p in np.asarray(prompt_ids).ravel().tolist()]
    L = toy_lm.MAX_LEN
    EOS = toy_lm.EOS
    tokens, prevs, masks, lengths, logps, ref_logps, values = [], [], [], [], [], [], []
    for p in prompts:
        row_tokens, row_prev, row_mask = [], [], []
        row_logp, row_ref, row_values = [], [], []
        prev = toy_lm.BOS
        finished = False
        for t in range(L):
            if finished:
                row_tokens.append(EOS)
                row_prev.append(EOS)
                row_mask.append(0.0)
                row_logp.append(0.0)
                row_ref.append(0.0)
                row_values.append(0.0)
                continue
            logp_row = _log_softmax_row(th[p][t][prev])
            u = rng.random()
            cumulative = 0.0
            token = None
            last_possible = 0
            for a in range(len(logp_row)):
                prob = math.exp(logp_row[a])
                if prob > 0:
                    last_possible = a
                cumulative += prob
                if u < cumulative:
                    token = a
                    break
            if token is None:  # rounding left the cumulative sum just below 1
                token = last_possible
            ref_row = _log_softmax_row(ref[p][t][prev])
            row_tokens.append(token)
            row_prev.append(prev)
            row_mask.append(1.0)
            row_logp.append(logp_row[token])
            row_ref.append(ref_row[token])
            row_values.append(critic[p][t][prev])
            prev = token
            if token == EOS:
                finished = True
        length = 0
        for m in row_mask:
            if m > 0:
                length += 1
        tokens.append(row_tokens)
        prevs.append(row_prev)
        masks.append(row_mask)
        lengths.append(length)
        logps.append(row_logp)
        ref_logps.append(row_ref)
        values.append(row_values)
    B = len(prompts)
    return {
        "prompt": np.array(prompts, dtype=int),
        "tokens": np.array(tokens, dtype=int).reshape(B, L),
        "prev": np.array(prevs, dtype=int).reshape(B, L),
        "mask": np.array(masks, dtype=float).reshape(B, L),
        "lengths": np.array(lengths, dtype=int),
        "logp": np.array(logps, dtype=float).reshape(B, L),
        "ref_logp": np.array(ref_logps, dtype=float).reshape(B, L),
        "values": np.array(values, dtype=float).reshape(B, L),
    }


def token_rewards(scores, logp, ref_logp, mask, beta):
    s = np.asarray(scores, dtype=float).ravel().tolist()
    lp = np.asarray(logp, dtype=float).tolist()
    ref = np.asarray(ref_logp, dtype=float).tolist()
    m = np.asarray(mask, dtype=float).tolist()
    beta = float(beta)
    out = []
    for b in range(len(m)):
        last = -1
        for t in range(len(m[b])):
            if m[b][t] > 0:
                last = t
        row = []
        for t in range(len(m[b])):
            if m[b][t] > 0:
                r = -beta * (lp[b][t] - ref[b][t])
                if t == last:
                    r += s[b]
                row.append(r)
            else:
                row.append(0.0)
        out.append(row)
    return np.array(out).reshape(np.shape(mask))


def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    r = np.asarray(rewards, dtype=float).tolist()
    v = np.asarray(values, dtype=float).tolist()
    m = np.asarray(mask, dtype=float).tolist()
    gamma = float(gamma)
    lam_arr = np.asarray(lam, dtype=float)
    adv, ret = [], []
    for b in range(len(m)):
        if lam_arr.ndim == 0:
            lam_b = float(lam_arr)
        else:
            lam_b = float(lam_arr.ravel()[b])
        L = len(m[b])
        row_adv = [0.0] * L
        row_ret = [0.0] * L
        running = 0.0
        next_value = 0.0
        for t in range(L - 1, -1, -1):
            if m[b][t] <= 0:
                running = 0.0
                next_value = 0.0
                continue
            delta = r[b][t] + gamma * next_value - v[b][t]
            running = delta + gamma * lam_b * running
            row_adv[t] = running
            row_ret[t] = running + v[b][t]
            next_value = v[b][t]
        adv.append(row_adv)
        ret.append(row_ret)
    shape = np.shape(mask)
    return np.array(adv).reshape(shape), np.array(ret).reshape(shape)


def masked_normalize(x, mask, eps=1e-8):
    arr = np.asarray(x, dtype=float)
    flat = arr.ravel().tolist()
    m = np.asarray(mask, dtype=float).ravel().tolist()
    count = 0
    total = 0.0
    for i in range(len(flat)):
        if m[i] > 0:
            count += 1
            total += flat[i]
    mean = total / count
    var = 0.0
    for i in range(len(flat)):
        if m[i] > 0:
            var += (flat[i] - mean) ** 2
    std = math.sqrt(var / count)
    out = []
    for i in range(len(flat)):
        if m[i] > 0:
            out.append((flat[i] - mean) / (std + eps))
        else:
            out.append(0.0)
    return np.array(out).reshape(arr.shape)


def _flat_inputs(logits, actions, *per_token):
    z = np.asarray(logits, dtype=float)
    V = z.shape[-1]
    rows = z.reshape(-1, V).tolist()
    acts = [int(a) for a in np.asarray(actions).ravel().tolist()]
    rest = [np.asarray(x, dtype=float).ravel().tolist() for x in per_token]
    return z.shape, rows, acts, rest


def policy_loss(logits, actions, logp_old, adv, mask, eps=0.2, c_e=0.01):
    shape, rows, acts, (old, A, m) = _flat_inputs(logits, actions, logp_old, adv, mask)
    n = 0.0
    for x in m:
        n += x
    loss = 0.0
    grads = []
    for i in range(len(rows)):
        V = len(rows[i])
        if m[i] == 0:
            grads.append([0.0] * V)
            continue
        logp_row = _log_softmax_row(rows[i])
        pi = [math.exp(x) for x in logp_row]
        entropy = 0.0
        for a in range(V):
            entropy -= pi[a] * logp_row[a]
        ratio = math.exp(logp_row[acts[i]] - old[i])
        unclipped = ratio * A[i]
        clipped = _clip(ratio, 1 - eps, 1 + eps) * A[i]
        if unclipped <= clipped:
            surrogate = unclipped
            d_surrogate = ratio * A[i]  # d min(...) / d log pi
        else:
            surrogate = clipped
            d_surrogate = 0.0
        weight = m[i] / n
        loss += -weight * surrogate - c_e * weight * entropy
        row_grad = []
        for a in range(V):
            onehot = 1.0 if a == acts[i] else 0.0
            g = -weight * d_surrogate * (onehot - pi[a])
            g += c_e * weight * pi[a] * (logp_row[a] + entropy)  # -c_e * weight * dH/dz
            row_grad.append(g)
        grads.append(row_grad)
    return float(loss), np.array(grads).reshape(shape)


def critic_loss(values_pred, returns, mask, c_v=0.5):
    shape = np.shape(values_pred)
    v = np.asarray(values_pred, dtype=float).ravel().tolist()
    R = np.asarray(returns, dtype=float).ravel().tolist()
    m = np.asarray(mask, dtype=float).ravel().tolist()
    n = 0.0
    for x in m:
        n += x
    loss = 0.0
    grad = []
    for i in range(len(v)):
        if m[i] == 0:
            grad.append(0.0)
            continue
        err = v[i] - R[i]
        loss += c_v * m[i] * err * err / n
        grad.append(2.0 * c_v * m[i] * err / n)
    return float(loss), np.array(grad).reshape(shape)


def adam_step(param, grad, m, v, t, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    shape = np.shape(param)
    p_list = np.asarray(param, dtype=float).ravel().tolist()
    g_list = np.asarray(grad, dtype=float).ravel().tolist()
    m_list = np.asarray(m, dtype=float).ravel().tolist()
    v_list = np.asarray(v, dtype=float).ravel().tolist()
    correction1 = 1.0 - beta1 ** t
    correction2 = 1.0 - beta2 ** t
    new_p, new_m, new_v = [], [], []
    for i in range(len(p_list)):
        mi = beta1 * m_list[i] + (1.0 - beta1) * g_list[i]
        vi = beta2 * v_list[i] + (1.0 - beta2) * g_list[i] * g_list[i]
        m_hat = mi / correction1
        v_hat = vi / correction2
        new_p.append(p_list[i] - lr * m_hat / (math.sqrt(v_hat) + eps))
        new_m.append(mi)
        new_v.append(vi)
    return np.array(new_p).reshape(shape), np.array(new_m).reshape(shape), np.array(new_v).reshape(shape)


def init_optimizer(theta, w):
    """Adam's state for the two tables (provided in the stub)."""
    return {"t": 0, "m_theta": np.zeros_like(theta, dtype=float), "v_theta": np.zeros_like(theta, dtype=float),
            "m_w": np.zeros_like(w, dtype=float), "v_w": np.zeros_like(w, dtype=float)}


def ppo_update(theta, w, batch, rng, opt, lr=0.05, n_epochs=4, n_minibatches=4, eps=0.2, c_v=0.5, c_e=0.01,
               algo="ppo", beta=0.02):
    theta = np.array(theta, dtype=float)
    w = np.array(w, dtype=float)
    V = theta.shape[-1]
    step = int(opt["t"])
    m_theta = np.array(opt["m_theta"], dtype=float)
    v_theta = np.array(opt["v_theta"], dtype=float)
    m_w = np.array(opt["m_w"], dtype=float)
    v_w = np.array(opt["v_w"], dtype=float)
    prompts = [int(p) for p in np.asarray(batch["prompt"]).ravel().tolist()]
    tokens = np.asarray(batch["tokens"]).astype(int).tolist()
    prevs = np.asarray(batch["prev"]).astype(int).tolist()
    masks = np.asarray(batch["mask"], dtype=float).tolist()
    old_logp = np.asarray(batch["logp"], dtype=float).tolist()
    ref_logp = np.asarray(batch["ref_logp"], dtype=float).tolist()
    advs = np.asarray(batch["adv"], dtype=float).tolist()
    targets = np.asarray(batch["returns"], dtype=float).tolist()
    B = len(prompts)
    L = len(masks[0])
    clipfracs, kls, value_losses = [], [], []
    for _epoch in range(n_epochs):
        perm = rng.permutation(B)
        for idx in np.array_split(perm, n_minibatches):
            idx = [int(i) for i in idx]
            mb_logits, mb_values, mb_tokens, mb_mask = [], [], [], []
            mb_old, mb_ref, mb_adv, mb_returns = [], [], [], []
            for b in idx:
                row_logits, row_values = [], []
                for t in range(L):
                    if masks[b][t] > 0:
                        row_logits.append(theta[prompts[b], t, prevs[b][t]].tolist())
                        row_values.append(float(w[prompts[b], t, prevs[b][t]]))
                    else:
                        row_logits.append([0.0] * V)
                        row_values.append(0.0)
                mb_logits.append(row_logits)
                mb_values.append(row_values)
                mb_tokens.append(tokens[b])
                mb_mask.append(masks[b])
                mb_old.append(old_logp[b])
                mb_ref.append(ref_logp[b])
                mb_adv.append(advs[b])
                mb_returns.append(targets[b])
            mb_logits = np.array(mb_logits)
            # 6. statistics before the step
            n_real, n_clipped, kl_sum = 0, 0, 0.0
            for j in range(len(idx)):
                for t in range(L):
                    if mb_mask[j][t] > 0:
                        logp_row = _log_softmax_row(mb_logits[j, t].tolist())
                        logp_now = logp_row[mb_tokens[j][t]]
                        ratio = math.exp(logp_now - mb_old[j][t])
                        n_real += 1
                        if abs(ratio - 1.0) > eps:
                            n_clipped += 1
                        kl_sum += mb_old[j][t] - logp_now
            clipfracs.append(n_clipped / n_real)
            kls.append(kl_sum / n_real)
            # 2-3. losses and their gradients
            if algo == "grpo":
                _loss, dlogits = grpo_policy_loss(mb_logits, mb_tokens, mb_old, mb_ref, mb_adv, mb_mask, eps, beta)
                value_loss, dvalues = 0.0, None
            else:
                adv_n = masked_normalize(mb_adv, mb_mask)
                _loss, dlogits = policy_loss(mb_logits, mb_tokens, mb_old, adv_n, mb_mask, eps, c_e)
                value_loss, dvalues = critic_loss(mb_values, mb_returns, mb_mask, c_v)
            value_losses.append(value_loss)
            # 4. scatter the gradients into the tables, one token at a time
            g_theta = np.zeros_like(theta)
            g_w = np.zeros_like(w)
            for j, b in enumerate(idx):
                for t in range(L):
                    if mb_mask[j][t] > 0:
                        p, prev = prompts[b], prevs[b][t]
                        for a in range(V):
                            g_theta[p, t, prev, a] += dlogits[j, t, a]
                        if dvalues is not None:
                            g_w[p, t, prev] += dvalues[j, t]
            # 5. Adam
            step += 1
            theta, m_theta, v_theta = adam_step(theta, g_theta, m_theta, v_theta, step, lr)
            if algo != "grpo":
                w, m_w, v_w = adam_step(w, g_w, m_w, v_w, step, lr)
    stats = {"clipfrac": sum(clipfracs) / len(clipfracs), "approx_kl": sum(kls) / len(kls),
             "value_loss": sum(value_losses) / len(value_losses)}
    new_opt = {"t": step, "m_theta": m_theta, "v_theta": v_theta, "m_w": m_w, "v_w": v_w}
    return theta, w, new_opt, stats


def kl_and_entropy(logits, ref_logits, mask):
    z = np.asarray(logits, dtype=float)
    V = z.shape[-1]
    rows = z.reshape(-1, V).tolist()
    ref_rows = np.asarray(ref_logits, dtype=float).reshape(-1, V).tolist()
    m = np.asarray(mask, dtype=float).ravel().tolist()
    B = z.shape[0]
    kl = 0.0
    entropy = 0.0
    n = 0.0
    for i in range(len(rows)):
        if m[i] == 0:
            continue
        logp_row = _log_softmax_row(rows[i])
        ref_row = _log_softmax_row(ref_rows[i])
        kl_here = 0.0
        h_here = 0.0
        for a in range(V):
            prob = math.exp(logp_row[a])
            kl_here += prob * (logp_row[a] - ref_row[a])
            h_here -= prob * logp_row[a]
        kl += m[i] * kl_here
        entropy += m[i] * h_here
        n += m[i]
    return float(kl / B), float(entropy / n)


def train(n_updates=40, seed=0, batch_size=64, algo="ppo", beta=0.02, gamma=1.0, lam=0.95, lr=0.05, n_epochs=4,
          n_minibatches=4, eps=0.2, c_v=0.5, c_e=0.01, group_size=8, vapo_alpha=None, log_every=5, tables=None):
    rng = np.random.default_rng(seed)
    ref_theta = toy_lm.reference_theta()
    theta = ref_theta.copy()
    w = np.zeros(ref_theta.shape[:3])
    opt = init_optimizer(theta, w)
    history = []
    for update in range(1, n_updates + 1):
        # 1. prompts
        if algo == "grpo":
            groups = rng.integers(toy_lm.N_PROMPTS, size=batch_size // group_size)
            prompt_ids = np.repeat(groups, group_size)
        else:
            prompt_ids = rng.integers(toy_lm.N_PROMPTS, size=batch_size)
        # 2. answers and their scores
        batch = sample_answers(theta, w, ref_theta, prompt_ids, rng)
        scores = toy_lm.score_batch(prompt_ids, batch["tokens"])
        mask = batch["mask"]
        B, L = mask.shape
        # 3. advantages and the critic's targets
        if algo == "grpo":
            per_answer = grpo_advantages(scores, group_size)
            adv = np.zeros((B, L))
            for b in range(B):
                for t in range(L):
                    adv[b, t] = per_answer[b] * mask[b, t]
            batch["adv"] = adv
            batch["returns"] = np.zeros((B, L))
        else:
            rewards = token_rewards(scores, batch["logp"], batch["ref_logp"], mask, beta)
            lam_used = lam if vapo_alpha is None else vapo_lambda(batch["lengths"], vapo_alpha)
            batch["adv"], batch["returns"] = token_gae(rewards, batch["values"], mask, gamma, lam_used)
        # 4. monitoring before the update
        V = theta.shape[-1]
        logits = np.zeros((B, L, V))
        ref_logits = np.zeros((B, L, V))
        for b in range(B):
            for t in range(L):
                p, prev = int(prompt_ids[b]), int(batch["prev"][b, t])
                logits[b, t] = theta[p, t, prev]
                ref_logits[b, t] = ref_theta[p, t, prev]
        kl_ref, entropy = kl_and_entropy(logits, ref_logits, mask)
        # 5. the update
        if algo == "grpo":
            theta, w, opt, stats = ppo_update(theta, w, batch, rng, opt, lr, n_epochs, n_minibatches, eps, c_v, c_e,
                                              algo="grpo", beta=beta)
        else:
            theta, w, opt, stats = ppo_update(theta, w, batch, rng, opt, lr, n_epochs, n_minibatches, eps, c_v, c_e)
        total = 0.0
        for x in scores:
            total += float(x)
        row = {"update": update, "score": total / len(scores), "kl_ref": kl_ref, "entropy": entropy,
               "clipfrac": stats["clipfrac"], "approx_kl": stats["approx_kl"], "value_loss": stats["value_loss"],
               "n_answers": update * batch_size}
        history.append(row)
        if log_every and (update == 1 or update % log_every == 0):
            print("обновление %3d  оценка %.3f  KL к реф. %.3f  энтропия %.3f  clipfrac %.3f  approx_kl %.4f"
                  % (update, row["score"], kl_ref, entropy, row["clipfrac"], row["approx_kl"]))
    if tables is not None:
        tables["theta"] = np.array(theta, dtype=float)
        tables["w"] = np.array(w, dtype=float)
    return history


def grpo_advantages(scores, group_size, eps=1e-8):
    s = [float(x) for x in np.asarray(scores, dtype=float).ravel().tolist()]
    out = []
    for start in range(0, len(s), group_size):
        group = s[start:start + group_size]
        mean = 0.0
        for x in group:
            mean += x
        mean /= len(group)
        var = 0.0
        for x in group:
            var += (x - mean) ** 2
        std = math.sqrt(var / len(group))
        for x in group:
            out.append((x - mean) / (std + eps))
    return np.array(out)


def grpo_policy_loss(logits, actions, logp_old, ref_logp, adv, mask, eps=0.2, beta=0.02):
    shape, rows, acts, (old, ref, A, m) = _flat_inputs(logits, actions, logp_old, ref_logp, adv, mask)
    n = 0.0
    for x in m:
        n += x
    loss = 0.0
    grads = []
    for i in range(len(rows)):
        V = len(rows[i])
        if m[i] == 0:
            grads.append([0.0] * V)
            continue
        logp_row = _log_softmax_row(rows[i])
        logp_now = logp_row[acts[i]]
        ratio = math.exp(logp_now - old[i])
        unclipped = ratio * A[i]
        clipped = _clip(ratio, 1 - eps, 1 + eps) * A[i]
        if unclipped <= clipped:
            surrogate = unclipped
            d_surrogate = ratio * A[i]
        else:
            surrogate = clipped
            d_surrogate = 0.0
        ref_ratio = math.exp(ref[i] - logp_now)
        k3 = ref_ratio - (ref[i] - logp_now) - 1.0
        d_k3 = 1.0 - ref_ratio
        weight = m[i] / n
        loss += -weight * (surrogate - beta * k3)
        d_logp = -weight * (d_surrogate - beta * d_k3)
        row_grad = []
        for a in range(V):
            onehot = 1.0 if a == acts[i] else 0.0
            row_grad.append(d_logp * (onehot - math.exp(logp_row[a])))
        grads.append(row_grad)
    return float(loss), np.array(grads).reshape(shape)


def vapo_lambda(lengths, alpha=0.05):
    arr = np.asarray(lengths, dtype=float)
    out = []
    for length in arr.ravel().tolist():
        if alpha * length <= 0:
            out.append(0.0)
        else:
            out.append(_clip(1.0 - 1.0 / (alpha * length), 0.0, 1.0))
    return np.array(out).reshape(arr.shape)


def kl_optimal_policy(ref_logp, rewards, beta):
    exponents = []
    for lq, r in zip(np.asarray(ref_logp, dtype=float).tolist(), np.asarray(rewards, dtype=float).tolist()):
        exponents.append(lq + r / beta)
    top = max(exponents)
    total = 0.0
    for x in exponents:
        total += math.exp(x - top)
    log_z = top + math.log(total)
    probs, mean_reward, kl = [], 0.0, 0.0
    for x, lq, r in zip(exponents, np.asarray(ref_logp, dtype=float).tolist(),
                        np.asarray(rewards, dtype=float).tolist()):
        log_p = x - log_z
        p = math.exp(log_p)
        probs.append(p)
        mean_reward += p * r
        kl += p * (log_p - lq)
    return np.array(probs), float(mean_reward), float(kl)
