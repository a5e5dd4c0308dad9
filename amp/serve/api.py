"""``Api``: the HTTP ingress of the parser service (FastAPI on Ray Serve).

Routes (JSON; schema and examples at ``/openapi.json``; no ``/docs`` page, see :data:`OPEN_PATHS`):

``GET /health`` (no token) · ``GET /v1/info`` · ``POST /v1/parse`` · ``POST /v1/parse_and_score`` ·
``POST /v1/forced`` · ``POST /v1/pairs`` · ``POST /v1/steps`` · ``POST /v1/sample`` ·
``POST /v1/jobs`` · ``GET /v1/jobs`` · ``GET /v1/jobs/{id}`` · ``GET /v1/jobs/{id}/results?start=N`` ·
``DELETE /v1/jobs/{id}``.

Every refusal is a 4xx JSON body ``{"error": {"type", "message", "status"}}``: 401 without
the right bearer token (compared in constant time; required whenever the service was started
with ``AMP_TOKEN``, which it must be when it listens beyond loopback), 411/413 for a body
without a length or over :data:`amp.parser.core.limits.MAX_BODY_BYTES`, 422 for a body outside
the schema or its bounds, 400 for input the parser refuses (an LF outside the grammar, a
prompt over the model's context), 404 for an unknown job, 410 for a stored job that cannot be
sent (its DELETE removes it), 429 when the job store has no room for a new job (413 for one
larger than the whole store); 503 if the model cannot load or a
request ran past the service's deadline (``amp serve --deadline``, :mod:`amp.serve.worker`).
"""


import asyncio
import hmac
import os
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from ray import serve
from starlette.exceptions import HTTPException as StarletteHTTPException

from amp.parser.backends.remote import API_VERSION
from amp.parser.core import limits
from amp.serve import schema

#: Paths answered without a token: liveness and the API's own description (``/docs`` is switched
#: off: its page loads scripts from a public CDN, blank offline; the schema is at ``/openapi.json``).
OPEN_PATHS = frozenset({"/health", "/openapi.json"})

#: The environment variable that carries the token into the ingress replica's process only
#: (:func:`amp.serve.launch.start` sets it in that deployment's runtime environment).
TOKEN_VAR = "AMP_SERVICE_TOKEN"
#: The body limit.
GUARD: dict[str, Any] = {"max_body": limits.MAX_BODY_BYTES}

app = FastAPI(
    title="AmP Explorer parser service",
    version=str(API_VERSION),
    docs_url=None,
    redoc_url=None,
    description="Grammar-constrained semantic parsing and forced scoring of ambiguous sentences "
                "(AmP), with sweeps as jobs. Send `Authorization: Bearer <AMP_TOKEN>` when the "
                "service has a token.",
)


def refusal(status: int, kind: str, message: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"error": {"type": kind, "message": message, "status": status}})


@app.middleware("http")
async def guard(request: Request, call_next: Any) -> Any:
    token = os.environ.get(TOKEN_VAR) or None
    if token and request.url.path not in OPEN_PATHS:
        header = request.headers.get("authorization", "")
        given = header[7:].strip() if header[:7].lower() == "bearer " else ""
        if not hmac.compare_digest(given.encode("utf-8"), token.encode("utf-8")):
            return refusal(401, "unauthorized", "a valid bearer token is required (Authorization: Bearer <AMP_TOKEN>)")
    if request.method in ("POST", "PUT", "PATCH"):
        length = request.headers.get("content-length")
        if length is None:
            return refusal(411, "length_required", "send the body with a Content-Length header")
        if not length.isdigit() or int(length) > GUARD["max_body"]:
            return refusal(413, "too_large", f"the body is over {GUARD['max_body']} bytes")
    return await call_next(request)


def _what_is_wrong(error: dict[str, Any]) -> str:
    """One validation error in the project's words: a bound's own message (not pydantic's
    ``"Value error, …"`` wrapping of it), else pydantic's short sentence; never its links."""
    cause = (error.get("ctx") or {}).get("error")
    text = str(cause) if isinstance(cause, Exception) else str(error.get("msg") or "invalid")
    return " ".join(text.split())


@app.exception_handler(RequestValidationError)
async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
    errors = exc.errors()
    first = errors[0] if errors else {}
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body")
    what = _what_is_wrong(first) if first else "invalid request"
    message = f"{where}: {what}" if where else what
    return JSONResponse(status_code=422, content={"error": {"type": "invalid", "message": message, "status": 422}})


