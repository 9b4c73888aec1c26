"""Where the student's code was when a call ran past its time limit.

The worker side: a :class:`Watchdog` thread that, past the running request's deadline, writes every thread's
stack (faulthandler) to the hang file, then the names of the student's functions the running call went
through, and ends the process.

The checking side: :class:`HangReport`. The hang file is a file without a name (``tempfile.TemporaryFile``),
one per worker, which the worker gets as a descriptor and this process reads through its own: never a path the
worker could replace by a link. What this module accepts from the worker: that file's first megabyte, as text.
From it, it takes only the names of frames (file name, line number, function) that match a module of the
submission as staged, or a notebook cell as the kit names it, compared in the escaped form faulthandler writes
(:func:`dumped`: the dump is never decoded back, so no name in it becomes a newline or a lone surrogate here); the
file name shown is the staged module's own, escaped, and the line shown is taken from the staged copy
(``sources``), never by opening a file the dump names, and is escaped.
"""
from __future__ import annotations

import faulthandler
import os
import re
import tempfile
import threading
import time
import typing
from pathlib import Path

from grader.base import escape
from grader.base.escape import identifiers, one_line

_FRAME = re.compile(r'File "(.+)", line (\d{1,9}) in (\S+)')  # a line's number of at most 9 digits
ENTERED = "hwkit-entered: "  # the line after the stacks: the functions the running call went through


def dumped(text: str) -> str:
    """``text`` as faulthandler writes a file or function name into the dump: printable ASCII as it is, any other
    character as ``\\xHH``, ``\\uHHHH`` or ``\\UHHHHHHHH`` (a newline, a lone surrogate of a name that is not
    UTF-8, a Cyrillic letter). Names are matched in this form; the dump is never decoded back."""
    return "".join(ch if " " <= ch <= "~" else f"\\x{ord(ch):02x}" if ord(ch) <= 0xFF
                   else f"\\u{ord(ch):04x}" if ord(ch) <= 0xFFFF else f"\\U{ord(ch):08x}" for ch in text)


_CELL = re.compile(re.escape(dumped("<ячейка ")) + r"(\d{1,9})>")  # loading.py compiles a cell as "<ячейка N>"


class HangReport:
    """The hang file of the running worker, as the checking process holds it."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.file: typing.IO[bytes] | None = None

    def fresh(self) -> int:
        """A new, empty hang file for the next worker; its descriptor, to hand over."""
        self.close()
        self.file = tempfile.TemporaryFile(dir=str(self.folder))  # unlinked at once (O_TMPFILE where there is one)
        return self.file.fileno()

    def written(self) -> bool:
        """Whether the worker's watchdog wrote its dump (it fired)."""
        return self.file is not None and os.fstat(self.file.fileno()).st_size > 0

    def dump(self, limit: int = 1 << 20) -> str:
        """What the worker's watchdog wrote (at most ``limit`` bytes), read through this process's descriptor."""
        if self.file is None:
            return ""
        try:
            return os.pread(self.file.fileno(), limit, 0).decode("utf-8", errors="replace")
        except OSError:
            return ""

    def where(self, function: str | None, scratch: Path | None, sources: dict[str, list[str]]) -> str:
        """Where the student's code was when the watchdog fired, from the worker's stack dump."""
        dump, scratch = self.dump(), str(scratch)
        own = []  # the student's frames, innermost first (faulthandler prints the most recent call first)
        blocks = re.split(r"\n(?=(?:Current thread|Thread) )", dump)
        main = next((b for b in blocks if re.search(r'worker\.py", line \d+ in main', b)), dump)  # the requests' thread
        modules = {dumped(name): name for name in sources}  # the submission's modules, as the dump names them
        for match in _FRAME.finditer(main):
            filename, line, func = match.group(1), int(match.group(2)), match.group(3)
            cell = _CELL.fullmatch(filename)
            if cell:  # a notebook cell's code, named by the kit (grader.boundary.loading): told in the kit's words
                own.append((f"ячейка {int(cell.group(1))}", line, func, ""))
                continue
            folder, base = os.path.dirname(filename), os.path.basename(filename)
            if folder == dumped(scratch) and base in modules:  # a module of the submission's
                lines = sources[modules[base]]
                code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
                own.append((escape.name(modules[base]), line, func, one_line(code, 200)))
        if not own:
            return ""
        name, line, func, code = own[0]
        what = "верхний уровень модуля" if func == "<module>" else f"функция {one_line(func)}"
        text = f"В этот момент выполнялась {what} ({name}, строка {line})" + (f": «{code}»" if code else "")
        if function and func != dumped(function) and any(f[2] == dumped(function) for f in own):
            text += f", вызванная из {function}"
        return text + "."

    def entered(self) -> list[str]:
        """The student's functions the call that ran past its limit went through, as the dump's last line names
        them (identifiers only: they word the feedback, "value_iteration calls q_from_v")."""
        lines = [line for line in self.dump().splitlines() if line.startswith(ENTERED)]
        return identifiers(lines[-1][len(ENTERED):].split()) if lines else []

    def close(self) -> None:
        if self.file is not None:
            self.file.close()
            self.file = None


class Watchdog(threading.Thread):
    """Past the running request's limits (the process's CPU time, or a wall-clock backstop), writes every thread's
    stack to the hang file and ends the process (the grading process then reads where the code was)."""

    TICK = 0.02  # s between looks at the clock

    def __init__(self, hang_file):
        super().__init__(daemon=True, name="hwkit-watchdog")
        self.hang_file = hang_file
        self.limits: tuple[float, float] | None = None  # (CPU time, wall-clock time) the request must end by
        self.entered = None  # the worker's tracing.Entered: which functions the running call went through

    def arm(self, cpu_seconds: float, wall_seconds: float) -> None:
        self.limits = (time.process_time() + max(cpu_seconds, 0.05), time.monotonic() + max(wall_seconds, 0.05))

    def disarm(self) -> None:
        self.limits = None

    def run(self) -> None:
        while True:
            time.sleep(self.TICK)
            limits = self.limits
            if limits is not None and (time.process_time() > limits[0] or time.monotonic() > limits[1]):
                self.hang_file.seek(0)
                self.hang_file.truncate()
                faulthandler.dump_traceback(file=self.hang_file, all_threads=True)
                try:  # the student's functions the running call went through, by name
                    entered = self.entered
                    went = entered.calls.get(entered.outer, []) if entered is not None and entered.outer else []
                    self.hang_file.write("\n" + ENTERED + " ".join(went) + "\n")
                    self.hang_file.flush()
                finally:
                    os._exit(1)
