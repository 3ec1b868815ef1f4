"""How much a planned graph can hold, so that a config which cannot synthesize is refused when it is loaded
(`keme.synth.limits`).

The root's children are chapters (calendar months; grouped when there are more
months than `graph.max_events`, halved for a one-month trajectory). Every anchor
of a chapter needs a place: a session of its own directly under the chapter, or
(at depth 2) a moment inside an episode. Depth 1 therefore holds at most
`max_events` anchors per chapter. At depth 2 the planner, when the chapter's
anchors need it, plans episodes of two or three moments that take up to
`max_events - 3` anchors each; `chapter_room` is what it can always reach.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from keme.config import GraphSpec, SynthConfig
from keme.days import month_windows
from keme.models.catalog import EPISODE_KINDS
from keme.prior.anchors import build_anchors, most_anchors
from keme.prior.persona import build_persona, trajectory_window
from keme.text import resources

ROOMY_MOMENTS = (
    2  # an episode with this many moments that are never dropped can take anchors down to its leaves
)
ROOMY_PER_KIND = 2  # the planner plans at most two episodes of one kind per chapter


def chapter_windows(start: datetime, end: datetime, max_chapters: int) -> list[tuple[datetime, datetime]]:
    """Calendar months; a one-month trajectory is halved, a long one grouped, to keep 2..max_chapters
    chapters."""
    months = month_windows(start, end)
    if len(months) == 1:
        first, last = months[0]
        middle = datetime.combine((first + (last - first) / 2).date(), time())
        return [(first, middle - timedelta(seconds=1)), (middle, last)]
    group = -(-len(months) // max_chapters)
    return [(months[i][0], months[min(i + group, len(months)) - 1][1]) for i in range(0, len(months), group)]


def roomy_kinds(weights: dict[str, float]) -> list[str]:
    """Episode kinds the planner can add to make room for anchors: two moments at least, positive weight, no
    trip.

    A trip is left out because it only fits around a weekend; `weights` overrides the catalog's weights.
    """
    return [
        kind.name
        for kind in EPISODE_KINDS.values()
        if kind.name != "trip"
        and not kind.requires
        and len(kind.moments) - len(kind.optional) >= ROOMY_MOMENTS
        and weights.get(kind.name, kind.weight) > 0
    ]


def chapter_room(graph: GraphSpec, span_days: int, kinds: list[str]) -> int:
    """The anchors a chapter of `span_days` days can always ground.

    Depth 1: one per child. Depth 2: each child takes one, and up to half the children can be
    episodes of two or three moments (of the `kinds` that fit the chapter) taking `max_events - 3`
    each, one child place less.
    """
    places = graph.max_events
    if graph.max_depth == 1:
        return places
    fitting = [k for k in kinds if EPISODE_KINDS[k].days[0] <= span_days]
    episodes = min(places // 2, ROOMY_PER_KIND * len(fitting))
    return places + episodes * max(0, places - 4)


@dataclass(frozen=True)
class ChapterLoad:
    start: date
    end: date
    most_anchors: int
    room: int

    @property
    def months(self) -> str:
        first, last = f"{self.start:%Y-%m}", f"{self.end:%Y-%m}"
        return first if first == last else f"{first}..{last}"


def chapter_loads(cfg: SynthConfig, index: int, exact: bool = False) -> list[ChapterLoad]:
    """For each chapter of persona `index`: the most anchors it may receive and the most it can ground.

    `exact` draws the persona's anchors for `cfg.seed` (the prior is cheap and deterministic) and counts
    them; otherwise the count is the worst case over all seeds.
    """
    spec = cfg.personas[index]
    start, end = trajectory_window(spec)
    months = [(a.date(), b.date()) for a, b in month_windows(start, end)]
    stamps = []
    if exact:
        res = resources.get(spec.language)
        stamps = [a.timestamp for a in build_anchors(build_persona(spec, index, cfg.seed, res), cfg, res)]
    rates = cfg.anchors.per_month
    kinds = roomy_kinds(cfg.episodes.weights)
    loads = []
    for lo, hi in chapter_windows(start, end, cfg.graph.max_events):
        if exact:
            most = sum(1 for t in stamps if lo <= t <= hi)
        else:  # a month's anchors may all fall in one half of a halved month: count whole months
            most = sum(
                most_anchors(rates, (b - a).days + 1) for a, b in months if a <= hi.date() and b >= lo.date()
            )
        loads.append(
            ChapterLoad(lo.date(), hi.date(), most, chapter_room(cfg.graph, (hi - lo).days + 1, kinds))
        )
    return loads
