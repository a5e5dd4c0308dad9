"""A class of N phones voting on one poll, measured against one app server (issue #41 point 1).

    python bench/class_load.py --phones 30,100,150 [--page light|streamlit] [--window 10] [--items 2]

Starts its own app (``streamlit run asgi.py`` on a free loopback port, a fresh ``AMP_CACHE_DIR``,
no model loaded: the student page needs none) and, for each N, a poll of ``--items`` sentences
made through the library's store (:class:`amp.teaching.poll_store.PollStore`).  N phones open the
student page; on each item every phone picks a meaning and a confidence and presses Submit at a
random moment of a ``--window``-second window (a class answering), then goes on to the next
sentence.  The phones are as light as phones can be simulated, so the figures are the server's:

* ``--page light`` (the default: the page the student link and its QR code open, ``/vote?poll=``):
  :mod:`vote_client`, one keep-alive HTTP connection per phone sending what a browser on that page
  sends (the page, its two files and the poll's state on opening; one JSON POST per answer);
* ``--page streamlit`` (the Streamlit student page, ``/?poll=``): :mod:`st_client`, one websocket
  per phone speaking Streamlit's own protocol, a cookie ``amp_voter_<CODE>`` of its own.

Printed, one row per N:

* **recorded / sent**: votes in the store / Submit clicks, per item, read back from the store; every
  phone's voter id once per item (``doubled`` counts anything else);
* **click → confirmation** p50 / p95 / max: from sending the click to the confirmation (light: the
  answer's reply; Streamlit: the ForwardMsg carrying the alert that says the answer is in);
* **teacher's tally**: seconds from the last phone's click to the teacher's Class poll page (one more
  tab of :mod:`st_client`, its live results rerun every 2 s as in a browser) showing all the votes
  so far; in brackets, to the store's tally (the query that page runs, :meth:`PollStore.results`,
  polled every 50 ms) showing N voters on that item;
* **server CPU s / vote**: the app process's CPU time (psutil, children included) over the voting
  windows divided by the votes recorded, and beside it the **phones' CPU** (this process);
* **RSS** of the app before the phones joined (the teacher's page open) and after the last vote.

Ratios and figures only, never timed assertions (``tests/bench/test_class_load.py`` runs N = 3
and asserts the counts).  The machine's load average is printed with the table.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import random
import statistics
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

import psutil

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from errors import ClassLoadError, StreamlitClientError
from st_client import Session, Shown, start_app, stop_app
from vote_client import VotePhone

from amp.teaching import student_messages as say
from amp.teaching.poll_records import PollItem
from amp.teaching.poll_store import PollStore
from amp.teaching.voter import new_voter_id

#: The student form's labels (found by label, so the form may change around them).
CHOICE_LABEL = say.CHOICE_QUESTION
CONFIDENCE_LABEL = say.CONFIDENCE_QUESTION
SUBMIT_LABEL = "Submit"
#: Words of the buttons that move a phone to the next sentence.
NEXT_WORDS = ("Next", "Finish")
#: Words of the messages that confirm an answer (W2's form may say either).
CONFIRM_WORDS = ("answer is in", "Your answer", "Changed to", "already answered")
#: Words of a reply to an answer that changed nothing (the same answer again).
REFUSED_WORDS = ("already answered", "Your answer stays")
#: The teacher's page (its URL path) and the label of its vote count.
TEACHER_PAGE = "teach_poll"
VOTES_LABEL = "Votes: "


@dataclass
class Phone:
    """One simulated phone: its voter id, its tab (a Streamlit session or a light page's connection),
    and per item (click time, confirmation time, text)."""

    index: int
    voter: str
    session: Session | VotePhone
    clicked: dict[int, float] = field(default_factory=dict)
    confirmed: dict[int, float] = field(default_factory=dict)
    said: dict[int, str] = field(default_factory=dict)
    failed: dict[int, str] = field(default_factory=dict)
    item: int = -1

    def see(self, shown: Shown) -> None:
        if self.item in self.clicked and self.item not in self.confirmed:
            if shown.kind == "exception" or (shown.kind == "alert" and shown.style in ("ERROR", "WARNING")):
                self.failed.setdefault(self.item, shown.text)
            elif any(word in shown.text for word in CONFIRM_WORDS):
                self.confirmed[self.item] = shown.at
                self.said[self.item] = shown.text


def poll_items(n: int) -> list[PollItem]:
    """``n`` sentences for the bench's poll (their text does not matter; the form's labels do)."""
    return [PollItem(surface=f"Every student read a book ({i + 1}).", type="scope",
                     lf0=f"all x. student(x) -> exists y. book(y) & read(x, y) # {i}",
                     lf1=f"exists y. book(y) & all x. student(x) -> read(x, y) # {i}",
                     paraphrase0="each read some book or other", paraphrase1="one book that all of them read")
            for i in range(n)]


class TeacherWatch:
    """The teacher's Class poll page on ``code`` (its live results refresh themselves: a fragment with
    ``run_every``, which the client reruns as a browser does); :attr:`reached` maps a vote count to
    when the page's "Votes" figure first showed at least that many."""

    def __init__(self, url: str, code: str) -> None:
        self.reached: dict[int, float] = {}
        self.shown = 0
        self.tab = Session(url, query=f"code={code}", page_name=TEACHER_PAGE, on_text=self._see)

    def _see(self, shown: Shown) -> None:
        if shown.kind == "metric" and shown.text.startswith(VOTES_LABEL):
            try:
                votes = int(shown.text.removeprefix(VOTES_LABEL).strip())
            except ValueError:
                return
            if votes > self.shown:
                self.reached[votes], self.shown = shown.at, votes

    def when(self, target: int) -> float:
        """When the page first showed ``target`` votes or more (NaN: never)."""
        return min((at for votes, at in self.reached.items() if votes >= target), default=float("nan"))


