"""How soon a just-started app shows something (issue #41 point 6): time to the first heading, cold.

    python bench/first_paint.py [--runs 3] [--compare OTHER_CHECKOUT]

Each run starts the app afresh (``streamlit run app.py`` on a free loopback port, a fresh
``AMP_CACHE_DIR``), and as soon as it answers its health check one tab (:mod:`st_client`, Streamlit's
own protocol, as a browser's first visit) asks for the default page.  Measured from that request:
the navigation (the frame's page list), the first heading of the page and the end of the first run
(every element drawn).  Seconds, median over ``--runs``; the machine's load average is printed beside.
``--compare DIR`` starts the app of another checkout (e.g. ``git archive HEAD | tar -x -C DIR``) in
turn with this one, run for run, so both see the same load.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from errors import StreamlitClientError
from st_client import ROOT, Session, Shown, start_app, stop_app


@dataclass(frozen=True)
class Paint:
    """One cold start: seconds from the first request to the navigation, the first heading, the run's end."""

    navigation_s: float
    heading_s: float
    finished_s: float
    heading: str


async def _visit(url: str, timeout: float) -> Paint:
    headings: list[Shown] = []

    def see(shown: Shown) -> None:
        if shown.kind == "heading":
            headings.append(shown)

    tab = Session(url, on_text=see)
    await tab.connect()
    try:
        sent = await tab.rerun()
        await tab.wait_run(timeout)
        done = time.monotonic()
        if not headings:
            raise StreamlitClientError("the first page showed no heading")
        nav = tab.navigation_at if tab.navigation_at is not None else float("nan")
        return Paint(nav - sent, headings[0].at - sent, done - sent, headings[0].text)
    finally:
        await tab.close()


def cold_start(root: Path = ROOT, timeout: float = 120.0) -> Paint:
    """Start the app of checkout ``root``, visit it once, stop it."""
    with tempfile.TemporaryDirectory(prefix="first-paint-") as tmp:
        cache = Path(tmp) / "cache"
        cache.mkdir()
        proc, url = start_app(cache, Path(tmp) / "app.log", root=root)
        try:
            return asyncio.run(_visit(url, timeout))
        finally:
            stop_app(proc)


def _report(name: str, paints: list[Paint]) -> None:
    for p in paints:
        print(f"{name}: navigation {p.navigation_s:.2f} s · first heading {p.heading_s:.2f} s ({p.heading!r}) · "
              f"page done {p.finished_s:.2f} s")
    print(f"{name}, median of {len(paints)}: navigation {statistics.median(p.navigation_s for p in paints):.2f} s, "
          f"first heading {statistics.median(p.heading_s for p in paints):.2f} s, "
          f"page done {statistics.median(p.finished_s for p in paints):.2f} s")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=3, choices=range(1, 21), metavar="1-20")
    ap.add_argument("--compare", type=Path, default=None, help="another checkout whose app to start in turn")
    args = ap.parse_args(argv)
    if args.compare is not None and not (args.compare / "app.py").is_file():
        ap.error(f"--compare {args.compare}: no app.py there")
    roots = {"this": ROOT, **({"other": args.compare.resolve()} if args.compare else {})}
    paints: dict[str, list[Paint]] = {name: [] for name in roots}
    try:
        for _ in range(args.runs):
            for name, root in roots.items():
                paints[name].append(cold_start(root))
    except StreamlitClientError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    for name, got in paints.items():
        _report(f"{name} ({roots[name]})", got)
    print(f"load average {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
