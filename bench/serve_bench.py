"""Parser service vs in-process, measured in one run (ratios, never timed assertions).

    python bench/serve_bench.py [--model PATH|default] [--replicas 2] [--clients 16]

1. latency of one parse: served / in-process (same model, settings and thread count; no caches);
2. 16 concurrent clients with Serve request batching vs the same 16 asks one at a time
   (throughput ratio), for 16 different prompts and for 16 students asking the same one;
3. a sweep job on 2 replicas vs 1 (wall-time ratio);
4. job submit → first result latency;
5. ``--stall``: one large request's effect on the p50 latency of small requests behind it on the only
   replica (the issue's ``beams 64 × 1,024 tokens``, and the largest legal request sent by a client
   that gives up after a few seconds), and the replica's memory before and after.
Starts its own local Ray cluster on loopback (and stops it); caches are fresh temporary folders.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
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
    ap.add_argument("--small", type=int, default=3, help="small requests timed per phase of 5.")
    ap.add_argument("--give-up", type=float, default=5.0, help="seconds the large request's client waits")
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


def stall(args: argparse.Namespace, tmp: str) -> None:
    """5. p50 of small requests alone, and right behind a large one whose client gives up."""
    url, _cfg = _start(args.model, 1, f"{tmp}/stall")
    counter = iter(range(10**6))
    small_limit = args.small_timeout

    def small_p50() -> tuple[float, int]:
        times, late = [], 0
        for _ in range(args.small):
            body = {"prompts": [f"Human: the man saw girl {next(counter)}\nComputer:"],
                    "search": {"beams": 2, "max_new_tokens": 16}}
            status, took = _post(url + "/v1/parse", body, small_limit)
            late += status != 200
            times.append(took)
        return statistics.median(times), late

    try:
        small_p50()  # load + warm
        alone, _ = small_p50()
        print(f"5. small request (1 prompt, beams 2, 16 tokens) alone: p50 {alone:.2f} s; replica "
              f"{_replica_rss():.2f} GB")
        for name, search in (("issue's beams 64 × 1,024 tokens", {"beams": 64, "max_new_tokens": 1024}),
                             ("largest legal request: beams 32 × 1,024 tokens", {"beams": 32, "max_new_tokens": 1024})):
            body = {"prompts": [f"Human: the big request {next(counter)}\nComputer:"], "search": search}
            status, took = _post(url + "/v1/parse", body, args.give_up)
            behind, late = small_p50()
            print(f"   behind the {name} (answered {status} after {took:.1f} s; its client gives up at "
                  f"{args.give_up:g} s): small p50 {behind:.2f} s = ×{behind / alone:.1f} of alone; "
                  f"{late}/{args.small} small requests failed or timed out at {small_limit:g} s; "
                  f"replica {_replica_rss():.2f} GB")
    finally:
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
