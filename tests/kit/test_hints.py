"""Hints teach, they do not hand out the answer.

A student who reads the feedback of a failed check is told what to compute in the lesson's formulas and words
(π(a) = exp(z_a − max z) / Σ_b exp(z_b − max z), max — по каждой строке отдельно), never handed a line of NumPy
that can be pasted in as the answer (the tie hint once said ``np.argmax(Q >= best − tol, axis=1)``, the ε-greedy
one ``rng.choice(np.flatnonzero(q == q.max()))``). Draw orders a correct answer depends on are a contract of the
statement (the docstrings, the task README); a hint refers to it in words («порядок вызовов rng — как в docstring:
сначала действие, потом шум награды»).

What a student reads, and so what is checked: every text of the graded suites ``tests/<hw>/test_*.py`` — each
string constant (an f-string whole, its fields standing for a value) that has a Cyrillic letter or is passed as
``hint=``, ``what=``, ``expected=``, ``got=`` or ``mistake=``: the hints, the names of typical mistakes
(``mistakes=`` keys, ``mistake=`` and ``Mistake(...)`` hints), the module-level texts used as hints, the titles;
docstrings are left out, the feedback never shows them. Also the texts of ``grader/grading/checks.py`` and
``grader/grading/explain.py`` (the hints every check shares) and the ``timeout_hints`` of ``parts.toml``.

The rule: such a text holds none of ``CODE`` —
  - a call of NumPy or of the generator (``np.…(``, ``rng.…(``), a call handed the generator (``f(…, rng, …)``:
    ``epsilon_greedy(Q[s], epsilon, rng)`` as the whole action choice, a loop body of ``train``);
  - an array method that computes (``.max(``, ``.sum(``, ``.mean(``, ``.std(``, ``.var(``, ``.argmax(``,
    ``.cumsum(``, …), ``keepdims``, a matrix product ``@``;
  - a Python comparison ``==`` / ``!=``, a statement (``return x``, ``if …:``, ``while …:``, ``for …:``), a
    conditional expression ``… if … else …``, a name assigned a call (``theta = toy_lm.reference_theta()``);
  - a slice or a negative index of an array (``values[1:]``, ``g[:200]``, ``next_values[-1]``).
Allowed, because they compute no answer: type advice ``np.asarray(x, dtype=float)`` / ``np.array(x, dtype=float)``
(also ``dtype=bool``), a NumPy name mentioned without a call to say what a mistake did («np.argmax всегда берёт
первое из равных», «не np.add.at»), the environment's API (``env.reset(seed=5)`` describing a check's episodes),
and the lesson's formulas, whatever their symbols (Q(s, a) += α·(цель − Q(s, a)), clip(ρ, 1−ε, 1+ε)·Â).
The statement itself (docstrings, the task README) may spell a contract in code; it is not read here.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from grader.base import homeworks
from grader.base.homeworks import ROOT

TYPE_ADVICE = re.compile(r"\bnp\.(?:asarray|array)\(\w+, dtype=(?:float|bool)\)")
CODE = {
    "вызов NumPy": re.compile(r"\bnp\.[\w.]*\w\("),
    "вызов генератора": re.compile(r"\brng\.\w+\("),
    "вызов, которому передан генератор": re.compile(r"\w\([^()]*\brng\b[^()]*\)"),
    "метод массива": re.compile(r"[\w\])]\.(?:max|min|sum|mean|std|var|argmax|argmin|cumsum|cumprod|prod|any|all"
                                r"|copy|astype|reshape|nonzero|clip|dot)\("),
    "keepdims": re.compile(r"\bkeepdims\b"),
    "матричное произведение @": re.compile(r"[\w)\]]\s*@\s*[\w(]"),
    "сравнение Python": re.compile(r"[\w)\]]\s*[=!]=\s*[\w(]"),
    "return": re.compile(r"\breturn\s+[A-Za-z_(\[]"),
    "присваивание вызова": re.compile(r"\b[A-Za-z_]\w*\s*=\s*[A-Za-z_]\w*\.[\w.]*\("),
    "оператор Python": re.compile(r"\b(?:if|elif|while|for)\b[^:\n]*:(?:\s|$)"),
    "условное выражение": re.compile(r"\w\s+if\s+[^\n]+?\s+else\s+\w"),
    "срез массива": re.compile(r"\w\[\s*-?\d*\s*:\s*-?\d*\s*\]|\w\[-\d+\]"),
}
CYRILLIC = re.compile(r"[А-Яа-яЁё]")
SHOWN = ("hint", "what", "expected", "got", "mistake")


def code_in(text: str) -> list[str]:
    """The kinds of answer-code ``text`` holds (empty: it teaches in words)."""
    text = TYPE_ADVICE.sub("x", text)
    return [kind for kind, pattern in CODE.items() if pattern.search(text)]


def _text(node: ast.AST) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):  # an f-string: its fields stand for a value
        return "".join(v.value if isinstance(v, ast.Constant) else "x" for v in node.values)
    return None


def texts(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every text a student may read in the Python module ``path`` (see the module docstring)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body \
                and isinstance(node.body[0], ast.Expr) and _text(node.body[0].value) is not None:
            skip.add(id(node.body[0].value))  # a docstring
        if isinstance(node, ast.JoinedStr):
            skip.update(id(v) for v in node.values)  # read as a part of the whole f-string
    shown: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in SHOWN:
            shown.update(id(n) for n in ast.walk(node.value))
    out = []
    for node in ast.walk(tree):
        text = _text(node)
        if text is not None and id(node) not in skip and (CYRILLIC.search(text) or id(node) in shown):
            out.append((node.lineno, text))
    return out


def _sources() -> list[Path]:
    suites = [p for hw in homeworks.available() for p in sorted(homeworks.load(hw).tests_dir.glob("test_*.py"))]
    return suites + [ROOT / "grader" / "grading" / "checks.py", ROOT / "grader" / "grading" / "explain.py"]


SOURCES = _sources()


@pytest.mark.parametrize("path", SOURCES, ids=[p.relative_to(ROOT).as_posix() for p in SOURCES])
def test_no_text_a_student_reads_hands_out_answer_code(path):
    found = [f"{path.relative_to(ROOT)}:{line}: {', '.join(kinds)}: {text!r}"
             for line, text in texts(path) if (kinds := code_in(text))]
    assert not found, ("say it in the lesson's formulas and words, not in code (tests/kit/test_hints.py):\n"
                       + "\n".join(found))


@pytest.mark.parametrize("hw", homeworks.available())
def test_no_timeout_hint_hands_out_answer_code(hw):
    found = [f"{part.id}.{function}: {', '.join(kinds)}: {text!r}"
             for part in homeworks.load(hw).parts for function, text in part.timeout_hints
             if (kinds := code_in(text))]
    assert not found, "\n".join(found)


@pytest.mark.parametrize("text", [
    "правило равенства: берите меньший номер — например, np.argmax(Q >= best − tol, axis=1), где "
    "best = Q.max(axis=1, keepdims=True)",
    "np.argmax всегда берёт первое из равных. Выберите случайно среди всех argmax: "
    "rng.choice(np.flatnonzero(q == q.max())).",
    "сдвиг — на максимум каждой строки: z − z.max(axis=-1, keepdims=True).",
    "Передайте свой epsilon: epsilon_greedy(Q[s], epsilon, rng), а не число из кода.",
    "верните пару: return x, y",
    "Q(s, a) = R[s, a] + γ·Σ_{s'} P[s, a, s']·V(s') — например, R + γ·(P @ V).",
    "по docstring: s, _ = env.reset(seed=seed) if episode == 0 else env.reset()",
    "эпизод кончается и на terminated, и на truncated: while not (terminated or truncated): ...",
    "следующие ценности — values[1:] и last_value.",
], ids=["tie", "epsilon-greedy", "softmax-shift", "action-choice", "pair", "matmul", "env-seeding", "loop",
        "slice"])
def test_the_rule_catches_answer_code(text):
    """The issue's two examples and the other kinds of answer-code the suites once held."""
    assert code_in(text), text


@pytest.mark.parametrize("text", [
    "π(a) = exp(z_a − max z) / Σ_b exp(z_b − max z), max — по каждой строке отдельно.",
    "Q(s, a) += α·(r + γ·max_b Q(s', b) − Q(s, a)); в конечном состоянии цель — просто r.",
    "награды бывают целыми: приводите их к float — np.asarray(rewards, dtype=float).",
    "Похоже на типичную ошибку: ничья разбита первым по номеру действием (как np.argmax), а не случайно.",
    "min(ρ·Â, clip(ρ, 1−ε, 1+ε)·Â): при Â > 0 выгода ограничена (1+ε)·Â.",
    "эпизоды RandomWalk().episodes(8, seed=5): первый — после env.reset(seed=5), следующие — после env.reset()",
], ids=["formula", "update", "type-advice", "mistake", "clip", "environment-api"])
def test_the_rule_lets_the_lessons_words_through(text):
    assert not code_in(text), code_in(text)
