"""The reproduction report: Tables 2 and 3 and Figures 2, 3 and 6 from sweep records (pure).

:func:`write_report` writes Table 2 (ZM_5), Table 3 (FDM/FIM), Figures 2, 3 and 6 and the
meaning-level uncertainty (semantic entropy, docs/paper-notes.md §17) as CSV, every
figure as standalone HTML and as PNG (:mod:`amp.reporting.png_export`), the records, and
``report.md`` with the settings and the differences from the paper (:data:`DIFFERENCES`).
:func:`tables` and :func:`figures` are what the Research page shows for a saved run.

Every table cell and figure point of the report carries its 95 % percentile-bootstrap interval over
test sentences (:mod:`amp.evaluation.sweep_intervals`, docs/paper-notes.md §21) and its n in
sentences: the CSVs in ``<stat>_low``/``<stat>_high`` columns, ``report.md`` as ``estimate [low,
high]``, the figures as error bars with n in the title.  Records' beams are JSON lists in the CSVs.
With runs under several split seeds (``amp reproduce --seeds``) the report adds each table's spread
across them (:mod:`amp.evaluation.seed_spread`, ``seed_spread.csv``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from amp.evaluation import provenance, run_context
from amp.evaluation.seed_spread import seed_spread
from amp.evaluation.sweep_intervals import (
    FEWSHOT_RATIO_STATS,
    FEWSHOT_TYPE_STATS,
    BootstrapSettings,
    fewshot_with_intervals,
    interval_columns,
    zeroshot_stats,
    zeroshot_with_intervals,
)
from amp.evaluation.sweep_run import SweepRecord
from amp.evaluation.sweep_summary import (
    MEANING_COLUMNS,
    fewshot_summary,
    json_cells,
    records_frame,
    sentence_keys,
    zeroshot_summary,
)
from amp.reporting import sweep_plots as plots
from amp.reporting.figure_notes import interval_cells
from amp.reporting.png_export import write_pngs

__all__ = ["CONTEXT_KEYS", "DIFFERENCES", "PROVENANCE_KEYS", "figures", "seed_spread_table", "tables", "write_report"]

#: The settings that say where a run ran (:meth:`amp.evaluation.run_context.RunContext.as_settings`) and
#: when, with which versions (:meth:`amp.evaluation.provenance.Provenance.as_settings`): the report lists
#: each in a section of its own.
CONTEXT_KEYS = run_context.CONTEXT_KEYS
PROVENANCE_KEYS = provenance.PROVENANCE_KEYS


def tables(records_zero: Sequence[SweepRecord], records_few: Sequence[SweepRecord], *,
           k: int = 5, mode: str | None = None, boot: BootstrapSettings | None = None) -> dict[str, pd.DataFrame]:
    """The report's tables, by file stem (pure).  With ``boot``, every statistic of Tables 2–3 and
    Figures 2, 3 (the mean) and 6 gets its bootstrap interval columns (§21; some seconds for a
    paper-sized run); without, the estimates only."""
    if boot is None:
        zero = zeroshot_summary(records_zero, k=k, mode=mode)
        per_ratio, per_type = fewshot_summary(records_few, mode=mode)
    else:
        zero = zeroshot_with_intervals(records_zero, k=k, mode=mode, boot=boot)
        per_ratio, per_type = fewshot_with_intervals(records_few, mode=mode, boot=boot)
    return {
        "table2_zm": zero[[c for c in ("type", "n", f"ZM_{k}", *interval_columns(f"ZM_{k}")) if c in zero]],
        "table3_fdm_fim": per_type,
        "fig2_zeroshot_accuracy": zero,
        "fig3_p_lf0": records_frame(records_zero)[["id", "type", "p_lf0", "p_lf0_total"]],
        "fig6_fewshot_per_ratio": per_ratio,
        "meaning_uncertainty": meaning_table(zero, per_ratio),
    }


def meaning_table(zero: pd.DataFrame, per_ratio: pd.DataFrame) -> pd.DataFrame:
    """Semantic entropy of the beams' meanings and their mass on LF0/LF1/neither
    (docs/paper-notes.md §17): zero-shot per type (``ratio`` empty), few-shot per type and ratio."""
    cols = ["type", "ratio", "n", *MEANING_COLUMNS]
    parts = [zero.assign(ratio=math.nan, setting="zero-shot"), per_ratio.assign(setting="few-shot")]
    return pd.concat([p[["setting", *cols]] for p in parts if len(p)], ignore_index=True) if any(
        len(p) for p in parts) else pd.DataFrame(columns=["setting", *cols])


def figures(tabs: dict[str, pd.DataFrame], records_zero: Sequence[SweepRecord], *, k: int = 5) -> dict[str, Any]:
    """The report's plotly figures, by file stem (pure)."""
    return {
        "table2_zm": plots.zm_bars(tabs["fig2_zeroshot_accuracy"], k),
        "fig2_zeroshot_accuracy": plots.accuracy_bars(tabs["fig2_zeroshot_accuracy"]),
        "fig3_p_lf0": plots.p_lf0_distribution(records_frame(records_zero), means=tabs["fig2_zeroshot_accuracy"]),
        "fig6_fewshot_accuracy": plots.accuracy_vs_ratio(tabs["fig6_fewshot_per_ratio"]),
        "fig6_fewshot_p_lf0": plots.p_lf0_vs_ratio(tabs["fig6_fewshot_per_ratio"]),
    }


