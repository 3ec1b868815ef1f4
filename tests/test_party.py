"""An occasion's party agrees with the note it holds: "Cabin $884 total, split 4 ways" in a session with
"2 people" was the defect (keme/world/party.py, used by the planner)."""

from __future__ import annotations

from datetime import date, datetime

import pytest

from keme.models import Anchor, Event
from keme.models.anchor import NoteRecord
from keme.synth.grounder import count_the_note
from keme.world.cues import load_cues
from keme.world.party import record_party, with_party

BODY = {
    "en": "Cabin $884 total, split 4 ways\nGroceries: I paid $120",
    "zh": "民宿一共¥2400，四个人AA\n买菜我垫了¥180",
}
MEAL = {
    "en": {"party_size": "2", "budget_per_person": "$40", "dinner_total": "$83"},
    "zh": {"party_size": "2", "budget_per_person": "¥120", "dinner_total": "¥250"},
}


def note(aid: str, when: str, body: str) -> Anchor:
    return Anchor(
        id=aid,
        persona_id="p01",
        app="note",
        app_name="Notes",
        timestamp=datetime.fromisoformat(when),
        record=NoteRecord(title="trip", body=body),
    ).sealed()


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_note_naming_a_split_sets_the_head_count_of_the_occasion_it_falls_in(lang):
    anchors = [note("p01-a001", "2026-05-09T20:00", BODY[lang])]
    assert record_party(anchors, date(2026, 5, 8), date(2026, 5, 10), load_cues(lang)) == 4


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_note_outside_the_occasions_days_sets_nothing(lang):
    anchors = [note("p01-a001", "2026-05-20T20:00", BODY[lang])]
    assert record_party(anchors, date(2026, 5, 8), date(2026, 5, 10), load_cues(lang)) is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_note_naming_no_split_sets_nothing(lang):
    anchors = [
        note("p01-a001", "2026-05-09T20:00", "Groceries: eggs, milk" if lang == "en" else "买菜：鸡蛋、牛奶")
    ]
    assert record_party(anchors, date(2026, 5, 8), date(2026, 5, 10), load_cues(lang)) is None


@pytest.mark.parametrize(("lang", "total"), [("en", "$160"), ("zh", "¥480")])
def test_the_dinner_bill_follows_the_head_count(lang, total):
    params = with_party(MEAL[lang], 4, lang)
    assert params["party_size"] == "4" and params["dinner_total"] == total
    assert params["budget_per_person"] == MEAL[lang]["budget_per_person"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_occasion_stretched_over_a_note_takes_the_note_s_head_count(lang):
    """3 personas x 24 months, seed 0: a welcome-back dinner for 7 was stretched by the grounder to take a
    note "split 6 ways" dated after its window, and said both."""
    dinner = Event(
        id="p01-c01-e01",
        parent_id="p01-c01",
        depth=1,
        kind="social",
        title="dinner",
        summary="",
        start=datetime(2026, 5, 1),
        end=datetime(2026, 5, 10, 23, 59),
        params=MEAL[lang] | {"party_size": "7"},
    )
    count_the_note(dinner, [note("p01-a001", "2026-05-09T20:00", BODY[lang])], lang)
    assert dinner.params["party_size"] == "4"
    assert dinner.params["dinner_total"] == with_party(MEAL[lang], 4, lang)["dinner_total"]
