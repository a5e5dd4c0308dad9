"""llama.cpp's thread count (issue #46 point 1): the cores free now, measured again at every call;
an override taken as it is and checked once."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from amp.errors import AmpError
from amp.parser.backends import llama_threads as lt
from amp.parser.backends.llama_threads import (
    MAX_WINDOW_S,
    SAMPLE_S,
    THREADS_ENV,
    CpuLoad,
    CpuTimes,
    LoadGauge,
    ThreadsError,
    choose_threads,
    load_between,
    parse_proc_stat,
    thread_override,
)
from amp.parser.core.errors import ModelLoadError
from amp.parser.search.settings import SearchSettings

TWO = frozenset({0, 1})


# -- the rule -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("busy", "own", "expected"), [
    ({0: 0.05, 1: 0.10}, 0.0, 2),    # quiet
    ({0: 1.00, 1: 0.02}, 0.0, 1),    # one process spinning on one core
    ({0: 0.90, 1: 0.80}, 0.0, 1),    # the 1.5-1.9 cores taken
    ({0: 1.00, 1: 1.00}, 1.90, 2),   # the CPU is busy with this process's own parse
    ({0: 1.00, 1: 1.00}, 1.30, 1),   # ... and 0.7 of a core used by another
    ({0: 0.25, 1: 0.00}, 0.0, 2),    # a quarter of a core taken: still free (FREE_SHARE 0.75)
    ({0: 0.26, 1: 0.00}, 0.0, 1),    # a little more: not
    ({}, 0.0, 2),                    # no reading for these cores: free
])
def test_two_cores(busy: dict[int, float], own: float, expected: int) -> None:
    assert choose_threads(TWO, CpuLoad(busy=busy, own=own)) == expected


def test_the_rule_counts_only_this_processs_cores_and_clamps() -> None:
    eight = frozenset(range(8))
    assert choose_threads(eight, CpuLoad(busy={0: 1.0, 1: 1.0})) == 6
    assert choose_threads(eight, CpuLoad(busy={0: 1.0, 1: 1.0, 2: 0.3})) == 5
    assert choose_threads(eight, CpuLoad(busy=dict.fromkeys(range(8), 1.0))) == 1  # never 0
    assert choose_threads(eight, CpuLoad(busy={}, own=3.0)) == 8  # never more than the affinity
    others_only = CpuLoad(busy={0: 1.0, 1: 1.0, 2: 0.0, 3: 0.0})
    assert choose_threads(frozenset({2, 3}), others_only) == 2  # busy cores outside the affinity
    assert choose_threads(frozenset({1, 2}), others_only) == 1
    assert choose_threads(TWO, None) == 2  # load unknown (no /proc/stat): the affinity
    assert choose_threads(frozenset({5}), CpuLoad(busy={5: 1.0})) == 1
    assert choose_threads(frozenset(), None) == 1


def test_an_override_wins_over_the_load() -> None:
    spinner = CpuLoad(busy={0: 1.0, 1: 0.0})
    assert choose_threads(TWO, spinner) == 1
    assert choose_threads(TWO, spinner, override=2) == 2
    assert choose_threads(TWO, None, override=3) == 3


# -- the override, checked once -------------------------------------------------------------------------


def test_the_override_comes_from_threads_then_the_environment() -> None:
    assert thread_override(None, {}) is None
    assert thread_override(None, {THREADS_ENV: "  "}) is None
    assert thread_override(None, {THREADS_ENV: "3"}) == 3
    assert thread_override(None, {THREADS_ENV: " 2 "}) == 2
    assert thread_override(1, {THREADS_ENV: "4"}) == 1


@pytest.mark.parametrize(("raw", "message"), [
    ("0", "llama.cpp needs at least one thread, not AMP_LLAMA_THREADS=0"),
    ("-2", "llama.cpp needs at least one thread, not AMP_LLAMA_THREADS=-2"),
    ("two", "AMP_LLAMA_THREADS='two' is not a whole number of threads"),
    ("2.5", "AMP_LLAMA_THREADS='2.5' is not a whole number of threads"),
])
def test_a_bad_environment_value_is_a_typed_error(raw: str, message: str) -> None:
    with pytest.raises(ThreadsError) as info:
        thread_override(None, {THREADS_ENV: raw})
    assert str(info.value) == message
    assert isinstance(info.value, ModelLoadError) and isinstance(info.value, AmpError)


@pytest.mark.parametrize(("value", "message"), [
    (0, "llama.cpp needs at least one thread, not threads=0"),
    (-1, "llama.cpp needs at least one thread, not threads=-1"),
    (True, "threads=True is not a whole number of threads"),
    (2.5, "threads=2.5 is not a whole number of threads"),
    ("2", "threads='2' is not a whole number of threads"),
])
def test_a_bad_explicit_count_is_a_typed_error(value: object, message: str) -> None:
    with pytest.raises(ThreadsError, match=f"^{re.escape(message)}$"):
        thread_override(value)  # type: ignore[arg-type]


def test_the_backend_checks_its_override_once_and_then_measures_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    from amp.parser.backends.llama import LlamaBackend

    def never() -> CpuTimes:
        raise AssertionError("the load was measured although the count is fixed")

    monkeypatch.setenv(THREADS_ENV, "abc")
    with pytest.raises(ThreadsError, match="AMP_LLAMA_THREADS='abc' is not a whole number of threads"):
        LlamaBackend()
    monkeypatch.setenv(THREADS_ENV, "1")
    backend = LlamaBackend(gauge=LoadGauge(read=never))
    assert backend.threads == 1
    assert backend._gauge.threads(backend.threads) == 1
    assert "1 threads" in backend.describe()
    with pytest.raises(ThreadsError, match="not threads=0"):
        LlamaBackend(threads=0)
    backend.threads = 2  # the benches' way to fix a count: checked too
    assert backend.threads == 2
    with pytest.raises(ThreadsError):
        backend.threads = -1
    monkeypatch.delenv(THREADS_ENV)
    assert LlamaBackend().threads is None
    assert "threads: the free cores" in LlamaBackend().describe()


# -- the measure ----------------------------------------------------------------------------------------

STAT = """cpu  300 0 100 1500 100 0 0 0 0 0
cpu0 200 0 50 700 50 0 0 0 0 0
cpu1 100 0 50 800 50 0 0 0 7 0
intr 12345
ctxt 999
"""


def test_proc_stat_gives_busy_and_total_ticks_per_core() -> None:
    # busy: user + nice + system + irq + softirq + steal; idle and iowait are not; guest is in user
    assert parse_proc_stat(STAT) == {0: (250, 1000), 1: (150, 1000)}


def test_the_load_between_two_readings() -> None:
    before = CpuTimes(at=10.0, cores={0: (250, 1000), 1: (150, 1000)}, own=4.0)
    after = CpuTimes(at=10.5, cores={0: (300, 1050), 1: (155, 1050), 2: (9, 9)}, own=4.25)
    load = load_between(before, after)
    assert load.busy == {0: 1.0, 1: 0.1}  # core 2 appeared: no ticks in the window, no reading
    assert load.own == 0.5  # 0.25 CPU seconds in half a second
    assert load.others(TWO) == pytest.approx(0.6)


class Clock:
    """Scripted readings: each ``read`` returns the next; ``sleep`` records its argument."""

    def __init__(self, readings: list[CpuTimes | None]) -> None:
        self.readings: Iterator[CpuTimes | None] = iter(readings)
        self.reads = 0
        self.sleeps: list[float] = []

    def read(self) -> CpuTimes | None:
        self.reads += 1
        return next(self.readings)

    def sleep(self, s: float) -> None:
        self.sleeps.append(s)


def _at(t: float, busy0: int, busy1: int, own: float = 0.0) -> CpuTimes:
    """A reading at ``t`` s with 100 ticks a second on each core, ``busyN`` of them busy so far."""
    total = int(round(t * 100))
    return CpuTimes(at=t, cores={0: (busy0, total), 1: (busy1, total)}, own=own)


def test_the_gauge_samples_first_then_reuses_the_window_since_the_last_call() -> None:
    clock = Clock([
        _at(1.0, 0, 0), _at(1.1, 10, 0),       # first call: a fresh sample; core 0 fully busy
        _at(3.1, 20, 0),                        # 2 s later: that window (core 0: 10 of 200 ticks)
        _at(3.15, 20, 0),                       # 50 ms later: too soon, the last measure
        _at(3.1 + MAX_WINDOW_S + 1, 20, 0),     # after a long pause: a fresh sample
        _at(3.2 + MAX_WINDOW_S + 1, 30, 10),    # both cores busy in it
    ])
    gauge = LoadGauge(read=clock.read, sleep=clock.sleep, affinity=lambda: TWO)
    assert gauge.threads() == 1 and clock.sleeps == [SAMPLE_S]
    assert gauge.threads() == 2 and clock.sleeps == [SAMPLE_S]
    assert gauge.threads() == 2 and clock.reads == 4
    assert gauge.threads() == 1 and clock.sleeps == [SAMPLE_S, SAMPLE_S]


def test_the_gauge_subtracts_this_processs_own_cpu() -> None:
    clock = Clock([_at(0.0, 0, 0, own=0.0), _at(0.1, 10, 10, own=0.19)])  # both cores busy, 1.9 of them ours
    assert LoadGauge(read=clock.read, sleep=clock.sleep, affinity=lambda: TWO).threads() == 2


def test_without_proc_stat_the_count_is_the_affinity(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(lt, "PROC_STAT", tmp_path / "missing")
    assert lt.read_cpu_times() is None
    assert LoadGauge(affinity=lambda: frozenset(range(3))).threads() == 3


def test_the_real_reading_is_cheap_and_sane() -> None:
    now = lt.read_cpu_times()
    if now is None:
        pytest.skip("no /proc/stat here")
    assert set(lt.available_cores()) <= set(now.cores)
    assert all(0 <= busy <= total for busy, total in now.cores.values())
    n = LoadGauge().threads()
    assert 1 <= n <= len(lt.available_cores())


# -- per call, on the real model ------------------------------------------------------------------------

PROMPT = ("Human: the boy saw the girl with the telescope\n"
          "Computer: exists x . exists y . exists z . boy(x) AND girl(y) AND telescope(z) AND saw(x, y)"
          " AND with(x, z)\n"
          "Human: the cat chased the dog\nComputer:")


@pytest.mark.slow
def test_each_parse_measures_again_and_the_count_changes_on_the_live_context() -> None:
    """Quiet, then one core taken, then quiet: 2, 1, 2 threads set on the same context (no new
    context, no reload), with the same beams and scores to the bit whatever the count."""
    llama_cpp = pytest.importorskip("llama_cpp")
    from amp.parser.backends.llama import LlamaBackend
    from amp.parser.models.embedded import default_gguf

    try:
        default_gguf()
    except ModelLoadError as exc:
        pytest.skip(f"the embedded GGUF is not available: {exc}")
    # the first call samples (two readings: quiet); then one reading per call, a second after the
    # last: core 0 fully busy (100 of 100 ticks), then idle again
    clock = Clock([CpuTimes(at=0.0, cores={0: (0, 0), 1: (0, 0)}, own=0.0),
                   CpuTimes(at=1.0, cores={0: (0, 100), 1: (0, 100)}, own=0.0),
                   CpuTimes(at=2.0, cores={0: (100, 200), 1: (0, 200)}, own=0.0),
                   CpuTimes(at=3.0, cores={0: (100, 300), 1: (0, 300)}, own=0.0)])
    backend = LlamaBackend(gauge=LoadGauge(read=clock.read, sleep=clock.sleep, affinity=lambda: TWO))
    assert backend.threads is None
    search = SearchSettings(beams=2, max_new_tokens=24)
    results, counts, contexts = [], [], []
    for _ in range(3):
        results.append(backend.parse([PROMPT], fmt="fol", top_n=2, search=search)[0])
        ctx = backend._decoder.cells.ctx  # type: ignore[union-attr]
        counts.append((backend.threads_now, llama_cpp.llama_n_threads(ctx), llama_cpp.llama_n_threads_batch(ctx)))
        contexts.append(ctx)
    assert counts == [(2, 2, 2), (1, 1, 1), (2, 2, 2)]
    assert contexts[0] is contexts[1] is contexts[2]
    assert clock.sleeps == [SAMPLE_S]  # only the first call sampled; the others used the window since
    assert results[0].beams and results[0] == results[1] == results[2]
    backend.close()