class TallyWatch:
    """A thread polling the store's tally (as the teacher's page queries it) every ``every`` s;
    :attr:`reached` maps an item to when it first showed ``target`` voters."""

    def __init__(self, store: PollStore, code: str, target: int, every: float = 0.05) -> None:
        self.store, self.code, self.target, self.every = store, code, target, every
        self.reached: dict[int, float] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> TallyWatch:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stop.is_set():
            for item in self.store.results(self.code).items:
                if item.n_voters >= self.target and item.index not in self.reached:
                    self.reached[item.index] = time.monotonic()
            self._stop.wait(self.every)


async def _vote(phone: Phone, item: int, delay: float, rng: random.Random, timeout: float) -> None:
    """After ``delay`` s: pick a meaning and a confidence, press Submit, wait for the run's end."""
    await asyncio.sleep(delay)
    tab = phone.session
    try:
        choice, confidence = tab.widget(CHOICE_LABEL, "radio"), tab.widget(CONFIDENCE_LABEL)
        tab.set_value(choice, rng.choice(choice.options))
        if confidence.options:
            tab.set_value(confidence, rng.choice(confidence.options))
        phone.item = item
        phone.clicked[item] = await tab.click(tab.widget(SUBMIT_LABEL, "button"))
        await tab.wait_run(timeout)
    except StreamlitClientError as exc:
        phone.failed.setdefault(item, str(exc))


async def _next(phone: Phone, timeout: float) -> None:
    """Press the button that leads to the next sentence (whatever it says of NEXT_WORDS)."""
    tab = phone.session
    buttons = [w for w in tab.widgets.values() if w.kind == "button" and w.label.startswith(NEXT_WORDS)]
    if not buttons:
        raise ClassLoadError(f"phone {phone.index}: no button {NEXT_WORDS} after its vote; labels: {sorted(tab.widgets)}")
    tab.widgets.pop(CHOICE_LABEL, None)  # the next sentence draws its own
    await tab.click(buttons[-1])
    await tab.wait_run(timeout)


def _pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100, method="inclusive")[int(q) - 1] if len(values) > 1 else values[0]


@dataclass(frozen=True)
class Row:
    """One N's figures (see the module docstring)."""

    phones: int
    recorded: tuple[int, ...]
    sent: tuple[int, ...]
    doubled: int
    confirmed: int
    refused: int
    failed: int
    p50: float
    p95: float
    worst: float
    tally_s: tuple[float, ...]  # the store's tally query
    teacher_s: tuple[float, ...]  # the teacher's page
    join_p95: float
    server_cpu_per_vote: float
    phones_cpu_s: float
    server_cpu_s: float
    rss_before_mb: float
    rss_after_mb: float
    errors: tuple[str, ...]


