"""Игрушечная «языковая модель» для части boss (готовый код, его не нужно менять).

Задача: промпт — три разные буквы, правильный ответ — те же буквы по алфавиту и токен конца.
Например, на промпт «в а б» правильный ответ «а б в <конец>».

Словарь: пять букв «а» … «д» (токены 0–4) и токен конца ответа EOS = 5. Ответ — не длиннее
MAX_LEN = 4 токенов; ответ, который дошёл до MAX_LEN без токена конца, обрывается там.

Политика — таблица логитов theta формы [N_PROMPTS, MAX_LEN, N_PREV, V]: логиты следующего токена
зависят от промпта, позиции t в ответе и предыдущего токена (перед первым токеном «предыдущий» —
служебный BOS = 6, поэтому N_PREV = V + 1 = 7). Это и есть состояние s_t = (промпт, t, предыдущий
токен). Критик — таблица той же индексации формы [N_PROMPTS, MAX_LEN, N_PREV]: V(s_t) = w[промпт, t, пред.].

Референсная политика («SFT-модель», reference_theta()) не равномерна: она пишет правдоподобные ответы —
буквы из промпта и конец после трёх букв, — но чаще всего просто переписывает промпт как есть, а это
неверно: все промпты подобраны так, что копия не совпадает с ответом ни в одной позиции.

Reward model (score) — готовая скриптовая оценка ответа целиком, число от 0 до 1 (см. score).
"""
from __future__ import annotations

import itertools

import numpy as np

VOCAB = ("а", "б", "в", "г", "д", "<конец>")
N_LETTERS = 5
EOS = 5  # токен конца ответа
BOS = 6  # «предыдущий токен» перед первым токеном ответа (только индекс таблицы, его не сэмплируют)
V = len(VOCAB)  # размер словаря: 6 действий
N_PREV = V + 1  # значений «предыдущего токена»: 6 токенов и BOS
MAX_LEN = 4  # ответ — не больше 4 токенов

# Промпты: по три разные буквы; копия промпта ни в одной позиции не совпадает с сортировкой.
PROMPTS = np.array([[2, 0, 1], [3, 0, 2], [1, 2, 0], [4, 1, 3], [3, 4, 1], [4, 0, 2]])
N_PROMPTS = len(PROMPTS)


def target(prompt_id: int) -> list[int]:
    """Правильный ответ на промпт (без токена конца): его буквы по алфавиту."""
    return sorted(int(x) for x in PROMPTS[prompt_id])


def answer_letters(tokens) -> list[int]:
    """Буквы ответа: токены до первого EOS (или все MAX_LEN, если EOS нет — ответ оборван)."""
    out = []
    for tok in tokens[:MAX_LEN]:
        if int(tok) == EOS:
            break
        out.append(int(tok))
    return out


def score(prompt_id: int, tokens) -> float:
    """Оценка reward model за ответ целиком: доля позиций, где буква совпала с правильной.

    score = (число позиций i, где y_i = target_i) / max(len(y), 3), y — буквы ответа (answer_letters).
    Правильный ответ «а б в <конец>» получает 1; лишние буквы и оборванный ответ без конца
    увеличивают знаменатель, пропущенные — не дают совпадений. Оценка — только в конце ответа.
    """
    y = answer_letters(tokens)
    goal = target(prompt_id)
    hits = sum(int(a == b) for a, b in zip(y, goal))
    return hits / max(len(y), len(goal))


def score_batch(prompt_ids, tokens) -> np.ndarray:
    """Оценки батча ответов: prompt_ids — [B], tokens — [B, MAX_LEN] → np.ndarray [B]."""
    tokens = np.asarray(tokens)
    return np.array([score(int(p), tokens[i]) for i, p in enumerate(np.asarray(prompt_ids))], dtype=float)


