"""Часть boss: PPO с нуля на NumPy для игрушечной «языковой модели» (RLHF в миниатюре).

Как в разделе урока «Как это переносится на языковую модель»: действие a_t — следующий токен,
состояние s_t — промпт и уже написанные токены, эпизод — один ответ до токена конца, награда —
оценка reward model в конце ответа плюс KL-штраф −β·(log π − log π_ref) на каждом токене (InstructGPT),
γ = 1, λ = 0.95. Задача, словарь, промпты, SFT-модель и reward model — в готовом модуле toy_lm.py.

Обозначения урока: ρ_t = π_θ / π_old, Â_t — преимущество, δ_t — TD-ошибка, R̂_t — цель критика,
ε — ширина клиппинга, c_v и c_e — веса критика и энтропии, β — вес KL-штрафа.

Батч ответов — словарь массивов формы [B, L] (B ответов, L = toy_lm.MAX_LEN позиций). Позиции после
конца ответа — «паддинг»: mask = 0, и они не должны влиять ни на что. Функции не меняют свои аргументы.
"""
import numpy as np

import toy_lm


def log_softmax(logits):
    """log π(a | s) = z_a − log Σ_b exp(z_b) по последней оси.

    Аргументы:
        logits — [..., V], логиты z (любая форма, словарь — последняя ось).
    Возвращает np.ndarray той же формы. Численно устойчиво: перед exp вычтите max по последней оси
    (логиты 1000 и 1001 не должны давать inf и NaN).
    """
    # BEGIN SOLUTION
    z = np.asarray(logits, dtype=float)
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))  # z − logsumexp(z)
    # END SOLUTION


def sample_answers(theta, w, ref_theta, prompt_ids, rng):
    """Сэмплирует по одному ответу на каждый промпт батча текущей политикой (она же π_old).

    Аргументы:
        theta      — [N_PROMPTS, L, N_PREV, V], логиты политики: theta[p, t, prev] — логиты токена
                     на позиции t ответа на промпт p после токена prev (перед первым токеном prev = BOS);
        w          — [N_PROMPTS, L, N_PREV], таблица критика: V(s_t) = w[p, t, prev];
        ref_theta  — логиты референсной политики π_ref той же формы, что theta;
        prompt_ids — [B], номера промптов;
        rng        — np.random.Generator, единственный источник случайности.
    Возвращает словарь массивов:
        "prompt"   — [B] int, копия prompt_ids;
        "tokens"   — [B, L] int, токены ответа; после конца ответа — EOS;
        "prev"     — [B, L] int, предыдущий токен каждой позиции (BOS на t = 0, EOS на паддинге);
        "mask"     — [B, L] float, 1 на настоящих токенах ответа (включая сам EOS), 0 после конца;
        "lengths"  — [B] int, длина ответа в токенах = mask.sum(axis=1) (EOS считается; оборванный — L);
        "logp"     — [B, L], log π_θ(a_t | s_t) выбранного токена, 0 на паддинге;
        "ref_logp" — [B, L], log π_ref(a_t | s_t) того же токена, 0 на паддинге;
        "values"   — [B, L], V(s_t) критика, 0 на паддинге.
    Ответ кончается, когда выбран EOS или написано L токенов (тогда он оборван без EOS).
    Как тянуть случайность из rng, не предписано: одно u ~ U[0, 1) на ответ и обратная функция
    распределения, rng.choice по каждому ответу или другой порядок вызовов — всё верно, если токен
    a_t ~ π_θ(·|s_t). Проверки судят о частотах токенов, а батч и обучение в train сверяют с вашими
    же токенами.
    """
    # BEGIN SOLUTION
    prompt = np.asarray(prompt_ids, dtype=int)
    B, L, n_vocab = len(prompt), theta.shape[1], theta.shape[-1]
    rows = np.arange(B)
    tokens = np.full((B, L), toy_lm.EOS)
    prev = np.full((B, L), toy_lm.EOS)
    mask, logp, ref_logp, values = (np.zeros((B, L)) for _ in range(4))
    alive = np.ones(B, dtype=bool)  # ответ ещё не закончился
    prev_token = np.full(B, toy_lm.BOS)  # токен перед позицией t в каждом ответе
    for t in range(L):
        # 1. log π_θ(·|s_t) и log π_ref(·|s_t) в состоянии s_t = (промпт, t, предыдущий токен) каждого ответа
        logp_all = log_softmax(theta[prompt, t, prev_token])  # [B, V]
        ref_logp_all = log_softmax(ref_theta[prompt, t, prev_token])  # [B, V]
        # 2. a_t ~ π_θ(·|s_t) обратной функцией распределения: первый токен, у которого cdf ≥ u, u ~ U[0, 1)
        cdf = np.cumsum(np.exp(logp_all), axis=1)  # [B, V]
        u = rng.random(B)  # одно число на ответ, на каждой позиции t
        a = (cdf < u[:, None]).sum(axis=1)  # число токенов с cdf < u = номер первого с cdf ≥ u
        a = np.minimum(a, n_vocab - 1)  # после округления cdf[-1] может оказаться чуть меньше u
        a = np.where(alive, a, toy_lm.EOS)  # после конца ответа — паддинг
        # 3. записываем позицию t: у настоящих токенов mask = 1, log π_θ, log π_ref и V(s_t); на паддинге нули
        tokens[:, t] = a
        prev[:, t] = np.where(alive, prev_token, toy_lm.EOS)
        mask[:, t] = alive
        logp[:, t] = np.where(alive, logp_all[rows, a], 0.0)  # log π_θ(a_t|s_t)
        ref_logp[:, t] = np.where(alive, ref_logp_all[rows, a], 0.0)  # log π_ref(a_t|s_t)
        values[:, t] = np.where(alive, w[prompt, t, prev_token], 0.0)  # V(s_t)
        # 4. ответ кончается своим EOS
        alive = alive & (a != toy_lm.EOS)
        prev_token = a
    return {"prompt": prompt.copy(), "tokens": tokens, "prev": prev, "mask": mask,
            "lengths": mask.sum(axis=1).astype(int), "logp": logp, "ref_logp": ref_logp, "values": values}
    # END SOLUTION


