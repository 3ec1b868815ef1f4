"""A place is new to the persona only once: "I've never been to {location}" is not said of a place an earlier
calendar entry took the persona to (the checker's calendar rule; the realizer's gate)."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest

from keme.dataset.views import PersonaView
from keme.models import Anchor, CalendarRecord, EventGraph, Message, Persona, Session
from keme.synth.realizer import known_place_gate
from keme.world.catalog import load_catalog
from keme.world.check import check_world
from keme.world.cues import load_cues

PLACE = {"en": "ClearView Eye Care", "zh": "希尔顿酒店三楼宴会厅"}
NEVER = {
    "en": "I've never been to ClearView Eye Care. Anything I should know?",
    "zh": "希尔顿酒店三楼宴会厅在哪儿来着，我没去过",
}
LINE = {
    "en": "I've never been to {location}. Anything I should know?",
    "zh": "{location}在哪儿来着，我没去过",
}


def entry(k: int, lang: str, starts: datetime, place: str | None = None) -> Anchor:
    return Anchor(
        id=f"p01-a{k:03d}",
        persona_id="p01",
        app="calendar",
        app_name="Calendar" if lang == "en" else "日历",
        timestamp=starts - timedelta(days=5),
        record=CalendarRecord(
            title="Eye exam" if lang == "en" else "大学室友的婚礼",
            start=starts,
            end=starts + timedelta(hours=1),
            location=place or PLACE[lang],
            attendees=[],
        ),
    )


def view(lang: str, anchors: list[Anchor], when: datetime, text: str) -> PersonaView:
    message = Message(id="p01-s0001-m01", role="user", content=text, timestamp=when)
    session = Session(
        id="p01-s0001",
        persona_id="p01",
        event_id="p01-c01",
        language=lang,
        pattern="test",
        start=when,
        end=when,
        messages=[message],
    )
    persona = Persona(
        id="p01",
        name="Carlos Wilson" if lang == "en" else "林晓",
        language=lang,
        country="US" if lang == "en" else "CN",
        start=datetime(2026, 1, 1),
        end=datetime(2026, 12, 31, 23, 59),
        dimensions={},
    )
    graph = EventGraph(persona_id="p01", events=[], edges=[])
    return PersonaView(persona, graph=graph, sessions=[session], anchors=anchors)


def calendar_findings(v: PersonaView) -> list[str]:
    found = check_world(v, load_catalog(v.lang), load_cues(v.lang))
    return [f.text for f in found if f.rule == "calendar"]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_never_been_to_a_place_an_earlier_entry_was_at_is_named(lang):
    anchors = [entry(1, lang, datetime(2026, 10, 5, 15)), entry(2, lang, datetime(2026, 12, 1, 15))]
    found = calendar_findings(view(lang, anchors, datetime(2026, 11, 29, 9), NEVER[lang]))
    assert len(found) == 1 and PLACE[lang] in found[0] and "2026-10-05" in found[0]


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_never_been_to_a_new_place_passes(lang):
    anchors = [
        entry(1, lang, datetime(2026, 12, 1, 15)),
        entry(2, lang, datetime(2026, 3, 1), "Elm Street Clinic"),
    ]
    assert calendar_findings(view(lang, anchors, datetime(2026, 11, 29, 9), NEVER[lang])) == []


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_realizer_refuses_a_first_visit_line_for_a_place_already_visited(lang):
    earlier, now = entry(1, lang, datetime(2026, 10, 5, 15)), entry(2, lang, datetime(2026, 12, 1, 15))
    gate = known_place_gate(now, [earlier, now], datetime(2026, 11, 29, 9), lang)
    assert not gate(LINE[lang])
    assert gate("How long will it take to get to {location}?")
    fresh = known_place_gate(now, [now], datetime(2026, 11, 29, 9), lang)
    assert fresh(LINE[lang])
