"""Reproducing the paper's tables and figures: a method-aware runner, run manifests, a report writer.

* :func:`run_method` runs planned :class:`~amp.evaluation.experiments.SweepItem` s with one of
  :data:`amp.evaluation.interpretations.METHODS`: ``beam`` (the paper's constrained beam, via
  :func:`amp.evaluation.experiments.run_items`), ``distinct`` (distinct-interpretation top-k from a wider
  beam) or ``sampling`` (interpretations by estimated probability).  Every method yields
  :class:`~amp.evaluation.experiments.SweepRecord` s whose ``beams`` are the ranked LF list, so the
  summaries (ZM_k, FDM, FIM) work unchanged.  Everything goes through the result cache.
* :func:`write_report` is a pure function of records: Table 2 (ZM_5), Table 3 (FDM/FIM),
  Figures 2, 3 and 6 as CSV, every figure as standalone HTML and as PNG, the records, and
  ``report.md`` with the settings and the differences from the paper.  PNGs are rendered by
  ``kaleido`` (1.x) in one headless Chromium session, using ``$BROWSER_PATH`` or a
  ``chromium``/``google-chrome`` on ``PATH`` (never a downloaded browser); without one the
  report still has the CSV and HTML, and ``report.md`` says which PNGs are missing and why.
* Run manifests (``<cache root>/runs/<name>.json``: settings + records) let the Research page
  show any saved run without a model.
* :func:`token_char_spans` maps tokens to character spans, to draw two tokenizations on one
  character axis.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import shutil
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd

from amp.evaluation import experiments as ex
from amp.evaluation.interpretations import (
    METHODS,
    distinct_topk,
    sample_interpretations,
    samples_cached,
)
from amp.reporting import plots

__all__ = [
    "ReportError",
    "char_axis_frame",
    "list_runs",
    "load_manifest",
    "record_from_dict",
    "record_to_dict",
    "run_method",
    "runs_dir",
    "save_manifest",
    "token_char_spans",
    "write_report",
]


class ReportError(ex.ExperimentError):
    """A run or report input that cannot be used."""


# --------------------------------------------------------------------------- running


def _check_settings(method: str, *, beams: int, width: int, n_samples: int, temperature: float, seed: int,
                    max_new_tokens: int | None) -> None:
    """The request bounds of :mod:`amp.parser.limits` for one method's settings (SettingError /
    RequestTooLarge)."""
    from amp.parser import limits

    limits.check_beams(beams)
    limits.check_max_new_tokens(max_new_tokens)
    limits.check_seed(seed)
    if method == "distinct":
        limits.check_count(width, "width", limits.MAX_WIDTH)
    if method == "sampling":
        limits.check_samples(n_samples)
        limits.check_temperature(temperature)


def run_method(
    parser: Any,
    items: Iterable[ex.SweepItem],
    *,
    method: str = "beam",
    beams: int = 5,
    mode: str = "logical",
    width: int = 20,
    n_samples: int = 20,
    temperature: float = 1.0,
    seed: int = 0,
    max_new_tokens: int | None = None,
    on_progress: Callable[[int, int, ex.SweepRecord], None] | None = None,
    batch_size: int | None = None,
) -> Iterator[ex.SweepRecord]:
    """Records for ``items`` with ``method`` (see the module docstring); P(LF0) by forced decoding.

    ``max_new_tokens`` bounds generation (None: from the prompt, as in the paper; ``beam`` then
    runs batched through :func:`amp.evaluation.experiments.run_items`, ``batch_size`` items per model
    call).  ``beams`` is the beam size (``beam``) or the number of distinct interpretations
    kept (``distinct``, from a beam of ``width``; ``sampling``, from ``n_samples`` samples).
    """
    if method not in METHODS:
        raise ReportError(f"method must be one of {METHODS}, not {method!r}")
    _check_settings(method, beams=beams, width=width, n_samples=n_samples, temperature=temperature, seed=seed,
                    max_new_tokens=max_new_tokens)  # before the run: a bad setting would fail every item
    planned = list(items)
    if method == "beam" and max_new_tokens is None:  # the paper's path: batched, cached run_items
        yield from ex.run_items(parser, planned, beams=beams, mode=mode, on_progress=on_progress,
                                batch_size=batch_size)
        return
    total = len(planned)
    for done, item in enumerate(planned, 1):
        try:
            if method == "beam":  # with a generation budget: one cached parse per item
                was = parser.cached_parse(item.prompt_text, fmt=item.fmt, beams=beams,
                                          max_new_tokens=max_new_tokens) is not None
                texts = [b.text for b in parser.parse(item.prompt_text, fmt=item.fmt, beams=beams,
                                                       max_new_tokens=max_new_tokens).beams]
            elif method == "distinct":
                was = parser.cached_parse(item.prompt_text, fmt=item.fmt, beams=max(width, beams),
                                          max_new_tokens=max_new_tokens) is not None
                texts = distinct_topk(parser, item.prompt_text, k=beams, width=width, mode=mode, fmt=item.fmt,
                                      max_new_tokens=max_new_tokens).topk
            else:
                was = samples_cached(parser, item.prompt_text, n_samples, temperature, seed, item.fmt,
                                     max_new_tokens)
                result = sample_interpretations(parser, item.prompt_text, n=n_samples, temperature=temperature,
                                                seed=seed, fmt=item.fmt, lf0=item.lf0, lf1=item.lf1, mode=mode,
                                                max_new_tokens=max_new_tokens)
                texts = result.topk[:beams]
            pair_cached = parser.cached_pair(item.prompt_text, item.lf0, item.lf1, fmt=item.fmt) is not None
            pair = parser.score_pair(item.prompt_text, item.lf0, item.lf1, fmt=item.fmt)
            fake = SimpleNamespace(parse=SimpleNamespace(beams=[SimpleNamespace(text=t) for t in texts]),
                                   pair=pair, cached=bool(was and pair_cached), error=None)
        except Exception as exc:  # noqa: BLE001 — one bad item must not end a long run
            fake = SimpleNamespace(parse=None, pair=None, cached=False, error=f"{type(exc).__name__}: {exc}")
        record = ex.record_from_result(item, fake, mode=mode)
        if on_progress is not None:
            on_progress(done, total, record)
        yield record


# --------------------------------------------------------------------------- records <-> JSON


def _clean(value: Any) -> Any:
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, tuple):
        return list(value)
    return value


def record_to_dict(record: ex.SweepRecord) -> dict[str, Any]:
    """A record as strict JSON data."""
    return {k: _clean(v) for k, v in asdict(record).items()}


_RECORD_FIELDS = {f.name for f in fields(ex.SweepRecord)}


def record_from_dict(d: dict[str, Any]) -> ex.SweepRecord:
    """Inverse of :func:`record_to_dict` (unknown keys are ignored)."""
    data = {k: v for k, v in d.items() if k in _RECORD_FIELDS}
    data["beams"] = tuple(data.get("beams") or ())
    return ex.SweepRecord(**data)


def runs_dir() -> Path:
    """``<cache root>/runs`` (``$AMP_CACHE_DIR/runs`` when set); not created here."""
    from amp.settings import cache_root

    return cache_root() / "runs"


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-") or "run"


def save_manifest(name: str, settings: dict[str, Any], records_zero: Sequence[ex.SweepRecord],
                  records_few: Sequence[ex.SweepRecord], directory: Path | None = None) -> Path:
    """Write ``<directory or runs_dir()>/<name>.json`` with the settings and all records."""
    folder = Path(directory) if directory is not None else runs_dir()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{_slug(name)}.json"
    payload = {"name": name, "settings": settings,
               "zero_shot": [record_to_dict(r) for r in records_zero],
               "few_shot": [record_to_dict(r) for r in records_few]}
    path.write_text(json.dumps(payload, ensure_ascii=False, indent=1), encoding="utf-8")
    return path


def load_manifest(path: str | Path) -> dict[str, Any]:
    """A manifest as ``{"name", "settings", "zero_shot": [SweepRecord…], "few_shot": […]}``."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        return {"name": str(data.get("name") or Path(path).stem), "settings": dict(data.get("settings") or {}),
                "zero_shot": [record_from_dict(d) for d in data.get("zero_shot") or []],
                "few_shot": [record_from_dict(d) for d in data.get("few_shot") or []]}
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        raise ReportError(f"cannot read the run manifest {path}: {exc}") from exc


