"""Browser fixtures: ``streamlit run app.py`` on a free loopback port + headless Debian Chromium.

* Chromium is Debian's ``/usr/bin/chromium`` (or ``$CHROMIUM``) driven by the PyPI
  ``playwright`` package through ``executable_path``; ``playwright install`` is never run.
* If Chromium is missing the tests **fail** with a message saying how to install it, unless
  ``AMP_SKIP_E2E=1`` (then they are skipped, visibly).
* The server runs on the embedded default model unless ``AMP_E2E_MODEL`` names another spec
  (it becomes the app's ``AMP_MODEL``).  Every server gets a fresh, empty ``AMP_CACHE_DIR`` of
  its own (next to its log) unless the test passes one, so nothing it shows comes from an
  earlier run; only the converted weights are shared, through the run's ``AMP_MODELS_DIR``
  (``tests/conftest.py``).
* Every page records console errors, page errors and every request URL; :func:`assert_clean`
  fails on any error or on any request that leaves the loopback interface (a page made with
  ``new_page(..., also_allowed=...)`` also accepts those hosts: a test host in a namespace).
* :func:`lan_lab` gives a test a classroom network of its own: a network namespace holding only
  a loopback device with the documentation address :data:`LAN_ADDRESS`, a server listening on
  every interface in it and a Chromium running in it.  Nothing in it can reach the machine's
  real network, and nothing outside can reach it.
* Screenshots go to ``artifacts/`` (git-ignored) or ``$E2E_ARTIFACTS``.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlparse

import pytest

REPO = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--disable-dev-shm-usage", "--disable-default-apps", "--disable-extensions",
    "--metrics-recording-only", "--no-default-browser-check",
]
LOOPBACK = {"127.0.0.1", "localhost", "::1", "[::1]"}
ARTIFACTS = Path(os.environ.get("E2E_ARTIFACTS") or REPO / "artifacts")
SKIP = os.environ.get("AMP_SKIP_E2E", "").strip() in {"1", "true", "yes"}
#: How the server's Python starts Streamlit's command line (``python -m streamlit run app.py …``).
STREAMLIT = ("-m", "streamlit")
#: The "LAN" address of :func:`lan_lab`'s namespace (TEST-NET-1, RFC 5737: documentation only).
LAN_ADDRESS = "192.0.2.10"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if Path(str(item.fspath)).resolve().is_relative_to(HERE):
            item.add_marker(pytest.mark.e2e)
            if SKIP:
                item.add_marker(pytest.mark.skip(reason="AMP_SKIP_E2E=1: browser tests skipped on request"))


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Server:
    url: str
    process: subprocess.Popen
    log: Path

    def stop(self) -> None:
        _stop(self.process)


def _healthy(url: str, prefix: Sequence[str]) -> bool:
    """Whether ``url``'s ``/_stcore/health`` answers ``ok`` (asked from inside ``prefix``'s namespace)."""
    if prefix:
        probe = ("import sys, urllib.request\n"
                 "with urllib.request.urlopen(sys.argv[1], timeout=2) as r: sys.exit(r.read().strip() != b'ok')")
        try:
            return subprocess.run([*prefix, sys.executable, "-c", probe, f"{url}/_stcore/health"],
                                  capture_output=True, timeout=30).returncode == 0
        except subprocess.TimeoutExpired:
            return False
    try:
        with urllib.request.urlopen(f"{url}/_stcore/health", timeout=2) as resp:
            return resp.read().strip() == b"ok"
    except OSError:
        return False


def start_streamlit(log: Path, env_overrides: dict[str, str] | None = None, *, prefix: Sequence[str] = (),
                    address: str = "127.0.0.1", python_args: Sequence[str] = STREAMLIT) -> Server:
    """``streamlit run app.py`` on 127.0.0.1:<free port>, healthy on return (log in ``log``).

    ``prefix`` goes before the command (and before the health check's), e.g. ``ip netns exec NS``
    to run the server in a network namespace; ``address`` is its ``--server.address`` (``0.0.0.0``:
    every interface, as a classroom app listens).  ``python_args`` start Streamlit's command line
    (``-c CODE``: a launcher that sets something up in the server's process first, then runs
    ``streamlit.web.cli.main``).  The returned URL is the loopback one.

    ``env_overrides`` go on top of this process's environment (without its ``AMP_MODEL``; the
    server's model is ``$AMP_E2E_MODEL`` unless an override sets ``AMP_MODEL``).  The server's
    ``AMP_CACHE_DIR`` is a new empty folder next to ``log`` unless an override sets it;
    ``AMP_MODELS_DIR`` (the run's shared converted weights) is passed through.  Stop it with
    :meth:`Server.stop`.
    """
    port = _free_port()
    env = dict(os.environ)
    env.pop("AMP_MODEL", None)
    if os.environ.get("AMP_E2E_MODEL"):
        env["AMP_MODEL"] = os.environ["AMP_E2E_MODEL"]
    fresh_cache = log.parent / "amp-cache"
    fresh_cache.mkdir(parents=True, exist_ok=True)
    env["AMP_CACHE_DIR"] = str(fresh_cache)
    env.update({"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "PYTHONUNBUFFERED": "1"})
    env.update(env_overrides or {})
    cmd = [*prefix, sys.executable, *python_args, "run", "asgi.py",
           "--server.address", address, "--server.port", str(port), "--server.headless", "true",
           "--browser.gatherUsageStats", "false", "--server.fileWatcherType", "none"]
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while not _healthy(url, prefix):
        if proc.poll() is not None or time.monotonic() > deadline:
            _stop(proc)
            pytest.fail(f"streamlit did not become healthy on {url}:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.3)
    return Server(url, proc, log)


@pytest.fixture(scope="session")
def st_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """``streamlit run app.py`` on 127.0.0.1:<free port>, healthy before the first test."""
    server = start_streamlit(tmp_path_factory.mktemp("streamlit") / "server.log")
    yield server
    server.stop()


@pytest.fixture(scope="session")
def launch_streamlit(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Server]]:
    """Start another server with its own environment: ``launch_streamlit({"AMP_MODEL": ...})``.

    For tests that need a server of their own (a tiny model, a private ``AMP_CACHE_DIR``); stop
    it with :meth:`Server.stop` when done; any still running are stopped at the session's end.
    """
    started: list[Server] = []

    def launch(env_overrides: dict[str, str] | None = None, *, python_args: Sequence[str] = STREAMLIT) -> Server:
        server = start_streamlit(tmp_path_factory.mktemp("streamlit") / "server.log", env_overrides,
                                 python_args=python_args)
        started.append(server)
        return server

    yield launch
    for server in started:
        server.stop()


@pytest.fixture(scope="module")
def tiny_server(launch_streamlit, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A server of the module's own on a tiny local GPT-2 with a private, empty ``AMP_CACHE_DIR``
    (its answers are noise, drawn by the same code as on the default model, in seconds)."""
    from tiny_models import build_tiny_model

    root = tmp_path_factory.mktemp("tiny-server")
    model = build_tiny_model(root / "tiny", seed=0, n_positions=4096)  # the 10-example prompt is ~1,000 tokens
    server = launch_streamlit({"AMP_MODEL": str(model), "AMP_CACHE_DIR": str(root / "cache")})
    yield server
    server.stop()


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            proc.wait(timeout=5)


@pytest.fixture(scope="session")
def browser() -> Iterator[object]:
    """Headless Debian Chromium through the PyPI playwright driver (nothing downloaded)."""
    if not Path(CHROMIUM).exists():
        pytest.fail(
            f"Chromium not found at {CHROMIUM}. The browser tests need Debian's chromium: "
            "`apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium` "
            "(never `playwright install`), or set CHROMIUM=/path/to/chromium, "
            "or set AMP_SKIP_E2E=1 to skip these tests."
        )
    from playwright.sync_api import sync_playwright

    pw = sync_playwright().start()
    try:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
    except Exception:
        pw.stop()
        raise
    yield b
    b.close()
    pw.stop()


@dataclass
class Recorder:
    """What one page did: console errors, uncaught page errors, every requested URL."""

    console_errors: list[str] = field(default_factory=list)
    page_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    #: Hosts besides loopback this page may contact (a test host in the test's own namespace).
    also_allowed: frozenset[str] = frozenset()

    def external(self) -> list[str]:
        out = []
        for url in self.requests:
            parsed = urlparse(url)
            if parsed.scheme in ("http", "https", "ws", "wss") and parsed.hostname not in LOOPBACK | self.also_allowed:
                out.append(url)
        return out


def new_page(browser, base_url: str, *, viewport: dict[str, int] | None = None,
             also_allowed: Sequence[str] = ()):
    """A fresh page in its own context, recorders attached (``page.rec``), ``page.base_url`` set.

    ``also_allowed``: hosts besides loopback its requests may go to (see :func:`lan_lab`)."""
    context = browser.new_context(viewport=viewport or {"width": 1400, "height": 1000}, device_scale_factor=1)
    pg = context.new_page()
    rec = Recorder(also_allowed=frozenset(also_allowed))
    pg.on("console", lambda m: m.type == "error" and rec.console_errors.append(m.text))
    pg.on("pageerror", lambda e: rec.page_errors.append(str(e)))
    pg.on("request", lambda r: rec.requests.append(r.url))
    pg.rec = rec  # type: ignore[attr-defined]
    pg.base_url = base_url  # type: ignore[attr-defined]
    return pg


@pytest.fixture
def page(browser, st_server: Server):
    """A fresh page (own context) with recorders attached; ``page.rec`` is its :class:`Recorder`."""
    pg = new_page(browser, st_server.url)
    yield pg
    pg.context.close()


@pytest.fixture
def page_on(browser):
    """``page_on(server)``: a fresh recorded page on another server (:func:`launch_streamlit`)."""
    pages = []

    def make(server: Server):
        pages.append(new_page(browser, server.url))
        return pages[-1]

    yield make
    for pg in pages:
        pg.context.close()


@dataclass
class LanLab:
    """One test's classroom network (:func:`lan_lab`): a namespace, its servers and its Chromium."""

    namespace: str
    address: str
    root: Path
    browser: object
    servers: list[Server] = field(default_factory=list)

    @property
    def prefix(self) -> list[str]:
        """The command prefix that runs a program inside the namespace."""
        return ["ip", "netns", "exec", self.namespace]

    def start_streamlit(self, env_overrides: dict[str, str] | None = None) -> Server:
        """``streamlit run app.py`` inside the namespace on every interface (``0.0.0.0``), as a
        classroom app listens; its ``url`` is the loopback one, :meth:`lan_url` the LAN one."""
        log = self.root / f"streamlit-{len(self.servers)}" / "server.log"
        log.parent.mkdir(parents=True)
        server = start_streamlit(log, env_overrides, prefix=self.prefix, address="0.0.0.0")
        self.servers.append(server)
        return server

    def lan_url(self, server: Server) -> str:
        return f"http://{self.address}:{urlparse(server.url).port}"

    def new_page(self, base_url: str, *, viewport: dict[str, int] | None = None):
        """A recorded page of the namespace's Chromium, in a context of its own; requests to the
        namespace's LAN address count as local."""
        return new_page(self.browser, base_url, viewport=viewport, also_allowed=(self.address,))


def _ip(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=30)


@pytest.fixture
def lan_lab(browser, tmp_path: Path) -> Iterator[LanLab]:
    """A classroom network of this test's own: a fresh network namespace whose only device is a
    loopback with :data:`LAN_ADDRESS` (and a default route through it, so the app finds it as its
    LAN address), servers in it (:meth:`LanLab.start_streamlit`) and a headless Chromium in it
    (a wrapper running ``ip netns exec NS chromium``; playwright's pipes survive the exec).

    Nothing in the namespace can reach the machine's real network and nothing outside reaches
    it.  Servers, browser and namespace are removed at teardown, also when the test fails.
    Needs root and iproute2's ``ip netns``: the test fails (it does not skip) without them.
    """
    if shutil.which("ip") is None:
        pytest.fail("This test needs iproute2's `ip` to make a network namespace: "
                    "`apt-get install -y iproute2`, and run the tests as root (or AMP_SKIP_E2E=1).")
    name = f"amp-e2e-{os.getpid()}-{secrets.token_hex(3)}"
    created = False
    lab: LanLab | None = None
    try:
        steps = (("netns", "add", name), ("-n", name, "link", "set", "lo", "up"),
                 ("-n", name, "addr", "add", f"{LAN_ADDRESS}/24", "dev", "lo"),
                 ("-n", name, "route", "add", "default", "dev", "lo", "src", LAN_ADDRESS))
        for step in steps:
            done = _ip(*step)
            if done.returncode:
                pytest.fail(f"Cannot make the test's network namespace (`ip {' '.join(step)}`: "
                            f"{done.stderr.strip() or done.returncode}). This test needs root (CAP_SYS_ADMIN) "
                            "and a kernel with network namespaces; or set AMP_SKIP_E2E=1.")
            created = True
        links = _ip("-n", name, "-o", "link", "show").stdout.splitlines()
        assert [line.split(":")[1].strip() for line in links] == ["lo"], f"the namespace is not empty: {links}"
        wrapper = tmp_path / "chromium-in-netns"
        wrapper.write_text(f'#!/bin/sh\nexec ip netns exec {name} {shlex.quote(CHROMIUM)} "$@"\n')
        wrapper.chmod(0o755)
        ns_browser = browser.browser_type.launch(executable_path=str(wrapper), args=CHROMIUM_ARGS, headless=True)
        lab = LanLab(name, LAN_ADDRESS, tmp_path, ns_browser)
        yield lab
    finally:
        try:
            if lab is not None:
                try:
                    lab.browser.close()
                finally:
                    for server in lab.servers:
                        server.stop()
        finally:
            if created:
                _ip("netns", "del", name)
