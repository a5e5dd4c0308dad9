"""Benchmark: canonicalise every generated LF in both canonical modes (docs/paper-notes.md §8.6 item 8).

Usage: ``python bench/canon_bench.py [--limit N] [--profile MODE] [--scaling]``

``--scaling`` instead measures how reading one huge LF grows with its length: the CPU time of a
32,000-atom chain over a 4,000-atom one (8 for linear reading, 64 for quadratic).

Walks every pool of :mod:`amp.data.generate` (the five ambiguous types and the unambiguous sets;
composite pools are skipped, they repeat other pools), canonicalises each record's LF in
``paper`` and ``logical`` mode and prints LFs/second per mode.  CPU time is printed next to wall time
because shared machines distort the latter.  Memoised canonical forms are
cleared before each mode, so each mode pays for its own parses (the grammar-level shape memo of
:mod:`amp.logic.reader` stays warm, as it does in any real run).  Duplicate LF strings across
pools hit the memo, as they would in an evaluation.  The goal is the whole set, both modes,
in under 10 s on one core.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from amp.data.generate import AMBIGUOUS_TYPES, UNAMBIGUOUS_SETS, pool
from amp.logic.canonical import canonical, clear_cache
from amp.logic.reader import parse_lf
from amp.logic.vocabulary import MODES


def generated_lfs() -> tuple[list[str], str]:
    """Every LF of every pool (records in pool order), and where they came from."""
    lfs: list[str] = []
    for name in (*AMBIGUOUS_TYPES, *UNAMBIGUOUS_SETS):
        lfs.extend(r.lf for r in pool(name))
    return lfs, "amp.data.generate pools"


def run(lfs: list[str], mode: str) -> tuple[float, float]:
    """(wall seconds, CPU seconds of this process) to canonicalise ``lfs`` from a cold memo."""
    clear_cache()
    wall, cpu = time.perf_counter(), time.process_time()
    for lf in lfs:
        canonical(lf, mode)
    return time.perf_counter() - wall, time.process_time() - cpu


def long_lf(atoms: int) -> str:
    """One FOL chain of ``atoms`` atoms (about 11.7 bytes each: 30,000 atoms ≈ 352 kB)."""
    return " AND ".join(f"man(x{i % 7})" for i in range(atoms))


def scaling(small: int = 4_000, factor: int = 8) -> tuple[float, float, float]:
    """CPU seconds to read a chain of ``small`` atoms and one ``factor`` times longer, and their
    ratio (``factor`` for linear reading, ``factor``² for quadratic) — measured in one run."""
    times = []
    for atoms in (small, small * factor):
        text = long_lf(atoms)
        cpu = time.process_time()
        parse_lf(text)
        times.append(time.process_time() - cpu)
    return times[0], times[1], times[1] / times[0]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=None, help="only the first N LFs")
    ap.add_argument("--profile", choices=MODES, help="print a cProfile of one mode instead")
    ap.add_argument("--scaling", action="store_true",
                    help="only the long-LF ratio: reading an 8x longer chain costs ~8x (linear), not ~64x")
    args = ap.parse_args(argv)
    if args.scaling:
        small, large, ratio = scaling()
        print(f"long LF: {len(long_lf(4_000)):,} chars {small:.3f} s cpu, {len(long_lf(32_000)):,} chars "
              f"{large:.3f} s cpu; ratio {ratio:.1f} for 8x the length (linear: 8, quadratic: 64)")
        return 0
    lfs, source = generated_lfs()
    if args.limit is not None:
        lfs = lfs[: args.limit]
    print(f"{len(lfs)} LFs ({len(set(lfs))} distinct) from {source}")
    canonical(lfs[0], "logical")  # build the lark parser outside the timings
    if args.profile:
        profile = cProfile.Profile()
        profile.runcall(run, lfs, args.profile)  # a call, not a code string
        pstats.Stats(profile).sort_stats("tottime").print_stats(20)
        return 0
    total_wall = total_cpu = 0.0
    for mode in MODES:
        wall, cpu = run(lfs, mode)
        total_wall += wall
        total_cpu += cpu
        print(f"{mode:8s} wall {wall:6.2f} s  cpu {cpu:6.2f} s  {len(lfs) / cpu:8.0f} LFs/s (cpu)")
    print(f"both     wall {total_wall:6.2f} s  cpu {total_cpu:6.2f} s  (goal: < 10 s on one core)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