def list_runs(directory: Path | None = None) -> list[Path]:
    """Saved run manifests, newest first."""
    folder = Path(directory) if directory is not None else runs_dir()
    if not folder.is_dir():
        return []
    return sorted(folder.glob("*.json"), key=lambda p: (-p.stat().st_mtime, p.name))


# --------------------------------------------------------------------------- tables and figures


def tables(records_zero: Sequence[ex.SweepRecord], records_few: Sequence[ex.SweepRecord], *,
           k: int = 5, mode: str | None = None) -> dict[str, pd.DataFrame]:
    """The report's tables, by file stem (pure)."""
    zero = ex.zeroshot_summary(records_zero, k=k, mode=mode)
    per_ratio, per_type = ex.fewshot_summary(records_few, mode=mode)
    return {
        "table2_zm": zero[["type", "n", f"ZM_{k}"]],
        "table3_fdm_fim": per_type,
        "fig2_zeroshot_accuracy": zero,
        "fig3_p_lf0": ex.records_frame(records_zero)[["id", "type", "p_lf0", "p_lf0_total"]],
        "fig6_fewshot_per_ratio": per_ratio,
    }


def figures(tabs: dict[str, pd.DataFrame], records_zero: Sequence[ex.SweepRecord], *, k: int = 5) -> dict[str, Any]:
    """The report's plotly figures, by file stem (pure)."""
    return {
        "table2_zm": plots.zm_bars(tabs["fig2_zeroshot_accuracy"], k),
        "fig2_zeroshot_accuracy": plots.accuracy_bars(tabs["fig2_zeroshot_accuracy"]),
        "fig3_p_lf0": plots.p_lf0_distribution(ex.records_frame(records_zero)),
        "fig6_fewshot_accuracy": plots.accuracy_vs_ratio(tabs["fig6_fewshot_per_ratio"]),
        "fig6_fewshot_p_lf0": plots.p_lf0_vs_ratio(tabs["fig6_fewshot_per_ratio"]),
    }


