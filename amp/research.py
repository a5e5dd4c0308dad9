"""Reproducing the paper's tables and figures: a method-aware runner, run manifests, a report writer.

* :func:`run_method` runs planned :class:`~amp.experiments.SweepItem` s with one of
  :data:`amp.interpretations.METHODS`: ``beam`` (the paper's constrained beam, via
  :func:`amp.experiments.run_items`), ``distinct`` (distinct-interpretation top-k from a wider
  beam) or ``sampling`` (interpretations by estimated probability).  Every method yields
  :class:`~amp.experiments.SweepRecord` s whose ``beams`` are the ranked LF list, so the
  summaries (ZM_k, FDM, FIM) work unchanged.  Everything goes through the result cache.
* :func:`write_report` is a pure function of records: Table 2 (ZM_5), Table 3 (FDM/FIM),
  Figures 2, 3 and 6 as CSV and standalone HTML (PNG only when ``kaleido`` is importable), the
  records, and ``report.md`` with the settings and the differences from the paper.
* Run manifests (``<cache root>/runs/<name>.json``: settings + records) let the Research page
  show any saved run without a model.
* :func:`token_char_spans` maps tokens to character spans, to draw two tokenizations on one
  character axis.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, fields
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd

from amp import experiments as ex
from amp import plots
from amp.interpretations import METHODS, _sample_key, distinct_topk, sample_with_parser

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
) -> Iterator[ex.SweepRecord]:
    """Records for ``items`` with ``method`` (see the module docstring); P(LF0) by forced decoding.

    ``max_new_tokens`` bounds generation (None: from the prompt, as in the paper; ``beam`` then
    runs batched through :func:`amp.experiments.run_items`).  ``beams`` is the beam size (``beam``) or the number of distinct interpretations kept
    (``distinct``, from a beam of ``width``; ``sampling``, from ``n_samples`` samples).
    """
    if method not in METHODS:
        raise ReportError(f"method must be one of {METHODS}, not {method!r}")
    planned = list(items)
    if method == "beam" and max_new_tokens is None:  # the paper's path: batched, cached run_items
        yield from ex.run_items(parser, planned, beams=beams, mode=mode, on_progress=on_progress)
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
                was = parser.cache is not None and _sample_key(
                    parser.identity, item.prompt_text, n_samples, temperature, seed, item.fmt, max_new_tokens
                ) in parser.cache
                result = sample_with_parser(parser, item.prompt_text, n=n_samples, temperature=temperature,
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


def write_report(records_zero: Sequence[ex.SweepRecord], records_few: Sequence[ex.SweepRecord],
                 out_dir: str | Path, settings: dict[str, Any], *, k: int = 5) -> dict[str, Path]:
    """Write every table, figure and ``report.md`` into ``out_dir``; returns ``{file name: path}``.

    A pure function of the records and ``settings`` (shown in the report; ``mode`` chooses the
    canonicaliser, default: the records' own).  PNGs are written only when ``kaleido`` imports.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    mode = settings.get("mode")
    tabs = tables(records_zero, records_few, k=k, mode=mode)
    figs = figures(tabs, records_zero, k=k)
    written: dict[str, Path] = {}
    for stem, df in tabs.items():
        path = out / f"{stem}.csv"
        df.to_csv(path, index=False)
        written[path.name] = path
    for name, recs in (("records_zero_shot", records_zero), ("records_few_shot", records_few)):
        path = out / f"{name}.csv"
        ex.records_frame(recs).to_csv(path, index=False)
        written[path.name] = path
    png = importlib.util.find_spec("kaleido") is not None
    for stem, fig in figs.items():
        path = out / f"{stem}.html"
        fig.write_html(str(path), include_plotlyjs=True, full_html=True)
        written[path.name] = path
        if png:
            try:
                fig.write_image(str(out / f"{stem}.png"))
                written[f"{stem}.png"] = out / f"{stem}.png"
            except Exception:  # noqa: BLE001, S110 — kaleido present but unusable: HTML is enough
                pass
    lines = ["# AmP reproduction report", "", "## Settings", ""]
    lines += [f"* **{key}**: {value}" for key, value in settings.items()]
    lines += ["", f"Zero-shot records: {len(records_zero)}; few-shot records: {len(records_few)}.", "",
              f"## Table 2 — ZM_{k} per type (%)", "", _md_table(tabs["table2_zm"]),
              "## Table 3 — FDM (0–2, lower is better) and FIM (0–1) per type", "",
              _md_table(tabs["table3_fdm_fim"]),
              "## Figures", ""]
    lines += [f"* [{p.name}]({p.name})" for name, p in written.items() if name.endswith((".html", ".png"))]
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
