"""The HTTP transport of the API backend: every request bounded in time and in bytes.

The ``openai`` client of :class:`amp.parser.backends.api.ApiBackend` sends its requests through
:func:`bounded_http_client`, an ``httpx2`` client whose transport

* gives each request **one deadline**, ``deadline()`` (the backend's for the attempt the calling
  thread makes: ``--api-timeout`` from the attempt's start, or the end of the command's
  ``--api-budget`` if that comes first; a redirect keeps it).  Connecting, the TLS handshake,
  sending and *every* read get only what is left of it, so a server that answers one byte a second is cut off at the deadline — not after one
  read timeout per byte.  Past it the request ends in
  :class:`~amp.parser.core.errors.DeadlinePassed` (``budget`` says which deadline it was);
* reads a reply's body in chunks up to :data:`~amp.parser.backends.api_protocol.MAX_REPLY_BYTES`:
  a declared ``Content-Length`` over the cap is refused before a byte of the body is read, and a
  chunked reply (an endless stream) is cut at the cap —
  :class:`~amp.parser.core.errors.ReplyTooLarge`, with nothing over the cap ever held;
* asks for the reply uncompressed and refuses a compressed one (unpacked, its size is not bounded
  by the bytes read).

``http``/``https`` proxies from the environment (``HTTPS_PROXY``, ``HTTP_PROXY``, ``NO_PROXY``) are
used as ``httpx`` would; other proxies (SOCKS) are not.  A request is sent and its reply read by
the thread that asked for it, so ``deadline()`` may answer per thread.
"""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar
from urllib.parse import unquote, urlsplit

import httpcore2
import httpx2
import openai

from amp.parser.backends.api_replies import MAX_REPLY_BYTES
from amp.parser.core.errors import DeadlinePassed, ReplyTooLarge

T = TypeVar("T")

#: ``deadline()``'s answer: when the request must be done (``time.monotonic()`` seconds) and
#: whether that is the command's budget (True) rather than the request's own deadline.
Deadline = tuple[float, bool]

#: httpcore2's errors as the httpx2 errors the ``openai`` client expects, most specific first.
_ERRORS: tuple[tuple[type[Exception], type[Exception]], ...] = (
    (httpcore2.ConnectTimeout, httpx2.ConnectTimeout),
    (httpcore2.ReadTimeout, httpx2.ReadTimeout),
    (httpcore2.WriteTimeout, httpx2.WriteTimeout),
    (httpcore2.PoolTimeout, httpx2.PoolTimeout),
    (httpcore2.TimeoutException, httpx2.TimeoutException),
    (httpcore2.ConnectError, httpx2.ConnectError),
    (httpcore2.ReadError, httpx2.ReadError),
    (httpcore2.WriteError, httpx2.WriteError),
    (httpcore2.NetworkError, httpx2.NetworkError),
    (httpcore2.ProxyError, httpx2.ProxyError),
    (httpcore2.UnsupportedProtocol, httpx2.UnsupportedProtocol),
    (httpcore2.RemoteProtocolError, httpx2.RemoteProtocolError),
    (httpcore2.LocalProtocolError, httpx2.LocalProtocolError),
    (httpcore2.ProtocolError, httpx2.ProtocolError),
)


def _as_httpx(exc: Exception) -> Exception:
    for core, mapped in _ERRORS:
        if isinstance(exc, core):
            return mapped(str(exc))
    return exc


def _within_deadline(deadline: Callable[[], Deadline], operation: Callable[[float], T], timeout: float | None) -> T:
    """``operation(seconds)`` with at most what is left of ``deadline()`` (or ``timeout`` if
    shorter); :class:`DeadlinePassed` once nothing is left or the wait ran into it."""
    at, budget = deadline()
    left = at - time.monotonic()
    if left <= 0:
        raise DeadlinePassed("the request's deadline passed", budget=budget)
    try:
        return operation(left if timeout is None else min(timeout, left))
    except httpcore2.TimeoutException:
        if time.monotonic() >= at - 0.01:
            raise DeadlinePassed("the request's deadline passed", budget=budget) from None
        raise