def token_rewards(scores, logp, ref_logp, mask, beta):
    """Награды по токенам, как в InstructGPT: r_t = −β·(log π(a_t|s_t) − log π_ref(a_t|s_t)) на каждом
    токене ответа, плюс оценка reward model на ПОСЛЕДНЕМ настоящем токене ответа — позиции
    lengths − 1 = mask.sum(1) − 1 (это EOS, а у оборванного ответа — его L-й токен).

    Аргументы:
        scores   — [B], оценки reward model за ответы целиком;
        logp     — [B, L], log π_θ выбранных токенов;
        ref_logp — [B, L], log π_ref тех же токенов;
        mask     — [B, L], 1 на токенах ответа, 0 после конца;
        beta     — β, вес KL-штрафа.
    Возвращает np.ndarray [B, L]; на паддинге — 0, что бы ни лежало в logp и ref_logp.
    Сумма наград ответа = score − β·Σ_t (log π − log π_ref) — оценка минус KL-штраф из формулы InstructGPT.
    """
    # BEGIN SOLUTION
    mask = np.asarray(mask, dtype=float)
    logp, ref_logp = np.asarray(logp, dtype=float), np.asarray(ref_logp, dtype=float)
    rewards = -beta * (logp - ref_logp) * mask  # KL-штраф на каждом токене
    last = mask.sum(axis=1).astype(int) - 1  # последний настоящий токен
    rewards[np.arange(len(last)), last] += np.asarray(scores, dtype=float)  # оценка RM — в конце ответа
    return rewards
    # END SOLUTION


def token_gae(rewards, values, mask, gamma=1.0, lam=0.95):
    """GAE по токенам каждого ответа: δ_t = r_t + γ·V(s_{t+1}) − V(s_t), Â_t = δ_t + γλ·Â_{t+1}.

    Аргументы:
        rewards — [B, L], награды токенов (token_rewards);
        values  — [B, L], V(s_t) критика;
        mask    — [B, L], 1 на токенах ответа, 0 после конца;
        gamma   — γ (для языковой модели 1);
        lam     — λ: число, или (бонус, VAPO) массив [B] — своё λ у каждого ответа.
    Возвращает (advantages, returns), оба [B, L], returns = advantages + values — цели R̂_t критика.
    Конец ответа — конечное состояние: после последнего токена V = 0 и рекурсия не продолжается;
    на паддинге advantages и returns равны 0, что бы ни лежало там в rewards и values.
    """
    # BEGIN SOLUTION
    mask = np.asarray(mask, dtype=float)
    r = np.asarray(rewards, dtype=float) * mask  # паддинг не участвует
    v = np.asarray(values, dtype=float) * mask
    B, L = mask.shape
    lam = np.broadcast_to(np.asarray(lam, dtype=float), (B,))  # λ каждого ответа, [B]
    next_mask = np.concatenate([mask[:, 1:], np.zeros((B, 1))], axis=1)  # есть ли следующий токен
    next_v = np.concatenate([v[:, 1:], np.zeros((B, 1))], axis=1) * next_mask  # V(s_{t+1}), после конца ответа 0
    delta = (r + gamma * next_v - v) * mask  # δ_t
    adv = np.zeros((B, L))
    running = np.zeros(B)  # Â_{t+1}
    for t in reversed(range(L)):
        running = delta[:, t] + gamma * lam * next_mask[:, t] * running  # Â_t = δ_t + γλ·Â_{t+1}
        adv[:, t] = running
    return adv, (adv + v) * mask  # R̂_t = Â_t + V(s_t)
    # END SOLUTION


