"""A light Streamlit client: one websocket speaking Streamlit's own protocol, as a browser tab does.

Used by ``bench/class_load.py`` to be a phone (or a teacher's page) without a browser: it opens
``/_stcore/stream`` (subprotocol ``streamlit``), asks for a run with a ``rerun_script`` BackMsg
(``streamlit.proto.BackMsg_pb2``), reads the ForwardMsgs (``ForwardMsg_pb2``) of the run and keeps
the widgets it drew, found by their **label** (so a form that moves into an ``st.fragment`` or gains
widgets still works), then sets a widget's value and triggers a button in the next
``rerun_script`` (``widget_states``, with the fragment's id when the widget lives in one), as the
browser does.  Cookies go in the websocket's ``Cookie`` header: Streamlit's ``st.context.cookies``
reads them there, so each phone has its own (``amp_voter_<CODE>``).

Values on the wire (Streamlit 1.67): a radio's value is its option's text (``string_value``), a
select slider's a list of option texts (``string_array_value``), a button a ``trigger_value``
sent once.  A fragment with ``run_every`` is rerun by the client: the server's ``auto_rerun``
messages start a timer that asks for the fragment's run, as the browser's does.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import websockets
from errors import StreamlitClientError
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState

#: The repository whose ``app.py`` :func:`start_app` runs.
ROOT = Path(__file__).resolve().parents[1]

#: Element kinds whose text the client keeps (for finding a confirmation, an error, a heading).
_TEXT_KINDS = ("alert", "markdown", "heading", "text", "exception", "metric")
#: Widget kinds the client can find by label and drive.
WIDGET_KINDS = ("radio", "slider", "button", "checkbox", "selectbox")


@dataclass(frozen=True)
class Widget:
    """A widget the server drew: its kind (Element oneof), id, label, options and fragment."""

    kind: str
    id: str
    label: str
    options: tuple[str, ...]
    fragment_id: str
    disabled: bool


@dataclass(frozen=True)
class Shown:
    """One piece of text the server sent (an alert, markdown, heading…) and when it arrived."""

    kind: str
    text: str
    at: float
    style: str = ""  # an alert's format (SUCCESS, INFO, WARNING, ERROR)


@dataclass
class Session:
    """One tab: a websocket to ``base_url`` with its own cookies and query string.

    ``on_text`` (optional) sees each :class:`Shown` as it arrives, for timing a confirmation."""

    base_url: str
    query: str = ""
    page_name: str = ""  # a page's URL path (``teach_poll``); empty: the default page
    cookies: dict[str, str] = field(default_factory=dict)
    on_text: Callable[[Shown], None] | None = None
    widgets: dict[str, Widget] = field(default_factory=dict)  # label → latest widget of that label
    shown: list[Shown] = field(default_factory=list)
    _ws: websockets.ClientConnection | None = None
    _reader: asyncio.Task | None = None
    _finished: asyncio.Event = field(default_factory=asyncio.Event)
    _runs_done: int = 0
    _page_hash: str = ""
    _values: dict[str, WidgetState] = field(default_factory=dict)  # widget id → value the tab holds
    _auto: dict[str, asyncio.Task] = field(default_factory=dict)
    bytes_in: int = 0
    #: When the first navigation message (the frame's page list) arrived (monotonic), if one did.
    navigation_at: float | None = None

    async def connect(self, *, open_timeout: float = 60) -> None:
        parsed = urlparse(self.base_url)
        headers = {"Origin": f"{parsed.scheme}://{parsed.netloc}"}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        ws_url = f"ws://{parsed.netloc}/_stcore/stream"
        try:
            self._ws = await websockets.connect(ws_url, subprotocols=["streamlit"],  # type: ignore[list-item]
                                                additional_headers=headers, open_timeout=open_timeout,
                                                max_size=64 * 2**20, ping_interval=None, compression=None)
        except (OSError, websockets.WebSocketException, TimeoutError) as exc:
            raise StreamlitClientError(f"cannot open {ws_url}: {exc}") from exc
        self._reader = asyncio.create_task(self._read())

    async def close(self) -> None:
        for task in self._auto.values():
            task.cancel()
        if self._ws is not None:
            with contextlib.suppress(Exception):
                await self._ws.close()
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._reader

    # ---- reading ---------------------------------------------------------------------------
    async def _read(self) -> None:
        assert self._ws is not None
        with contextlib.suppress(websockets.ConnectionClosed):
            async for data in self._ws:
                if isinstance(data, str):
                    continue
                self.bytes_in += len(data)
                msg = ForwardMsg()
                msg.ParseFromString(data)
                self._handle(msg, time.monotonic())
        self._finished.set()  # a closed socket ends every wait

    def _handle(self, msg: ForwardMsg, at: float) -> None:
        kind = msg.WhichOneof("type")
        if kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            self._element(msg.delta.new_element, msg.delta.fragment_id, at)
        elif kind == "navigation":
            if self.navigation_at is None:
                self.navigation_at = at
            if msg.navigation.page_script_hash:
                self._page_hash = msg.navigation.page_script_hash
        elif kind == "new_session" and msg.new_session.page_script_hash and not self._page_hash:
            self._page_hash = msg.new_session.page_script_hash
        elif kind == "auto_rerun":
            self._schedule_auto(msg.auto_rerun.fragment_id, msg.auto_rerun.interval)
        elif kind == "script_finished" and msg.script_finished != ForwardMsg.FINISHED_EARLY_FOR_RERUN:
            self._runs_done += 1
            self._finished.set()

    def _element(self, element, fragment_id: str, at: float) -> None:
        kind = element.WhichOneof("type")
        if kind in WIDGET_KINDS:
            proto = getattr(element, kind)
            self.widgets[proto.label] = Widget(kind, proto.id, proto.label, tuple(getattr(proto, "options", ())),
                                               fragment_id, bool(getattr(proto, "disabled", False)))
        elif kind in _TEXT_KINDS:
            proto = getattr(element, kind)
            text = (proto.message if kind == "exception" else f"{proto.label}: {proto.body}" if kind == "metric"
                    else proto.body)
            style = type(proto).Format.Name(proto.format) if kind == "alert" else ""
            shown = Shown(kind, text, at, style)
            self.shown.append(shown)
            if self.on_text is not None:
                self.on_text(shown)

    # ---- writing ---------------------------------------------------------------------------
    async def rerun(self, extra: Iterable[WidgetState] = (), *, fragment_id: str = "",
                    auto: bool = False) -> float:
        """Ask for a run with the tab's widget values and ``extra`` (a trigger, sent once); returns
        the monotonic time it was sent.  Clears the "run finished" flag :meth:`wait_run` waits on."""
        if self._ws is None:
            raise StreamlitClientError("the session is not connected")
        msg = BackMsg()
        state = msg.rerun_script
        state.query_string = self.query
        state.page_script_hash = self._page_hash
        state.page_name = "" if self._page_hash else self.page_name
        state.fragment_id = fragment_id
        state.is_auto_rerun = auto
        state.context_info.timezone = "UTC"
        state.context_info.locale = "en-US"
        state.context_info.url = f"{self.base_url}/{self.page_name}" + (f"?{self.query}" if self.query else "")
        extra = list(extra)
        extra_ids = {w.id for w in extra}
        state.widget_states.widgets.extend([v for k, v in self._values.items() if k not in extra_ids] + extra)
        self._finished.clear()
        sent = time.monotonic()
        await self._ws.send(msg.SerializeToString())
        return sent

    async def wait_run(self, timeout: float) -> None:
        """Wait until the run asked for last has finished (or the socket closed)."""
        try:
            await asyncio.wait_for(self._finished.wait(), timeout)
        except TimeoutError as exc:
            raise StreamlitClientError(f"no script_finished within {timeout:g} s") from exc

    async def open(self, timeout: float = 60) -> None:
        """Connect and draw the page once (the first visit of a tab)."""
        await self.connect(open_timeout=timeout)
        await self.rerun()
        await self.wait_run(timeout)

    def widget(self, label: str, kind: str | None = None) -> Widget:
        """The latest widget labelled ``label`` (and of ``kind``); a :class:`StreamlitClientError` if none."""
        found = self.widgets.get(label)
        if found is None or (kind is not None and found.kind != kind):
            raise StreamlitClientError(f"no {kind or 'widget'} labelled {label!r} on the page "
                                       f"(labels: {sorted(self.widgets)})")
        return found

    def set_value(self, widget: Widget, option: str | list[str]) -> None:
        """Hold a radio/selectbox option (its text) or a select slider's option(s) for the next run."""
        state = WidgetState(id=widget.id)
        if widget.kind == "slider":
            state.string_array_value.data.extend([option] if isinstance(option, str) else option)
        else:
            state.string_value = option if isinstance(option, str) else option[0]
        self._values[widget.id] = state

    async def click(self, button: Widget) -> float:
        """Trigger ``button`` (a rerun of its fragment when it lives in one); returns the send time."""
        return await self.rerun([WidgetState(id=button.id, trigger_value=True)], fragment_id=button.fragment_id)

    # ---- fragments that rerun on a timer -----------------------------------------------------
    def _schedule_auto(self, fragment_id: str, interval: float) -> None:
        old = self._auto.pop(fragment_id, None)
        if old is not None:
            old.cancel()
        if interval > 0:
            self._auto[fragment_id] = asyncio.create_task(self._every(fragment_id, interval))

    async def _every(self, fragment_id: str, interval: float) -> None:
        with contextlib.suppress(websockets.ConnectionClosed, StreamlitClientError):
            while True:
                await asyncio.sleep(interval)
                await self.rerun(fragment_id=fragment_id, auto=True)


