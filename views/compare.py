"""Model comparison: two models on the same prompt (beams, P(LF0), token heatmaps) and saved sweeps overlaid."""

from __future__ import annotations

import streamlit as st

from amp.data.types import type_ids
from amp.errors import AmpError
from amp.evaluation import experiments as ex
from amp.evaluation import runs as saved_runs
from amp.evaluation.matching import match_lf
from amp.reporting import plots
from ui import model_picker as ui_model
from ui.common import chart, fmt_prob, guarded, halt, plain, type_label

st.title("Compare two models")
st.caption("Model A is the sidebar's model; model B is typed here. Both parse the same zero-shot prompt; "
           "the heatmap draws each model's token probabilities for the gold LFs on a shared character axis, "
           "so different tokenizers line up.")

c1, c2, c3 = st.columns([2, 1, 2])
type_ = c1.selectbox("Ambiguity type", type_ids(), format_func=type_label, key="cmp_type")
index = int(c2.number_input("Sentence", 0, 199, 0, key="cmp_index"))
spec_b = c3.text_input("Model B (id or path)", value=ui_model.current_spec(), key="cmp_spec_b")
items = guarded(lambda: ex.plan_zeroshot(ex.ZeroShotConfig(types=(type_,), n=index + 1)), what="Cannot plan")
if not items:
    halt()
item = items[index]
st.markdown(f"**{item.surface}**  \nLF0 `{item.lf0}`  \nLF1 `{item.lf1}`")

if st.button("Compare", key="cmp_run", type="primary", icon=":material/compare_arrows:"):
    parser_a = ui_model.get_parser()
    try:
        parser_b = ui_model._load(spec_b.strip() or ui_model.DEFAULT, ui_model.current_dtype())
    except Exception as exc:  # noqa: BLE001 - a bad spec is a message, not a crash
        st.error(f"Model B could not be used: {exc}")
        parser_b = None
    if parser_a is None or parser_b is None:
        halt()
    out = {}
    for label, parser in (("A", parser_a), ("B", parser_b)):
        out[label] = ui_model.compute(parser, f"Model {label}: parsing and scoring…", lambda p: (
            p.parse(item.prompt_text, fmt=item.fmt),
            p.score_pair(item.prompt_text, item.lf0, item.lf1, fmt=item.fmt)), who=f"Model {label}")
    st.session_state["cmp_result"] = (item.id, spec_b, out)

saved = st.session_state.get("cmp_result")
if saved and saved[0] == item.id and all(v is not None for v in saved[2].values()):
    _, spec_b_used, out = saved
    cols = st.columns(2)
    for col, (label, (parse, pair)) in zip(cols, out.items(), strict=True):
        with col:
            name = ui_model.current_spec() if label == "A" else spec_b_used
            st.subheader(f"Model {label}: {name}")
            st.metric("P(LF0)", fmt_prob(pair.p_lf0))
            st.dataframe([{"rank": b.rank + 1, "beam": b.text, "score": b.score,
                           "match": match_lf(b.text, item.lf0, item.lf1, fmt=item.fmt)}
                          for b in parse.beams], hide_index=True, key=f"cmp_beams_{label}")
    for which in ("lf0", "lf1"):
        rows = {f"{label}": ([s.token for s in getattr(pair, which).steps], [s.prob for s in getattr(pair, which).steps])
                for label, (_parse, pair) in out.items()}
        chart(plots.char_heatmap(rows, title=f"{which.upper()} token probabilities"), key=f"cmp_heat_{which}",
              filename=f"compare-{which}")

st.divider()
st.subheader("Saved sweeps overlaid")
runs = saved_runs.list_runs()
chosen = st.multiselect("Runs (from `python -m amp reproduce` or a finished sweep of the Ratio sweep page)",
                        [p.stem for p in runs], key="cmp_runs")
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
