"""Parser service vs in-process, measured in one run (ratios, never timed assertions).

    python bench/serve_bench.py [--model PATH|default] [--replicas 2] [--clients 16]

1. latency of one parse: served / in-process (same model, settings and thread count; no caches);
2. 16 concurrent clients with Serve request batching vs the same 16 asks one at a time
   (throughput ratio), for 16 different prompts and for 16 students asking the same one;
3. a sweep job on 2 replicas vs 1 (wall-time ratio);
4. job submit → first result latency;
5. ``--stall``: the p50 latency of small requests (1 beam, 8 tokens) on the only replica, alone,
   behind one largest legal request (cost = ``MAX_SEARCH_COST``: 32 beams × 1,024 tokens) and
   behind four of them (their clients keep waiting); then those clients give up: how soon the
   replica's running work drops to 0 (``/v1/info``), and its memory before and after (issue #44).
Starts its own local Ray cluster on loopback (and stops it); caches are fresh temporary folders.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import http.client
import json
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import psutil
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from amp.evaluation import experiments as ex
from amp.parser.core import limits
from amp.parser.core.results import BatchItem
from amp.parser.parser import Parser
from amp.parser.search.settings import SearchSettings
from amp.serve import launch


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(spec: str, replicas: int, cache: str):
    cfg = launch.config_from_args(spec=spec, device="cpu", dtype="float32", replicas=replicas, host="127.0.0.1",
                                  port=_port(), address=None, token=None)
    cfg = dataclasses.replace(cfg, cache_dir=cache, use_cache=True)
    return launch.start(cfg, None), cfg


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="default")
    ap.add_argument("--clients", type=int, default=16)
    ap.add_argument("--items", type=int, default=8, help="items of the sweep job")
    ap.add_argument("--max-new-tokens", type=int, default=None)
    ap.add_argument("--stall", action="store_true", help="only 5.: the large request's effect on small ones")
    ap.add_argument("--small", type=int, default=5, help="small requests timed per phase of 5.")
    ap.add_argument("--settle", type=float, default=2.0, help="seconds between sending large requests and timing")
    ap.add_argument("--small-timeout", type=float, default=60.0, help="seconds a small request's client waits")
    return ap.parse_args()


def print_latency(far: Any, near: Any, prompts: list[str], search: dict[str, Any]) -> None:
    """1. one parse, served / in-process, after a warm-up parse on each."""
    near.parse(prompts[0], **search)  # load + warm
    far.parse(prompts[0], **search)
    t_near, t_far = [], []
    for p in prompts[1:4]:
        t0 = time.perf_counter()
        near.parse(p, **search)
        t_near.append(time.perf_counter() - t0)
        # the server has no cache hit for p (server cache on, but p is new to it)
        t0 = time.perf_counter()
        far.parse(p, **search)
        t_far.append(time.perf_counter() - t0)
    lat = statistics.median(t_far) / statistics.median(t_near)
    print(f"1. one parse, served / in-process latency: {lat:.3f} "
          f"(median {statistics.median(t_far):.2f} s vs {statistics.median(t_near):.2f} s)")


def concurrent(url: str, asks: list[str], search: dict[str, Any]) -> float:
    """Wall seconds for one client thread per ask, all started at once; the first error is raised."""
    errors: list[BaseException] = []

    def go(p: str) -> None:
        try:
            Parser.remote(url, cache=None).parse(p, **search)
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=go, args=(p,)) for p in asks]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return time.perf_counter() - t0


def print_throughput(url: str, far: Any, prompts: list[str], n: int, search: dict[str, Any]) -> None:
    """2a. n concurrent different prompts vs one at a time; 2b. n students asking the same one."""
    fresh = [p + " " for p in prompts[4:4 + n]]  # not in the server cache
    t_conc = concurrent(url, fresh, search)
    seq = [p + "  " for p in prompts[4:4 + n]]
    t0 = time.perf_counter()
    for p in seq:
        far.parse(p, **search)
    t_seq = time.perf_counter() - t0
    print(f"2a. {n} concurrent different prompts vs one at a time: throughput ×{t_seq / t_conc:.2f} "
          f"({t_conc:.1f} s vs {t_seq:.1f} s)")
    same = prompts[0] + "   "
    t_same = concurrent(url, [same] * n, search)
    print(f"2b. {n} students asking the same sentence at once vs {n} sequential parses: "
          f"×{(t_seq) / t_same:.2f} ({t_same:.1f} s)")


def job_time(url: str, items: list[Any], search: dict[str, Any]) -> tuple[float, float]:
    """(wall seconds of a sweep job over ``items``, seconds until its first result)."""
    jobs = Parser.remote(url, cache=None).backend.jobs
    t0 = time.perf_counter()
    st = jobs.submit(items, SearchSettings(**search), top_n=5, batch_size=2)
    first = None
    while True:
        s = jobs.status(st.id)
        if first is None and s.done:
            first = time.perf_counter() - t0
        if s.final:
            return time.perf_counter() - t0, first or 0.0
        time.sleep(0.2)


def print_replicas(url: str, args: argparse.Namespace, plan: list[Any], search: dict[str, Any], tmp: str) -> None:
    """3. a sweep job on 2 replicas vs 1 (stops the 1-replica server first); 4. submit → first result."""
    items = [BatchItem(id=f"b{k}", prompt=plan[k].prompt_text + "\t", lf0=plan[k].lf0, lf1=plan[k].lf1)
             for k in range(args.items)]
    one, first1 = job_time(url, items, search)
    launch.stop()
    url2, _ = _start(args.model, 2, f"{tmp}/server2")
    two, _ = job_time(url2, items, search)
    launch.stop()
    print(f"3. sweep job of {args.items} items: 2 replicas / 1 replica wall time: {two / one:.2f} "
          f"({two:.1f} s vs {one:.1f} s; this machine has {os.cpu_count()} cores)")
    print(f"4. job submit → first result: {first1:.1f} s (one chunk of 2 items)")


def _post(url: str, body: dict[str, Any], timeout: float) -> tuple[int | str, float]:
    """(HTTP status, or the exception's name on a client timeout; wall seconds)."""
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json"})
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            r.read()
            return r.status, time.perf_counter() - t0
    except urllib.error.HTTPError as exc:
        return exc.code, time.perf_counter() - t0
    except OSError as exc:  # the client gave up (timeout): it closes the connection
        return type(exc).__name__, time.perf_counter() - t0


def _replica_rss() -> float:
    """GB resident of the ParserWorker replica processes together."""
    total = 0
    for proc in psutil.process_iter(["cmdline"]):
        if any("ParserWorker" in part for part in proc.info["cmdline"] or ()):
            with contextlib.suppress(psutil.Error):
                total += proc.memory_info().rss
    return total / 2**30


def _stats(url: str) -> dict[str, int]:
    with urllib.request.urlopen(url + "/v1/info", timeout=30) as r:
        return dict(json.loads(r.read()).get("stats", {}))


class Held:
    """A request whose client waits until :meth:`give_up` closes its connection."""

    def __init__(self, url: str, path: str, body: dict[str, Any]) -> None:
        host, port = url.split("//")[1].split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=3600)
        self.conn.request("POST", path, body=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        self.status: int | str | None = None
        self.thread = threading.Thread(target=self._wait, daemon=True)
        self.thread.start()

    def _wait(self) -> None:
        try:
            self.status = self.conn.getresponse().status
        except OSError as exc:
            self.status = type(exc).__name__

    def give_up(self) -> None:
        with contextlib.suppress(OSError):
            if self.conn.sock is not None:
                self.conn.sock.shutdown(socket.SHUT_RDWR)
        self.conn.close()
        self.thread.join(10)


def stall(args: argparse.Namespace, tmp: str) -> None:
    """5. p50 of small requests alone, behind one largest legal request, behind four of them (their
    clients wait); then the large ones' clients give up: how soon the replica stops, its memory."""
    url, _cfg = _start(args.model, 1, f"{tmp}/stall")
    counter = iter(range(10**6))
    small_limit = args.small_timeout
    beams = 32
    large = {"beams": beams, "max_new_tokens": limits.MAX_SEARCH_COST // beams}  # cost = MAX_SEARCH_COST

    def small_p50() -> tuple[float, int]:
        times, late = [], 0
        for _ in range(args.small):
            body = {"prompts": [f"Human: the man saw girl {next(counter)}\nComputer:"],
                    "search": {"beams": 1, "max_new_tokens": 8}}
            status, took = _post(url + "/v1/parse", body, small_limit)
            late += status != 200
            times.append(took)
        return statistics.median(times), late

    def big() -> Held:
        return Held(url, "/v1/parse", {"prompts": [f"Human: the big request {next(counter)}\nComputer:"],
                                       "search": large})

    held: list[Held] = []
    try:
        small_p50()  # load + warm
        alone, _ = small_p50()
        start_rss = _replica_rss()
        print(f"5. small request (1 prompt, 1 beam, 8 tokens) alone: p50 {alone:.2f} s over {args.small}; "
              f"replica {start_rss:.2f} GB")
        for count in (1, 4):
            while len(held) < count:
                held.append(big())
                time.sleep(0.2)  # (apart: Serve would merge calls sent together into one batch)
            time.sleep(args.settle)  # the large ones are searching
            behind, late = small_p50()
            print(f"   behind {count} largest legal request(s) (beams {beams} × {large['max_new_tokens']} tokens, "
                  f"cost {limits.MAX_SEARCH_COST:,}; their clients wait): small p50 {behind:.2f} s = "
                  f"×{behind / alone:.2f} of alone; {late}/{args.small} failed or timed out at {small_limit:g} s; "
                  f"replica {_replica_rss():.2f} GB; stats {_stats(url)}")
        peak = _replica_rss()
        t0 = time.perf_counter()
        for h in held:
            h.give_up()
        stopped = None
        while time.perf_counter() - t0 < 60:
            if not _stats(url).get("running"):
                stopped = time.perf_counter() - t0
                break
            time.sleep(0.1)
        time.sleep(1.0)
        took = f"{stopped:.1f} s" if stopped is not None else "more than 60 s"
        print(f"   their clients give up: the replica's running work is 0 after {took} (stats {_stats(url)}); "
              f"replica {peak:.2f} GB at the peak → {_replica_rss():.2f} GB "
              f"({(_replica_rss() - start_rss) * 1024:+.0f} MB from its start)")
    finally:
        for h in held:
            h.give_up()
        launch.stop()


def main() -> int:
    args = parse_args()
    if args.stall:
        tmp = tempfile.mkdtemp(prefix="serve-bench-")
        os.environ["AMP_CACHE_DIR"] = tmp
        print(f"model {args.model}; 1 CPU replica")
        stall(args, tmp)
        return 0
    plan = ex.plan_fewshot(ex.FewShotConfig(types=("pp",), ratios=(0.3,), n_per_ratio=max(args.clients, args.items),
                                            k=10))
    prompts = [it.prompt_text for it in plan]
    search = {"beams": 5, "max_new_tokens": args.max_new_tokens}
    tmp = tempfile.mkdtemp(prefix="serve-bench-")
    os.environ["AMP_CACHE_DIR"] = tmp
    print(f"model {args.model}; prompts: 10-example pp few-shot; beam 5")

    url, cfg = _start(args.model, 1, f"{tmp}/server1")
    torch.set_num_threads(cfg.threads)
    far = Parser.remote(url, cache=None)
    near = Parser(args.model, device="cpu", dtype="float32", cache=None)
    print_latency(far, near, prompts, search)
    print_throughput(url, far, prompts, args.clients, search)
    print_replicas(url, args, plan, search, tmp)
    return 0


if __name__ == "__main__":
    sys.exit(main())
