"""How many CPU threads llama.cpp gets: the cores actually free, measured again at every call.

A llama.cpp decode runs its graph on ``n`` threads that meet at a barrier after every operation.
When another process holds one of those cores, the thread that shares it is descheduled for
whole time slices while the others wait at the barrier; a parse that took 13 s on one thread took
74 to 106 s on two with another process using 1.5 to 1.9 of two cores (issue #46).  So the
default count is the cores of this process's affinity that are free now:

* :func:`choose_threads` is the rule, a pure function of the affinity, the load measured over a
  short window (:class:`CpuLoad`: each core's busy share, minus this process's own use) and the
  override: ``threads = floor(cores - others + (1 - FREE_SHARE))``, clamped to ``1 .. cores``,
  where ``others`` is the CPU (in cores) used by other processes on this process's cores; a core
  counts only if at least :data:`FREE_SHARE` of it is free.
* :class:`LoadGauge` measures the load from ``/proc/stat`` (each core's busy and total ticks) and
  this process's CPU time (:func:`os.times`), over the window since the previous call (from
  :data:`MIN_WINDOW_S` to :data:`MAX_WINDOW_S` long), else over a fresh :data:`SAMPLE_S` sample; a call
  sooner than :data:`MIN_WINDOW_S` after the last one keeps the last measure.  Reading
  ``/proc/stat`` costs well under a millisecond; without it (not Linux) the count is the affinity's.
* An override (``threads=``, ``$AMP_LLAMA_THREADS``) is taken as it is, checked once where it is
  read (:func:`thread_override`: a whole number >= 1, else :class:`ThreadsError`).

What llama.cpp lets us change, found in llama-cpp-python 0.3.36 (the installed build):

* ``llama_set_n_threads(ctx, n, n_batch)`` sets a live context's thread counts between decode calls,
  so :class:`amp.parser.backends.llama.LlamaBackend` changes the count per call without reloading
  the model or rebuilding the context (the KV cells stay).  Results do not depend on the count:
  every output row of llama.cpp's CPU kernels is computed by one thread, and a call never has a
  single token (the padding row of :mod:`amp.parser.models.gguf_cells`), so attention is not split
  over the threads; ``tests/parser/test_llama_threads.py`` checks 1 and 2 threads give the same beams
  and scores to the bit.
* The waiting is not llama.cpp's to set here.  ggml's own threadpool (``ggml_threadpool_params``
  with its ``poll`` level, ``llama_attach_threadpool``) is not bound by llama-cpp-python ("TODO"
  in ``llama_cpp.py``), and this build's ``libggml-cpu`` is compiled with OpenMP: its barrier is
  ``#pragma omp barrier``, so a waiting thread spins as libgomp's ``GOMP_SPINCOUNT`` /
  ``OMP_WAIT_POLICY`` say (by default about 300 000 spins before it sleeps).  libgomp reads those
  once, when it is loaded, and the process has one libgomp, torch's, loaded with torch before
  llama.cpp (the same ``libgomp.so.1``), so they cannot be changed per call nor by this module
  without also changing torch's.  The thread count is the lever: on one thread there is no
  barrier, so nothing spins on a taken core.  (``OMP_WAIT_POLICY=passive`` set before the process
  starts makes every waiting thread sleep at once, torch's too.)

See docs/paper-notes.md and ``bench/threads_bench.py`` (its results: ``bench/results/threads.txt``).
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from pathlib import Path

from amp.parser.core.errors import ThreadsError

#: Environment variable overriding the number of CPU threads llama.cpp uses.
THREADS_ENV = "AMP_LLAMA_THREADS"
#: A core counts as free when at least this share of it is not used by other processes.
FREE_SHARE = 0.75
#: The shortest window a load is measured over (a call sooner than this keeps the last measure).
MIN_WINDOW_S = 0.1
#: The longest window since the previous call that still says what the load is now; after a
#: longer pause a fresh sample is taken.
MAX_WINDOW_S = 30.0
#: How long a fresh sample of the load lasts.
SAMPLE_S = 0.1
#: Where Linux keeps every core's busy and idle ticks.
PROC_STAT = Path("/proc/stat")


@dataclass(frozen=True)
class CpuTimes:
    """One reading of the CPU clocks: ``at`` (monotonic seconds), each core's ``(busy, total)``
    ticks since boot, and this process's CPU seconds (``own``, all its threads)."""

    at: float
    cores: Mapping[int, tuple[int, int]]
    own: float


@dataclass(frozen=True)
class CpuLoad:
    """The load over a window: each core's busy share (0..1, every process) and the CPU this process
    used itself, in cores (``own``: 1.5 = one and a half cores busy for the whole window)."""

    busy: Mapping[int, float]
    own: float = 0.0

    def others(self, cores: Collection[int]) -> float:
        """CPU used by other processes on ``cores``, in cores (never negative)."""
        return max(0.0, sum(self.busy.get(c, 0.0) for c in cores) - self.own)


