"""Parser service vs in-process, measured in one run (ratios, never timed assertions).

    python bench/serve_bench.py [--model PATH|default] [--replicas 2] [--clients 16]

1. latency of one parse: served / in-process (same model, settings and thread count; no caches);
2. 16 concurrent clients with Serve request batching vs the same 16 asks one at a time
   (throughput ratio), for 16 different prompts and for 16 students asking the same one;
3. a sweep job on 2 replicas vs 1 (wall-time ratio);
4. job submit → first result latency.
Starts its own local Ray cluster on loopback (and stops it); caches are fresh temporary folders.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start(spec: str, replicas: int, cache: str):
    from amp.serve import launch

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
    from amp.parser.parser import Parser

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
    from amp.parser.parser import Parser
    from amp.parser.search.settings import SearchSettings

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
    from amp.parser.core.results import BatchItem
    from amp.serve import launch

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


def main() -> int:
    args = parse_args()
    import torch

    from amp.evaluation import experiments as ex
    from amp.parser.parser import Parser

    plan = ex.plan_fewshot(ex.FewShotConfig(types=("pp",), ratios=(0.3,), n_per_ratio=max(args.clients, args.items),
                                            k=10, beams=5))
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
