"""Which reveal lines a session may say of a persona fact, by their declared speech act (keme.synth.acts),
and the act declared on every reveal line of both languages."""

from __future__ import annotations

import pytest

from keme.synth.acts import speakable
from keme.text.resources import Exchange, get
from keme.text.template import compile_template


def exchange(user: str, act: str | None) -> Exchange:
    return Exchange(compile_template(user), compile_template("Noted."), act=act)


TELL = exchange("For future reference: I'm allergic to {value}.", "tell")
REQUEST = exchange("can you remind me to tell the new dentist I'm allergic to {value}?", "request")
MENTION = exchange("My brother never remembers my {value} allergy. Every. Single. Holiday.", "mention")
OPTIONS = (TELL, REQUEST, MENTION)


def never(_: Exchange) -> bool:
    return False


def test_a_fact_not_told_yet_is_told_or_asked_about_never_mentioned_as_known():
    assert speakable(OPTIONS, told=False, said=never) == (TELL, REQUEST)


def test_a_told_fact_is_not_told_again():
    assert TELL not in speakable(OPTIONS, told=True, said=never)


def test_a_told_fact_may_be_mentioned_in_passing():
    assert speakable(OPTIONS, told=True, said=never) == (REQUEST, MENTION)


def test_a_request_asked_before_is_not_asked_again():
    assert REQUEST not in speakable(OPTIONS, told=True, said=lambda ex: ex is REQUEST)


def test_a_mention_said_before_is_not_said_again():
    assert speakable(OPTIONS, told=True, said=lambda ex: ex is not TELL) == ()


def test_a_line_without_an_act_is_not_restricted():
    plain = exchange("craving {value} food so bad rn", None)
    assert speakable((plain,), told=True, said=lambda ex: True) == (plain,)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_every_reveal_line_declares_an_act_and_every_fact_can_be_told(lang):
    res = get(lang)
    for key, options in res.reveals.items():
        assert all(ex.act in ("tell", "request", "mention") for ex in options), key
        assert any(ex.act == "tell" for ex in options), key
