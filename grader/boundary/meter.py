"""What a request to a worker costs, as the kernel counts it: the CPU time of the worker's every thread and the time
its main thread waited for a CPU, read by the zygote from /proc (a worker cannot forge them as it could its own
clocks). Every CPU second since the last look is charged to the request that follows it, between calls and at import
too; waiting that is neither on a CPU nor queued for one is told apart from a machine busy with others. A worker of
its own (no zygote) is measured by the wall clock.

What this module accepts from the worker: nothing but its answer frames (through :class:`channel.Channel`); the
figures come from the zygote.
"""
from __future__ import annotations

import time

from grader.boundary.channel import Channel, Forked

GRACE = 2.0  # s past a limit (CPU or wall-clock) before the checking side ends a call its own watchdog did not
QUICK = 0.02  # s: a request answered within it is charged its wall-clock time, without asking the zygote
POLL = 0.25  # s between looks at a long request's figures


class Meter:
    """The figures of one worker's requests."""

    def __init__(self):
        self.used = 0.0  # the CPU time the last request cost (its wall-clock time where that is not known)
        self.queued = 0.0  # of its time, how long the worker's main thread waited for a CPU
        self.reset()

    def reset(self) -> None:
        """A new worker: a forked process starts with no CPU time of its own."""
        # the worker's CPU time and queueing at the last look, when that was, and the wall-clock time charged since
        self.mark: tuple[float, float, float, float] = (0.0, 0.0, time.monotonic(), 0.0)

    def receive(self, worker: Channel, seconds: float, cpu_seconds: float | None, sleep_seconds: float | None):
        started = time.monotonic()
        deadline = started + seconds
        measured = isinstance(worker, Forked)
        try:  # most calls answer at once
            return self._charged(worker, worker.receive(min(QUICK, seconds)), started)
        except TimeoutError:
            if time.monotonic() >= deadline:
                raise
        first, since = worker.cpu(), time.monotonic()
        while True:
            try:
                answer = worker.receive(min(POLL, deadline - time.monotonic()) if measured
                                        else deadline - time.monotonic())
                return self._charged(worker, answer, started)
            except TimeoutError:
                if time.monotonic() >= deadline:
                    raise
                now = worker.cpu()
                if now is None or first is None:
                    continue
                if cpu_seconds is not None and now[0] - self.mark[0] - self.mark[3] > cpu_seconds + GRACE:
                    raise TimeoutError from None  # past the CPU limit (the worker's watchdog did not end it)
                slept = time.monotonic() - since - (now[0] - first[0]) - (now[1] - first[1])
                if sleep_seconds is not None and slept > sleep_seconds + GRACE:
                    raise TimeoutError from None  # waiting (neither on the CPU nor queued for it) past the budget

    def _charged(self, worker: Channel, answer, started: float):
        """``answer``, with what the request cost: ``self.used``, every CPU second the worker used since the last
        look (between calls too, its threads included: work done off a call is charged to the next one), or, right
        after a look, the call's wall-clock time (never asking the zygote for calls in quick succession); and
        ``self.queued``, the time its main thread waited for a CPU (a machine busy with others: not the worker's
        own waiting)."""
        wall = time.monotonic() - started
        cpu, queued, looked, precharged = self.mark
        now = worker.cpu() if isinstance(worker, Forked) and time.monotonic() - looked > QUICK else None
        if now is None:
            self.used, self.queued = wall, 0.0
            self.mark = (cpu, queued, looked, precharged + wall)
        else:
            self.used, self.queued = max(now[0] - cpu - precharged, 0.0), max(now[1] - queued, 0.0)
            self.mark = (now[0], now[1], time.monotonic(), 0.0)
        return answer
