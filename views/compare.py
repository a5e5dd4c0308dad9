"""Model comparison: two models on the same prompt (beams, P(LF0), token heatmaps) and saved sweeps overlaid."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import streamlit as st

from amp.data.types import type_ids
from amp.errors import AmpError
from amp.evaluation import experiments as ex
from amp.evaluation import runs as saved_runs
from amp.evaluation.matching import match_lf
from amp.evaluation.verdict import VERDICT_MEASURE
from amp.parser.backends.api_protocol import is_api_spec
from amp.reporting import plots
from ui.model import actions, parsers
from ui.model import choice as model_choice
from ui.shared import settings_widgets
from ui.shared.common import chart, fmt_prob, guarded, plain, type_label
from ui.shared.halt import halt

#: Pixels of a beam table's match column: "unparseable", its longest verdict, in full.
MATCH_WIDTH = 100
#: session_state key of the last comparison: (item id, {"A": ModelRun, "B": ModelRun}).
RESULT_KEY = "cmp_result"


@dataclass(frozen=True)
class ModelRun:
    """One model's part of a comparison: its beams and pair score, or why it could not run."""

    name: str  #: the spec as shown (model A: the sidebar's, or the parser server's)
    precision: str  #: where and how it ran ("cpu · float32"), or the chosen precision if it never ran
    result: tuple[Any, Any] | None = None  #: (ParseResult, pair score)
    error: str | None = None


st.title("Compare two models")
st.caption("Model A is the sidebar's model; model B is typed here, with its own engine and precision. Both parse the same "
           "zero-shot prompt; the heatmap draws each model's token probabilities for the gold LFs on a shared "
           "character axis, so different tokenizers line up.")

c1, c2 = st.columns([2, 1])
type_ = c1.selectbox("Ambiguity type", type_ids(), format_func=type_label, key="cmp_type")
index = int(c2.number_input("Sentence", 0, 199, 0, key="cmp_index"))
b1, b2, b3 = st.columns([2, 1, 1])
spec_b = b1.text_input("Model B (id or path)", value=model_choice.current_spec(), key="cmp_spec_b",
                       help="A Hugging Face id, a folder, a .gguf file, or openai:<name> for a model behind "
                            "an API (set in the sidebar's 'Model behind an API')").strip() or model_choice.DEFAULT
choice_b = model_choice.ModelChoice(spec=spec_b)  # a model behind an API: no engine or precision of its own here
if not is_api_spec(spec_b):
    engine_b = settings_widgets.engine_select(b2, "cmp_engine_b", choices=model_choice.engines_of(spec_b),
                                              default=model_choice.current_engine(), label="Model B engine")
    precisions_b = model_choice.precisions_of(engine_b)
    dtype_b = settings_widgets.precision_select(b3, "cmp_dtype_b", choices=precisions_b,
                                                default=model_choice.current_dtype(),
                                                label="Model B precision") if precisions_b else ""
    choice_b = model_choice.ModelChoice(spec=spec_b, engine=engine_b, dtype=dtype_b)
items = guarded(lambda: ex.plan_zeroshot(ex.ZeroShotConfig(types=(type_,), n=index + 1)), what="Cannot plan")
if not items:
    halt()
item = items[index]
st.markdown(f"**{plain(item.surface)}**  \nLF0 `{item.lf0}`  \nLF1 `{item.lf1}`")


def _parse_and_score(parser: Any) -> tuple[Any, Any]:
    """The parse and, where the model can score (not a model behind an API without log-probs), P(LF0)."""
    return (parser.parse(item.prompt_text, fmt=item.fmt),
            parser.score_pair(item.prompt_text, item.lf0, item.lf1, fmt=item.fmt) if parser.scores else None)


def _run_a() -> ModelRun:
    """The sidebar's model (its own failure box, with the sidebar's ways back, comes from get_parser)."""
    parser = parsers.get_parser()
    server = model_choice.current_server()
    name = (parser.spec if parser is not None else server) if server else model_choice.current_choice().label()
    if parser is None:
        return ModelRun(name, "", error=model_choice.load_error() or "The sidebar's model cannot be used (see above).")
    done = actions.attempt(parser, "Model A: parsing and scoring…", _parse_and_score, who="Model A")
    return ModelRun(name, actions.describe(parser), done.value, _why(done))


