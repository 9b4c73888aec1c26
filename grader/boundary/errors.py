"""What a failed call raises in the checking process.

Every one of these is built here from plain data the worker sent (an exception's type name, message, kind and
the frames of the student's files) or from what this process saw itself (a deadline passed, a pipe that ended):
no exception object of the worker's ever crosses. A builtin exception the student's code raised is rebuilt as a
subclass of the builtin *named* in the data (``except ValueError`` in a test works), never of a class it sent.
"""
from __future__ import annotations

import builtins
from pathlib import Path

from grader.boundary.loading import MissingFunction, ModuleLoadError


class RemoteError(Exception):
    """An exception the student's code raised in the worker, as plain data: its type name, message, kind
    (todo, missing, exit, input, recursion, error) and the frames of the student's files."""

    def __init__(self, info: dict, function: str):
        super().__init__(info.get("message", ""))
        self.info, self.function = info, function

    @property
    def kind(self) -> str:
        return self.info.get("kind", "error")

    @property
    def frames(self) -> list[list]:
        """[file name, line, function, code] of each frame the worker sent in that shape (anything else is dropped)."""
        frames = self.info.get("frames")
        return [f for f in frames if type(f) is list and len(f) == 4 and type(f[1]) in (int, type(None))
                and all(type(x) is str for x in (f[0], f[2], f[3]))] if type(frames) is list else []


_REMOTE_TYPES: dict[str, type] = {}


def remote_error(info: dict, function: str) -> RemoteError:
    """A RemoteError that is also the builtin exception it stands for, or the nearest builtin its class derives from
    (``except ValueError`` in a test catches a student's ``class BadInput(ValueError)``); its original class name
    stays in ``info["type"]``, which the report prints."""
    name = info.get("base") if type(info.get("base")) is str else ""
    base = getattr(builtins, name, None) if name.isidentifier() else None
    if not (isinstance(base, type) and issubclass(base, Exception)):
        return RemoteError(info, function)
    if name not in _REMOTE_TYPES:
        try:
            _REMOTE_TYPES[name] = type(f"Remote{name}", (RemoteError, base), {"__init__": RemoteError.__init__,
                                                                              "__str__": Exception.__str__})
        except TypeError:  # a builtin that cannot be subclassed together with RemoteError
            _REMOTE_TYPES[name] = RemoteError
    return _REMOTE_TYPES[name](info, function)


class CallTimeout(Exception):
    """A call ran past the check's time limit; the message says which function and where it was."""


class BudgetSpent(CallTimeout):
    """The part's calls together used up its CPU budget: the call was not made, or ended there."""


class WorkerCrashed(Exception):
    """The worker ended in the middle of a call (os._exit, a crash, a resource limit)."""


class HungFunction(Exception):
    """A call of a function that already ran past the time limit in an earlier check: it fails at once."""


class BadAnswer(Exception):
    """The answer (or an argument the function changed) is not plain data; the message says what it was."""


# ---- the words of each, for the student -----------------------------------------------------------------------

def timed_out(function: str, limit: float, where: str, hint: str | None) -> CallTimeout:
    return CallTimeout(f"превышено время ({limit:g} с): функция {function} не вернула ответ. Нет ли бесконечного "
                       "цикла (while без выхода, условие остановки, которое не выполняется)?"
                       + (f"\n{where}" if where else "") + (f"\nПодсказка: {hint}" if hint else ""))


def budget_spent(function: str, budget: float, limit: float, ran: bool = False) -> BudgetSpent:
    what = "не успела вернуть ответ" if ran else "не запускалась"
    return BudgetSpent(f"превышено общее время части ({budget:g} с): вызовы вашего кода во всех проверках части "
                       f"вместе израсходовали её бюджет — {budget:g} с процессорного времени, — поэтому функция "
                       f"{function} {what}, а оставшиеся проверки части не засчитаны.\nПодсказка: ищите функцию, "
                       f"которая в каждом вызове работает почти до лимита одной проверки ({limit:g} с): лишние "
                       "циклы, повторные вычисления, слишком много итераций. Верное решение, даже медленное, "
                       "укладывается в бюджет с большим запасом.")


def crashed(function: str, exc: Exception) -> WorkerCrashed:
    return WorkerCrashed(f"процесс, выполнявший ваш код, завершился посреди вызова {function} ({exc}): ваш код вызвал "
                         "os._exit, завершил интерпретатор, упал или превысил предел памяти. Остальные проверки "
                         "продолжены в новом процессе.")


def hung(function: str, title: str, limit: float) -> HungFunction:
    return HungFunction(f"функция {function} не запускалась: она уже зависла в проверке «{title}» (превышено время, "
                        f"{limit:g} с). Исправьте зацикливание, и эти проверки запустятся по-настоящему.")


def load_timed_out(module: str, limit: float, where: str) -> ModuleLoadError:
    return ModuleLoadError(f"превышено время ({limit:g} с) при загрузке модуля {module}.py: похоже, на верхнем уровне "
                           "модуля бесконечный цикл или долгий расчёт." + (f"\n{where}" if where else ""))


def load_crashed(module: str, exc: Exception) -> ModuleLoadError:
    return ModuleLoadError(f"процесс проверки завершился при загрузке модуля {module}.py ({exc}): на верхнем уровне "
                           "модуля вызван os._exit или интерпретатор упал. Уберите этот вызов из модуля: при импорте "
                           "должны только определяться функции.")


def missing(source: Path, module: str, function: str) -> MissingFunction:
    if source.suffix == ".ipynb":
        return MissingFunction(f"в тетрадке не определено «{function}»: выполните ячейку с этой функцией (и ячейки "
                               "выше) или проверьте, что имя написано так же, как в задании")
    return MissingFunction(f"в {module}.py нет функции «{function}»: проверьте, что имя написано так же, как в задании")