def _cpu(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return t.user + t.system + t.children_user + t.children_system


class StreamlitPage:
    """Phones on the Streamlit student page (``/?poll=``): :mod:`st_client` sessions with a voter cookie."""

    def phone(self, index: int, url: str, code: str) -> Phone:
        voter = new_voter_id()
        phone = Phone(index, voter, Session(url, query=f"poll={code}", cookies={f"amp_voter_{code}": voter}))
        phone.session.on_text = phone.see
        return phone

    async def open(self, phone: Phone, timeout: float) -> None:
        await phone.session.open(timeout)

    vote = staticmethod(_vote)
    next = staticmethod(_next)


class LightPage:
    """Phones on the light vote page (``/vote?poll=``): :mod:`vote_client` connections; the server gives
    the voter cookie on opening, and an answer's confirmation is its reply."""

    def phone(self, index: int, url: str, code: str) -> Phone:
        return Phone(index, "", VotePhone(url, code))

    async def open(self, phone: Phone, timeout: float) -> None:
        tab = cast(VotePhone, phone.session)
        await asyncio.wait_for(tab.open(), timeout)
        phone.voter = tab.cookie.partition("=")[2]

    async def vote(self, phone: Phone, item: int, delay: float, rng: random.Random, timeout: float) -> None:
        await asyncio.sleep(delay)
        try:
            sent, answered, status, reply = await asyncio.wait_for(
                cast(VotePhone, phone.session).answer(item, rng.choice((0, 1)), rng.choice((1, 2, 3))), timeout)
        except (OSError, TimeoutError, StreamlitClientError, ValueError) as exc:
            phone.failed.setdefault(item, f"{type(exc).__name__}: {exc}")
            return
        phone.clicked[item] = sent
        if status == 200 and "message" in reply:
            phone.confirmed[item], phone.said[item] = answered, reply["message"]
        else:
            phone.failed.setdefault(item, f"HTTP {status}: {reply.get('error', reply)}")

    async def next(self, phone: Phone, timeout: float) -> None:
        """The next sentence is drawn by the page's script: nothing is sent."""


#: The student pages a class can be simulated on (``--page``), by name.
PAGES: dict[str, StreamlitPage | LightPage] = {"light": LightPage(), "streamlit": StreamlitPage()}


async def run_class(url: str, store: PollStore, server: psutil.Process, n: int, *, page: str = "light",
                    items: int = 2, window: float = 10.0, seed: int = 0, timeout: float = 120.0) -> Row:
    """N phones on ``page`` (:data:`PAGES`) answering a new poll of ``items`` sentences while the teacher's
    Class poll page is open; the figures of :class:`Row`."""
    driver = PAGES[page]
    rng = random.Random(seed)
    poll = store.create_poll(poll_items(items), title=f"class_load {page} {n}")
    phones = [driver.phone(i, url, poll.code) for i in range(n)]
    teacher = TeacherWatch(url, poll.code)
    gate = asyncio.Semaphore(20)  # at most 20 phones opening the link at once

    async def join(phone: Phone) -> float:
        async with gate:
            start = time.monotonic()
            await driver.open(phone, timeout)
            return time.monotonic() - start

    try:
        await teacher.tab.open(timeout)  # the teacher's page is open before the class joins
        rss_before = server.memory_info().rss
        joins = list(await asyncio.gather(*(join(p) for p in phones)))
        me = psutil.Process()
        cpu0, mine0 = _cpu(server), _cpu(me)
        tally: dict[int, float] = {}
        on_page: dict[int, float] = {}
        last_click: dict[int, float] = {}
        with TallyWatch(store, poll.code, n) as watch:
            for item in range(items):
                await asyncio.gather(*(driver.vote(p, item, rng.uniform(0, window), random.Random(rng.random()),
                                                   timeout) for p in phones))
                deadline = time.monotonic() + timeout
                while (item not in watch.reached or math.isnan(teacher.when(n * (item + 1)))) \
                        and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                clicks = [p.clicked[item] for p in phones if item in p.clicked]
                last_click[item] = max(clicks) if clicks else float("nan")
                tally[item] = watch.reached.get(item, float("nan"))
                on_page[item] = teacher.when(n * (item + 1))
                if item + 1 < items:
                    await asyncio.gather(*(driver.next(p, timeout) for p in phones if item in p.confirmed))
        cpu1, mine1 = _cpu(server), _cpu(me)
        rss_after = server.memory_info().rss
    finally:
        await asyncio.gather(teacher.tab.close(), *(p.session.close() for p in phones), return_exceptions=True)
    votes = store.votes(poll.code)
    recorded = tuple(sum(1 for v in votes if v.item_index == i) for i in range(items))
    voters = {p.voter for p in phones}
    doubled = sum(1 for i in range(items) for v in voters if sum(1 for x in votes if x.item_index == i
                                                                  and x.voter_id == v) > 1)
    doubled += sum(1 for v in votes if v.voter_id not in voters)
    waits = [p.confirmed[i] - p.clicked[i] for p in phones for i in p.confirmed]
    errors = tuple(sorted({f"item {i + 1}: {text[:120]}" for p in phones for i, text in p.failed.items()}))
    total = sum(recorded)
    return Row(n, recorded, tuple(sum(1 for p in phones if i in p.clicked) for i in range(items)), doubled,
               len(waits), sum(1 for p in phones for s in p.said.values() if any(w in s for w in REFUSED_WORDS)),
               sum(len(p.failed) for p in phones),
               _pct(waits, 50) if waits else float("nan"), _pct(waits, 95) if waits else float("nan"),
               max(waits, default=float("nan")),
               tuple(tally[i] - last_click[i] for i in range(items)),
               tuple(on_page[i] - last_click[i] for i in range(items)), _pct(joins, 95),
               (cpu1 - cpu0) / total if total else float("nan"), mine1 - mine0, cpu1 - cpu0,
               rss_before / 2**20, rss_after / 2**20, errors)


def table(rows: list[Row]) -> str:
    """The rows as a Markdown table (what the README's classroom section shows)."""
    head = ("| phones | recorded / sent (per item) | doubled | click → confirmation p50 / p95 / max | "
            "teacher's tally (store's) after last click | server CPU s / vote | server CPU s | phones' CPU s | app RSS before → after |")
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        rec = ", ".join(f"{a}/{b}" for a, b in zip(r.recorded, r.sent, strict=True))
        tally = ", ".join(f"{t:.1f} s ({q:.2f} s)" for t, q in zip(r.teacher_s, r.tally_s, strict=True))
        lines.append(f"| {r.phones} | {rec} | {r.doubled} | {r.p50:.2f} / {r.p95:.2f} / {r.worst:.2f} s | {tally} | "
                     f"{r.server_cpu_per_vote:.3f} | {r.server_cpu_s:.1f} | {r.phones_cpu_s:.1f} | "
                     f"{r.rss_before_mb:.0f} → {r.rss_after_mb:.0f} MB |")
    return "\n".join(lines)


def run(phone_counts: list[int], *, items: int = 2, window: float = 10.0, seed: int = 0,
        timeout: float = 120.0, cache_dir: Path | None = None, page: str = "light") -> list[Row]:
    """Start the app, run each N in turn on a poll of its own (phones on ``page``), stop the app; the rows."""
    with tempfile.TemporaryDirectory(prefix="class-load-") as tmp:
        cache = cache_dir or Path(tmp) / "cache"
        cache.mkdir(parents=True, exist_ok=True)
        proc, url = start_app(cache, Path(tmp) / "app.log")
        try:
            store = PollStore(cache / "polls.sqlite")
            server = psutil.Process(proc.pid)
            return [asyncio.run(run_class(url, store, server, n, page=page, items=items, window=window,
                                          seed=seed + n, timeout=timeout)) for n in phone_counts]
        finally:
            stop_app(proc)


def _counts(text: str) -> list[int]:
    try:
        counts = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"--phones takes numbers separated by commas, got {text!r}") from None
    if not counts or min(counts) < 1 or max(counts) > 1000:
        raise argparse.ArgumentTypeError(f"--phones takes 1 to 1000 phones per run, got {text!r}")
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--phones", type=_counts, default=[30], help="phones per run, e.g. 30,100,150")
    ap.add_argument("--page", choices=sorted(PAGES), default="light",
                    help="the student page the phones use (light: the link's /vote page; streamlit: /?poll=)")
    ap.add_argument("--items", type=int, choices=range(1, 11), default=2, metavar="1-10", help="sentences per poll")
    ap.add_argument("--window", type=float, default=10.0, help="seconds over which a class answers one item")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds a phone waits for one run")
    args = ap.parse_args(argv)
    if not 0 <= args.window <= 600 or not 1 <= args.timeout <= 3600:
        ap.error("--window takes 0 to 600 s and --timeout 1 to 3600 s")
    try:
        rows = run(args.phones, items=args.items, window=args.window, seed=args.seed, timeout=args.timeout,
                   page=args.page)
    except (ClassLoadError, StreamlitClientError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"{psutil.cpu_count()} CPUs, load average {load} (after the run); answers spread over {args.window:g} s; "
          f"phones on the {args.page} page")
    print(table(rows))
    for row in rows:
        print(f"  N={row.phones}: joined in p95 {row.join_p95:.2f} s; {row.confirmed} confirmations, "
              f"{row.refused} of them 'already answered'; {row.failed} clicks without one")
        for err in row.errors:
            print(f"  N={row.phones}: {err}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
