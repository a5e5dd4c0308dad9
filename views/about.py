"""About & cache: what the app shows, the paper's metrics, the model in use, the result cache."""

from __future__ import annotations

import pandas as pd
import streamlit as st

from amp.errors import AmpError
from ui.model import actions, parsers
from ui.model import choice as model_choice

st.title("About AmP Explorer")
st.markdown(
    "Natural sentences are often **ambiguous**: *the man saw the boy with the telescope* has two "
    "meanings. This app explores how a language model parses such sentences into logic, following "
    "Stengel-Eskin et al. (2023), *Zero and Few-shot Semantic Parsing with Ambiguous Inputs* "
    "(the AmP dataset). Five ambiguity types — PP attachment, quantifier scope, inverse scope, "
    "bound pronouns and conjunctions — each give every sentence exactly two logical forms, **LF0** "
    "and **LF1**. The model parses few-shot with grammar-constrained beam search, so every output "
    "is a well-formed formula.\n\n"
    "**Walk the paper's story:** *Templates* (see the two LFs) → *Prompt builder* (mix LF0 and LF1 "
    "examples at ratio r) → *Parse & inspect* (where do the two parses diverge, how sure was the "
    "model there?) → *Ratio sweep* (does P(LF0) follow r?) → *Zero-shot* (without hints, which "
    "reading wins?)."
)

st.header("Metrics")
st.markdown("**ZM_k — zero-shot, Eq. 1.** The share of test sentences with *both* LFs among the top-k "
            "beams T_k (0–100 %; the paper reports k = 5). Higher means the model sees both readings.")
st.latex(r"\mathrm{ZM}_k=\frac{100}{N}\sum_{i=1}^{N}\mathbb{1}[\mathrm{LF0}_i\in T_k(i)]\cdot"
         r"\mathbb{1}[\mathrm{LF1}_i\in T_k(i)]")
st.markdown("**FDM — few-shot dataset metric, Eq. 2.** For each ratio r, top-1 accuracies a₀(r), a₁(r) "
            "against LF0 and LF1; averaged over ratios. **Range 0–2** (the paper states 0–1, but "
            "predicting the wrong LF everywhere at r = 1 gives 2; never predicting either LF gives 1). "
            "Lower is better.")
st.latex(r"\mathrm{FDM}=\frac{1}{|R|}\sum_{r\in R}\Big(|a_0(r)-r|+|a_1(r)-(1-r)|\Big)\in[0,2]")
st.markdown("**P(LF0) — forced decode.** Each LF is force-decoded under the prompt; m is its *minimum* "
            "token probability (the model's confidence at its least sure token, usually where the "
            "readings diverge). The app also shows the total-probability version the paper's Fig. 3 used.")
st.latex(r"P(\mathrm{LF0})=\frac{m_0}{m_0+m_1},\qquad m_j=\min_t\,p\big(y^{(j)}_t\mid\text{prompt},"
         r"y^{(j)}_{<t}\big)")
st.markdown("**FIM — few-shot instance metric, Eq. 3.** Does each sentence's P(LF0) match the prompt's "
            "ratio r? Mean squared error, averaged over ratios; range 0–1, lower is better.")
st.latex(r"\mathrm{FIM}=\frac{1}{|R|}\sum_{r\in R}\frac{1}{N}\sum_{i=1}^{N}\big(P_i(\mathrm{LF0})-r\big)^2")

st.header("Model")
spec = model_choice.current_spec()
st.markdown(f"This session uses **`{spec}`** (change it in the sidebar).")
try:
    from amp.parser.models.embedded import default_model_info

    info = default_model_info()
    facts = {
        "name": info.name,
        "upstream": info.upstream,
        "parameters": f"{info.parameters / 1e6:.1f} M",
        "shipped as": f"{info.gguf_file} ({info.gguf_bytes / 1e6:.0f} MB, Q4_K_M) in the PyPI package "
                      f"{info.package} {info.package_version}",
        "converted copy": f"{info.converted_path} ({'ready' if info.converted else 'made on first use'})",
        "licence": f"{info.licence} — {info.licence_path}",
    }
    st.markdown("**The embedded default model** (no network needed):")
    st.dataframe(pd.DataFrame({"": list(facts), "value": list(facts.values())}), hide_index=True, width="stretch")
except (AmpError, ImportError) as exc:
    st.warning(f"Default model information unavailable: {exc}")
parser = parsers.loaded_parser(spec)
if parser is not None:
    st.markdown(f"Loaded in this process: identity `{actions.identity(parser)}`, "
                f"{actions.describe(parser)}.")
else:
    st.caption("The model is not loaded in this process yet; it loads on the first parse.")

st.header("Result cache")
st.caption("Parses and forced scores are stored on disk (JSON only) so reruns are instant. "
           "Entries are keyed by model, tokenizer, grammar, prompt and settings.")
try:
    cache = parsers.result_cache()
    stats = cache.stats()
    m1, m2 = st.columns(2)
    m1.metric("Entries", f"{stats['entries']:,}")
    m2.metric("Size", f"{stats['bytes'] / 1e6:.1f} MB")
    st.caption(f"Folder: `{stats['directory']}`")
    models = pd.DataFrame(sorted(stats["models"].items()), columns=["model identity", "entries"])
    if not models.empty:
        st.dataframe(models, hide_index=True, width="stretch")
    b1, b2 = st.columns(2)
    if b1.button("Clear the whole cache", icon=":material/delete:", key="about_clear_all"):
        st.toast(f"Cleared {cache.clear()} cached results.")
        st.rerun()
    if parser is not None and b2.button("Clear this model's entries", icon=":material/delete_sweep:",
                                        key="about_clear_model"):
        st.toast(f"Cleared {cache.clear(model=actions.identity(parser))} cached results.")
        st.rerun()
except AmpError as exc:
    st.error(f"The result cache cannot be opened: {exc}")