def masked_normalize(x, mask, eps=1e-8):
    """Нормировка преимуществ по НАСТОЯЩИМ токенам: (Â − mean) / (std + eps), паддинг не участвует.

    Аргументы:
        x    — [B, L], преимущества;
        mask — [B, L], 1 на токенах ответа, 0 после конца;
        eps  — добавка к std.
    mean и std (ddof = 0) — по элементам с mask = 1. Возвращает [B, L], на паддинге 0.
    """
    # BEGIN SOLUTION
    x, mask = np.asarray(x, dtype=float), np.asarray(mask, dtype=float)
    n = mask.sum()
    mean = (x * mask).sum() / n  # по настоящим токенам
    std = np.sqrt((((x - mean) * mask) ** 2).sum() / n)  # ddof = 0
    return (x - mean) / (std + eps) * mask
    # END SOLUTION


# BEGIN SOLUTION
def _actor_loss(logits, actions, logp_old, adv, mask, eps=0.2, c_e=0.01, ref_logp=None, beta=0.0):
    """Общее тело policy_loss (PPO) и grpo_policy_loss (GRPO): клиппированная цель написана один раз.

        L = −(1/n)·Σ_t m_t·[min(ρ_t·Â_t, clip(ρ_t, 1−ε, 1+ε)·Â_t) − β·k_t + c_e·H(π(·|s_t))],  n = Σ_t m_t,

    у PPO слагаемого k_t нет (ref_logp = None), у GRPO нет энтропии (c_e = 0).

    Аргументы и значения по умолчанию — как у policy_loss, плюс ref_logp и beta из grpo_policy_loss: logits —
    [..., V]; actions, logp_old, adv, mask, ref_logp — [...].
    Возвращает (loss, dlogits, pi_info): loss и ∂L/∂logits, как у policy_loss, и pi_info — статистику обновления
    по настоящим токенам, {"clipfrac": доля |ρ_t − 1| > ε, "approx_kl": среднее (logp_old − log π_θ)}. Как
    compute_loss_pi в Spinning Up: ppo_update берёт статистику отсюда и не пересчитывает log π_θ и ρ_t.
    """
    # 1. log π_θ(·|s_t) по словарю и log π_θ(a_t|s_t) выбранных токенов
    logp_all = log_softmax(logits)  # [..., V]
    probs = np.exp(logp_all)
    actions = np.asarray(actions, dtype=int)
    logp = np.take_along_axis(logp_all, actions[..., None], axis=-1)[..., 0]  # [...]
    logp_old = np.asarray(logp_old, dtype=float)
    adv, mask = np.asarray(adv, dtype=float), np.asarray(mask, dtype=float)
    n = mask.sum()  # число настоящих токенов
    # 2. клиппированная цель и её производная по log π_θ(a_t|s_t)
    ratio = np.exp(logp - logp_old)  # ρ_t = π_θ(a_t|s_t) / π_old(a_t|s_t)
    unclipped = ratio * adv  # ρ_t·Â_t
    clipped = np.clip(ratio, 1 - eps, 1 + eps) * adv  # clip(ρ_t, 1−ε, 1+ε)·Â_t
    objective = np.minimum(unclipped, clipped)
    d_logp = np.where(unclipped <= clipped, unclipped, 0.0)  # ∂(ρ·Â)/∂log π = ρ·Â; клиппированная ветка — константа
    # 3. GRPO: KL к референсу — слагаемое loss, k_t = π_ref/π_θ − log(π_ref/π_θ) − 1 ≥ 0 (оценка k3)
    if ref_logp is not None:
        log_ref_ratio = np.asarray(ref_logp, dtype=float) - logp  # log(π_ref/π_θ)
        objective = objective - beta * (np.exp(log_ref_ratio) - log_ref_ratio - 1)
        d_logp = d_logp - beta * (1 - np.exp(log_ref_ratio))  # ∂k_t/∂log π_θ = 1 − π_ref/π_θ
    # 4. loss и цепное правило через softmax: ∂log π(a)/∂z = onehot(a) − π
    loss = -(mask * objective).sum() / n
    onehot = np.zeros_like(probs)
    np.put_along_axis(onehot, actions[..., None], 1.0, axis=-1)
    dlogits = -(mask * d_logp)[..., None] * (onehot - probs) / n
    # 5. PPO: энтропийный бонус, H_t = −Σ_a π·log π, ∂H_t/∂z = −π·(log π + H_t)
    if c_e:
        entropy = -(probs * logp_all).sum(axis=-1)  # H(π(·|s_t))
        loss -= c_e * (mask * entropy).sum() / n
        dlogits += c_e * mask[..., None] * probs * (logp_all + entropy[..., None]) / n
    pi_info = {"clipfrac": float((mask * (np.abs(ratio - 1) > eps)).sum() / n),
               "approx_kl": float((mask * (logp_old - logp)).sum() / n)}  # KL(π_old ‖ π_θ) ≈ E[log π_old − log π_θ]
    return float(loss), dlogits, pi_info
