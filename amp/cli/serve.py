"""``python -m amp serve``: host the constrained parser as a service on Ray Serve.

    python -m amp serve [--model M] [--device cuda] [--dtype bfloat16] [--engine llama.cpp] [--replicas N]
        [--host 127.0.0.1] [--port 8600] [--address RAY_ADDRESS] [--batch-size 8]
        [--trust-remote-code] [--no-cache] [--job-retention-hours 168] [--deadline 300]

Starts a local Ray cluster (or joins ``--address``) and deploys the parser: one replica per GPU
with ``--device cuda``, else ``--replicas`` CPU replicas (default 1).  Clients point at it with
``AMP_PARSER_URL=http://HOST:PORT`` (app and CLI) or ``--server URL`` (CLI).  Listening on
anything but loopback requires ``AMP_TOKEN`` (at least 16 characters), which clients send as a
bearer token; the token is read from the environment only, never from the command line.
Ctrl-C stops the service.  API description: ``http://HOST:PORT/openapi.json``.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from typing import Any

from amp.cli.common import fail
from amp.cli.model_options import add_model_options
from amp.errors import AmpError
from amp.serve import launch
from amp.serve.work import ServeConfig


def run(args: argparse.Namespace) -> int:

    token = os.environ.get("AMP_TOKEN") or None
    try:
        config = launch.config_from_args(
            spec=args.model, device=args.device, dtype=args.dtype, replicas=args.replicas, host=args.host,
            port=args.port, address=args.address, token=token, trust_remote_code=args.trust_remote_code,
            use_cache=not args.no_cache, batch_size=args.batch_size, engine=args.engine,
            job_retention_s=args.job_retention_hours * 3600.0, deadline_s=args.deadline)
    except AmpError as exc:
        return fail(exc)

    def stop_on_signal(*_: Any) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop_on_signal)
    try:
        url = launch.start(config, token)
    except KeyboardInterrupt:
        launch.stop()
        return 130
    except Exception as exc:  # noqa: BLE001 - Ray/Serve start-up failures: one line
        launch.stop()
        return fail(exc)
    # Installed again after start-up: ray.init sets its own handlers, and a service started in the
    # background of a script inherits an ignored SIGINT.  Both signals stop it cleanly.
    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGINT, stop_on_signal)
    where = f"{config.replicas} {'GPU' if config.gpus_per_replica else 'CPU'} replica(s)"
    print(f"AmP parser service ready at {url} — model {config.spec!r}, {where}"
          f"{', token required' if token else ''}; API schema at {url}/openapi.json. Ctrl-C stops it.", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        print("stopping the parser service…", file=sys.stderr, flush=True)
    finally:
        launch.stop()
    return 0


def register(subparsers: Any) -> None:
    p = subparsers.add_parser("serve", help="host the parser as a service (Ray Serve) for the app and the CLI",
                              description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_model_options(p, server=False, device_help="cpu or cuda (default: best available in each replica)")
    p.add_argument("--replicas", type=int, default=None, help="model replicas (default: one per GPU, else 1)")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (beyond loopback needs AMP_TOKEN)")
    p.add_argument("--port", type=int, default=8600, help="HTTP port (default 8600)")
    p.add_argument("--address", default=None, help="join this Ray cluster instead of starting one")
    p.add_argument("--batch-size", type=int, default=8, help="items per model call (default 8)")
    p.add_argument("--no-cache", action="store_true", help="no server-side result cache")
    p.add_argument("--job-retention-hours", type=float, default=7 * 24.0,
                   help="hours a finished job (and its results) is kept on the server (default a week)")
    p.add_argument("--deadline", type=float, default=ServeConfig.deadline_s,
                   help="seconds one request may take on a replica before it is stopped with a 503 "
                        f"(default {ServeConfig.deadline_s:g}; sweeps sent as jobs have none)")
    p.set_defaults(func=run)