def reference_theta() -> np.ndarray:
    """Логиты референсной («SFT») политики, форма [N_PROMPTS, MAX_LEN, N_PREV, V].

    На позиции t < 3 SFT-модель чаще всего переписывает букву промпта с той же позиции, реже берёт
    другую букву промпта, почти никогда — букву не из промпта и почти не повторяет предыдущий токен;
    после трёх букв почти всегда ставит конец.
    """
    theta = np.zeros((N_PROMPTS, MAX_LEN, N_PREV, V))
    for p, prompt in enumerate(PROMPTS):
        for t in range(MAX_LEN):
            logits = np.full(V, -1.0)  # буквы не из промпта
            logits[prompt] = 1.0  # буквы промпта
            if t < len(prompt):
                logits[prompt[t]] = 2.6  # копия промпта — любимая ошибка SFT-модели
                logits[EOS] = -2.0  # закончить раньше времени — редко
            else:
                logits[EOS] = 3.0  # после трёх букв — конец
            theta[p, t] = logits
            for prev in range(N_LETTERS):
                theta[p, t, prev, prev] -= 1.5  # повтор предыдущей буквы — редкость
    return theta


def decode(tokens) -> str:
    """Ответ строкой: «а б в <конец>»."""
    out = []
    for tok in tokens[:MAX_LEN]:
        out.append(VOCAB[int(tok)])
        if int(tok) == EOS:
            break
    return " ".join(out)


def all_answers() -> tuple[np.ndarray, np.ndarray]:
    """Все возможные ответы: (tokens [N, MAX_LEN] — после конца EOS, mask [N, MAX_LEN])."""
    seqs = []
    for n in range(1, MAX_LEN + 1):
        for letters in itertools.product(range(N_LETTERS), repeat=n - 1):
            seqs.append(list(letters) + [EOS] + [EOS] * (MAX_LEN - n))
    for letters in itertools.product(range(N_LETTERS), repeat=MAX_LEN):  # оборванные без конца
        seqs.append(list(letters))
    tokens = np.array(seqs)
    lengths = np.array([min(list(s).index(EOS) + 1 if EOS in s else MAX_LEN, MAX_LEN) for s in seqs])
    mask = (np.arange(MAX_LEN)[None, :] < lengths[:, None]).astype(float)
    return tokens, mask


def answer_logp(theta, log_softmax) -> np.ndarray:
    """log π(y | промпт) всех ответов all_answers() под политикой theta, форма [N_PROMPTS, N]: сумма log π токенов
    ответа (до его конца включительно).

    log_softmax — функция log_softmax из boss.py (ваша): log π по последней оси логитов.
    """
    theta = np.asarray(theta, dtype=float)
    tokens, mask = all_answers()
    prev = np.concatenate([np.full((len(tokens), 1), BOS), tokens[:, :-1]], axis=1)
    t_idx = np.arange(MAX_LEN)[None, :]
    out = np.zeros((N_PROMPTS, len(tokens)))
    for p in range(N_PROMPTS):
        logp = np.asarray(log_softmax(theta[p, t_idx, prev]), dtype=float)  # [N, L, V]
        out[p] = (np.take_along_axis(logp, tokens[..., None], axis=-1)[..., 0] * mask).sum(axis=1)
    return out


def answer_scores() -> np.ndarray:
    """Оценки reward model всех ответов all_answers() на каждый промпт, форма [N_PROMPTS, N]."""
    tokens, _ = all_answers()
    return np.array([score_batch(np.full(len(tokens), p), tokens) for p in range(N_PROMPTS)])


def exact_stats(theta, log_softmax, ref_theta=None) -> dict:
    """Точные (перебором всех ответов) средняя оценка и KL(π ‖ π_ref) на ответ, по всем промптам поровну.

    log_softmax — функция log_softmax из boss.py (ваша): log π по последней оси логитов.
    Нужна графикам и бенчмаркам, чтобы мерить политику без шума сэмплирования.
    """
    ref = reference_theta() if ref_theta is None else np.asarray(ref_theta, dtype=float)
    lp, lp_ref = answer_logp(theta, log_softmax), answer_logp(ref, log_softmax)
    prob = np.exp(lp)
    return {"score": float((prob * answer_scores()).sum(axis=1).mean()),
            "kl_ref": float((prob * (lp - lp_ref)).sum(axis=1).mean())}