# END SOLUTION


def policy_loss(logits, actions, logp_old, adv, mask, eps=0.2, c_e=0.01):
    """Loss актора для МИНИМИЗАЦИИ и его градиент по логитам, написанный вручную.

        L = −(1/n)·Σ_t m_t·min(ρ_t·Â_t, clip(ρ_t, 1−ε, 1+ε)·Â_t) − c_e·(1/n)·Σ_t m_t·H(π(·|s_t)),

    где ρ_t = exp(log π_θ(a_t|s_t) − logp_old_t), n = Σ m_t — число настоящих токенов.

    Аргументы:
        logits   — [..., V], логиты политики в состояниях батча (например [B, L, V]);
        actions  — [...] int, выбранные токены;
        logp_old — [...], log π_old(a_t|s_t) при сборе батча;
        adv      — [...], преимущества Â_t (уже нормированные);
        mask     — [...], 1 на токенах ответа, 0 на паддинге;
        eps, c_e — ε клиппинга и вес энтропийного бонуса.
    Возвращает (loss, dlogits): число float и массив формы logits — ∂L/∂logits.

    Подсказки: ∂log π(a)/∂z = onehot(a) − π; производная min(...) по log π равна ρ·Â, когда min
    выбирает ветку ρ·Â, и 0, когда выбрана клиппированная; ∂H/∂z = −π·(log π + H).
    """
    # BEGIN SOLUTION
    loss, dlogits, _ = _actor_loss(logits, actions, logp_old, adv, mask, eps, c_e=c_e)
    return loss, dlogits
    # END SOLUTION


def critic_loss(values_pred, returns, mask, c_v=0.5):
    """Loss критика и его градиент: L_V = c_v·(1/n)·Σ_t m_t·(V(s_t) − R̂_t)², n = Σ m_t.

    Аргументы:
        values_pred — [B, L], предсказания критика V(s_t);
        returns     — [B, L], цели R̂_t;
        mask        — [B, L], 1 на токенах ответа, 0 на паддинге;
        c_v         — вес критика.
    Возвращает (loss, dvalues): число float и ∂L_V/∂V формы [B, L] (на паддинге 0).
    """
    # BEGIN SOLUTION
    mask = np.asarray(mask, dtype=float)
    err = (np.asarray(values_pred, dtype=float) - np.asarray(returns, dtype=float)) * mask  # V(s_t) − R̂_t
    n = mask.sum()
    return float(c_v * (err ** 2).sum() / n), 2 * c_v * err / n  # ∂/∂V (V − R̂)² = 2(V − R̂)
    # END SOLUTION


