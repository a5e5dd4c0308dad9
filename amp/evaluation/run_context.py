"""Where a run ran: the context every report and run manifest records (issues #28 and #46).

A run's numbers depend on more than its settings: the model (its spec and identity — weight
hashes or the Hub commit), the device and dtype it ran in, the engine that computed (the
runtime's ``versions["engine"]``: ``llama.cpp``; else ``transformers``; :data:`BEHIND_API` for a
model behind an API endpoint) with its libraries' versions (the runtime's ``versions``: a parser
server's are the *server's*), the code that computed (:data:`amp.code_digest.CODE_VERSION` and the
digest of the computing modules; a server's own, from its ``/v1/info``), and the parser server it
ran on, if any — its URL without credentials (a token is sent in a header, never part of the URL; a
URL's ``user:password@`` is dropped here all the same).  A model behind an API names its endpoint
(the same way: never its key) and its mode (``chat`` or ``completions``).

When and with which library versions this process wrote the run is :mod:`amp.evaluation.provenance`.
"""

from __future__ import annotations

import urllib.parse
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from amp import code_digest as code
from amp.parser.engines import DEFAULT_ENGINE
from amp.records import JsonRecord

if TYPE_CHECKING:
    from amp.parser.parser import Parser

#: The engine of a run whose model answered from an API endpoint (no engine of this process ran it).
BEHIND_API = "api"
#: What :meth:`RunContext.as_settings` writes for a run without a parser server.
IN_PROCESS = "none (the model ran in this process)"
#: What :meth:`RunContext.as_settings` writes as the server of a model behind an API (its ``endpoint`` says where).
AT_ENDPOINT = "none (a model behind an API endpoint)"
#: The settings keys :meth:`RunContext.as_settings` may write, in order (the report's "Where it ran").
CONTEXT_KEYS: tuple[str, ...] = ("model", "identity", "server", "endpoint", "api_mode", "engine", "engine_versions",
                                 "device", "dtype", "code")


def public_url(url: str) -> str:
    """``url`` as it may be written down: scheme, host, port and path — no credentials, query or fragment."""
    parts = urllib.parse.urlsplit(url.strip())
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 literal
        host = f"[{host}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def code_identity() -> str:
    """``amp-parser-N+<digest>``: the code version and the digest of the modules that compute."""
    return f"{code.CODE_VERSION}+{code.code_digest()[:16]}"


@dataclass(frozen=True)
class RunContext(JsonRecord):
    """Where and with what a run computed (see the module docstring)."""

    model: str
    identity: str
    device: str
    dtype: str
    engine: str
    code: str
    server: str | None = None
    #: The API endpoint of a model behind an API (:func:`public_url`), and how it was asked (``chat``/``completions``).
    endpoint: str | None = None
    api_mode: str | None = None
    #: The versions the engine computed with (its runtime's ``versions``, ``name version`` joined by `` · ``).
    engine_versions: str = ""

    def as_settings(self) -> dict[str, str]:
        """The context as run-manifest settings (and report lines), in :data:`CONTEXT_KEYS`' order:
        ``server`` in words; ``endpoint``, ``api_mode`` and ``engine_versions`` only when known."""
        server = self.server or (AT_ENDPOINT if self.endpoint else IN_PROCESS)
        values = {"model": self.model, "identity": self.identity, "server": server, "endpoint": self.endpoint,
                  "api_mode": self.api_mode, "engine": self.engine, "engine_versions": self.engine_versions,
                  "device": self.device, "dtype": self.dtype, "code": self.code}
        return {key: str(values[key]) for key in CONTEXT_KEYS if values[key]}


def versions_text(versions: dict[str, Any]) -> str:
    """A runtime's versions in words: ``torch 2.5.1 · transformers 4.46.0`` (the ``engine`` name left out)."""
    return " · ".join(f"{name} {value}" for name, value in versions.items() if name != "engine")


def run_context(parser: Parser) -> RunContext:
    """The context of runs computed by ``parser``: a remote parser reports its server's model, engine,
    device, dtype, library versions and code; a model behind an API its endpoint and mode."""
    backend: Any = parser.backend
    kind = getattr(backend, "kind", "")
    runtime = parser.runtime()
    versions = dict(getattr(runtime, "versions", None) or {})
    code_id, url, endpoint, api_mode = code_identity(), None, None, None
    if kind == "api":  # a model behind an API ran on no engine of ours
        engine, endpoint = BEHIND_API, public_url(backend.settings.base_url)
        api_mode = str(backend.settings.mode)
    else:  # the runtime names the engine where it computes with one (llama.cpp's build, a service's
        # engine), else the backend's capabilities do
        engine = versions.get("engine") or backend.capabilities().engine or DEFAULT_ENGINE
    if kind == "remote":
        url = backend.url
        code_id = str(backend.info().code)  # the server's (the client checked that it runs the same)
    return RunContext(model=str(parser.spec), identity=str(parser.identity), device=str(parser.device),
                      dtype=str(parser.dtype), engine=str(engine), code=code_id,
                      server=public_url(url) if url else None, endpoint=endpoint, api_mode=api_mode,
                      engine_versions=versions_text(versions))


__all__ = ["AT_ENDPOINT", "BEHIND_API", "CONTEXT_KEYS", "DEFAULT_ENGINE", "IN_PROCESS", "RunContext", "code_identity",
           "public_url", "run_context", "versions_text"]