def check_threads(threads: object, where: str = "threads") -> int:
    """``threads`` as a thread count (:class:`ThreadsError` unless it is a whole number >= 1)."""
    if isinstance(threads, bool) or not isinstance(threads, int):
        raise ThreadsError(f"{where}={threads!r} is not a whole number of threads")
    if threads < 1:
        raise ThreadsError(f"llama.cpp needs at least one thread, not {where}={threads}")
    return threads


def thread_override(threads: int | None = None, env: Mapping[str, str] | None = None) -> int | None:
    """The fixed thread count asked for: ``threads``, else ``$AMP_LLAMA_THREADS``, else ``None``
    (adapt to the free cores); each checked here, once (:class:`ThreadsError`)."""
    if threads is not None:
        return check_threads(threads)
    raw = (os.environ if env is None else env).get(THREADS_ENV, "").strip()
    if not raw:
        return None
    try:
        value = int(raw)
    except ValueError:
        raise ThreadsError(f"{THREADS_ENV}={raw!r} is not a whole number of threads") from None
    return check_threads(value, THREADS_ENV)


def choose_threads(affinity: Collection[int], load: CpuLoad | None, override: int | None = None) -> int:
    """llama.cpp's thread count: ``override`` when given, else the cores of ``affinity`` free under
    ``load`` (all of them when the load is unknown); at least 1, at most ``len(affinity)``."""
    if override is not None:
        return override
    cores = len(affinity)
    if cores <= 1:
        return 1
    if load is None:
        return cores
    free = math.floor(cores - load.others(affinity) + (1.0 - FREE_SHARE))
    return max(1, min(cores, free))


def available_cores() -> frozenset[int]:
    """The cores this process may run on (its affinity; every core where that is not known)."""
    if hasattr(os, "sched_getaffinity"):
        return frozenset(os.sched_getaffinity(0))
    return frozenset(range(os.cpu_count() or 1))


def parse_proc_stat(text: str) -> dict[int, tuple[int, int]]:
    """Each core's ``(busy, total)`` ticks from the text of ``/proc/stat`` (``cpuN`` lines; idle
    and iowait are not busy; guest time is already in user time)."""
    cores: dict[int, tuple[int, int]] = {}
    for line in text.splitlines():
        name, _, rest = line.partition(" ")
        if not name.startswith("cpu") or name == "cpu" or not name[3:].isdigit():
            continue
        ticks = [int(v) for v in rest.split()[:8]]
        total = sum(ticks)
        idle = sum(ticks[3:5])
        cores[int(name[3:])] = (total - idle, total)
    return cores


def read_cpu_times() -> CpuTimes | None:
    """The CPU clocks now (``None`` where ``/proc/stat`` cannot be read)."""
    try:
        text = PROC_STAT.read_text(encoding="ascii")
    except OSError:
        return None
    t = os.times()
    return CpuTimes(at=time.monotonic(), cores=parse_proc_stat(text), own=t.user + t.system)


def load_between(before: CpuTimes, after: CpuTimes) -> CpuLoad:
    """The load from ``before`` to ``after``: each core's busy share of its ticks, and this
    process's CPU seconds per second of the window."""
    busy: dict[int, float] = {}
    for core, (b1, t1) in after.cores.items():
        b0, t0 = before.cores.get(core, (b1, t1))
        if t1 > t0:
            busy[core] = min(1.0, max(0.0, (b1 - b0) / (t1 - t0)))
    span = after.at - before.at
    own = max(0.0, (after.own - before.own) / span) if span > 0 else 0.0
    return CpuLoad(busy=busy, own=own)


class LoadGauge:
    """The thread count for the next llama.cpp call, measured again at each call (cheap: see the
    module docstring).  ``read``, ``sleep`` and ``affinity`` are injectable (tests)."""

    def __init__(self, read: Callable[[], CpuTimes | None] = read_cpu_times,
                 sleep: Callable[[float], None] = time.sleep,
                 affinity: Callable[[], Collection[int]] = available_cores) -> None:
        self._read = read
        self._sleep = sleep
        self._affinity = affinity
        self._last: CpuTimes | None = None
        self._load: CpuLoad | None = None
        self._lock = threading.Lock()

    def load(self) -> CpuLoad | None:
        """The load over the window since the previous call, or over a fresh sample."""
        with self._lock:
            now = self._read()
            if now is None:
                return None
            last = self._last
            age = now.at - last.at if last is not None else math.inf
            if age < MIN_WINDOW_S and self._load is not None:
                return self._load
            if last is None or not MIN_WINDOW_S <= age <= MAX_WINDOW_S:
                self._sleep(SAMPLE_S)
                last, now = now, self._read()
                if now is None:
                    return None
            self._last, self._load = now, load_between(last, now)
            return self._load

    def threads(self, override: int | None = None) -> int:
        """:func:`choose_threads` for this process's affinity and the load now (``override`` wins,
        and then nothing is measured)."""
        if override is not None:
            return override
        return choose_threads(self._affinity(), self.load())


__all__ = ["FREE_SHARE", "MAX_WINDOW_S", "MIN_WINDOW_S", "SAMPLE_S", "THREADS_ENV", "CpuLoad", "CpuTimes",
           "LoadGauge", "ThreadsError", "available_cores", "check_threads", "choose_threads", "load_between",
           "parse_proc_stat", "read_cpu_times", "thread_override"]
