"""The remote backend: a client of the parser service (``python -m amp serve``, :mod:`amp.serve`).

JSON over HTTP (never pickle), with the service's API version checked on first contact: the
server's ``/v1/info`` reports its API version, code version, model and :class:`Runtime`, and
this client refuses a server that runs another version.  The server's runtime goes into this
client's cache keys, so a result fetched once is answered from this machine's cache afterwards
— the same key the server used, and the same key an in-process run of that model, device and
dtype uses.

Failures become one :class:`~amp.parser.core.errors.BackendError` each, with a sentence a person
can act on: unreachable, wrong or missing token (401/403), refused request (4xx, with the
server's message), server error (5xx), version mismatch, malformed reply.

The wire format is documented by the service itself (``/docs``, ``/openapi.json``) and in
``docs/parser-service.md``.
"""

from __future__ import annotations

import builtins
import contextlib
import json
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from amp import code_digest as code
from amp.cache import ResultCache
from amp.logic.own_words import NO_WORDS, OwnWords
from amp.parser.core.capabilities import Capabilities
from amp.parser.core.errors import BackendError
from amp.parser.core.results import (
    BatchItem,
    BatchItemResult,
    Beam,
    ForcedScore,
    JobResult,
    JobStatus,
    PairScore,
    ParseResult,
    Runtime,
    TokenStep,
)
from amp.parser.search.settings import Ask, SearchSettings

#: Version of the HTTP API; a client and a server must agree on it.
API_VERSION = 1
#: The environment variables that point the app and the CLI at a server, and carry its token.
URL_ENV = "AMP_PARSER_URL"
TOKEN_ENV = "AMP_TOKEN"
#: Seconds to wait for a quick call (info, job status) and for a model call.
QUICK_TIMEOUT_S = 15.0
WORK_TIMEOUT_S = 1800.0


def code_version() -> str:
    """The version of the code that computes results (:data:`amp.code_digest.CODE_VERSION` and the
    digest of the modules that compute, :func:`amp.code_digest.code_digest`); client and server must
    run the same."""

    return f"{code.CODE_VERSION}+{code.code_digest()[:16]}"


@dataclass(frozen=True)
class ServerInfo:
    """What ``/v1/info`` says: versions, model spec, runtime, ``top_n``, replicas, limits and what
    the service's engine can do (:class:`~amp.parser.core.capabilities.Capabilities`)."""

    api: int
    code: str
    spec: str
    runtime: Runtime
    top_n: int
    replicas: int
    limits: dict[str, int]
    capabilities: Capabilities = field(default_factory=Capabilities)


def normalise_url(url: str) -> str:
    """``http(s)://host[:port]`` without a trailing slash, or a :class:`BackendError`."""
    url = (url or "").strip().rstrip("/")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BackendError(f"the parser server URL must look like http://host:port, not {url!r}", kind="refused")
    if parts.query or parts.fragment:
        raise BackendError(f"the parser server URL must not carry a query or fragment: {url!r}", kind="refused")
    return url