#: Short words for the statuses FastAPI/Starlette raise themselves (a body that is not JSON, a wrong path).
_KINDS = {400: "bad_request", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}


@app.exception_handler(StarletteHTTPException)
async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
    """FastAPI's own refusals (a body it cannot parse: invalid UTF-8, JSON nested too deep; an unknown
    path or method) in the same ``{"error": …}`` envelope."""
    return refusal(exc.status_code, _KINDS.get(exc.status_code, "refused"), str(exc.detail))


@app.exception_handler(Exception)
async def failure(request: Request, exc: Exception) -> JSONResponse:
    """Anything unforeseen: still the envelope (and no traceback to the client)."""
    return refusal(500, "server", f"the service failed on this request ({type(exc).__name__})")


def answer(reply: dict[str, Any]) -> Any:
    """A worker's answer as the HTTP reply: its error as a 4xx/5xx JSON body, else as is."""
    if isinstance(reply, dict) and "error" in reply:
        err = reply["error"]
        return refusal(int(err.get("status", 500)), str(err.get("type", "error")), str(err.get("message", "")))
    return reply


async def ask(response: Any) -> Any:
    """A worker call's answer (:func:`answer`); if this request is cancelled (its client went away,
    or timed out), the worker call is cancelled too, which stops its search at the next step."""
    try:
        return answer(await response)
    except asyncio.CancelledError:
        response.cancel()
        raise


def _missing(job_id: str) -> JSONResponse:
    return refusal(404, "not_found", f"no job {job_id!r} on this server")


def _job_answer(reply: Any) -> Any:
    """The job manager's reply: its refusal ``{"error": {…}}`` (a store cap, a job that cannot be
    sent) as that 4xx; a job's status (whose ``error`` is text or null) as is."""
    return answer(reply) if isinstance(reply, dict) and isinstance(reply.get("error"), dict) else reply


@serve.deployment(name="Api", max_ongoing_requests=1024, ray_actor_options={"num_cpus": 0})
@serve.ingress(app)
class Api:
    """The ingress: checks, then hands each call to the worker replicas or the job manager."""

    def __init__(self, worker: Any, jobs: Any) -> None:
        self.worker = worker
        self.jobs = jobs

    @app.get("/health")
    async def health(self) -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/v1/info")
    async def info(self) -> Any:
        return await ask(self.worker.info.remote())

    @app.post("/v1/parse")
    async def parse(self, body: schema.ParseRequest) -> Any:
        return await ask(self.worker.parse.remote(body.model_dump()))

    @app.post("/v1/parse_and_score")
    async def parse_and_score(self, body: schema.JointRequest) -> Any:
        return await ask(self.worker.joint.remote(body.model_dump()))

    @app.post("/v1/forced")
    async def forced(self, body: schema.ForcedRequest) -> Any:
        return await ask(self.worker.forced.remote(body.model_dump()))

    @app.post("/v1/pairs")
    async def pairs(self, body: schema.PairsRequest) -> Any:
        return await ask(self.worker.pairs.remote(body.model_dump()))

    @app.post("/v1/steps")
    async def steps(self, body: schema.StepsRequest) -> Any:
        return await ask(self.worker.steps.remote(body.model_dump()))

    @app.post("/v1/sample")
    async def sample(self, body: schema.SampleRequest) -> Any:
        return await ask(self.worker.sample.remote(body.model_dump()))

    @app.post("/v1/jobs")
    async def submit(self, body: schema.JobRequest) -> Any:
        return _job_answer(await self.jobs.submit.remote(body.model_dump()))

    @app.get("/v1/jobs")
    async def list_jobs(self) -> Any:
        return await self.jobs.list.remote()  # {"jobs": […], "skipped": [{"id", "reason"}, …]}

    @app.get("/v1/jobs/{job_id}")
    async def job(self, job_id: str) -> Any:
        status = await self.jobs.status.remote(job_id)
        return _job_answer(status) if status is not None else _missing(job_id)

    @app.get("/v1/jobs/{job_id}/results")
    async def job_results(self, job_id: str, start: int = 0) -> Any:
        results = await self.jobs.results.remote(job_id, max(0, start))
        return {"results": results} if results is not None else _missing(job_id)

    @app.delete("/v1/jobs/{job_id}")
    async def cancel(self, job_id: str) -> Any:
        status = await self.jobs.cancel.remote(job_id)
        return status if status is not None else _missing(job_id)