DIFFERENCES = """\
## How these numbers differ from the paper's, and why

* **Inverse scope (revscope) ZM_k is not 0 here.**  The original code compared the data's type
  name `scope_reverse` with `revscope`, so its Table 2 reported ZM = 0 for inverse scope whatever
  the model produced (reference §13.3).  We count revscope like every other type.
* **Conjunction LF labels follow the code, not Table 1.**  The paper's Table 1 swaps LF0 and LF1
  for conjunction scope; the data and the original code use LF0 = AND as main connective and
  LF1 = OR (reference §14).  Our accuracies and P(LF0) use the code's labels.
* **FDM ranges 0–2, not 0–1.**  FDM = mean over ratios of |acc_LF0 − r| + |acc_LF1 − (1 − r)|,
  whose true maximum is 2 (the paper states 0–1; reference §13.4).
* **P(LF0) uses one prompt for both LFs and scores every LF token.**  The original drew a fresh
  random prompt for the LF1 forced decode; here LF0 and LF1 are scored under the *same* prompt,
  and the minimum token probability is taken over every token of the LF (reference §11, §12).
  `p_lf0_total` (total sequence probability) is also given, which is what Fig. 3 plotted.
* **Decoding.**  Constrained beam search keeps summed log-probs and re-ranks the final beams
  with the GNMT length penalty (α = 0.7); the original applied it inside the search.  Models differ
  from the paper's (Codex, CodeGen, …), so absolute numbers are not comparable.
"""


