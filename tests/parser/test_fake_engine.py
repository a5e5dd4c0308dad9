"""A third engine is one module and one registry line (issue #39 item 1): the ``fake`` engine of
``fake_engine.py``, registered here, is a choice of every model command's ``--engine`` and a command
runs on it, the app's sidebar offers it and a page parses with it, and the parser service accepts it
and its replica builds its backend — while the registry keeps answering for the built-in engines."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import fake_engine
import pytest

from amp.cli import build_parser, main
from amp.parser import engines
from amp.parser.backend import Backend
from amp.parser.core.errors import ModelLoadError, UnknownEngine

REPO = Path(__file__).resolve().parents[2]
if str(REPO) not in sys.path:  # the AppTest below imports ui/ from this process
    sys.path.insert(0, str(REPO))

PROMPT = "Human: every boy saw a cat\nComputer:\n"


@pytest.fixture
def fake() -> Iterator[str]:
    """The ``fake`` engine, registered for the test and removed afterwards."""
    engines.register_engine(fake_engine.ENTRY)
    try:
        yield fake_engine.NAME
    finally:
        engines.unregister_engine(fake_engine.NAME)


def test_the_registry_names_checks_and_builds_it(fake: str) -> None:
    assert engines.engine_names() == ("transformers", "llama.cpp", fake)
    assert engines.check_engine(" FAKE ") == fake
    assert engines.capabilities(fake) == fake_engine.CAPABILITIES
    backend = engines.local_backend("default", engine=fake)
    assert isinstance(backend, fake_engine.FakeBackend) and isinstance(backend, Backend)
    assert backend.capabilities().engine == fake
    with pytest.raises(ModelLoadError, match="runs on the CPU here, not cuda; drop --device cuda or use "
                                                     "--engine transformers"):
        engines.local_backend("default", engine=fake, device="cuda")
    with pytest.raises(ModelLoadError, match="own precision, not int8 quantisation; drop --dtype or use "
                                                     "--engine transformers"):
        engines.local_backend("default", engine=fake, dtype="int8")
    with pytest.raises(ValueError, match="registered already"):
        engines.register_engine(fake_engine.ENTRY)


def test_it_is_gone_after_unregistering() -> None:
    engines.register_engine(fake_engine.ENTRY)
    engines.unregister_engine(fake_engine.NAME)
    assert fake_engine.NAME not in engines.engine_names()
    with pytest.raises(UnknownEngine, match="unknown engine 'fake'; use one of transformers, llama.cpp$"):
        engines.check_engine("fake")
    with pytest.raises(ValueError, match="built-in"):
        engines.unregister_engine("transformers")


def test_it_is_a_cli_choice_and_a_command_runs_on_it(fake: str, tmp_path: Path,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    parse_command = build_parser()._subparsers._group_actions[0].choices["parse"]  # type: ignore[union-attr]
    (engine_option,) = [a for a in parse_command._actions if "--engine" in a.option_strings]
    assert engine_option.choices == ("transformers", "llama.cpp", fake)
    prompt = tmp_path / "prompt.txt"
    prompt.write_text(PROMPT, encoding="utf-8")
    assert main(["parse", "--engine", fake, "--prompt-file", str(prompt), "--beams", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dtype"] == fake and out["identity"] == f"{fake}:default"
    assert [b["text"] for b in out["result"]["beams"]] == list(fake_engine.BEAMS)
    # a named engine is used as named, even where the default rule's would be swapped for --unconstrained
    assert main(["parse", "--engine", fake, "--unconstrained", "--prompt-file", str(prompt)]) == 0
    assert fake_engine.BEAMS[0] in capsys.readouterr().out


def test_the_sidebar_offers_it_and_a_page_parses_with_it(fake: str, saved_tiny_model: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from ui.model import parsers

    monkeypatch.setenv("AMP_MODEL", str(saved_tiny_model))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    st.cache_resource.clear()
    parsers.clear_loaded()
    at = AppTest.from_file(str(REPO / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception
    engine = at.selectbox(key="engine_choice")
    assert fake in engine.options and engine.value == "transformers"  # $AMP_ENGINE of the test run
    engine.set_value(fake).run()
    assert at.session_state["model_engine"] == fake
    assert not [s for s in at.selectbox if s.key == "precision_choice"]  # it offers no precision
    at.switch_page("views/parse_inspect.py").run()
    at.button(key="pi_parse").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert fake_engine.BEAMS[0] in set(at.dataframe[0].value["LF"])
    assert any(f"{fake} engine" in s.value for s in at.sidebar.success)  # "Loaded · cpu · fake engine"
    st.cache_resource.clear()
    parsers.clear_loaded()


def test_the_service_accepts_it_and_its_replica_builds_its_backend(fake: str, monkeypatch: pytest.MonkeyPatch,
                                                                   tmp_path: Path) -> None:
    from amp.parser.backends.remote import RemoteBackend
    from amp.parser.search.settings import SearchSettings
    from amp.serve import launch
    from amp.serve.work import Work

    monkeypatch.setenv("AMP_ENGINE", "transformers")  # the replicas read the engine from the config, not this
    config = launch.config_from_args(spec="default", device=None, dtype=None, replicas=1, host="127.0.0.1",
                                     port=8600, address=None, token=None, use_cache=False, engine=fake)
    assert config.engine == fake
    work = Work(config)  # what each replica of the service runs (amp.serve.worker.ParserWorker)
    assert isinstance(work.backend, fake_engine.FakeBackend)
    info = work.info()
    assert info["capabilities"] == fake_engine.CAPABILITIES.to_dict() and info["runtime"]["dtype"] == fake
    (answer,) = work.parse([{"prompts": [PROMPT], "fmt": "fol", "top_n": 2,
                             "search": SearchSettings(beams=2).as_dict()}])
    assert [b["text"] for b in answer["results"][0]["beams"]] == list(fake_engine.BEAMS)
    # a client of that service learns what its engine can do from /v1/info (without gradients: weights stay there)
    client = RemoteBackend("http://127.0.0.1:9")
    monkeypatch.setattr(client, "request", lambda method, path, body=None, *, timeout_s=None: info)
    assert client.capabilities() == replace(fake_engine.CAPABILITIES, gradients=False)
    assert client.capabilities().batch_size == 3
    with pytest.raises(UnknownEngine, match="unknown engine 'nope'"):
        launch.config_from_args(spec="default", device=None, dtype=None, replicas=1, host="127.0.0.1",
                                port=8600, address=None, token=None, engine="nope")