DIFFERENCES = """\
## How these numbers differ from the paper's, and why

* **Inverse scope (revscope) ZM_k is not 0 here.**  The original code compared the data's type
  name `scope_reverse` with `revscope`, so its Table 2 reported ZM = 0 for inverse scope whatever
  the model produced (docs/paper-notes.md §13.3).  We count revscope like every other type.
* **Conjunction LF labels follow the code, not Table 1.**  The paper's Table 1 swaps LF0 and LF1
  for conjunction scope; the data and the original code use LF0 = AND as main connective and
  LF1 = OR (docs/paper-notes.md §14).  Our accuracies and P(LF0) use the code's labels.
* **FDM ranges 0–2, not 0–1.**  FDM = mean over ratios of |acc_LF0 − r| + |acc_LF1 − (1 − r)|,
  whose true maximum is 2 (the paper states 0–1; docs/paper-notes.md §13.4).
* **P(LF0) uses one prompt for both LFs and scores every LF token.**  The original drew a fresh
  random prompt for the LF1 forced decode; here LF0 and LF1 are scored under the *same* prompt,
  and the minimum token probability is taken over every token of the LF (docs/paper-notes.md §11, §12).
  `p_lf0_total` (total sequence probability) is also given, which is what Fig. 3 plotted.
* **Decoding.**  Constrained beam search keeps summed log-probs and re-ranks the final beams
  with the GNMT length penalty (α = 0.7); the original applied it inside the search.  Models differ
  from the paper's (Codex, CodeGen, …), so absolute numbers are not comparable.
"""


