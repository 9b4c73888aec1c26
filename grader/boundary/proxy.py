"""What a graded test holds: the submission's module and functions as proxies whose calls cross to the worker.

A proxy holds nothing of the submission's: ``module.f(...)`` is :meth:`Session.call`, whose answer is plain
data. Which names a module has comes from the worker's "loaded" answer, a set of strings.
"""
from __future__ import annotations

import typing

from grader.boundary import errors

if typing.TYPE_CHECKING:
    from grader.boundary.session import Session


class RemoteModule:
    """Stands for a student's module in a graded test: ``module.f(...)`` calls ``f`` in the worker."""

    def __init__(self, session: Session, name: str):
        self._session, self.__name__ = session, name
        self._functions: dict[str, RemoteFunction] = {}

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        info = self._session.load(self.__name__)
        if name not in info.callables:
            raise errors.missing(self._session.source, self.__name__, name)
        if name not in self._functions:
            self._functions[name] = RemoteFunction(self._session, self.__name__, name)
        return self._functions[name]

    def entered(self) -> dict[str, list[str]]:
        """Function called in this check -> the student's other functions those calls went through."""
        return self._session.check.entered

    def __repr__(self) -> str:
        return f"<модуль {self.__name__} (в отдельном процессе)>"


class RemoteFunction:
    def __init__(self, session: Session, module: str, name: str):
        self._session, self._module, self.__name__ = session, module, name

    def __call__(self, *args, **kwargs):
        return self._session.call(self._module, self.__name__, args, kwargs)

    def repeat(self, n: int, *args, **kwargs) -> list:
        """``[f(*args, **kwargs) for _ in range(n)]``, run in the worker as one request."""
        return self._session.call(self._module, self.__name__, args, kwargs, repeat=n)

    def untracked(self, *args, **kwargs):
        """``f(*args, **kwargs)`` on arguments the check made for this call only and never looks at again: what the
        call did to them (an environment's journal of 13 000 steps) is neither recorded nor sent back."""
        return self._session.call(self._module, self.__name__, args, kwargs, track=False)

    def __repr__(self) -> str:
        return f"<функция {self._module}.{self.__name__} (в отдельном процессе)>"