class _BoundedStream(httpcore2.NetworkStream):
    """A connection whose every read and write ends by the deadline of the request using it."""

    def __init__(self, inner: httpcore2.NetworkStream, deadline: Callable[[], Deadline]) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return _within_deadline(self._deadline, lambda t: self._inner.read(max_bytes, t), timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        _within_deadline(self._deadline, lambda t: self._inner.write(buffer, t), timeout)

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None,
                  timeout: float | None = None) -> httpcore2.NetworkStream:
        return _BoundedStream(_within_deadline(
            self._deadline, lambda t: self._inner.start_tls(ssl_context, server_hostname, t), timeout), self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _BoundedBackend(httpcore2.NetworkBackend):
    """httpcore2's own socket backend, its connections bounded by the deadline (:class:`_BoundedStream`)."""

    def __init__(self, deadline: Callable[[], Deadline]) -> None:
        self._inner = httpcore2.SyncBackend()
        self._deadline = deadline

    def connect_tcp(self, host: str, port: int, timeout: float | None = None, local_address: str | None = None,
                    socket_options: Iterable[Any] | None = None) -> httpcore2.NetworkStream:
        return _BoundedStream(_within_deadline(
            self._deadline, lambda t: self._inner.connect_tcp(host, port, t, local_address, socket_options),
            timeout), self._deadline)

    def connect_unix_socket(self, path: str, timeout: float | None = None,
                            socket_options: Iterable[Any] | None = None) -> httpcore2.NetworkStream:
        return _BoundedStream(_within_deadline(
            self._deadline, lambda t: self._inner.connect_unix_socket(path, t, socket_options), timeout),
            self._deadline)

    def sleep(self, seconds: float) -> None:
        self._inner.sleep(seconds)


class _CappedBody(httpx2.SyncByteStream):
    """A reply body read in the chunks that arrive, stopped once it is over ``cap`` bytes."""

    def __init__(self, chunks: Iterable[bytes], cap: int, where: str) -> None:
        self._chunks = chunks
        self._cap = cap
        self._where = where

    def __iter__(self) -> Iterator[bytes]:
        seen = 0
        try:
            for chunk in self._chunks:
                seen += len(chunk)
                if seen > self._cap:
                    raise ReplyTooLarge(f"the reply of {self._where} is over {self._cap:,} bytes: "
                                        "reading stopped there")
                yield chunk
        except Exception as exc:  # noqa: BLE001 - httpcore2's errors are mapped, the others pass as they are
            mapped = _as_httpx(exc)
            if mapped is exc:
                raise
            raise mapped from exc

    def close(self) -> None:
        closer = getattr(self._chunks, "close", None)
        if closer is not None:
            closer()


class _BoundedTransport(httpx2.BaseTransport):
    """Sends a request over a pool of bounded connections and hands back its capped body."""

    def __init__(self, pool: httpcore2.ConnectionPool, where: str, cap: int) -> None:
        self._pool = pool
        self._where = where
        self._cap = cap

    def handle_request(self, request: httpx2.Request) -> httpx2.Response:
        request.headers["Accept-Encoding"] = "identity"
        core = httpcore2.Request(method=request.method,
                                 url=httpcore2.URL(scheme=request.url.raw_scheme, host=request.url.raw_host,
                                                   port=request.url.port, target=request.url.raw_path),
                                 headers=request.headers.raw, content=request.stream, extensions=request.extensions)
        try:
            reply = self._pool.handle_request(core)
        except Exception as exc:  # noqa: BLE001 - httpcore2's errors are mapped, the others pass as they are
            mapped = _as_httpx(exc)
            if mapped is exc:
                raise
            raise mapped from exc
        headers = httpx2.Headers(reply.headers)
        try:
            declared = int(headers.get("content-length") or 0)
        except ValueError:
            declared = 0
        encoding = headers.get("content-encoding", "identity").strip().lower()
        if declared > self._cap or encoding not in ("", "identity"):
            reply.close()
            if declared > self._cap:
                raise ReplyTooLarge(f"the reply of {self._where} declares {declared:,} bytes, over the limit of "
                                    f"{self._cap:,}: not read")
            raise ReplyTooLarge(f"the reply of {self._where} is compressed ({encoding}) though it was asked for "
                                "uncompressed: its size unpacked is unbounded, so it is not read")
        assert isinstance(reply.stream, Iterable)
        return httpx2.Response(status_code=reply.status, headers=reply.headers,
                               stream=_CappedBody(reply.stream, self._cap, self._where), extensions=reply.extensions)

    def close(self) -> None:
        self._pool.close()


def _pool(base_url: str, deadline: Callable[[], Deadline]) -> httpcore2.ConnectionPool:
    """A connection pool over bounded connections, through the environment's proxy for ``base_url``."""
    backend = _BoundedBackend(deadline)
    ssl_context = httpx2.create_ssl_context()
    parts = urlsplit(base_url)
    proxy = None if urllib.request.proxy_bypass(parts.hostname or "") else urllib.request.getproxies().get(parts.scheme)
    if proxy and urlsplit(proxy).scheme in ("http", "https"):
        found = urlsplit(proxy)
        auth = (unquote(found.username), unquote(found.password or "")) if found.username else None
        plain = found._replace(netloc=(found.hostname or "") + (f":{found.port}" if found.port else "")).geturl()
        return httpcore2.HTTPProxy(proxy_url=plain, proxy_auth=auth, ssl_context=ssl_context,
                                   network_backend=backend)
    return httpcore2.ConnectionPool(ssl_context=ssl_context, network_backend=backend)


def bounded_http_client(base_url: str, deadline: Callable[[], Deadline], *, where: str,
                        cap: int = MAX_REPLY_BYTES) -> httpx2.Client:
    """The ``httpx2`` client the ``openai`` client is given: the ``openai`` SDK's own defaults
    (``openai.DefaultHttpxClient``), sending over :class:`_BoundedTransport` (no environment
    proxies of its own: :func:`_pool` chose the one for ``base_url``).  ``where`` names the
    endpoint in the errors; ``cap`` is the byte cap of a reply."""
    transport = _BoundedTransport(_pool(base_url, deadline), where, cap)
    return openai.DefaultHttpxClient(transport=transport, trust_env=False)
