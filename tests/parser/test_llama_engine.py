"""The llama.cpp engine (issue #29) on the embedded model's GGUF as shipped: real llama.cpp, real grammar.

Slow tests run a search on the real model; the others load nothing or fail fast.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch

from amp.cache import ResultCache
from amp.parser import Parser
from amp.parser.core.errors import ModelLoadError, SearchCancelled
from amp.parser.engines import ENGINE_ENV, LLAMA_CPP, TRANSFORMERS, select_engine
from amp.parser.search.cancel import cancel_scope
from amp.parser.search.settings import SearchSettings
from amp.settings import models_dir
from tests.grammar_oracle import assert_follows_grammar

llama_cpp = pytest.importorskip("llama_cpp")

PROMPT = ("Human: the boy saw the girl with the telescope\n"
          "Computer: exists x . exists y . exists z . boy(x) AND girl(y) AND telescope(z) AND saw(x, y) AND with(x, z)\n"
          "Human: the cat chased the dog\nComputer:")


def _gguf() -> Path:
    from amp.parser.models.embedded import default_gguf

    try:
        return default_gguf()
    except ModelLoadError as exc:
        pytest.skip(f"the embedded GGUF is not available: {exc}")


@pytest.fixture(scope="module")
def llama_parser() -> Parser:
    _gguf()
    return Parser("default", engine=LLAMA_CPP, cache=False)


def test_engine_is_chosen_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENGINE_ENV, raising=False)
    assert select_engine() == LLAMA_CPP  # the default rule: the embedded GGUF on this CPU machine
    monkeypatch.setenv(ENGINE_ENV, "transformers")
    assert select_engine() == TRANSFORMERS
    monkeypatch.setenv(ENGINE_ENV, "llama.cpp")
    assert select_engine() == LLAMA_CPP
    assert select_engine("transformers") == TRANSFORMERS
    with pytest.raises(ModelLoadError, match="unknown engine 'vllm'; use one of transformers, llama.cpp"):
        select_engine("vllm")
    monkeypatch.setenv(ENGINE_ENV, "vllm")  # $AMP_ENGINE is checked where it is read, the same way
    with pytest.raises(ModelLoadError, match="unknown engine 'vllm'; use one of transformers, llama.cpp"):
        select_engine()


def test_default_rule_gives_a_gguf_on_the_cpu_to_llama_cpp(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Issue #29 rule 3: llama.cpp for a GGUF model on the CPU in its own precision (the agreement
    bench holds); transformers for other models, GPUs and an asked precision."""
    from amp.parser import engines
    from amp.parser.backends import llama as llama_module
    from amp.parser.backends.llama import LlamaBackend
    from amp.parser.backends.local import InProcessBackend

    monkeypatch.delenv(ENGINE_ENV, raising=False)
    gguf = tmp_path / "model.gguf"
    gguf.write_bytes(b"GGUF" + bytes(60))
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "config.json").write_text("{}")
    assert engines.default_engine() == LLAMA_CPP
    assert engines.default_engine(str(gguf)) == LLAMA_CPP
    assert engines.default_engine(device="cpu") == LLAMA_CPP
    assert engines.default_engine(dtype="float32") == TRANSFORMERS  # the exact path, asked for
    assert engines.default_engine(dtype="int8") == TRANSFORMERS
    assert engines.default_engine(device="cuda") == TRANSFORMERS
    assert engines.default_engine(str(folder)) == TRANSFORMERS
    assert engines.default_engine("gpt2") == TRANSFORMERS
    assert engines.default_engine(str(tmp_path / "missing.gguf")) == TRANSFORMERS  # refused later
    assert isinstance(Parser("default", cache=False).backend, LlamaBackend)
    assert isinstance(Parser("default", dtype="float32", cache=False).backend, InProcessBackend)
    monkeypatch.setattr(llama_module, "llama_cpp_installed", lambda: False)
    assert engines.default_engine() == TRANSFORMERS  # without llama-cpp-python, transformers
    import torch

    monkeypatch.setattr(llama_module, "llama_cpp_installed", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert engines.default_engine() == TRANSFORMERS  # a GPU machine


def test_an_unconstrained_parse_from_the_command_line_keeps_transformers(monkeypatch: pytest.MonkeyPatch) -> None:
    import argparse

    from amp.cli.model_options import add_model_options, make_parser, needs_gradients
    from amp.parser.backends.llama import LlamaBackend
    from amp.parser.backends.local import InProcessBackend

    monkeypatch.delenv(ENGINE_ENV, raising=False)
    ap = argparse.ArgumentParser()
    add_model_options(ap)
    ap.add_argument("--unconstrained", action="store_true")
    assert isinstance(make_parser(ap.parse_args([]), cache=False).backend, LlamaBackend)
    assert isinstance(make_parser(ap.parse_args(["--unconstrained"]), cache=False).backend, InProcessBackend)
    ap.set_defaults(need=needs_gradients)  # amp attribute: gradients
    assert isinstance(make_parser(ap.parse_args([]), cache=False).backend, InProcessBackend)
    assert isinstance(make_parser(ap.parse_args(["--engine", "llama.cpp"]), cache=False).backend, LlamaBackend)


def test_attribution_on_llama_cpp_says_how_to_get_gradients() -> None:
    from amp.evaluation.attribution import AttributionError, attribute
    from amp.prompts import Prompt

    prompt = Prompt(examples=(), test_utterance="the cat chased the dog", gold_lf0=LF0, gold_lf1=LF1)
    with pytest.raises(AttributionError, match=r"llama.cpp engine does not give: use the transformers engine"):
        attribute(Parser("default", engine="llama.cpp", cache=False), prompt)


def test_results_are_cached_apart_from_transformers(tmp_path: Path) -> None:
    """The engine and its build are in the runtime, hence in every cache key (no model loads)."""
    cache = ResultCache(tmp_path / "cache")
    fast = Parser("default", engine="llama.cpp", cache=cache)
    exact = Parser("default", engine="transformers", dtype="float32", cache=cache)
    rt = fast.runtime()
    assert rt.dtype == f"llama.cpp-{llama_cpp.__version__}"
    assert rt.versions["engine"] == "llama.cpp" and rt.versions["llama_cpp_python"] == llama_cpp.__version__
    assert rt.model == exact.runtime().model  # the same model…
    assert fast.cache_key("parse", prompt=PROMPT) != exact.cache_key("parse", prompt=PROMPT)  # …cached apart
    assert not fast.loaded and not exact.loaded


def test_engine_refuses_what_it_cannot_run() -> None:
    with pytest.raises(ModelLoadError, match="drop --dtype or use --engine transformers"):
        Parser("default", engine="llama.cpp", dtype="int8", cache=False)
    with pytest.raises(ModelLoadError, match="runs on the CPU"):
        Parser("default", engine="llama.cpp", device="cuda", cache=False)


def test_a_file_that_is_not_a_gguf_gives_one_clear_error(tmp_path: Path) -> None:
    junk = tmp_path / "model.gguf"
    junk.write_bytes(b"PK\x03\x04 not a model at all" * 100)
    with pytest.raises(ModelLoadError, match=r"is not a GGUF model file \(it does not start with 'GGUF'\)"):
        Parser(str(junk), engine="llama.cpp", cache=False).load()


def test_a_truncated_gguf_gives_one_clear_error(tmp_path: Path) -> None:
    cut = tmp_path / "cut.gguf"
    with _gguf().open("rb") as fh:
        cut.write_bytes(fh.read(1 << 20))  # the header and part of the tensor index only
    with pytest.raises(ModelLoadError, match="llama.cpp could not load .*damaged or truncated GGUF"):
        Parser(str(cut), engine="llama.cpp", cache=False).load()


def test_a_transformers_folder_is_refused_by_llama_cpp(tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelLoadError, match="runs a .gguf file"):
        Parser(str(tmp_path), engine="llama.cpp", cache=False).load()


@pytest.mark.slow
def test_gguf_vocabulary_is_the_converted_tokenizers() -> None:
    """The automaton works on the GGUF's own vocabulary: the same token texts as the converted
    tokenizer's, and the same ids for a prompt and an LF."""
    from transformers import AutoTokenizer

    from amp.parser.backends.llama import shared_gguf
    from amp.parser.models.embedded import DEFAULT_FOLDER
    from amp.parser.search.vocab import Vocabulary, encode_output, encode_prompt

    folder = models_dir() / DEFAULT_FOLDER
    if not (folder / "tokenizer.json").is_file():
        pytest.skip("the converted default model is not in the models folder")
    hf = AutoTokenizer.from_pretrained(str(folder))
    gm = shared_gguf(_gguf())
    ours, theirs = Vocabulary(gm.tokenizer), Vocabulary(hf)
    assert ours.family == theirs.family == "sentencepiece"
    assert ours.size == theirs.size and ours.texts == theirs.texts
    assert encode_prompt(gm.tokenizer, PROMPT) == encode_prompt(hf, PROMPT)
    lf = " exists x . cat(x) AND chased(x, Fido)\n"
    assert encode_output(gm.tokenizer, lf) == encode_output(hf, lf)


SEARCH = SearchSettings(beams=3, max_new_tokens=40)
LF0 = "exists x . exists y . cat(x) AND dog(y) AND chased(x, y)"
LF1 = "exists x . exists y . dog(x) AND cat(y) AND chased(x, y)"


@pytest.mark.slow
def test_beams_follow_the_grammar(llama_parser: Parser) -> None:
    from transformers import AutoTokenizer

    from amp.parser.models.embedded import DEFAULT_FOLDER

    result, pair = llama_parser.parse_and_score_many([(PROMPT, LF0, LF1)], SEARCH)[0]
    assert len(result.beams) == 3
    assert any(b.finished and b.parses for b in result.beams)
    folder = models_dir() / DEFAULT_FOLDER
    if not (folder / "tokenizer.json").is_file():
        pytest.skip("the oracle decodes with the converted tokenizer, which is not in the models folder")
    assert_follows_grammar(result, AutoTokenizer.from_pretrained(str(folder)))
    assert result.beams[0].steps and pair is not None
    assert 0.0 <= pair.p_lf0 <= 1.0
    assert pair.lf0.sum_logprob < 0 and pair.lf1.sum_logprob < 0


def _long_prompt() -> str:
    """A prompt past 256 tokens (llama.cpp's attention takes another path for one token alone
    over that many cells) whose tail the previous prompt shares (prefix reuse)."""
    examples = "".join(f"Human: the cat {v} the dog\nComputer: exists x . exists y . cat(x) AND dog(y) AND {v}(x, y)\n"
                       for v in ("chased", "saw", "observed", "heard", "watched", "spotted", "noticed", "followed",
                                 "liked", "held", "pushed", "called"))
    return examples + "Human: the dog chased the cat\nComputer:"


#: Sequence counts of one step call: one (padded), each count of one call, two and three calls and
#: their edges (7, 8, 14, 15), the blocked path's sizes (8–63, 64 and more, all split), up to 100.
STEP_COUNTS = (*range(1, 14), 15, 16, 17, 31, 32, 33, 40, 59, 60, 61, 62, 63, 64, 65, 100)


def test_a_rows_log_probs_do_not_depend_on_how_many_sequences_share_its_call() -> None:
    """llama.cpp's CPU kernels take other paths (other float sums) for one token alone, from 8
    and from 64 tokens in a call.  Every call of one token per sequence holds 2 to 7 tokens (a
    padding row for one, near-equal calls above): every row, to the bit, equals the same token
    decoded alone, whether 1 … 100 sequences decode."""
    cells, step = _step_cells()
    try:
        alone = {(0, tok): step([(0, tok)])[0] for tok in range(2000, 2100)}
        for n in STEP_COUNTS:
            rows = [(0, 2000 + k) for k in range(n)]
            for k, row in enumerate(step(rows)):
                assert torch.equal(row, alone[rows[k]]), f"a call of {n} sequences moved row {k}"
    finally:
        cells.close()


def test_rows_of_different_prompts_in_one_call() -> None:
    """Mixed items: the rows of two prompts (of 300 and 170 tokens) alternating in one call, each
    equal to the same token decoded alone, to the bit (on llama.cpp's blocked path this failed by
    0.013 nats at row 10 of 30, one reason that path is not taken)."""
    cells, step = _step_cells()
    try:
        for n in (2, 3, 7, 8, 9, 30):
            rows = [(0 if k % 2 else 201, 2000 + k) for k in range(n)]
            for k, row in enumerate(step(rows)):
                assert torch.equal(row, step([rows[k]])[0]), f"a mixed call of {n} sequences moved row {k}"
    finally:
        cells.close()


def _step_cells() -> tuple[Any, Callable[[list[tuple[int, int]]], list[torch.Tensor]]]:
    """A context holding two prompts (on sequences 0 and 201) and ``step(rows)``: one step in which
    row ``k`` continues prompt ``rows[k][0]`` with token ``rows[k][1]``, its log-probs per row."""
    from amp.parser.backends.llama import shared_gguf

    cells = shared_gguf(_gguf()).cells(n_ctx=4096, n_seq=202, threads=2)
    prompts = {0: list(range(1000, 1300)), 201: list(range(3000, 3170))}
    for seq, toks in prompts.items():
        cells.decode([(seq, 0, toks, False)])

    def step(rows: list[tuple[int, int]]) -> list[torch.Tensor]:
        for k, (src, _tok) in enumerate(rows):
            cells.copy(src, 1 + k)
        out = cells.decode([(1 + k, len(prompts[src]), [tok], True) for k, (src, tok) in enumerate(rows)])
        for k in range(len(rows)):
            cells.free(1 + k)
        cells.release_padding()
        assert all(o is not None and o.shape == (1, cells.gm.n_vocab) for o in out)
        return [o[0] for o in out if o is not None]

    return cells, step


@pytest.mark.slow
@pytest.mark.parametrize("beams", range(1, 11))
def test_forced_log_prob_of_a_beam_equals_its_search_steps(llama_parser: Parser, beams: int) -> None:
    """The search's steps and a forced pass over a beam's tokens are computed identically, at
    every beam count: a dropped beam's cells stay in the cache until the search ends (no hole is
    refilled out of order), and every decode call holds 2 to 7 tokens (a forced pass of one beam
    padded, a longer step split).  Every beam follows the grammar (the oracle)."""
    from transformers import AutoTokenizer

    from amp.parser.models.embedded import DEFAULT_FOLDER

    settings = SearchSettings(beams=beams, max_new_tokens=48)  # greedy needs 43 tokens on PROMPT
    folder = models_dir() / DEFAULT_FOLDER
    oracle = AutoTokenizer.from_pretrained(str(folder)) if (folder / "tokenizer.json").is_file() else None
    for prompt in (PROMPT, _long_prompt()) if beams in (3, 8) else (PROMPT,):  # one short prompt keeps it quick
        result = llama_parser.parse_many([prompt], settings)[0]
        assert len(result.beams) == beams
        assert any(b.finished for b in result.beams)
        if oracle is not None:
            assert_follows_grammar(result, oracle)
        for beam in result.beams:
            if beam.finished:
                steps = llama_parser.backend.beam_steps(prompt, beam, fmt=result.fmt, top_n=llama_parser.top_n,
                                                        constrained=True)
                forced = math.fsum(math.log(s.prob) for s in steps)
                assert forced == pytest.approx(beam.logprob, abs=1e-3), beam.text


@pytest.mark.slow
def test_parse_and_score_equals_its_parts(llama_parser: Parser) -> None:
    """LF0/LF1 scored alongside the search (riders in its batches) and the top beam's steps
    rebuilt from the search's own rows equal the standalone forced passes, to the bit."""
    prompt = _long_prompt()
    lf0 = "exists x . exists y . dog(x) AND cat(y) AND chased(x, y)"
    lf1 = "exists x . exists y . cat(x) AND dog(y) AND chased(y, x)"
    backend = llama_parser.backend
    (result, pair), = backend.parse_and_score([(prompt, lf0, lf1)], fmt="fol", top_n=llama_parser.top_n,
                                               search=SearchSettings(beams=3, max_new_tokens=40))
    alone = backend.score_pairs([(prompt, lf0, lf1)], fmt="fol", top_n=llama_parser.top_n)[0]
    assert pair == alone
    top = result.beams[0]
    assert top.steps == backend.beam_steps(prompt, replace(top, steps=()), fmt="fol", top_n=llama_parser.top_n,
                                           constrained=True)


@pytest.mark.slow
def test_cancel_stops_within_one_step(llama_parser: Parser) -> None:
    backend = llama_parser.backend
    backend.load()
    calls = {"n": 0, "passes_at_cancel": -1}

    def check() -> bool:
        calls["n"] += 1
        decoder = getattr(backend, "_decoder", None)
        if calls["n"] >= 4:
            calls["passes_at_cancel"] = decoder.stats.passes if decoder is not None else 0
            return True
        return False

    with cancel_scope(check), pytest.raises(SearchCancelled):
        backend.parse([PROMPT + " "], fmt="fol", top_n=2, search=SearchSettings(beams=3, max_new_tokens=40))
    assert calls["passes_at_cancel"] >= 1  # the search had started decoding
    assert backend._decoder.stats.passes == calls["passes_at_cancel"]  # nothing decoded after the cancel


def test_every_model_command_takes_the_engine() -> None:
    import argparse

    from amp.cli.model_options import add_model_options, make_parser
    from amp.errors import AmpError
    from amp.parser.backends.llama import LlamaBackend

    ap = argparse.ArgumentParser()
    add_model_options(ap)
    parser = make_parser(ap.parse_args(["--engine", "llama.cpp"]), cache=False)
    assert isinstance(parser.backend, LlamaBackend) and not parser.loaded
    with pytest.raises(AmpError, match="--engine cannot be combined with --server"):
        make_parser(ap.parse_args(["--engine", "llama.cpp", "--server", "http://127.0.0.1:9"]), cache=False)
    with pytest.raises(SystemExit):
        ap.parse_args(["--engine", "vllm"])


@pytest.mark.slow
def test_amp_parse_on_llama_cpp_from_the_command_line(tmp_path: Path) -> None:
    """``amp parse --engine llama.cpp`` as a user runs it: beams, the verdict and the engine in the output."""
    import json
    import os
    import subprocess
    import sys

    prompt = tmp_path / "p.txt"
    prompt.write_text(PROMPT)
    env = {**os.environ, "AMP_CACHE_DIR": str(tmp_path / "cache"), "HF_HUB_OFFLINE": "1"}
    run = subprocess.run([sys.executable, "-m", "amp", "parse", "--engine", "llama.cpp", "--prompt-file", str(prompt),
                          "--beams", "3", "--max-new-tokens", "40", "--lf", LF0, "--lf", LF1, "--json"],
                         cwd=Path(__file__).resolve().parents[2], env=env, capture_output=True, text=True, timeout=300,
                         check=False)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert len(out["result"]["beams"]) == 3 and out["result"]["constrained"]
    assert out["verdict"]["wrote"] in ("lf0", "lf1", "both", "neither")
    assert 0.0 <= out["verdict"]["p_lf0"] <= 1.0
    assert out["dtype"].startswith("llama.cpp-"), out
