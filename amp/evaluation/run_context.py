"""Where a run ran: the context every report and run manifest records (issue #28).

A run's numbers depend on more than its settings: the model (its spec and identity — weight
hashes or the Hub commit), the device and dtype it ran in, the engine that computed (the
runtime's ``versions["engine"]``: ``llama.cpp``; else ``transformers``), the code
that computed (:data:`amp.code_digest.CODE_VERSION` and the digest of the computing modules), and
the parser server it ran on, if any — its URL without credentials (a token is sent in a header,
never part of the URL; a URL's ``user:password@`` is dropped here all the same).
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
BEHIND_API = "none (a model behind an API)"
#: What :meth:`RunContext.as_settings` writes for a run without a parser server.
IN_PROCESS = "none (the model ran in this process)"


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

    def as_settings(self) -> dict[str, str]:
        """The context as run-manifest settings (and report lines): every field, ``server`` in words."""
        return {"model": self.model, "identity": self.identity, "server": self.server or IN_PROCESS,
                "engine": self.engine, "device": self.device, "dtype": self.dtype, "code": self.code}


def run_context(parser: Parser) -> RunContext:
    """The context of runs computed by ``parser`` (a remote parser reports its server's model, device and dtype)."""
    backend: Any = parser.backend
    runtime = parser.runtime()
    versions = getattr(runtime, "versions", None) or {}
    # the runtime names the engine where it computes with one (llama.cpp's build, a service's engine),
    # else the backend's capabilities do; a model behind an API ran on no engine of ours
    engine = versions.get("engine") or backend.capabilities().engine or (
        BEHIND_API if getattr(backend, "kind", "") == "api" else DEFAULT_ENGINE)
    url = getattr(backend, "url", None) if getattr(backend, "kind", "") == "remote" else None
    return RunContext(model=str(parser.spec), identity=str(parser.identity), device=str(parser.device),
                      dtype=str(parser.dtype), engine=str(engine), code=code_identity(),
                      server=public_url(url) if url else None)


__all__ = ["BEHIND_API", "DEFAULT_ENGINE", "IN_PROCESS", "RunContext", "code_identity", "public_url", "run_context"]
