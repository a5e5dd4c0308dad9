"""The classic-sentences demo pack: built in one command, imported offline (issue #11 point 7)."""

from __future__ import annotations

from pathlib import Path

import pytest

from amp.cache import ResultCache
from amp.cli import main
from amp.parser import Parser
from amp.prompts import mixed_prompt, zero_shot_prompt
from amp.teaching import classics, lesson
from amp.teaching.demo_pack import import_pack
from amp.teaching.lesson_prompt import LessonPrompt, LessonPromptKind


def test_every_classic_sentence_is_a_pool_sentence_and_every_type_is_there() -> None:
    pairs = classics.classic_pairs()
    assert [p.surface for p in pairs] == list(classics.CLASSIC_SENTENCES)
    assert {p.type for p in pairs} == {"pp", "scope", "revscope", "bound", "conj"}


def test_an_unknown_sentence_is_named() -> None:
    with pytest.raises(classics.ClassicsError, match="'I saw her duck'"):
        classics.classic_pairs(["every man saw a woman", "I saw her duck"])


def test_the_pack_holds_what_the_pages_read_and_replays_without_the_model(saved_tiny_model: Path,
                                                                         tmp_path: Path) -> None:
    home = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "home"))
    recipe = classics.PackRecipe(("every man saw a woman", "Marie saw Ada and she waved"), k=2)  # a short context
    seen: list[tuple[int, int, str]] = []
    info = classics.build_classic_pack(home, tmp_path / "classic.zip", recipe,
                                       progress=lambda d, n, s: seen.append((d, n, s)))
    assert seen[0] == (0, 2, "every man saw a woman") and seen[-1] == (2, 2, "")
    assert info.entry_count > 0 and not info.missing and info.models == (home.identity,)

    school = ResultCache(tmp_path / "school")
    import_pack(tmp_path / "classic.zip", school)
    offline = Parser(str(saved_tiny_model), device="cpu", cache=school)
    for surface in recipe.sentences:
        pair = classics.classic_pairs([surface])[0]
        # the Presentation's reveal and the poll's model P(LF0) under either lesson prompt, cached
        for choice in (LessonPrompt(k=2), LessonPrompt(LessonPromptKind.ZERO_SHOT)):
            assert lesson.model_p_lf0(offline, surface, choice) == lesson.model_p_lf0(home, surface, choice)
        for prompt in (zero_shot_prompt(pair), mixed_prompt(pair, 0.3, seed=0, k=2)):
            text = prompt.render()
            assert offline.cached_parse(text) is not None
            assert offline.cached_pair(text, pair.lf0.lf, pair.lf1.lf) is not None
    assert not offline.loaded  # everything came from the pack


def test_the_command_writes_the_pack_and_refuses_unknown_sentences(saved_tiny_model: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "pack.zip"
    assert main(["demo-pack", "--out", str(out), "--model", str(saved_tiny_model), "--device", "cpu",
                 "--no-mixed", "--sentence", "every man saw a woman"]) == 0
    assert out.is_file() and "wrote" in capsys.readouterr().out
    assert main(["demo-pack", "--out", str(out), "--model", str(saved_tiny_model),
                 "--sentence", "I saw her duck"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "I saw her duck" in err and "Traceback" not in err
    assert main(["demo-pack", "--out", str(tmp_path / "no" / "such" / "pack.zip")]) == 2


def test_own_sentences_go_into_the_pack_with_their_results(saved_tiny_model: Path, tmp_path: Path) -> None:
    """An own sentence is inspected under its default mixed prompt with its own words; the pack
    carries the sentence, and the classroom computer answers from it without the model."""
    from amp.teaching.own_library import OwnLibrary
    from tests.teaching.test_lesson_own import DUCK

    home = Parser(str(saved_tiny_model), device="cpu", cache=ResultCache(tmp_path / "home"))
    recipe = classics.PackRecipe(("every man saw a woman",), mixed=False, k=2, own=(DUCK,))
    seen: list[tuple[int, int, str]] = []
    info = classics.build_classic_pack(home, tmp_path / "own.zip", recipe, progress=lambda d, n, s: seen.append((d, n, s)))
    assert [s for _, _, s in seen] == ["every man saw a woman", DUCK.surface, ""] and seen[-1][:2] == (2, 2)
    assert info.own_sentences == (DUCK.surface,) and "1 own sentence(s)" in info.note

    school, library = ResultCache(tmp_path / "school"), OwnLibrary(tmp_path / "school-own.json")
    assert import_pack(tmp_path / "own.zip", school, library=library).own_added == (DUCK.surface,)
    offline = Parser(str(saved_tiny_model), device="cpu", cache=school)
    prompt = DUCK.prompt("mixed", k=2)
    assert offline.cached_parse(prompt.render(), words=DUCK.words) is not None
    assert offline.cached_pair(prompt.render(), DUCK.lf0, DUCK.lf1, words=DUCK.words) is not None
    assert library.get(DUCK.surface) == DUCK and not offline.loaded


def test_the_command_takes_own_sentences_by_name_or_all(saved_tiny_model: Path, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    import zipfile

    from amp.teaching.own_library import OwnLibrary
    from tests.teaching.test_lesson_own import DUCK

    monkeypatch.setenv("AMP_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("AMP_OWN_SENTENCES", str(tmp_path / "own.json"))
    OwnLibrary().add(DUCK)
    out = tmp_path / "pack.zip"
    assert main(["demo-pack", "--out", str(out), "--model", str(saved_tiny_model), "--device", "cpu",
                 "--sentence", "I saw her duck", "--k", "2"]) == 0  # a short context
    said = capsys.readouterr().out
    assert "0 sentence(s) and 1 own sentence(s)" in said
    assert "own_sentences.json" in zipfile.ZipFile(out).namelist()
    assert main(["demo-pack", "--out", str(out), "--model", str(saved_tiny_model), "--device", "cpu",
                 "--sentence", "nobody wrote this"]) == 2
    assert "nobody wrote this" in capsys.readouterr().err
