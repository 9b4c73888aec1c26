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
    # TODO: ваш код
    raise NotImplementedError("TODO: log_softmax")


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
    # TODO: ваш код
    raise NotImplementedError("TODO: sample_answers")


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
    # TODO: ваш код
    raise NotImplementedError("TODO: token_rewards")


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
    # TODO: ваш код
    raise NotImplementedError("TODO: token_gae")


def masked_normalize(x, mask, eps=1e-8):
    """Нормировка преимуществ по НАСТОЯЩИМ токенам: (Â − mean) / (std + eps), паддинг не участвует.

    Аргументы:
        x    — [B, L], преимущества;
        mask — [B, L], 1 на токенах ответа, 0 после конца;
        eps  — добавка к std.
    mean и std (ddof = 0) — по элементам с mask = 1. Возвращает [B, L], на паддинге 0.
    """
    # TODO: ваш код
    raise NotImplementedError("TODO: masked_normalize")


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
    # TODO: ваш код
    raise NotImplementedError("TODO: policy_loss")


def critic_loss(values_pred, returns, mask, c_v=0.5):
    """Loss критика и его градиент: L_V = c_v·(1/n)·Σ_t m_t·(V(s_t) − R̂_t)², n = Σ m_t.

    Аргументы:
        values_pred — [B, L], предсказания критика V(s_t);
        returns     — [B, L], цели R̂_t;
        mask        — [B, L], 1 на токенах ответа, 0 на паддинге;
        c_v         — вес критика.
    Возвращает (loss, dvalues): число float и ∂L_V/∂V формы [B, L] (на паддинге 0).
    """
    # TODO: ваш код
    raise NotImplementedError("TODO: critic_loss")


def adam_step(param, grad, m, v, t, lr, beta1=0.9, beta2=0.999, eps=1e-8):
    """Один шаг Adam (минимизация):

        m ← β1·m + (1−β1)·g,   v ← β2·v + (1−β2)·g²,
        m̂ = m / (1 − β1^t),    v̂ = v / (1 − β2^t),    param ← param − lr·m̂ / (√v̂ + eps).

    Аргументы: param, grad, m, v — массивы одной формы (m и v — моменты с прошлого шага, сначала нули);
    t — номер этого шага, с 1; lr — шаг обучения. Возвращает (param, m, v) — новые массивы.
    """
    # TODO: ваш код
    raise NotImplementedError("TODO: adam_step")


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
    # TODO: ваш код
    raise NotImplementedError("TODO: ppo_update")


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
    # TODO: ваш код
    raise NotImplementedError("TODO: kl_and_entropy")


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
    # TODO: ваш код
    raise NotImplementedError("TODO: train")


# ---- Бонус: GRPO и адаптивное λ из VAPO ---------------------------------------------------------

def grpo_advantages(scores, group_size, eps=1e-8):
    """БОНУС. Групповое преимущество GRPO: батч — подряд идущие группы по group_size ответов на один промпт,
    Â_i = (r_i − mean_группы) / (std_группы + eps), std с ddof = 0.

    Аргументы: scores — [B], B делится на group_size. Возвращает [B] — одно число на ответ
    (оно достаётся всем его токенам). Группа из одинаковых оценок даёт нули.
    """
    # TODO: ваш код
    raise NotImplementedError("TODO: grpo_advantages")


def grpo_policy_loss(logits, actions, logp_old, ref_logp, adv, mask, eps=0.2, beta=0.02):
    """БОНУС. Loss GRPO (DeepSeekMath, ф. 3) для МИНИМИЗАЦИИ и его градиент по логитам:

        L = −(1/n)·Σ_t m_t·[min(ρ_t·Â_t, clip(ρ_t, 1−ε, 1+ε)·Â_t) − β·k_t],
        k_t = π_ref/π_θ − log(π_ref/π_θ) − 1 = exp(ref_logp − log π_θ) − (ref_logp − log π_θ) − 1,

    KL к референсу — отдельным слагаемым loss (несмещённая оценка k3, всегда ≥ 0), а не в награде.
    Аргументы — как у policy_loss, плюс ref_logp — [...], log π_ref выбранных токенов; энтропии нет.
    Возвращает (loss, dlogits). Подсказка: ∂k_t/∂log π_θ = 1 − π_ref/π_θ.
    """
    # TODO: ваш код
    raise NotImplementedError("TODO: grpo_policy_loss")


def vapo_lambda(lengths, alpha=0.05):
    """БОНУС. Адаптивное по длине λ из VAPO: λ = 1 − 1/(α·l), l — длина ответа в токенах.

    Аргументы: lengths — число или массив длин; alpha — α (в статье 0.05).
    Возвращает np.ndarray той же формы (для числа — 0-мерный). У коротких ответов формула уходит ниже
    нуля (l < 1/α) — такие λ обрезаются до 0: np.clip(…, 0, 1).
    Пример: α = 0.05, l = 100 → λ = 0.8; l = 1000 → 0.98.
    """
    # TODO: ваш код
    raise NotImplementedError("TODO: vapo_lambda")


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
    # TODO: ваш код
    raise NotImplementedError("TODO: kl_optimal_policy")
