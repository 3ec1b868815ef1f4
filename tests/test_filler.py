"""Filler sessions (haystack.tokens): the size they reach, how they are marked, and the proof that they
state nothing a question depends on."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from keme.cli import synthesize_dataset
from keme.config import HaystackSpec
from keme.dataset import Dataset
from keme.errors import SynthesisError
from keme.models import Session
from keme.qa.haystack import filler_problems
from keme.synth.filler import line_problem, persona_tokens, problems
from keme.synth.pipeline import synthesize_persona
from keme.text.filler import Mentions, load_filler, vocabulary
from keme.validate import check_filler, validate
from keme.world.cues import load_cues
from tests.conftest import small_config

HAYSTACK = "haystack: {tokens: 60000}\n"
TWO_LANGUAGES = (
    "name: hay\nseed: 7\npersonas:\n  - {language: en, start: 2026-05-01, months: 2}\n"
    "  - {language: zh, start: 2026-05-01, months: 2}\nhaystack: {tokens: 60000}\n"
)


@pytest.fixture(scope="module")
def hay(tmp_path_factory) -> Path:
    """Two personas (en, zh) of two months each, buried in 60k tokens apiece."""
    from keme.synth.limits import parse_config

    out = tmp_path_factory.mktemp("hay") / "d"
    synthesize_dataset(parse_config(TWO_LANGUAGES, "<test>"), out)
    return out


def _filler(data: Dataset) -> list[Session]:
    return [s for s in data.sessions if s.filler]


# ---------------------------------------------------------------- the banks
@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_line_of_the_bank_keeps_the_filler_contract(lang):
    assert problems(lang) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_bank_holds_no_sentence_twice(lang):
    bank = load_filler(lang)
    sentences = [t for where, t in bank.lines() if ".answer[" in where]
    assert len(sentences) == len(set(sentences))


@pytest.mark.parametrize(
    ("text", "user", "why"),
    [
        ("How long does it take to boil 2 litres of water?", True, "digit"),
        ("What should my sister pack for a hike?", True, "about the user"),
        ("Good morning! How do tides work?", True, "time of day"),
        ("Tell me how to cook mushroom risotto.", True, "persona vocabularies"),
        ("Most of the heat escapes from the lid.", False, None),
    ],
)
def test_a_line_is_refused_for_what_it_would_state(text, user, why):
    words = Mentions(vocabulary("en"), "en")
    found = line_problem(text, user, "en", load_cues("en"), words)
    assert (found is None) if why is None else (why in found)


def test_mentions_tell_a_name_from_a_word():
    words = Mentions({"Target", "mushroom risotto"}, "en")
    assert words.find("We went to Target.") == "Target"
    assert words.find("Aim at the target.") is None
    assert words.find("A Mushroom Risotto needs stock.") == "Mushroom Risotto"


def test_chinese_mentions_match_latin_names_as_whole_words():
    words = Mentions({"ent", "公司"}, "zh")
    assert words.find("给 element 加样式") is None
    assert words.find("到公司了") == "公司"


# ---------------------------------------------------------------- synthesis
def test_filler_brings_each_persona_to_the_target_size(hay):
    data = Dataset.load(hay)
    for view in data.views():
        tokens = persona_tokens(view.sessions)
        longest = max(persona_tokens([s]) for s in view.sessions if s.filler)
        assert 60_000 <= tokens < 60_000 + longest


def test_filler_is_marked_and_states_no_claim(hay):
    data = Dataset.load(hay)
    filler = _filler(data)
    said_in_filler = {m.id for s in filler for m in s.messages}
    assert filler and all(s.pattern == "filler" and s.anchor_id is None for s in filler)
    assert all(m.smalltalk and not m.claims and not m.images for s in filler for m in s.messages)
    assert not [c for c in data.claims if c.message_id in said_in_filler]


def test_filler_is_written_in_the_persona_language(hay):
    data = Dataset.load(hay)
    for session in _filler(data):
        han = sum(bool(re.search(r"[\u4e00-\u9fff]", m.content)) for m in session.messages)
        assert session.language == ("zh" if han else "en")


def test_a_persona_session_is_written_without_the_filler_key(hay):
    lines = (hay / "sessions.jsonl").read_text(encoding="utf-8").splitlines()
    own = [json.loads(line) for line in lines if '"pattern":"filler"' not in line]
    assert own and all("filler" not in record for record in own)


def test_the_dataset_with_filler_validates(hay):
    assert [str(v) for v in validate(hay)] == []


def test_questions_cite_filler_only_when_they_ask_about_the_chats(hay):
    data = Dataset.load(hay)
    said_in_filler = {m.id for s in _filler(data) for m in s.messages}
    for item in data.qa:
        if set(item.evidence) & said_in_filler:
            assert all(q.aggregate == "sessions" and not q.where for q in item.queries), item.id


def test_filler_is_the_same_on_every_run():
    cfg = small_config(HAYSTACK)
    first = [s.model_dump_json() for s in synthesize_persona(0, cfg).sessions]
    assert first == [s.model_dump_json() for s in synthesize_persona(0, cfg).sessions]


def test_a_config_without_filler_keeps_its_fingerprint():
    cfg = small_config()
    explicit = cfg.model_copy(update={"haystack": HaystackSpec(tokens=None)})
    assert cfg.fingerprint() == explicit.fingerprint()
    assert cfg.fingerprint() != small_config(HAYSTACK).fingerprint()


def test_a_target_the_bank_cannot_reach_is_an_error():
    cfg = small_config("haystack: {tokens: 5000000}\n").model_copy(
        update={"personas": [small_config().personas[0].model_copy(update={"months": 1})]}
    )
    with pytest.raises(SynthesisError, match="haystack.tokens"):
        synthesize_persona(0, cfg)


def test_a_persona_that_reaches_the_target_alone_gets_no_filler():
    traj = synthesize_persona(0, small_config("haystack: {tokens: 1000}\n"))
    assert not [s for s in traj.sessions if s.filler]


# ---------------------------------------------------------------- the proof breaks on tampering
def _tampered(hay: Path, change) -> list[str]:
    data = Dataset.load(hay)
    view = data.views()[0]
    change(view)
    return [what for _, what in filler_problems(view)]


def _first_filler_user_message(view):
    return next(m for s in view.sessions if s.filler for m in s.messages if m.role == "user")


def test_the_proof_finds_a_persona_name_said_in_filler(hay):
    def change(view):
        _first_filler_user_message(view).content += f" Ask {view.persona.name} too."

    assert any("names" in what for what in _tampered(hay, change))


def test_the_proof_finds_filler_cited_as_evidence(hay):
    def change(view):
        item = next(q for q in view.qa if not all(x.aggregate == "sessions" for x in q.queries))
        item.evidence.append(_first_filler_user_message(view).id)

    assert any("cites filler" in what for what in _tampered(hay, change))


def test_the_proof_finds_a_user_speaking_of_themselves_in_filler(hay):
    def change(view):
        _first_filler_user_message(view).content = "My knee hurts, what should I do?"

    assert any("speaks about the user" in what for what in _tampered(hay, change))


def test_the_proof_finds_a_digit_in_filler(hay):
    def change(view):
        _first_filler_user_message(view).content += " Give 3 options."

    assert any("digit" in what for what in _tampered(hay, change))


def test_validate_reports_filler_problems_by_kind(hay):
    data = Dataset.load(hay)
    _first_filler_user_message(data.views()[0]).content += " Give 3 options."
    assert [(v.check, v.where) for v in check_filler(data)] == [
        ("filler", _first_filler_user_message(data.views()[0]).id)
    ]


# ---------------------------------------------------------------- the million-token config
@pytest.mark.slow
def test_the_million_token_year_synthesizes_and_validates(root, tmp_path):
    from keme.synth.limits import load_config

    cfg = load_config(root / "configs/year-1m.yaml")
    out = tmp_path / "year-1m"
    synthesize_dataset(cfg, out)
    data = Dataset.load(out)
    assert 1_000_000 <= persona_tokens(data.sessions) < 1_010_000
    assert [str(v) for v in validate(out)] == []
