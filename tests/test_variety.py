"""Variety you can measure: the duplicate measure, the usage budget, session shapes, closings (issue 12)."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pytest
from conftest import ROOT

from keme.models import Session
from keme.stats import persona_repetition
from keme.synth import realizer, variety
from keme.synth.limits import load_config
from keme.synth.pipeline import synthesize_persona
from keme.synth.said import SAID
from keme.synth.variety import QUICK, SHARE, THREAD, Style, Talk, exchange_lines, line_key, split_line
from keme.text import resources
from keme.text.resources import Exchange, ResourceError, load_parts
from keme.text.template import Context, compile_template

THANKS = re.compile(r"thank|thanks|thx|\bty\b|谢谢|谢啦|谢了|多谢|感谢", re.IGNORECASE)


# -- the budget key (the measure itself: tests/test_repetition.py) -----------------------------------
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
    assert (
        "can you log my run?" in lines[0].text.lower() and "Logged." in lines[1].text
    )  # a lead-in may lower it


def test_a_dressed_line_keeps_its_body_and_template_for_the_bodies_figure():
    options = (_exchange("Can you log my run?", "Logged."),)
    ctx = Context(lang="en", rng=random.Random(0), persona={})
    usage = Counter({"Can you log my run?": 1, "Logged.": 1})  # said before: small talk dresses it
    lines = exchange_lines(_talk(usage), options, ctx)
    assert lines is not None and lines[0].text != "Can you log my run?"
    assert [(line.body, line.source) for line in lines] == [
        ("Can you log my run?", "Can you log my run?"),
        ("Logged.", "Logged."),
    ]


def test_the_budget_prefers_another_option_before_dressing_the_line():
    options = (_exchange("Log my run?", "Logged."), _exchange("Save today's run?", "Saved."))
    ctx = Context(lang="en", rng=random.Random(0), persona={})
    usage = Counter({"Log my run?": 2, "Logged.": 2})
    lines = exchange_lines(_talk(usage, seed=3), options, ctx)
    assert lines is not None and [line.text for line in lines] == ["Save today's run?", "Saved."]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_persona_year_meets_the_sentence_repetition_target(lang, year):
    """Issue 36: a sentence of >= 6 words (Chinese: a clause of >= 6 characters), the persona's names and
    numbers masked, is said again <= 10 % of the time by the user and <= 20 % by the assistant over a
    year, and no sentence more than 5 times."""
    if lang == "en":
        view = year.view()
    else:
        cfg = load_config(ROOT / "configs/year.yaml")
        cfg.personas[0].language = "zh"
        view = synthesize_persona(0, cfg).view()
    user, assistant = persona_repetition(view, "user"), persona_repetition(view, "assistant")
    assert user.again_share <= 0.10 and assistant.again_share <= 0.20
    assert max(user.most[1], assistant.most[1]) <= 5


def test_usage_is_carried_by_the_checkpoint(year):
    checkpoint = year.checkpoint()
    lines = {k: n for k, n in checkpoint.usage.items() if not k.startswith(SAID)}  # said memory apart
    assert lines and sum(lines.values()) == sum(
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


def test_an_app_share_may_have_no_reply_at_all(year):
    """A year has several (the demo's two three-month personas may have none by chance)."""
    assert any([m.role for m in s.messages] == ["system"] for s in year.sessions)


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


# -- where parts go -------------------------------------------------------------------------------
def _polite_talk(lang: str, seed: int, part_of_day: str) -> Talk:
    return Talk(
        resources.get(lang).parts, Style(THREAD, "polite"), random.Random(seed), Counter(), lang, part_of_day
    )


@pytest.mark.parametrize(("lang", "part"), [("en", "evening"), ("zh", "晚上")])
def test_a_wish_for_the_day_ends_only_the_last_message(lang, part):
    wishes = {p.template.source for p in resources.get(lang).parts.by_kind["offers"] if p.at == "end"}
    assert wishes, "the offers hold wishes tagged at: end"
    for seed in range(60):
        talk = _polite_talk(lang, seed, part)
        assert talk.pick("offers").template.source not in wishes
    chosen = set()
    for seed in range(200):
        talk = _polite_talk(lang, seed, part)
        talk.final = True
        chosen.add(talk.pick("offers").template.source)
    assert chosen & wishes


@pytest.mark.parametrize(("lang", "part"), [("en", "morning"), ("zh", "早上")])
def test_a_greeting_is_only_the_first_reply(lang, part):
    greetings = {p.template.source for p in resources.get(lang).parts.by_kind["acks"] if p.at == "start"}
    assert greetings
    for seed in range(60):
        talk = _polite_talk(lang, seed, part)
        talk.opened = True
        assert talk.pick("acks").template.source not in greetings


def test_one_more_question_leads_only_a_question_and_is_never_an_opener():
    parts = resources.get("en").parts
    assert not any("one more" in p.template.source.lower() for p in parts.by_kind["openers"])
    for seed in range(80):
        talk = _polite_talk("en", seed, "morning")
        talk.opened = True
        assert "question" not in talk.pick("segues", leads="statement").template.source.lower()


def test_a_closer_of_two_parts_puts_its_wish_last():
    for seed in range(120):
        talk = _polite_talk("en", seed, "evening")
        line = talk.standalone("closers")
        if re.search(r"have a good evening|enjoy your evening", line.text, re.IGNORECASE):
            assert re.search(r"(?:have a good|enjoy your) evening[.!]?$", line.text, re.IGNORECASE), line.text


def test_a_follow_up_is_sent_last_before_the_reply_never_between_two_user_lines():
    for seed in range(40):
        drafts = [
            realizer.Draft("user", "I want to think this through with you"),
            realizer.Draft("user", "Is it smart to move the budget review to Sunday"),
            realizer.Draft("assistant", "Sunday works if you keep it short."),
        ]
        talk = _talk(Counter(), seed)
        realizer._burst(drafts, talk, "en")
        added = [i for i, d in enumerate(drafts) if d.smalltalk]
        assert added == [2], [d.content for d in drafts]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_lead_in_fits_what_it_answers(lang):
    parts = resources.get(lang).parts
    answers_a_question = {
        p.template.source for p in parts.by_kind["acks"] if p.after in ("question", "request")
    }
    answers_a_statement = {p.template.source for p in parts.by_kind["segues"] if p.after == "statement"}
    assert answers_a_question and answers_a_statement
    for seed in range(60):
        talk = _polite_talk(lang, seed, "morning" if lang == "en" else "早上")
        talk.opened = True
        assert talk.pick("acks", "statement").template.source not in answers_a_question
        assert talk.pick("segues", "question").template.source not in answers_a_statement


@pytest.mark.parametrize(
    ("lang", "line", "kind"),
    [
        ("en", "Can you quiz me on what I covered today?", "request"),
        ("en", "Remind me to call Noah on Sunday.", "request"),
        ("en", "What if it's packed and loud when we get there?", "question"),
        ("en", "I always get really sore and then quit.", "statement"),
        ("zh", "帮我改下简历的自我介绍", "request"),
        ("zh", "领导问我进度，我该怎么回？", "question"),
        ("zh", "今天会太多了，一整天都没时间干正事", "statement"),
    ],
)
def test_a_reply_knows_whether_it_answers_a_request_a_question_or_a_statement(lang, line, kind):
    assert variety.reply_to(line, lang) == kind


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