class RemoteBackend:
    """A model served by the parser service at ``url``; ``token`` defaults to ``$AMP_TOKEN``."""

    kind = "remote"

    def __init__(self, url: str, *, token: str | None = None, timeout_s: float | None = None,
                 info_cache: Any = None) -> None:
        self.url = normalise_url(url)
        self.token = token if token is not None else (os.environ.get(TOKEN_ENV) or None)
        self.timeout_s = float(timeout_s) if timeout_s else WORK_TIMEOUT_S
        self.info_cache = info_cache
        self._info: ServerInfo | None = None
        self._checked = False
        self.jobs_client = RemoteJobs(self)

    # -- transport --------------------------------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, *, timeout_s: float | None = None) -> Any:
        """One JSON request; the decoded JSON reply, or a :class:`BackendError`."""
        data = None if body is None else json.dumps(body, ensure_ascii=False, allow_nan=False).encode("utf-8")
        headers = {"Accept": "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.token:
            headers["Authorization"] = f"Bearer {self.token}"
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=timeout_s or self.timeout_s) as reply:
                raw = reply.read()
        except urllib.error.HTTPError as exc:
            raise self._refusal(exc) from None
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise BackendError(f"cannot reach the parser server at {self.url}: {reason}", kind="unreachable") from None
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise BackendError(f"the parser server at {self.url} sent a reply that is not JSON",
                               kind="protocol") from None

    def _refusal(self, exc: urllib.error.HTTPError) -> BackendError:
        try:
            payload = json.loads(exc.read().decode("utf-8"))
        except (UnicodeDecodeError, ValueError, OSError):
            payload = {}
        err = payload.get("error") if isinstance(payload, dict) else None
        message = err.get("message") if isinstance(err, dict) else None
        if message is None and isinstance(payload, dict) and "detail" in payload:  # FastAPI's own 422s
            message = _detail_text(payload["detail"])
        message = message or exc.reason or "no reason given"
        if exc.code in (401, 403):
            hint = ("no token was sent: set AMP_TOKEN (or the sidebar's token field) to the server's token"
                    if not self.token else "the token was refused: check AMP_TOKEN against the server's")
            return BackendError(f"the parser server at {self.url} refused access ({exc.code}): {hint}",
                                kind="unauthorized", status=exc.code)
        kind = "server" if exc.code >= 500 else "refused"
        return BackendError(f"the parser server refused the request ({exc.code}): {message}", kind=kind,
                            status=exc.code)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        if not self._checked:  # a live version check before the first real call
            self.info(refresh=True)
        return self.request("POST", path, body)

    # -- identity ------------------------------------------------------------------------------------------

    def _info_key(self) -> str:

        return ResultCache.key("server-info", url=self.url)

    def info(self, *, refresh: bool = False) -> ServerInfo:
        """The server's ``/v1/info`` (fetched once), checked against this client's versions.

        With ``info_cache`` (the client's :class:`~amp.cache.ResultCache`) the last info seen is
        kept there, so that an unreachable server still lets cached results be answered (the
        keys need its runtime); anything uncached then fails with the unreachable error.
        """
        if self._info is None or refresh:
            try:
                d = self.request("GET", "/v1/info", timeout_s=QUICK_TIMEOUT_S)
            except BackendError as exc:
                kept = self.info_cache.get(self._info_key()) if (self.info_cache is not None and not refresh
                                                                and exc.kind == "unreachable") else None
                if kept is None:
                    raise
                d = kept
            else:
                self._checked = True
            try:
                info = ServerInfo(api=int(d["api"]), code=str(d["code"]), spec=str(d["spec"]),
                                  runtime=Runtime.from_dict(d["runtime"]), top_n=int(d["top_n"]),
                                  replicas=int(d.get("replicas", 1)), limits=dict(d.get("limits") or {}),
                                  capabilities=Capabilities.from_dict(d.get("capabilities") or {}))
            except (KeyError, TypeError, ValueError) as exc:
                raise BackendError(f"the parser server at {self.url} sent an unreadable /v1/info ({exc})",
                                   kind="protocol") from None
            if info.api != API_VERSION or info.code != code_version():
                raise BackendError(
                    f"version mismatch: the parser server at {self.url} runs API {info.api}, code {info.code}; "
                    f"this client speaks API {API_VERSION}, code {code_version()} — run the same AmP Explorer "
                    "version on both", kind="version")
            self._info = info
            if self.info_cache is not None and self._checked:

                with contextlib.suppress(Exception):
                    self.info_cache.set(self._info_key(), d, model="server-info")
        return self._info

    @property
    def spec(self) -> str:
        return self.info().spec

    @property
    def loaded(self) -> bool:
        return True  # nothing loads in this process; the server loads its model itself

    @property
    def jobs(self) -> RemoteJobs:
        return self.jobs_client

    @property
    def device(self) -> str:
        return self.info().runtime.device

    @property
    def dtype(self) -> str:
        return self.info().runtime.dtype

    def runtime(self) -> Runtime:
        return self.info().runtime

    def capabilities(self) -> Capabilities:
        """The service's engine's (``/v1/info``), without gradients: the weights are not in this process.
        A server that cannot be reached (and was never seen) counts as one that scores, so cached
        results are still read; anything uncached then fails with the unreachable error."""
        try:
            caps = self.info().capabilities
        except BackendError as exc:
            if exc.kind != "unreachable":
                raise
            caps = Capabilities()
        return replace(caps, gradients=False)

    def describe(self) -> str:
        rt = self.info().runtime
        return f"server {self.url} · {rt.device} · {rt.dtype}"

    def load(self) -> None:
        self.info(refresh=True)

    def health(self) -> bool:
        """Whether ``/health`` answers (no token needed)."""
        try:
            return self.request("GET", "/health", timeout_s=QUICK_TIMEOUT_S).get("status") == "ok"
        except BackendError:
            return False

    # -- the work ----------------------------------------------------------------------------------------

    def parse(self, prompts: Sequence[str], *, fmt: str, top_n: int, search: SearchSettings,
              words: OwnWords = NO_WORDS) -> list[ParseResult]:
        d = self.post("/v1/parse", _with(words, {"prompts": list(prompts), "fmt": fmt, "top_n": top_n,
                                                 "search": search.as_dict()}))
        return _each(d, "results", ParseResult.from_dict, len(prompts))

    def parse_and_score(self, asks: Sequence[Ask], *, fmt: str, top_n: int,
                        search: SearchSettings, words: OwnWords = NO_WORDS) -> list[tuple[ParseResult, PairScore | None]]:
        d = self.post("/v1/parse_and_score", _with(words, {"items": [list(a) for a in asks], "fmt": fmt,
                                                           "top_n": top_n, "search": search.as_dict()}))
        return _each(d, "results", lambda r: (ParseResult.from_dict(r["parse"]),
                                              PairScore.from_dict(r["pair"]) if r.get("pair") else None), len(asks))

    def forced(self, prompt: str, lfs: Sequence[str], *, fmt: str, top_n: int,
               words: OwnWords = NO_WORDS) -> list[ForcedScore]:
        d = self.post("/v1/forced", _with(words, {"prompt": prompt, "lfs": list(lfs), "fmt": fmt, "top_n": top_n}))
        return _each(d, "results", ForcedScore.from_dict, len(lfs))

    def score_pairs(self, items: Sequence[tuple[str, str, str]], *, fmt: str, top_n: int,
                    words: OwnWords = NO_WORDS) -> list[PairScore]:
        d = self.post("/v1/pairs", _with(words, {"items": [list(i) for i in items], "fmt": fmt, "top_n": top_n}))
        return _each(d, "results", PairScore.from_dict, len(items))

    def beam_steps(self, prompt: str, beam: Beam, *, fmt: str, top_n: int, constrained: bool,
                   words: OwnWords = NO_WORDS) -> tuple[TokenStep, ...]:
        d = self.post("/v1/steps", _with(words, {"prompt": prompt, "beam": beam.to_dict(), "fmt": fmt,
                                                 "top_n": top_n, "constrained": constrained}))
        return tuple(_each(d, "steps", TokenStep.from_dict, None))

    def sample(self, prompt: str, *, n: int, temperature: float, seed: int, fmt: str,
               max_new_tokens: int | None, words: OwnWords = NO_WORDS) -> list[str | None]:
        d = self.post("/v1/sample", _with(words, {"prompt": prompt, "n": n, "temperature": temperature,
                                                  "seed": seed, "fmt": fmt, "max_new_tokens": max_new_tokens}))
        samples = _each(d, "samples", lambda s: s, n)
        if not all(s is None or isinstance(s, str) for s in samples):
            raise BackendError("the parser server sent samples that are not text", kind="protocol")
        return samples

    def close(self) -> None:
        """Nothing to release (one HTTP request per call)."""

    def __repr__(self) -> str:
        return f"RemoteBackend({self.url!r})"


