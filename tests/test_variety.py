"""Variety you can measure: the duplicate measure, the usage budget, session shapes, closings (issue 12)."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT

from keme.models import Session
from keme.stats import line_diversity, persona_diversity
from keme.synth import realizer, variety
from keme.synth.limits import load_config
from keme.synth.pipeline import synthesize_persona
from keme.synth.variety import QUICK, SHARE, THREAD, Style, Talk, exchange_lines, line_key, split_line
from keme.text import resources
from keme.text.resources import Exchange, ResourceError, load_parts
from keme.text.template import Context, compile_template

THANKS = re.compile(r"thank|thanks|thx|\bty\b|谢谢|谢啦|谢了|多谢|感谢", re.IGNORECASE)


# -- the measure ----------------------------------------------------------------------------------
def test_lines_that_differ_only_in_entities_and_digits_are_near_duplicates():
    texts = ["Paid $12 at Blue Bottle.", "Paid $30 at Verve.", "See you at noon."]
    report = line_diversity(texts, {"Blue Bottle", "Verve"})
    assert (report.near_duplicates, report.exact_duplicates) == (2, 0)
    assert report.top(1) == [("Paid $# at <E>.", 2)]


def test_exact_duplicates_count_every_copy_and_the_largest_count():
    texts = ["ok cool", "ok cool", "ok cool", "what now?"]
    report = line_diversity(texts, set())
    assert (report.exact_duplicates, report.max_exact, report.distinct_lines) == (3, 3, 2)
    assert report.exact_share == pytest.approx(0.75)


def test_an_entity_inside_a_longer_entity_is_replaced_whole():
    report = line_diversity(["Lunch at Shake Shack", "Lunch at Shake"], {"Shake", "Shake Shack"})
    assert report.near_duplicates == 2


def test_budget_key_hides_the_values_a_line_says():
    assert line_key("Filed $12.50 at Verve under Dining", ["$12.50", "Verve", "Dining"]) == (
        "Filed <E> at <E> under <E>"
    )
    assert line_key("see you at 9", []) == "see you at #"


# -- the usage budget -----------------------------------------------------------------------------
def _exchange(u: str, a: str) -> Exchange:
    return Exchange(compile_template(u), compile_template(a))


def _talk(usage: Counter[str], seed: int = 1) -> Talk:
    rng = random.Random(seed)
    style = Style(THREAD, "casual")
    return Talk(resources.get("en").parts, style, rng, usage, "en")


def test_a_line_already_said_is_drawn_again_with_other_words():
    options = (_exchange("Can you log my run?", "Logged."),)
    ctx = Context(lang="en", rng=random.Random(0), persona={})
    usage = Counter({"Can you log my run?": 1, "Logged.": 1})
    talk = _talk(usage)
    lines = exchange_lines(talk, options, ctx)
    assert lines is not None
    assert [line.key for line in lines if usage[line.key]] == []
    assert "Can you log my run?" in lines[0].text and "Logged." in lines[1].text


def test_the_budget_prefers_another_option_before_dressing_the_line():
    options = (_exchange("Log my run?", "Logged."), _exchange("Save today's run?", "Saved."))
    ctx = Context(lang="en", rng=random.Random(0), persona={})
    usage = Counter({"Log my run?": 2, "Logged.": 2})
    lines = exchange_lines(_talk(usage, seed=3), options, ctx)
    assert lines is not None and [line.text for line in lines] == ["Save today's run?", "Saved."]


def test_no_exact_line_is_said_more_than_three_times_in_a_persona_year(year):
    counts = Counter(m.content for s in year.sessions for m in s.messages if m.role != "system")
    assert max(counts.values()) <= 3


def test_a_persona_year_meets_the_near_duplicate_target(year):
    assert persona_diversity(year.view()).near_share <= 0.20


def test_usage_is_carried_by_the_checkpoint(year):
    checkpoint = year.checkpoint()
    assert checkpoint.usage and sum(checkpoint.usage.values()) == sum(
        len([m for m in s.messages if m.role != "system"]) for s in year.sessions
    )


# -- parts ----------------------------------------------------------------------------------------
def _parts_file(tmp_path: Path, bad: str) -> Path:
    good = [f'  - {{text: "part {chr(97 + i)}{chr(97 + j)}"}}' for i in range(6) for j in range(5)]
    kinds = {k: list(good) for k in resources.PART_KINDS}
    kinds["closers"][0] = f'  - {{text: "{bad}"}}'
    path = tmp_path / "parts.yaml"
    path.write_text("".join(f"{k}:\n" + "\n".join(v) + "\n" for k, v in kinds.items()), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "bad", ["see you at 9", "say hi to {social_circle.partner}", "{pool.dishes}", "{date}"]
)
def test_a_part_that_asserts_something_is_rejected(tmp_path, bad):
    with pytest.raises(ResourceError, match="closers"):
        load_parts(_parts_file(tmp_path, bad))


def test_a_part_may_name_the_part_of_day(tmp_path):
    parts = load_parts(_parts_file(tmp_path, "enjoy your {part_of_day}"))
    assert len(parts.by_kind["closers"]) == 30


@pytest.mark.parametrize("lang", resources.LANGUAGES)
def test_each_language_has_many_parts_of_each_kind(lang):
    parts = resources.get(lang).parts
    assert all(len(parts.by_kind[kind]) >= 15 for kind in resources.PART_KINDS)


# -- shapes ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def year():
    return synthesize_persona(0, load_config(ROOT / "configs/year.yaml"))


@pytest.fixture(scope="module")
def demo() -> list[Session]:
    cfg = load_config(ROOT / "configs/demo.yaml")
    return [s for i in range(len(cfg.personas)) for s in synthesize_persona(i, cfg).sessions]


def _shape(session: Session) -> set[str]:
    roles = [m.role for m in session.messages]
    spoken = [r for r in roles if r != "system"]
    found = set()
    if "system" in roles and "assistant" not in roles:
        found.add("share")
    elif len(spoken) <= 5:
        found.add("quick")
    elif len(spoken) >= 12:
        found.add("thread")
    if any(a == b == "user" for a, b in zip(roles, roles[1:])):
        found.add("burst")
    if spoken and session.messages[-1].smalltalk:
        found.add("closer")
    return found


@pytest.mark.parametrize("shape", ["share", "quick", "thread", "burst", "closer"])
def test_each_session_shape_occurs_in_the_demo(demo, shape):
    assert any(shape in _shape(s) for s in demo)


def test_an_app_share_may_have_no_reply_at_all(demo):
    assert any([m.role for m in s.messages] == ["system"] for s in demo)


def test_fewer_than_a_third_of_sessions_end_with_a_thank_you(demo):
    talked = [s for s in demo if any(m.role == "user" for m in s.messages)]
    ending = [
        s for s in talked if any(m.role == "user" and THANKS.search(m.content) for m in s.messages[-2:])
    ]
    assert len(ending) / len(talked) < 1 / 3


def test_sessions_vary_in_length(demo):
    lengths = Counter(len(s.messages) for s in demo)
    assert min(lengths) <= 3 and max(lengths) >= 15 and len(lengths) >= 10


def test_an_app_share_is_never_chosen_when_an_update_or_reveal_is_due():
    rng = random.Random(5)
    shapes = {variety.choose_style(rng, 7, "p01", True, must_talk=True).shape for _ in range(500)}
    assert SHARE not in shapes and {QUICK, THREAD} <= shapes


@pytest.mark.parametrize(
    "style",
    [Style(THREAD, "casual", "drop", 2), Style(QUICK, "polite", "closer", 1), Style(QUICK, "casual", "drop")],
)
def test_update_and_reveal_lines_survive_every_shape(monkeypatch, style):
    """Forcing each shape on a month of synthesis: every announced change and every due reveal is said."""
    revealed: list[tuple[list[str], list[realizer.Draft]]] = []
    real_reveals, real_compose = realizer._reveals, realizer.compose
    due: list[list[str]] = []

    def spy_reveals(*args, **kwargs):
        keys = real_reveals(*args, **kwargs)
        due.append(list(keys))
        return keys

    def spy_compose(*args, **kwargs):
        due.clear()
        drafts = real_compose(*args, **kwargs)
        revealed.append((due[0] if due else [], drafts))
        return drafts

    monkeypatch.setattr(realizer, "_reveals", spy_reveals)
    monkeypatch.setattr(realizer, "compose", spy_compose)
    monkeypatch.setattr(realizer, "choose_style", lambda *a, **k: style)
    cfg = load_config(ROOT / "configs/demo.yaml")
    cfg = cfg.model_copy(update={"personas": [p.model_copy(update={"months": 1}) for p in cfg.personas]})
    for index in range(len(cfg.personas)):
        traj = synthesize_persona(index, cfg)
        for event in traj.graph.events:
            if event.change and event.session_id:
                session = next(s for s in traj.sessions if s.id == event.session_id)
                new = realizer.merged_params(event, traj)
                assert all(
                    any(new[realizer.SET + key] in m.content for m in session.messages)
                    for key in realizer.CHANGES[event.change].attributes
                ), event.id
    assert revealed
    for keys, drafts in revealed:
        linked = {key for d in drafts for key in d.links}
        assert set(keys) <= linked


def test_a_user_line_is_split_at_a_sentence_end_outside_the_values_it_says():
    line = "It says: Pizza in 20 minutes! Save this. Can you keep it?"
    assert split_line(line, "en") == ("It says: Pizza in 20 minutes!", "Save this. Can you keep it?")
    quoted = "Pizza in 20 minutes! Save this."
    assert split_line(line, "en", (quoted,)) == (
        "It says: Pizza in 20 minutes! Save this.",
        "Can you keep it?",
    )


def test_a_user_line_whose_only_sentence_ends_are_inside_a_value_is_not_split():
    assert (
        split_line("Saved: Pizza in 20 minutes! Save this.", "en", ("Pizza in 20 minutes! Save this.",))
        is None
    )