# ---- the app a bench talks to ------------------------------------------------------------------
def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_app(cache_dir: Path, log: Path, *, root: Path = ROOT) -> tuple[subprocess.Popen, str]:
    """``streamlit run asgi.py`` (the app with its light vote path; ``app.py`` in a checkout from before
    it) of ``root`` (this repository, or another checkout to compare) on a free loopback port with
    ``cache_dir`` as its ``AMP_CACHE_DIR``, healthy on return: the process (in a session of its own)
    and its URL."""
    port = _free_port()
    env = {**os.environ, "AMP_CACHE_DIR": str(cache_dir), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONUNBUFFERED": "1"}
    entry = "asgi.py" if (root / "asgi.py").is_file() else "app.py"
    cmd = [sys.executable, "-m", "streamlit", "run", entry, "--server.address", "127.0.0.1",
           "--server.port", str(port), "--server.headless", "true", "--browser.gatherUsageStats", "false",
           "--server.fileWatcherType", "none"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 90
    while True:
        try:
            with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
                if resp.read().strip() == b"ok":
                    return proc, url
        except OSError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            stop_app(proc)
            raise StreamlitClientError(f"the app did not become healthy on {url}:\n{log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.3)


def stop_app(proc: subprocess.Popen) -> None:
    """Stop an app :func:`start_app` started (its whole process group)."""
    if proc.poll() is None:
        os.killpg(proc.pid, 15)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)
            proc.wait(timeout=5)