class RemoteJobs:
    """The service's sweep jobs (``/v1/jobs``), as a :class:`amp.parser.backend.JobClient`."""

    def __init__(self, backend: RemoteBackend) -> None:
        self.backend = backend

    def submit(self, items: Sequence[Any], search: SearchSettings, *, top_n: int, batch_size: int,
               label: str = "", meta: dict[str, Any] | None = None) -> JobStatus:
        d = self.backend.post("/v1/jobs", {"items": [i.to_dict() for i in items], "search": search.as_dict(),
                                           "top_n": top_n, "batch_size": batch_size, "label": label,
                                           "meta": meta or {}})
        return _status(d)

    def status(self, job_id: str) -> JobStatus:
        return _status(self.backend.request("GET", f"/v1/jobs/{_jid(job_id)}", timeout_s=QUICK_TIMEOUT_S))

    def list(self) -> list[JobStatus]:
        d = self.backend.request("GET", "/v1/jobs", timeout_s=QUICK_TIMEOUT_S)
        return _each(d, "jobs", _status, None)

    def results(self, job_id: str, start: int = 0) -> builtins.list[JobResult]:
        d = self.backend.request("GET", f"/v1/jobs/{_jid(job_id)}/results?start={int(start)}",
                                 timeout_s=QUICK_TIMEOUT_S * 4)
        return _each(d, "results", lambda r: JobResult(int(r["index"]), BatchItem.from_dict(r["item"]),
                                                       BatchItemResult.from_dict(r["result"])), None)

    def cancel(self, job_id: str) -> JobStatus:
        return _status(self.backend.request("DELETE", f"/v1/jobs/{_jid(job_id)}", timeout_s=QUICK_TIMEOUT_S))


def _jid(job_id: str) -> str:
    if not job_id or not all(c.isalnum() or c in "-_" for c in job_id) or len(job_id) > 64:
        raise BackendError(f"not a job id: {job_id!r}", kind="refused")
    return job_id


def _status(d: Any) -> JobStatus:
    try:
        return JobStatus.from_dict(d)
    except (KeyError, TypeError, ValueError) as exc:
        raise BackendError(f"the parser server sent an unreadable job status ({exc})", kind="protocol") from None


def _each(d: Any, key: str, decode: Any, expected: int | None) -> builtins.list[Any]:
    try:
        values = [decode(v) for v in d[key]]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BackendError(f"the parser server sent an unreadable reply ({type(exc).__name__}: {exc})",
                           kind="protocol") from None
    if expected is not None and len(values) != expected:
        raise BackendError(f"the parser server sent {len(values)} results for {expected} inputs", kind="protocol")
    return values


def _detail_text(detail: Any) -> str:
    if isinstance(detail, list) and detail and isinstance(detail[0], dict):
        first = detail[0]
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
        return f"{where}: {first.get('msg', 'invalid')}" if where else str(first.get("msg", "invalid"))
    return str(detail)


def _with(words: OwnWords, body: dict[str, Any]) -> dict[str, Any]:
    """A request body with the teacher's own words, when there are any (a request without them is
    what servers of every version read)."""
    return {**body, "words": words.to_dict()} if words else body