def _run_b(choice: model_choice.ModelChoice) -> ModelRun:
    """Model B, on its own engine and in its own precision: a failure is B's alone (the sidebar's model
    stays as it is)."""
    precision = choice.how()
    try:
        parser = parsers.parser_for(choice)
    except Exception as exc:  # noqa: BLE001 - a bad spec is a message, not a crash
        return ModelRun(choice.spec, precision, error=str(exc) if isinstance(exc, AmpError)
                        else f"{type(exc).__name__}: {exc}")
    done = actions.attempt(parser, "Model B: parsing and scoring…", _parse_and_score, who="Model B", model=choice)
    return ModelRun(choice.spec, actions.describe(parser), done.value, _why(done))


def _why(done: actions.Outcome) -> str | None:
    return "Cancelled before it finished." if done.cancelled else done.error


def _beam_table(model: ModelRun) -> None:
    """Rank, match and score first, the beam text last: the verdict is never scrolled out of view."""
    parse = model.result[0] if model.result else None
    rows = [{"rank": b.rank + 1, "match": match_lf(b.text, item.lf0, item.lf1, fmt=item.fmt), "score": b.score,
             "beam": b.text} for b in (parse.beams if parse else ())]
    st.dataframe(rows, hide_index=True, width="stretch", column_config={
        "rank": st.column_config.NumberColumn(width="small"),
        "match": st.column_config.TextColumn(width=MATCH_WIDTH, help="which gold LF the beam is: lf0, lf1, both, "
                                                                 "neither, or unparseable"),
        "score": st.column_config.NumberColumn(format="%.2f", width="small", help="summed log-probability"),
        "beam": st.column_config.TextColumn(width="large")})


if st.button("Compare", key="cmp_run", type="primary", icon=":material/compare_arrows:"):
    st.session_state[RESULT_KEY] = (item.id, {"A": _run_a(), "B": _run_b(choice_b)})

saved = st.session_state.get(RESULT_KEY)
if saved and saved[0] == item.id:
    runs_by_label: dict[str, ModelRun] = saved[1]
    for col, (label, model) in zip(st.columns(2), runs_by_label.items(), strict=True):
        with col:
            st.header(f"Model {label}: {plain(model.name)}")  # h2 under the h1 (headings in order)
            if model.precision:
                st.caption(model.precision)
            if model.result is None:
                st.error(f"**Model {label} gave no result.** {plain(model.error or '')}", icon=":material/error:")
                continue
            if model.result[1] is None:
                st.metric(VERDICT_MEASURE.label, "—", help="needs log-probs: this model behind an API gives none")
            else:
                st.metric(VERDICT_MEASURE.label, fmt_prob(VERDICT_MEASURE.of(model.result[1])),
                          help=VERDICT_MEASURE.how)
            _beam_table(model)
    done = {label: model.result[1] for label, model in runs_by_label.items()
            if model.result is not None and model.result[1] is not None}
    for which in ("lf0", "lf1") if done else ():
        rows: dict[str, tuple[Sequence[str], Sequence[float]]] = {
            label: ([s.token for s in getattr(pair, which).steps], [s.prob for s in getattr(pair, which).steps])
            for label, pair in done.items()}
        chart(plots.char_heatmap(rows, title=f"{which.upper()} token probabilities"), key=f"cmp_heat_{which}",
              filename=f"compare-{which}")

st.divider()
st.header("Saved sweeps overlaid")
runs = saved_runs.list_runs()
RUNS_FROM = "`python -m amp reproduce` or a finished sweep of the Ratio sweep page"
chosen: list[str] = []
if runs:
    chosen = st.multiselect(f"Runs (from {RUNS_FROM})", [p.stem for p in runs], key="cmp_runs")
else:  # not an empty, greyed-out box (WCAG 1.4.3: its faded label is unreadable): say how to get runs
    st.info(f"No saved runs yet: they come from {RUNS_FROM}.", icon=":material/info:")
if chosen:
    curves = {}
    for p in runs:
        if p.stem in chosen:
            try:
                few = saved_runs.load_manifest(p)["few_shot"]
                if not few:
                    st.info(f"{plain(p.stem)} has no few-shot results (a zero-shot run): nothing to overlay.",
                            icon=":material/info:")
                    continue
                curves[p.stem] = ex.fewshot_summary(few)[0]
            except AmpError as exc:
                st.error(str(exc))
    chart(plots.overlay_fewshot(curves), key="cmp_overlay", filename="compare-fewshot")