def adam_step(param, grad, m, v, t, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    """Один шаг Adam (минимизация):

        m ← β1·m + (1−β1)·g,   v ← β2·v + (1−β2)·g²,
        m̂ = m / (1 − β1^t),    v̂ = v / (1 − β2^t),    param ← param − lr·m̂ / (√v̂ + eps).

    Аргументы: param, grad, m, v — массивы одной формы (m и v — моменты с прошлого шага, сначала нули);
    t — номер этого шага, с 1; lr — шаг обучения. Возвращает (param, m, v) — новые массивы.
    """
    # BEGIN SOLUTION
    grad = np.asarray(grad, dtype=float)
    m = beta1 * np.asarray(m, dtype=float) + (1 - beta1) * grad  # m ← β1·m + (1−β1)·g
    v = beta2 * np.asarray(v, dtype=float) + (1 - beta2) * grad ** 2  # v ← β2·v + (1−β2)·g²
    m_hat, v_hat = m / (1 - beta1 ** t), v / (1 - beta2 ** t)  # поправка смещения нулевого старта
    return np.asarray(param, dtype=float) - lr * m_hat / (np.sqrt(v_hat) + eps), m, v
    # END SOLUTION


def init_optimizer(theta, w):
    """Состояние Adam для двух таблиц: нулевые моменты и счётчик шагов (готово, менять не нужно)."""
    return {"t": 0, "m_theta": np.zeros_like(theta, dtype=float), "v_theta": np.zeros_like(theta, dtype=float),
            "m_w": np.zeros_like(w, dtype=float), "v_w": np.zeros_like(w, dtype=float)}


def ppo_update(theta, w, batch, rng, opt, lr=0.05, n_epochs=4, n_minibatches=4, eps=0.2, c_v=0.5, c_e=0.01,
               algo="ppo", beta=0.02):
    """Обновление PPO по собранному батчу: n_epochs эпох по перемешанным мини-батчам ответов.

    Аргументы:
        theta, w — таблицы политики и критика (как в sample_answers);
        batch    — словарь sample_answers плюс "adv" и "returns" ([B, L], из token_gae);
        rng      — np.random.Generator;
        opt      — состояние Adam (init_optimizer): "t", "m_theta", "v_theta", "m_w", "v_w";
        lr, n_epochs, n_minibatches, eps, c_v, c_e — шаг, эпохи, число мини-батчей, ε, c_v, c_e;
        algo, beta — только для бонуса: "grpo" — loss grpo_policy_loss с весом KL β, без критика.
    Возвращает (theta, w, opt, stats): новые таблицы, новое состояние Adam и средние по мини-батчам
    stats = {"clipfrac", "approx_kl", "value_loss"}. Входы не меняются.

    Порядок (от него зависит ответ, проверка повторит его):
        для каждой эпохи: perm = rng.permutation(B); мини-батчи — np.array_split(perm, n_minibatches);
        для каждого мини-батча idx:
          1. логиты и V в состояниях мини-батча берутся из ТЕКУЩИХ таблиц: theta[p, t, prev], w[p, t, prev];
          2. Â нормируется по настоящим токенам мини-батча (masked_normalize);
          3. policy_loss с logp_old = batch["logp"] — логарифмы вероятностей при сборе батча, они не
             пересчитываются; critic_loss с целями batch["returns"];
          4. градиенты по логитам и V складываются в таблицы (np.add.at: одно состояние может
             встретиться несколько раз);
          5. opt["t"] += 1, шаг adam_step для theta и для w;
          6. статистика до шага: clipfrac — доля настоящих токенов с |ρ − 1| > ε,
             approx_kl — среднее по настоящим токенам (logp_old − log π_θ) — оценка KL(π_old ‖ π_θ),
             value_loss — значение critic_loss этого мини-батча.
    Возвращаемый opt — с новыми моментами m, v и счётчиком t: следующее обновление продолжает с них.
    GRPO (algo="grpo", бонус) — тот же порядок, кроме шагов 2–3 и критика: Â берётся из batch["adv"] как есть
    (групповое преимущество уже нормировано в grpo_advantages), loss — grpo_policy_loss(логиты, токены,
    batch["logp"], batch["ref_logp"], Â, mask, eps, beta) — без энтропии, c_e и c_v не участвуют; критика нет:
    w, opt["m_w"] и opt["v_w"] возвращаются как были, value_loss = 0.
    """
    # BEGIN SOLUTION
    theta, w = np.array(theta, dtype=float), np.array(w, dtype=float)  # копии: входы не меняются
    opt = {key: (np.array(x) if isinstance(x, np.ndarray) else x) for key, x in opt.items()}
    B, L = batch["mask"].shape
    positions = np.arange(L)[None, :]
    stats = {"clipfrac": [], "approx_kl": [], "value_loss": []}
    for _ in range(n_epochs):
        perm = rng.permutation(B)
        for idx in np.array_split(perm, n_minibatches):
            # 1. состояния мини-батча s_t = (промпт, t, пред. токен) — индексы в таблицах theta и w, [b, L]
            states = (batch["prompt"][idx][:, None], positions, batch["prev"][idx])
            tokens, mb_mask, logp_old = batch["tokens"][idx], batch["mask"][idx], batch["logp"][idx]
            if algo == "grpo":  # бонус: Â группы без нормировки, KL к π_ref в loss, критика нет
                _, dlogits, pi_info = _actor_loss(theta[states], tokens, logp_old, batch["adv"][idx], mb_mask, eps,
                                                  c_e=0.0, ref_logp=batch["ref_logp"][idx], beta=beta)
                loss_v, dvalues = 0.0, np.zeros((len(idx), L))
            else:
                # 2. Â нормируется по настоящим токенам мини-батча
                adv = masked_normalize(batch["adv"][idx], mb_mask)
                # 3. policy_loss (его тело _actor_loss отдаёт и pi_info) с logp_old из батча; critic_loss с целями R̂_t
                _, dlogits, pi_info = _actor_loss(theta[states], tokens, logp_old, adv, mb_mask, eps, c_e=c_e)
                loss_v, dvalues = critic_loss(w[states], batch["returns"][idx], mb_mask, c_v)
            # 4. градиенты по логитам и V — в таблицы; np.add.at складывает вклады повторов одного состояния
            grad_theta, grad_w = np.zeros_like(theta), np.zeros_like(w)
            np.add.at(grad_theta, states, dlogits)
            np.add.at(grad_w, states, dvalues)
            # 5. шаг Adam; счётчик шагов продолжается между обновлениями
            opt["t"] += 1
            theta, opt["m_theta"], opt["v_theta"] = adam_step(theta, grad_theta, opt["m_theta"], opt["v_theta"],
                                                              opt["t"], lr)
            if algo != "grpo":
                w, opt["m_w"], opt["v_w"] = adam_step(w, grad_w, opt["m_w"], opt["v_w"], opt["t"], lr)
            # 6. статистика — до шага: pi_info посчитан вместе с loss актора
            stats["clipfrac"].append(pi_info["clipfrac"])
            stats["approx_kl"].append(pi_info["approx_kl"])
            stats["value_loss"].append(loss_v)
    return theta, w, opt, {k: float(np.mean(x)) for k, x in stats.items()}
    # END SOLUTION


def kl_and_entropy(logits, ref_logits, mask):
    """Мониторинг: точный KL к референсу на ответ и средняя энтропия на токен.

    Аргументы:
        logits     — [B, L, V], логиты политики в состояниях батча;
        ref_logits — [B, L, V], логиты π_ref в тех же состояниях;
        mask       — [B, L], 1 на токенах ответа, 0 после конца.
    Возвращает (kl_ref, entropy), два float:
        kl_ref  = (1/B)·Σ_b Σ_t m_bt·Σ_a π(a|s_bt)·(log π(a|s_bt) − log π_ref(a|s_bt)) — KL на ответ, в натах;
        entropy = (1/n)·Σ_bt m_bt·H(π(·|s_bt)), n = Σ m — средняя энтропия на настоящий токен.
    """
    # BEGIN SOLUTION
    mask = np.asarray(mask, dtype=float)
    logp_all, ref_logp_all = log_softmax(logits), log_softmax(ref_logits)  # [B, L, V]
    probs = np.exp(logp_all)
    kl = (probs * (logp_all - ref_logp_all)).sum(axis=-1)  # KL(π ‖ π_ref) = Σ_a π·(log π − log π_ref), [B, L]
    entropy = -(probs * logp_all).sum(axis=-1)  # H(π(·|s)) = −Σ_a π·log π, [B, L]
    kl_ref = (kl * mask).sum() / mask.shape[0]  # сумма по токенам ответа, среднее по B ответам
    return float(kl_ref), float((entropy * mask).sum() / mask.sum())  # энтропия — среднее по настоящим токенам
    # END SOLUTION


def train(n_updates=40, seed=0, batch_size=64, algo="ppo", beta=0.02, gamma=1.0, lam=0.95, lr=0.05, n_epochs=4,
          n_minibatches=4, eps=0.2, c_v=0.5, c_e=0.01, group_size=8, vapo_alpha=None, log_every=5, tables=None):
    """PPO (RLHF в миниатюре) на задаче toy_lm: политика стартует копией SFT-модели.

    Аргументы:
        n_updates  — число обновлений (батч → GAE → ppo_update);
        seed       — зерно: весь запуск детерминирован, rng = np.random.default_rng(seed) — единственный
                     источник случайности;
        batch_size — B, ответов в батче;
        beta       — β KL-штрафа в token_rewards; gamma, lam — γ и λ для token_gae;
        lr, n_epochs, n_minibatches, eps, c_v, c_e — как в ppo_update;
        algo       — "ppo"; бонус: "grpo" — B/group_size промптов по group_size ответов, преимущество
                     grpo_advantages на все токены ответа, KL — слагаемым loss (grpo_policy_loss), без критика;
        vapo_alpha — бонус: если задано, λ каждого ответа = vapo_lambda(длина, vapo_alpha) вместо lam;
        log_every  — печатать строку прогресса каждые log_every обновлений (0 — молчать);
        tables     — бонус («Сколько стоит KL»): None или словарь; в словарь train в конце кладёт итоговые
                     таблицы tables["theta"] и tables["w"] (обучение от этого не меняется, history — тоже).
    Старт: theta = toy_lm.reference_theta() (копия π_ref), w — нули, Adam — init_optimizer.

    Порядок одного обновления (от него зависит ответ: проверка повторит первые обновления вашими же функциями
    и сверит history число в число):
        1. prompt_ids = rng.integers(toy_lm.N_PROMPTS, size=batch_size);
           GRPO: np.repeat(rng.integers(toy_lm.N_PROMPTS, size=batch_size // group_size), group_size) —
           группа — group_size подряд идущих ответов на ОДИН промпт;
        2. batch = sample_answers(theta, w, ref_theta, prompt_ids, rng) с тем же rng;
           scores = toy_lm.score_batch(prompt_ids, batch["tokens"]);
        3. batch["adv"], batch["returns"] = token_gae(token_rewards(scores, batch["logp"], batch["ref_logp"],
           mask, beta), batch["values"], mask, gamma, lam);
           GRPO: batch["adv"] = grpo_advantages(scores, group_size) на всех токенах ответа (× mask), returns — нули;
        4. kl_ref, entropy = kl_and_entropy(theta[s], ref_theta[s], mask) в состояниях s = (prompt, t, prev) батча —
           до обновления;
        5. theta, w, opt, stats = ppo_update(theta, w, batch, rng, opt, lr, n_epochs, n_minibatches, eps, c_v, c_e)
           (GRPO: ещё algo="grpo", beta=beta) — новые theta, w и opt идут в следующее обновление.
    Возвращает history — список словарей, по одному на обновление, с ключами:
        "update" (номер с 1), "score" (средняя оценка ответов батча, собранного до обновления),
        "kl_ref" и "entropy" (шаг 4), "clipfrac", "approx_kl", "value_loss" (stats из ppo_update),
        "n_answers" (сколько ответов сэмплировано с начала обучения: update·batch_size).
    """
    # BEGIN SOLUTION
    rng = np.random.default_rng(seed)
    ref_theta = toy_lm.reference_theta()
    theta = ref_theta.copy()  # политика стартует копией SFT-модели π_ref
    w = np.zeros(theta.shape[:3])  # критик: V(s_t) = w[p, t, prev]
    opt = init_optimizer(theta, w)
    history = []
    for update in range(1, n_updates + 1):
        # 1. промпты батча; у GRPO — группы по group_size ответов на один промпт
        if algo == "grpo":
            prompt_ids = np.repeat(rng.integers(toy_lm.N_PROMPTS, size=batch_size // group_size), group_size)
        else:
            prompt_ids = rng.integers(toy_lm.N_PROMPTS, size=batch_size)
        # 2. ответы текущей политики (π_old этого обновления) и их оценки reward model
        batch = sample_answers(theta, w, ref_theta, prompt_ids, rng)
        scores = toy_lm.score_batch(prompt_ids, batch["tokens"])
        mask = batch["mask"]
        # 3. преимущества Â_t и цели критика R̂_t
        if algo == "grpo":  # групповое преимущество — на всех токенах ответа; критика нет
            batch["adv"] = grpo_advantages(scores, group_size)[:, None] * mask
            batch["returns"] = np.zeros_like(mask)
        else:  # награды по токенам (оценка в конце минус KL-штраф) и GAE
            rewards = token_rewards(scores, batch["logp"], batch["ref_logp"], mask, beta)
            lams = lam if vapo_alpha is None else vapo_lambda(batch["lengths"], vapo_alpha)  # VAPO: своё λ у ответа
            batch["adv"], batch["returns"] = token_gae(rewards, batch["values"], mask, gamma, lams)
        # 4. мониторинг в состояниях батча — до обновления
        states = (prompt_ids[:, None], np.arange(mask.shape[1])[None, :], batch["prev"])
        kl_ref, entropy = kl_and_entropy(theta[states], ref_theta[states], mask)
        # 5. эпохи PPO по мини-батчам; новые theta, w и opt идут в следующее обновление
        theta, w, opt, stats = ppo_update(theta, w, batch, rng, opt, lr, n_epochs, n_minibatches, eps, c_v, c_e,
                                          algo, beta)
        history.append({"update": update, "score": float(scores.mean()), "kl_ref": kl_ref, "entropy": entropy,
                        **stats, "n_answers": update * len(prompt_ids)})
        if log_every and (update % log_every == 0 or update == 1):
            h = history[-1]
            print(f"обновление {update:3d}  оценка {h['score']:.3f}  KL к реф. {h['kl_ref']:.3f}  "
                  f"энтропия {h['entropy']:.3f}  clipfrac {h['clipfrac']:.3f}  approx_kl {h['approx_kl']:.4f}")
    if tables is not None:  # бонус: итоговая политика и критик — для точной оценки политики перебором
        tables["theta"], tables["w"] = theta, w
    return history
    # END SOLUTION


# ---- Бонус: GRPO и адаптивное λ из VAPO ---------------------------------------------------------

def grpo_advantages(scores, group_size, eps=1e-8):
    """БОНУС. Групповое преимущество GRPO: батч — подряд идущие группы по group_size ответов на один промпт,
    Â_i = (r_i − mean_группы) / (std_группы + eps), std с ddof = 0.

    Аргументы: scores — [B], B делится на group_size. Возвращает [B] — одно число на ответ
    (оно достаётся всем его токенам). Группа из одинаковых оценок даёт нули.
    """
    # BEGIN SOLUTION
    groups = np.asarray(scores, dtype=float).reshape(-1, group_size)  # [B / group_size, group_size]
    adv = (groups - groups.mean(axis=1, keepdims=True)) / (groups.std(axis=1, keepdims=True) + eps)
    return adv.reshape(-1)
    # END SOLUTION


def grpo_policy_loss(logits, actions, logp_old, ref_logp, adv, mask, eps=0.2, beta=0.02):
    """БОНУС. Loss GRPO (DeepSeekMath, ф. 3) для МИНИМИЗАЦИИ и его градиент по логитам:

        L = −(1/n)·Σ_t m_t·[min(ρ_t·Â_t, clip(ρ_t, 1−ε, 1+ε)·Â_t) − β·k_t],
        k_t = π_ref/π_θ − log(π_ref/π_θ) − 1 = exp(ref_logp − log π_θ) − (ref_logp − log π_θ) − 1,

    KL к референсу — отдельным слагаемым loss (несмещённая оценка k3, всегда ≥ 0), а не в награде.
    Аргументы — как у policy_loss, плюс ref_logp — [...], log π_ref выбранных токенов; энтропии нет.
    Возвращает (loss, dlogits). Подсказка: ∂k_t/∂log π_θ = 1 − π_ref/π_θ.
    """
    # BEGIN SOLUTION
    loss, dlogits, _ = _actor_loss(logits, actions, logp_old, adv, mask, eps, c_e=0.0, ref_logp=ref_logp, beta=beta)
    return loss, dlogits
    # END SOLUTION


def vapo_lambda(lengths, alpha=0.05):
    """БОНУС. Адаптивное по длине λ из VAPO: λ = 1 − 1/(α·l), l — длина ответа в токенах.

    Аргументы: lengths — число или массив длин; alpha — α (в статье 0.05).
    Возвращает np.ndarray той же формы (для числа — 0-мерный). У коротких ответов формула уходит ниже
    нуля (l < 1/α) — такие λ обрезаются до 0: np.clip(…, 0, 1).
    Пример: α = 0.05, l = 100 → λ = 0.8; l = 1000 → 0.98.
    """
    # BEGIN SOLUTION
    lengths = np.asarray(lengths, dtype=float)
    return np.clip(1 - 1 / (alpha * lengths), 0.0, 1.0)
    # END SOLUTION


# ---- Бонус: сколько стоит KL --------------------------------------------------------------------

def kl_optimal_policy(ref_logp, rewards, beta):
    """БОНУС. Точный оптимум цели RLHF с KL-штрафом на всех ответах одного промпта:

        J(π) = E_π[r] − β·KL(π ‖ π_ref)  достигает максимума при  π*(y) = π_ref(y)·exp(r(y)/β) / Z,
        Z = Σ_y π_ref(y)·exp(r(y)/β),   и сам максимум  J* = β·log Z = β·log E_ref[exp(r/β)].

    Аргументы:
        ref_logp — [N], log π_ref(y) каждого из N ответов промпта (Σ_y π_ref(y) = 1);
        rewards  — [N], оценки r(y) тех же ответов;
        beta     — β > 0, вес KL-штрафа.
    Возвращает (probs, mean_reward, kl): probs — [N], π*(y); mean_reward = Σ_y π*(y)·r(y) и
    kl = KL(π* ‖ π_ref) = Σ_y π*(y)·(log π*(y) − log π_ref(y)) — два float (kl — в натах).
    Численно устойчиво, как log_softmax: при β = 1e−4 показатели r/β доходят до 10⁴, и exp от них — inf.
    Проверка: mean_reward − β·kl = J* = β·log E_ref[exp(r/β)].
    """
    # BEGIN SOLUTION
    ref_logp, rewards = np.asarray(ref_logp, dtype=float), np.asarray(rewards, dtype=float)
    log_probs = log_softmax(ref_logp + rewards / beta)  # log π* = log π_ref + r/β − log Z, Z — log-sum-exp
    probs = np.exp(log_probs)
    return probs, float(probs @ rewards), float(probs @ (log_probs - ref_logp))  # E_π*[r], KL(π* ‖ π_ref)
    # END SOLUTION
