"""Text that fits its moment (issue 12): wishes for a part of the day that is not the message's, an
in-person charge while the schedule has the persona away or at the office, a trip too short for how far
it goes. Each test feeds the checker a world with the defect and expects the rule's finding."""

from __future__ import annotations

import pytest
from test_world_check import END, START, at, event, findings, ids, session, world


@pytest.mark.parametrize(
    ("lang", "when", "text"),
    [
        ("en", at(3, "08:44"), "Alright, that settles it. Have a good evening."),
        ("en", at(3, "21:40"), "Starred and pinned. Enjoy your morning."),
        ("en", at(3, "10:15"), "Great. Enjoy the rest of your afternoon!"),
        ("zh", at(3, "08:30"), "设好了：前一天晚上一次。晚上愉快～"),
        ("zh", at(3, "22:17"), "记好了，放在备忘录最上面了。祝你早上顺利。"),
        ("zh", at(3, "19:05"), "好的，就这样。中午好"),
    ],
)
def test_a_wish_for_another_part_of_the_day_is_named(lang, when, text):
    view = world(
        lang,
        [event("p01-c01-e01", "mood_checkin", START, END)],
        [session("p01-s0001", "p01-c01-e01", [("user", when, text)], lang)],
    )
    assert ids(findings(view, "calendar")) == [["p01-s0001-m01"]]


@pytest.mark.parametrize(
    ("lang", "when", "text"),
    [
        ("en", at(3, "20:29"), "Great. That's all for now. Enjoy your evening!"),
        ("en", at(3, "08:52"), "Good. Nothing else for now. Have a good morning."),
        ("en", at(3, "08:10"), "Remind me tomorrow to have a good evening planned for Elena."),
        ("zh", at(3, "22:17"), "在快递App里可以直接联系快递员改派。晚上愉快～"),
        ("zh", at(3, "09:10"), "好，祝你上午顺利。"),
    ],
)
def test_a_wish_for_the_part_of_the_day_it_is_passes(lang, when, text):
    view = world(
        lang,
        [event("p01-c01-e01", "mood_checkin", START, END)],
        [session("p01-s0001", "p01-c01-e01", [("user", when, text)], lang)],
    )
    assert findings(view, "calendar") == []