def _with_interval_cells(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with each statistic that has ``_low``/``_high`` columns shown as one ``estimate [low, high]`` cell."""
    out = df.copy()
    for col in df.columns:
        low, high = interval_columns(col)
        if low in df.columns and high in df.columns:
            out[col] = interval_cells(df, col)
            out = out.drop(columns=[low, high])
    return out


def _md_table(df: pd.DataFrame) -> str:
    if df.empty:
        return "_(no data)_\n"
    df = _with_interval_cells(df)
    cols = list(df.columns)
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for row in df.itertuples(index=False):
        cells = [f"{v:.3f}" if isinstance(v, float) and not math.isnan(v) else ("–" if isinstance(v, float) else str(v))
                 for v in row]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _spread_specs(k: int) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """The seed-spread rows of a run under several seeds: per table stem, its key columns and statistics."""
    return {
        "table2_zm": (("type",), zeroshot_stats(k)[:1]),
        "table3_fdm_fim": (("type",), FEWSHOT_TYPE_STATS),
        "fig2_zeroshot_accuracy": (("type",), zeroshot_stats(k)[1:]),
        "fig6_fewshot_per_ratio": (("type", "ratio"), FEWSHOT_RATIO_STATS),
    }


def seed_spread_table(seeds: Mapping[int, tuple[Sequence[SweepRecord], Sequence[SweepRecord]]], *,
                      k: int = 5, mode: str | None = None) -> pd.DataFrame:
    """Every statistic of the report's tables under each seed and its spread across seeds
    (:func:`amp.evaluation.seed_spread.seed_spread`), one frame with a ``table`` column (pure)."""
    by_seed = {seed: tables(zero, few, k=k, mode=mode) for seed, (zero, few) in seeds.items()}
    parts = []
    for stem, (keys, stats) in _spread_specs(k).items():
        got = seed_spread({seed: tabs[stem] for seed, tabs in by_seed.items()}, keys, stats)
        parts.append(got.assign(table=stem).reindex(columns=["table", "type", "ratio", *got.columns[len(keys):]]))
    return pd.concat(parts, ignore_index=True)


def write_report(records_zero: Sequence[SweepRecord], records_few: Sequence[SweepRecord],
                 out_dir: str | Path, settings: dict[str, Any], *, k: int = 5,
                 boot: BootstrapSettings = BootstrapSettings(),
                 seeds: Mapping[int, tuple[Sequence[SweepRecord], Sequence[SweepRecord]]] | None = None,
                 ) -> dict[str, Path]:
    """Write every table, figure and ``report.md`` into ``out_dir``; returns ``{file name: path}``.

    A pure function of the records and ``settings`` (shown in the report, where it ran —
    :data:`CONTEXT_KEYS` — in a section of its own; ``mode`` chooses the canonicaliser, default: the
    records' own).  Every figure of :func:`figures`, and Table 3 drawn
    by :func:`amp.reporting.sweep_plots.fdm_fim_table`, is written as HTML and as PNG (see
    :func:`amp.reporting.png_export.write_pngs`); PNGs that cannot be made are listed with the reason in ``report.md``.
    Every statistic gets its bootstrap interval (``boot``, docs/paper-notes.md §21).  ``seeds`` (the
    records of the same run under other split seeds, this one's included, by seed) adds
    ``seed_spread.csv`` and a section on the spread across seeds.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    mode = settings.get("mode")
    tabs = tables(records_zero, records_few, k=k, mode=mode, boot=boot)
    spread = seed_spread_table(seeds, k=k, mode=mode) if seeds and len(seeds) > 1 else None
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
    if spread is not None:
        path = out / "seed_spread.csv"
        spread.to_csv(path, index=False)
        written[path.name] = path
    for name, recs in (("records_zero_shot", records_zero), ("records_few_shot", records_few)):
        path = out / f"{name}.csv"
        json_cells(records_frame(recs)).to_csv(path, index=False)  # beams as JSON lists
        written[path.name] = path
    for stem, fig in figs.items():
        path = out / f"{stem}.html"
        fig.write_html(str(path), include_plotlyjs=True, full_html=True)
        written[path.name] = path
    pngs, png_problem = write_pngs([(fig, out / f"{stem}.png") for stem, fig in figs.items()])
    written.update((p.name, p) for p in pngs)
    lines = _report_lines(settings, tabs, list(figs), written, png_problem,
                          counts=(len(records_zero), len(records_few)), k=k,
                          sentences=(_sentences(records_zero), _sentences(records_few)), boot=boot, spread=spread)
    report = out / "report.md"
    report.write_text("\n".join(lines), encoding="utf-8")
    written["report.md"] = report
    return written


def _sentences(records: Sequence[SweepRecord]) -> int:
    """Distinct test sentences of the records (a few-shot sentence has one record per ratio)."""
    return len(set(sentence_keys(records_frame(records))))


def _spread_lines(spread: pd.DataFrame) -> list[str]:
    """report.md's section on the spread across seeds: Tables 2–3 and Fig. 2 cell by cell, Fig. 6 by its
    largest standard deviation over the ratios (every cell is in ``seed_spread.csv``)."""
    seeds = [c.removeprefix("seed_") for c in spread.columns if c.startswith("seed_")]
    lines = [f"## Spread across split seeds {', '.join(seeds)}", "",
             "Each seed draws other test sentences and other prompt examples; the tables and figures above are "
             f"seed {seeds[0]}'s.  Mean ± sd [min, max] over the seeds (docs/paper-notes.md §21); every cell, "
             "Fig. 6's included, is in `seed_spread.csv`.", ""]
    cells = spread[spread["table"] != "fig6_fewshot_per_ratio"]
    rows = [{"table": r["table"], "type": r["type"], "stat": r["stat"],
             **{f"seed {s}": r[f"seed_{s}"] for s in seeds},
             "mean ± sd [min, max]": _spread_text(r)} for r in cells.to_dict("records")]
    lines += [_md_table(pd.DataFrame(rows)) if rows else "_(no data)_\n"]
    fig6 = spread[spread["table"] == "fig6_fewshot_per_ratio"]
    if len(fig6):
        worst = fig6.sort_values("sd", ascending=False, na_position="last").drop_duplicates(["type", "stat"])
        worst = worst.sort_values(["type", "stat"])
        lines += ["Fig. 6 — the ratio where each curve moves most across seeds:", "",
                  _md_table(pd.DataFrame([{"type": r["type"], "stat": r["stat"], "ratio": r["ratio"],
                                           "mean ± sd [min, max]": _spread_text(r)}
                                          for r in worst.to_dict("records")]))]
    return lines


def _spread_text(row: Mapping[str, Any]) -> str:
    if math.isnan(float(row["mean"])):
        return "–"
    sd = "" if math.isnan(float(row["sd"])) else f" ± {float(row['sd']):.3f}"
    return f"{float(row['mean']):.3f}{sd} [{float(row['min']):.3f}, {float(row['max']):.3f}]"


def _report_lines(settings: dict[str, Any], tabs: dict[str, Any], stems: list[str], written: dict[str, Path],
                  png_problem: str | None, *, counts: tuple[int, int], k: int, sentences: tuple[int, int],
                  boot: BootstrapSettings, spread: pd.DataFrame | None) -> list[str]:
    """The lines of ``report.md``: settings, where it ran, Tables 2 and 3, meaning-level uncertainty,
    the figures (PNG and HTML, or why no PNG) and the differences from the paper."""
    lines = ["# AmP reproduction report", "", "## Settings", ""]
    lines += [f"* **{key}**: {value}" for key, value in settings.items()
              if key not in CONTEXT_KEYS and key not in PROVENANCE_KEYS]
    where = [f"* **{key}**: {settings[key]}" for key in CONTEXT_KEYS if key in settings]
    if where:
        lines += ["", "## Where it ran", "", *where]
    when = [f"* **{key}**: {settings[key]}" for key in PROVENANCE_KEYS if key in settings]
    if when:
        lines += ["", "## When and with what", "", *when]
    lines += ["", f"Zero-shot: {sentences[0]} test sentences ({counts[0]} records); few-shot: {sentences[1]} test "
              f"sentences, one record per ratio ({counts[1]} records).  n in every table and figure counts sentences.",
              "", f"Each value is shown as estimate [low, high]: its {boot.level:.0%} percentile-bootstrap interval over "
              f"test sentences ({boot.resamples} resamples, seed {boot.seed}; a few-shot sentence is resampled with all "
              "its ratios; docs/paper-notes.md §21).  The CSVs hold them as `<stat>_low`/`<stat>_high` columns.", "",
              f"## Table 2 — ZM_{k} per type (%)", "", _md_table(tabs["table2_zm"]),
              "## Table 3 — FDM (0–2, lower is better) and FIM (0–1) per type", "",
              _md_table(tabs["table3_fdm_fim"]),
              *([f"_{settings['needs_logprobs']}._", ""] if settings.get("needs_logprobs") else []),
              "## Meaning-level uncertainty — semantic entropy of the beams (nats) and mass on LF0/LF1/neither",
              "", "Beams grouped by canonical meaning (logical mode), weighted by their probability "
              "(docs/paper-notes.md §17).", "", _md_table(tabs["meaning_uncertainty"]),
              "## Figures", ""]
    for stem in stems:
        png, html = f"{stem}.png", f"{stem}.html"
        if png in written:
            lines.append(f"* [{png}]({png}) · [{html}]({html}) (interactive)")
        else:
            lines.append(f"* [{html}]({html}) (interactive)")
    if png_problem:
        missing = [f"{stem}.png" for stem in stems if f"{stem}.png" not in written]
        lines += ["", f"PNG not written for {', '.join(missing)}: {png_problem}."]
    if spread is not None:
        lines += ["", *_spread_lines(spread)]
    lines += ["", DIFFERENCES]
    return lines
