"""The model options every model-using command shares, declared once: which model, where, in what.

``--model``, ``--device``, ``--dtype``, ``--engine``, ``--trust-remote-code`` and (for commands that can be a
client) ``--server``, as one argument group; :func:`make_parser` turns them into a
:class:`amp.parser.Parser`.  ``--engine`` takes the engines registered in :mod:`amp.parser.engines`
when the command line is built (a registered engine is a choice of every command), and the
registry chooses and checks it (``$AMP_ENGINE``, the default rule).  A new way to run a model that
is not an engine (an API) is one more option here and one more keyword in :func:`make_parser`.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from typing import Any

from amp.cli.api_options import add_api_options, api_settings
from amp.errors import AmpError
from amp.parser.backends.api import ApiBackend
from amp.parser.core.capabilities import Capabilities
from amp.parser.engines import ENGINE_ENV, engine_entry, engine_names, local_backend
from amp.parser.models.loading import DTYPE_HELP, DTYPES
from amp.parser.models.names import check_model_name
from amp.parser.parser import Parser

#: What ``--model`` takes, in the words of every command's help.
MODEL_HELP = ("'default' (embedded Gemma 3 270M), a Hugging Face id, a model folder, a .gguf file, "
              "or openai:<name> (a model behind an OpenAI-compatible API, with --api-base)")


def add_model_options(parser: argparse.ArgumentParser, *, server: bool = True,
                      device_help: str = "cpu, cuda, cuda:N or mps (default: best available)") -> None:
    """``--model``, ``--device``, ``--dtype``, ``--trust-remote-code`` (and ``--server``) as one group."""
    group = parser.add_argument_group("model")
    group.add_argument("--model", default="default", help=MODEL_HELP)
    group.add_argument("--device", default=None, help=device_help)
    group.add_argument("--dtype", default=None, choices=DTYPES, help=DTYPE_HELP)
    names = engine_names()
    group.add_argument("--engine", default=None, choices=names,
                       help="what runs the model: " + "; ".join(f"{n} ({engine_entry(n).summary})" for n in names)
                            + f". Default ${ENGINE_ENV}, else llama.cpp for a GGUF (the default model included) "
                              "on the CPU without --dtype, transformers otherwise")
    group.add_argument("--trust-remote-code", action="store_true",
                       help="allow a Hub model's own Python code (only for models you trust)")
    if server:
        group.add_argument("--server", default=os.environ.get("AMP_PARSER_URL") or None,
                           help="parser service URL (python -m amp serve; default $AMP_PARSER_URL); "
                                "its token comes from $AMP_TOKEN")
    add_api_options(group)


def make_parser(args: argparse.Namespace, *, cache: bool | None = None) -> Parser:
    """A :class:`amp.parser.Parser` for the command-line options (the model loads lazily).

    With ``--server`` (or ``$AMP_PARSER_URL``) the model is the service's: ``--model``,
    ``--device`` and ``--dtype`` must then be left at their defaults.  ``cache``: use the result
    cache (default: unless ``--no-cache``).
    """
    use_cache = (not getattr(args, "no_cache", False)) if cache is None else cache
    api = api_settings(args)
    if api is not None:  # --model openai:<name>: a model behind an API
        return Parser(backend=ApiBackend(api), cache=use_cache)
    server = getattr(args, "server", None)
    if server:
        asked = [f"--{name.replace('_', '-')}" for name in ("device", "dtype", "engine")
                 if getattr(args, name, None) is not None]
        if getattr(args, "model", "default") != "default":
            asked.insert(0, "--model")
        if asked:
            raise AmpError(f"{', '.join(asked)} cannot be combined with --server: the server runs its own model "
                           "(unset AMP_PARSER_URL or drop --server to run a model here)")
        return Parser.remote(server, cache=use_cache)
    check_model_name(args.model)  # a misspelt or (offline) uncached name: one error line now, with close names
    backend = local_backend(args.model, engine=args.engine, device=args.device, dtype=args.dtype,
                            trust_remote_code=args.trust_remote_code, need=command_need(args))
    return Parser(backend=backend, cache=use_cache)


def needs_gradients(caps: Capabilities) -> bool:
    """What a command that takes gradients (``amp attribute``) needs of its engine."""
    return caps.gradients


def needs_unconstrained(caps: Capabilities) -> bool:
    """What ``--unconstrained`` needs of its engine: the search without the grammar."""
    return caps.unconstrained


def command_need(args: argparse.Namespace) -> Callable[[Capabilities], bool] | None:
    """What the command asks of the engine the default rule would choose (``need`` of
    :func:`amp.parser.engines.select_engine`): ``--unconstrained``'s search without the grammar, a
    command's declared ``need`` (``set_defaults(need=needs_gradients)``), or nothing."""
    if getattr(args, "unconstrained", False):
        return needs_unconstrained
    need: Callable[[Capabilities], bool] | None = getattr(args, "need", None)
    return need


def model_payload(args: argparse.Namespace, parser: Any) -> dict[str, Any]:
    """The model part of a command's ``--json`` output: what was asked for and what ran."""
    return {"model": args.model, "identity": parser.identity, "device": parser.device, "dtype": parser.dtype}


def model_header(parser: Any) -> str:
    return f"model: {parser.spec} ({parser.identity}) on {parser.device}, {parser.dtype}"