def _md_table(df: pd.DataFrame) -> str:
    if df.empty:
        return "_(no data)_\n"
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        cells = [f"{v:.3f}" if isinstance(v, float) and not math.isnan(v) else ("–" if isinstance(v, float) else str(v))
                 for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


PNG_SIZE = (900, 500)
"""PNG width and height in CSS pixels where a figure sets none in its layout; see :data:`PNG_SCALE`."""
PNG_SCALE = 2
"""PNGs are rendered at this device-pixel ratio (900 × 500 CSS px → 1800 × 1000 px)."""

_BROWSER_NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")


def _find_browser() -> str | None:
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
        from choreographer.browsers.chromium import Chromium

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
    import signal

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
    import asyncio

    import kaleido

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


def _write_pngs(jobs: Sequence[tuple[Any, Path]], *, timeout: float = 120) -> tuple[list[Path], str | None]:
    """Render each ``(plotly figure, path)`` of ``jobs`` as PNG, all in one kaleido browser session.

    Returns the paths written and, when some are missing, one line saying why (no kaleido, no
    browser, the render error, or no result within ``timeout`` seconds); never raises.
    """
    if not jobs:
        return [], None
    if importlib.util.find_spec("kaleido") is None:
        return [], "kaleido is not installed (pip install 'amp-explorer[app]')"
    browser = _find_browser()
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
        import asyncio

        try:
            result.append(asyncio.run(_render_session(specs, browser, timeout)))
        except BaseException as exc:  # noqa: BLE001 — reported, not raised
            result.append((exc,))

    import threading

    thread = threading.Thread(target=run, name="amp-png-export", daemon=True)
    thread.start()
    thread.join(timeout + 30)  # the session kills a hung browser at `timeout`; this is a last resort
    errors: Sequence[BaseException] = result[0] if result else (TimeoutError(f"no result within {timeout:.0f} s"),)
    done = [Path(p) for _, p in jobs if _is_png(Path(p))]
    if len(done) == len(jobs):
        return done, None
    why = _one_line(errors[0]) if errors else "kaleido wrote no file"
    return done, f"rendering with {browser} failed: {why}"


def write_report(records_zero: Sequence[ex.SweepRecord], records_few: Sequence[ex.SweepRecord],
                 out_dir: str | Path, settings: dict[str, Any], *, k: int = 5) -> dict[str, Path]:
    """Write every table, figure and ``report.md`` into ``out_dir``; returns ``{file name: path}``.

    A pure function of the records and ``settings`` (shown in the report; ``mode`` chooses the
    canonicaliser, default: the records' own).  Every figure of :func:`figures`, and Table 3 drawn
    by :func:`amp.reporting.plots.fdm_fim_table`, is written as HTML and as PNG (see
    :func:`_write_pngs`); PNGs that cannot be made are listed with the reason in ``report.md``.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    mode = settings.get("mode")
    tabs = tables(records_zero, records_few, k=k, mode=mode)
    figs: dict[str, Any] = {}
    for stem, fig in figures(tabs, records_zero, k=k).items():
        figs[stem] = fig
        if stem == "table2_zm":  # Table 3 as a figure, for the report only (the Research page shows the frame)
            figs["table3_fdm_fim"] = plots.fdm_fim_table(tabs["table3_fdm_fim"])
    written: dict[str, Path] = {}
    for stem, df in tabs.items():
        path = out / f"{stem}.csv"
        df.to_csv(path, index=False)
        written[path.name] = path
    for name, recs in (("records_zero_shot", records_zero), ("records_few_shot", records_few)):
        path = out / f"{name}.csv"
        ex.records_frame(recs).to_csv(path, index=False)
        written[path.name] = path
    for stem, fig in figs.items():
        path = out / f"{stem}.html"
        fig.write_html(str(path), include_plotlyjs=True, full_html=True)
        written[path.name] = path
    pngs, png_problem = _write_pngs([(fig, out / f"{stem}.png") for stem, fig in figs.items()])
    written.update((p.name, p) for p in pngs)
    lines = ["# AmP reproduction report", "", "## Settings", ""]
    lines += [f"* **{key}**: {value}" for key, value in settings.items()]
    lines += ["", f"Zero-shot records: {len(records_zero)}; few-shot records: {len(records_few)}.", "",
              f"## Table 2 — ZM_{k} per type (%)", "", _md_table(tabs["table2_zm"]),
              "## Table 3 — FDM (0–2, lower is better) and FIM (0–1) per type", "",
              _md_table(tabs["table3_fdm_fim"]),
              "## Figures", ""]
    for stem in figs:
        png, html = f"{stem}.png", f"{stem}.html"
        if png in written:
            lines.append(f"* [{png}]({png}) · [{html}]({html}) (interactive)")
        else:
            lines.append(f"* [{html}]({html}) (interactive)")
    if png_problem:
        missing = [f"{stem}.png" for stem in figs if f"{stem}.png" not in written]
        lines += ["", f"PNG not written for {', '.join(missing)}: {png_problem}."]
    lines += ["", DIFFERENCES]
    report = out / "report.md"
    report.write_text("\n".join(lines), encoding="utf-8")
    written["report.md"] = report
    return written


# --------------------------------------------------------------------------- token alignment


def token_char_spans(tokens: Sequence[str]) -> list[tuple[int, int]]:
    """``[(start, end), …]``: each token's half-open character span in the concatenated text.

    Two tokenizations of the same text then share one character axis (a token covering
    characters 3–7 of one model lines up with the tokens covering them in the other).
    """
    spans: list[tuple[int, int]] = []
    pos = 0
    for tok in tokens:
        spans.append((pos, pos + len(tok)))
        pos += len(tok)
    return spans


def char_axis_frame(tokens: Sequence[str], probs: Sequence[float]) -> pd.DataFrame:
    """One row per character: ``char``, ``token_index``, ``token``, ``prob`` of its token."""
    rows = []
    for i, ((start, end), tok, p) in enumerate(zip(token_char_spans(tokens), tokens, probs, strict=True)):
        for c in range(start, end):
            rows.append({"pos": c, "char": tok[c - start], "token_index": i, "token": tok, "prob": float(p)})
    return pd.DataFrame(rows, columns=["pos", "char", "token_index", "token", "prob"])


def char_heatmap(rows: dict[str, tuple[Sequence[str], Sequence[float]]], title: str = "Token probabilities") -> Any:
    """A heatmap with one row per label on a shared character axis (tokens of any tokenizer).

    ``rows`` maps a label (a model) to ``(tokens, probs)`` of the *same* text; every character
    takes its token's probability, so token boundaries of different tokenizers line up.
    """
    import plotly.graph_objects as go

    if not rows:
        return plots.empty_figure(title)
    frames = {label: char_axis_frame(toks, probs) for label, (toks, probs) in rows.items()}
    width = max((len(f) for f in frames.values()), default=0)
    z, text, hover = [], [], []
    for label, f in frames.items():
        probs = list(f["prob"]) + [None] * (width - len(f))
        chars = list(f["char"]) + [""] * (width - len(f))
        z.append(probs)
        text.append(chars)
        hover.append([f"{label}<br>token {i}: {t!r}<br>p={p:.3f}" for i, t, p in
                      zip(f["token_index"], f["token"], f["prob"], strict=True)] + [""] * (width - len(f)))
    fig = go.Figure(go.Heatmap(z=z, y=list(frames), text=text, texttemplate="%{text}", hovertext=hover,
                               hoverinfo="text", zmin=0, zmax=1, colorscale="Viridis"))
    fig.update_layout(title=title, xaxis_title="character", height=140 + 50 * len(frames))
    return fig


def overlay_fewshot(per_ratio: dict[str, pd.DataFrame], column: str = "mean_p_lf0") -> Any:
    """Few-shot curves of several runs on one figure: ``column`` against the ratio, per run and type."""
    import plotly.graph_objects as go

    fig = go.Figure()
    for name, df in per_ratio.items():
        for type_, sub in df.groupby("type", sort=False):
            fig.add_trace(go.Scatter(x=sub["ratio"], y=sub[column], mode="lines+markers", name=f"{name} · {type_}"))
    fig.update_layout(title=f"{column} vs LF0 ratio", xaxis_title="ratio r of LF0 examples", yaxis_title=column)
    return fig
