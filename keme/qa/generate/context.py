"""The state every generator shares: the persona's world, its phrasing, the seeded random stream, and
how dates and months are said.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import date, datetime

from keme.qa import draft as d
from keme.qa.facts import Fact, World
from keme.qa.phrasing import Phrasing
from keme.text import lang as fmt


@dataclass
class Gen:
    world: World
    say: Phrasing
    rng: random.Random
    mid_share: float
    # each chapter's recap points (keme.qa.generate.episode.recap_points), found once: a month's recap
    # takes the other months' as its wrong options
    recaps: dict[str, list] = field(default_factory=dict)

    @property
    def lang(self) -> str:
        return self.world.lang

    def day(self, when: datetime | date) -> str:
        return fmt.format_date(
            when if isinstance(when, date) and not isinstance(when, datetime) else when.date(), self.lang
        )

    def period(self, start: date, end: date) -> str:
        """A chapter's span as its title names it (a month, or the dates of half a month)."""
        return fmt.period_name(start, end, self.lang)

    def month(self, start: date) -> str:
        return (
            f"{start.year}年{start.month}月"
            if self.lang == "zh"
            else f"{fmt.MONTHS_EN[start.month - 1]} {start.year}"
        )

    def by_assistant(self, fact: Fact) -> bool:
        """Whether the assistant, not the user or an app, stated the fact: it answers nothing about the
        user ("which food did I want to try" is not what the assistant suggested)."""
        return self.world.messages[fact.message_id].role == "assistant"

    def when(self, last: datetime, until: datetime | None = None) -> datetime | None:
        return d.ask_time(self.rng, self.world, last, self.mid_share, until)
