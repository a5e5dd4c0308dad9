"""The options of a model behind an OpenAI-compatible API: ``--model openai:<name>`` and ``--api-*``.

Part of the model option group of every model-using command (:mod:`amp.cli.model_options`):
``--api-base`` (default ``$AMP_API_BASE``), ``--api-mode chat|completions``, ``--api-logprobs
on|off``, ``--api-grammar``, ``--api-concurrency``, ``--api-timeout`` (one request in all: connecting
and every read), ``--api-fixed`` (both as given, not adapted to the measured replies),
``--api-retries``, ``--api-budget`` (all of the command's requests).  The
key is read from ``$AMP_API_KEY`` or ``$OPENAI_API_KEY`` (never an option: a command line is
visible to every user of the machine and lands in shell histories).
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from amp.cli import common
from amp.errors import AmpError
from amp.parser.backends import api_protocol as proto
from amp.parser.backends import api_replies as replies
from amp.parser.backends.api import ApiBackend
from amp.parser.backends.api_pace import TIMEOUT_FACTOR
from amp.parser.backends.api_protocol import ApiMode, ApiSettings

#: ``--api-logprobs`` values.
ON_OFF = ("on", "off")


def add_api_options(group: Any) -> None:
    """The ``--api-*`` options, in the model option group."""
    group.add_argument("--api-base", default=os.environ.get(proto.BASE_ENV) or None,
                       help="with --model openai:<name>: the endpoint's base URL, e.g. http://127.0.0.1:8000/v1 "
                            f"(default ${proto.BASE_ENV}); the key comes from $AMP_API_KEY or $OPENAI_API_KEY")
    group.add_argument("--api-mode", choices=[m.value for m in ApiMode], default=ApiMode.CHAT.value,
                       help="chat: the paper's GPT-3.5 messages; completions: the prompt as is (base models)")
    group.add_argument("--api-logprobs", choices=ON_OFF, default="on",
                       help="ask for log-probs (token confidences; P(LF0) where the endpoint echoes prompt "
                            "log-probs); default on")
    group.add_argument("--api-grammar", action="store_true",
                       help="send the decoding grammar as GBNF (llama.cpp's server)")
    group.add_argument("--api-concurrency", type=common.count(1, proto.MAX_CONCURRENCY), default=proto.DEFAULT_CONCURRENCY,
                       help=f"the most requests in flight at once (default {proto.DEFAULT_CONCURRENCY}); one is sent "
                            "first, then more while replies stay quick, fewer when they slow down")
    group.add_argument("--api-timeout", type=common.bounded(proto.check_timeout), default=proto.DEFAULT_TIMEOUT_S,
                       help="seconds one request may take in all, connecting and every read together "
                            f"(default {proto.DEFAULT_TIMEOUT_S:g}); longer once measured replies are slow: "
                            f"{TIMEOUT_FACTOR:g} × their p90, at most {proto.MAX_TIMEOUT_S:g}")
    group.add_argument("--api-fixed", action="store_true",
                       help="use --api-timeout and --api-concurrency as given, not adapted to the measured "
                            "reply times")
    group.add_argument("--api-retries", type=common.count(0, proto.MAX_RETRIES), default=proto.DEFAULT_RETRIES,
                       help="retries of a 408/409/429/5xx, a timed-out request or a lost connection, after the "
                            f"server's Retry-After (up to {replies.MAX_RETRY_AFTER_S:g} s) or a backoff "
                            f"(default {proto.DEFAULT_RETRIES})")
    group.add_argument("--api-budget", type=common.bounded(proto.check_budget), default=None, metavar="SECONDS",
                       help="seconds all of the command's requests to the endpoint may take together, retries "
                            "and waits included (default: no budget); when it runs out the command stops with "
                            "one error, what finished is cached")


def api_settings(args: argparse.Namespace) -> ApiSettings | None:
    """The API settings of ``--model openai:<name>``, or None for any other model (AmpError if incomplete)."""
    spec = getattr(args, "model", None)
    if not proto.is_api_spec(spec):
        return None
    asked = [f"--{name.replace('_', '-')}" for name in ("device", "dtype", "server") if getattr(args, name, None)]
    if getattr(args, "trust_remote_code", False):
        asked.append("--trust-remote-code")
    if asked:
        raise AmpError(f"{', '.join(asked)} cannot be combined with --model {spec}: the endpoint runs the model")
    base = getattr(args, "api_base", None)
    if not base:
        raise AmpError(f"--model {spec} needs --api-base URL (or ${proto.BASE_ENV}), e.g. http://127.0.0.1:8000/v1")
    return ApiSettings(base_url=base, model=proto.api_model_name(str(spec)), mode=ApiMode(args.api_mode),
                       logprobs=args.api_logprobs == "on", grammar=bool(args.api_grammar),
                       concurrency=args.api_concurrency, timeout_s=args.api_timeout, retries=args.api_retries,
                       budget_s=getattr(args, "api_budget", None), adaptive=not getattr(args, "api_fixed", False))


def api_run_settings(parser: Any) -> dict[str, Any]:
    """What a run manifest and report say about a model behind an API (nothing for other models):
    where and how it was asked, that the name may hide a changed model, and whether P(LF0) exists."""
    backend = parser.backend
    if not isinstance(backend, ApiBackend):
        return {}
    out: dict[str, Any] = {"api": backend.describe(),
                           "api_note": "a model behind an API may change behind the same name; results are cached "
                                       "by endpoint, name and settings"}
    if not backend.scores:
        out["needs_logprobs"] = f"P(LF0), Fig. 3 and FIM need log-probs: {backend.why_no_scores()}"
    return out
