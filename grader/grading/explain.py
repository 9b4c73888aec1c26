"""Why a graded check failed, in one Russian sentence a student can act on: (kind, message).

Kinds: check (the check's own finding), todo (a function not written yet), load (the module does not load),
timeout, hung (not run: the function already hung), crash (the worker died), error (the student's code raised,
or answered with something that is not plain data).
"""
from __future__ import annotations

import traceback
from pathlib import Path

from grader.base.escape import one_line
from grader.boundary.errors import BadAnswer, CallTimeout, HungFunction, RemoteError, WorkerCrashed
from grader.boundary.loading import MissingFunction, ModuleLoadError
from grader.grading.checks import CheckFailure

_MAX_MESSAGE = 300

_PLAIN = {CheckFailure: "check", ModuleLoadError: "load", CallTimeout: "timeout", HungFunction: "hung",
          WorkerCrashed: "crash", BadAnswer: "error", MissingFunction: "todo"}


def explain(exc: BaseException, live=None, mutated: list[tuple[str, str]] = ()) -> tuple[str, str]:
    """(kind, message) for an exception a graded test raised. ``live`` is the in-notebook namespace, if any;
    ``mutated`` the (function, parameter) pairs whose argument the student's code changed in place in this check."""
    for cls, kind in _PLAIN.items():
        if isinstance(exc, cls):
            return kind, str(exc)
    if isinstance(exc, RemoteError):
        return _remote(exc)
    if live is not None:  # the in-notebook self-check: the student's code ran in this process
        frame = live.student_frame(exc)
        if isinstance(exc, NotImplementedError):
            return "todo", f"не реализовано (TODO): {frame.name if frame else _todo_name(str(exc))}"
        if frame is not None:
            return "error", f"ошибка в вашем коде: {live.describe_error(exc)}"
    if mutated:  # the check's own code broke on an input the student's function changed under it
        function, name = mutated[0][0], one_line(mutated[0][1], 100)  # the parameter's name, as the worker said
        return "error", (f"функция {function} изменила свой аргумент `{name}` на месте, а проверка использует его "
                         f"дальше и не может сравнить ответ ({_local(exc)}).\nПодсказка: функции не меняют свои "
                         "входы — работайте с копией (np.array(x, dtype=float)) или создавайте новые массивы и "
                         "списки вместо x.append(...), x[...] = ..., x -= ....")
    return "error", (f"ошибка при проверке ответа: {_local(exc)}\n"
                     "Подсказка: проверьте тип и форму того, что возвращает функция (см. её docstring).")


def _todo_name(message: str) -> str:
    return message.replace("TODO:", "").strip() or "функция"


def _remote(exc: RemoteError) -> tuple[str, str]:
    kind, frames = exc.kind, exc.frames
    if kind == "missing":
        return "todo", one_line(exc)
    if kind == "todo":
        return "todo", f"не реализовано (TODO): {one_line(frames[-1][2] if frames else _todo_name(str(exc)), 200)}"
    if kind == "exit":
        code = one_line(exc.info.get("message", ""), 200)
        return "error", (f"ваш код вызвал sys.exit({code}) — функциям домашней работы выходить "
                         "из программы не нужно: верните результат через return.")
    if kind == "input":
        return "error", ("ваш код ждёт ввода с клавиатуры (input()): при проверке ввода нет. Уберите input() — "
                         f"функция получает всё через аргументы. {describe_remote(exc)}")
    if kind == "recursion":
        return "error", f"слишком глубокая рекурсия: {describe_remote(exc)}"
    if frames:
        return "error", f"ошибка в вашем коде: {describe_remote(exc)}"
    return "error", (f"ошибка при вызове {exc.function}: {describe_remote(exc)}\n"
                     "Подсказка: сверьте аргументы с сигнатурой функции в задании.")


def describe_remote(exc: RemoteError) -> str:
    """``ExcType: message (file.py, строка N, в func)`` naming the deepest frame of the student's code."""
    message = one_line(str(exc).strip(), _MAX_MESSAGE)  # the student's text: no line of its own in the report
    kind = one_line(exc.info.get("type", "Exception"), 80)
    text = f"{kind}: {message}" if message else kind
    if exc.frames:
        filename, line, func, _ = exc.frames[-1]
        name = filename[1:-1] if filename.startswith("<") else Path(filename).name
        text += f" ({one_line(name)}, строка {line}, в {one_line(func)})"
    return text


def _local(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    message = one_line(str(exc).strip(), _MAX_MESSAGE)  # it may quote the student's answer
    where = f" (строка {frames[-1].lineno}, в {frames[-1].name})" if frames else ""
    return f"{type(exc).__name__}: {message}{where}" if message else f"{type(exc).__name__}{where}"
