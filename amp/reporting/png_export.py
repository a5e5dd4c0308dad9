"""PNG export of plotly figures through kaleido (1.x) in one headless Chromium session.

:func:`write_pngs` renders many figures in one browser session, using ``$BROWSER_PATH`` or a
``chromium``/``google-chrome`` on ``PATH`` (:func:`find_browser`; never a downloaded browser).
It never raises: without kaleido or a browser, or when rendering fails or hangs, it returns the
PNGs it could write and one line saying why the rest are missing, so a report can say so.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import shutil
import signal
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

__all__ = ["PNG_SCALE", "PNG_SIZE", "find_browser", "write_pngs"]


PNG_SIZE = (900, 500)
"""PNG width and height in CSS pixels where a figure sets none in its layout; see :data:`PNG_SCALE`."""
PNG_SCALE = 2
"""PNGs are rendered at this device-pixel ratio (900 × 500 CSS px → 1800 × 1000 px)."""

_BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def find_browser() -> str | None:
    """A Chromium/Chrome for kaleido: ``$BROWSER_PATH`` if it is an executable file, else the first
    of :data:`_BROWSER_NAMES` on ``PATH``, else what choreographer finds (a browser a user fetched
    with ``plotly_get_chrome``, typical install paths); None when there is none.  Nothing is downloaded.
    """
    env = os.environ.get("BROWSER_PATH")
    if env and Path(env).is_file() and os.access(env, os.X_OK):
        return env
    for name in _BROWSER_NAMES:
        if found := shutil.which(name):
            return found
    try:
        from choreographer.browsers.chromium import (  # late: optional dependency (kaleido's browser driver, the app extra)
            Chromium,  # late: optional dependency (kaleido's browser driver, the app extra)
        )

        found = Chromium.find_browser(skip_local=False)
    except Exception:  # noqa: BLE001 — best effort: no choreographer, or an odd platform
        return None
    return found if found and Path(found).is_file() else None


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(part) for part in exc.args) if exc.args else str(exc)
    text = " ".join(text.split())
    if len(text) > 160:
        text = text[:159].rstrip() + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _is_png(path: Path) -> bool:
    try:
        with path.open("rb") as f:
            return f.read(8) == _PNG_SIGNATURE
    except OSError:
        return False


def _kill_group(proc: Any) -> None:
    """SIGKILL choreographer's browser wrapper and its browser (it starts them in a new session)."""

    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
        proc.wait(5)
    except Exception:  # noqa: BLE001, S110 — already gone, or will not die: nothing more to do
        pass


async def _render_session(specs: list[dict[str, Any]], browser: str, timeout: float) -> Sequence[BaseException]:
    """One kaleido browser session writing every spec; a browser that hangs is killed after ``timeout`` s."""

    import kaleido  # late: optional dependency (kaleido, the app extra)

    # mathjax=False: no CDN script (our figures have no LaTeX, and there may be no network)
    k = kaleido.Kaleido(path=browser, mathjax=False, timeout=timeout)

    async def work() -> Sequence[BaseException]:
        await k.open()
        return await k.write_fig_from_object(specs) or ()

    loop = asyncio.get_running_loop()
    start = loop.time()
    try:
        return await asyncio.wait_for(work(), timeout)
    except BaseException as exc:
        if loop.time() - start >= timeout:  # (choreographer turns the cancel of open() into its own error)
            raise TimeoutError(f"no result within {timeout:.0f} s") from exc
        raise
    finally:
        proc = getattr(k, "subprocess", None)
        if proc is not None and proc.poll() is None and loop.time() - start >= timeout:
            _kill_group(proc)  # hung: end it first, or closing waits on it too
        try:
            await asyncio.wait_for(k.close(), 15)
        except Exception:  # noqa: BLE001, S110 — a failed close must not hide the result
            pass
        if proc is not None and proc.poll() is None:
            _kill_group(proc)


def write_pngs(jobs: Sequence[tuple[Any, Path]], *, timeout: float = 120) -> tuple[list[Path], str | None]:
    """Render each ``(plotly figure, path)`` of ``jobs`` as PNG, all in one kaleido browser session.

    Returns the paths written and, when some are missing, one line saying why (no kaleido, no
    browser, the render error, or no result within ``timeout`` seconds); never raises.
    """
    if not jobs:
        return [], None
    if importlib.util.find_spec("kaleido") is None:
        return [], "kaleido is not installed (pip install 'amp-explorer[app]')"
    browser = find_browser()
    if browser is None:
        return [], "no Chromium/Chrome found (install chromium, or set $BROWSER_PATH to a Chrome/Chromium)"
    specs = []
    for fig, path in jobs:
        width = fig.layout.width or PNG_SIZE[0]
        height = fig.layout.height or PNG_SIZE[1]
        Path(path).unlink(missing_ok=True)  # a stale PNG must not pass for a fresh one
        specs.append({"fig": fig.to_dict(), "path": Path(path),
                      "opts": {"format": "png", "width": width, "height": height, "scale": PNG_SCALE}})
    result: list[Any] = []

    def run() -> None:  # its own thread and event loop: the caller may be inside one (Streamlit, Jupyter)

        try:
            result.append(asyncio.run(_render_session(specs, browser, timeout)))
        except BaseException as exc:  # noqa: BLE001 — reported, not raised
            result.append((exc,))


    thread = threading.Thread(target=run, name="amp-png-export", daemon=True)
    thread.start()
    thread.join(timeout + 30)  # the session kills a hung browser at `timeout`; this is a last resort
    errors: Sequence[BaseException] = result[0] if result else (TimeoutError(f"no result within {timeout:.0f} s"),)
    done = [Path(p) for _, p in jobs if _is_png(Path(p))]
    if len(done) == len(jobs):
        return done, None
    why = _one_line(errors[0]) if errors else "kaleido wrote no file"
    return done, f"rendering with {browser} failed: {why}"
