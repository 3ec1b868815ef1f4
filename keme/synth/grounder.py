"""The grounder: embeds each anchor in the deepest event whose window covers it.

When an event expands, its pending anchors go to the child that covers them: a
leaf takes at most one anchor (its session reports it); an episode carries them
down to its own expansion. If no child covers an anchor, the grounder changes
the graph — it stretches a neighbour or adds a leaf for the anchor — and records
why. Anchors themselves are never changed.
"""

from __future__ import annotations

from datetime import datetime, time, timedelta

from keme.days import BLOCKS, block_window
from keme.errors import NoFit
from keme.models import Anchor, Event, Revision
from keme.models.catalog import ANCHOR_MOMENTS
from keme.synth.context import PlanContext
from keme.synth.planner import next_child_id
from keme.synth.state import Trajectory, is_leaf, slots_of
from keme.synth.where import leaf_allowed
from keme.text.titles import title_and_summary
from keme.world.cues import load_cues
from keme.world.party import record_party, with_party


def _describe(anchor: Anchor) -> str:
    return f"{anchor.id} ({anchor.app}, {anchor.timestamp:%Y-%m-%d %H:%M})"


def _capacity(event: Event, ctx: PlanContext) -> int:
    moments = len([m for m in event.params.get("_moments", "").split(",") if m])
    return ctx.cfg.graph.max_events - moments - len(event.pending_anchors)


def _adjacent_leaf(children: list[Event], anchor: Anchor, traj: Trajectory) -> Event | None:
    """A leaf without anchor whose window, stretched to the anchor's block, overlaps no other leaf."""
    block_lo, block_hi = block_window(*traj.anchor_slot(anchor.id))
    for child in children:
        if not is_leaf(child) or child.anchor_id is not None or child.start.date() != block_lo.date():
            continue
        if child.end.date() != block_lo.date():
            continue
        gap = min(abs((child.start - block_hi).total_seconds()), abs((child.end - block_lo).total_seconds()))
        if gap > 60:
            continue
        if not leaf_allowed(traj, child, traj.anchor_slot(anchor.id)):
            continue
        span = slots_of(min(child.start, block_lo), max(child.end, block_hi))
        if all(traj.occupied.get(slot, child.id) == child.id for slot in span):
            return child
    return None


def _stretch_leaf(leaf: Event, anchor: Anchor, traj: Trajectory, now: datetime) -> None:
    block_lo, block_hi = block_window(*traj.anchor_slot(anchor.id))
    before = f"{leaf.start:%Y-%m-%d %H:%M}..{leaf.end:%H:%M}"
    traj.move_event(leaf, min(leaf.start, block_lo), max(leaf.end, block_hi))
    leaf.anchor_id = anchor.id
    traj.record(
        Revision(
            at=now,
            agent="grounder",
            action="stretch",
            event_id=leaf.id,
            reason=f"anchor {_describe(anchor)} fell in the next day block; stretched the leaf to cover it",
            detail={
                "before": before,
                "after": f"{leaf.start:%Y-%m-%d %H:%M}..{leaf.end:%H:%M}",
                "anchor": anchor.id,
            },
        )
    )


def _add_anchor_leaf(
    parent: Event, anchor: Anchor, traj: Trajectory, ctx: PlanContext, now: datetime
) -> Event:
    start, end = block_window(*traj.anchor_slot(anchor.id))
    prefix = "e" if parent.depth == 0 else "l"
    title, summary = title_and_summary("errand", ctx.lang, {"app_name": anchor.app_name})
    leaf = Event(
        id=next_child_id(traj, parent, prefix),
        parent_id=parent.id,
        depth=parent.depth + 1,
        kind=ANCHOR_MOMENTS[anchor.app],
        title=title,
        summary=summary,
        start=start,
        end=end,
        params={"_episode": "errand"},
        anchor_id=anchor.id,
    )
    traj.add_event(leaf)
    traj.record(
        Revision(
            at=now,
            agent="grounder",
            action="add",
            event_id=leaf.id,
            reason=f"no event of {parent.id} covers anchor {_describe(anchor)}; added a leaf for it",
            detail={"anchor": anchor.id},
        )
    )
    return leaf


def _stretch_episode(episode: Event, anchor: Anchor, traj: Trajectory, now: datetime) -> None:
    before = f"{episode.start:%Y-%m-%d}..{episode.end:%Y-%m-%d}"
    day = anchor.timestamp.date()
    start = min(episode.start, datetime.combine(day, time()))
    end = max(episode.end, datetime.combine(day, time(23, 59, 59)))
    traj.move_event(episode, start, end)
    episode.pending_anchors.append(anchor.id)
    count_the_note(episode, traj.anchors, traj.persona.language)
    traj.record(
        Revision(
            at=now,
            agent="grounder",
            action="stretch",
            event_id=episode.id,
            reason=(
                f"anchor {_describe(anchor)} outside every episode and the graph is full; "
                "stretched the nearest episode"
            ),
            detail={
                "before": before,
                "after": f"{episode.start:%Y-%m-%d}..{episode.end:%Y-%m-%d}",
                "anchor": anchor.id,
            },
        )
    )


def count_the_note(episode: Event, anchors: list[Anchor], lang: str) -> None:
    """A note that says how many were there ("split 6 ways"), taken into an episode with a party after its
    head count was drawn: the episode's head count (and its bill) become what the first such note in its
    new window says, as the planner's would have been had the window been this (keme.world.party)."""
    if "party_size" not in episode.params:
        return
    people = record_party(anchors, episode.start.date(), episode.end.date(), load_cues(lang))
    if people is not None and str(people) != episode.params["party_size"]:
        episode.params = with_party(episode.params, people, lang)


def _move_leaf(leaf: Event, anchor: Anchor, traj: Trajectory, now: datetime) -> None:
    before = f"{leaf.start:%Y-%m-%d %H:%M}"
    start, end = block_window(*traj.anchor_slot(anchor.id))
    traj.move_event(leaf, start, end)
    leaf.anchor_id = anchor.id
    traj.record(
        Revision(
            at=now,
            agent="grounder",
            action="modify",
            event_id=leaf.id,
            reason=(
                f"anchor {_describe(anchor)} outside every event and the graph is full; "
                "moved a planned leaf onto it"
            ),
            detail={"before": before, "after": f"{start:%Y-%m-%d %H:%M}", "anchor": anchor.id},
        )
    )


def ground(parent: Event, traj: Trajectory, ctx: PlanContext, now: datetime) -> None:
    """Hand every pending anchor of a just-expanded `parent` to its children, changing the graph if needed."""
    pending = sorted(parent.pending_anchors, key=lambda a: traj.anchor_by_id[a].timestamp)
    parent.pending_anchors = []
    for anchor_id in pending:
        anchor = traj.anchor_by_id[anchor_id]
        moment = anchor.timestamp
        children = traj.children(parent.id)
        covering = [c for c in children if c.start <= moment <= c.end]
        leaf = next((c for c in covering if is_leaf(c) and c.anchor_id is None), None)
        inner = sorted(
            (c for c in covering if not is_leaf(c) and _capacity(c, ctx) > 0),
            key=lambda c: (len(c.pending_anchors), c.start, c.id),
        )
        if leaf is not None:
            leaf.anchor_id = anchor_id
        elif inner:
            inner[0].pending_anchors.append(anchor_id)
        elif (near := _adjacent_leaf(children, anchor, traj)) is not None:
            _stretch_leaf(near, anchor, traj, now)
        elif len(children) < ctx.cfg.graph.max_events:
            _add_anchor_leaf(parent, anchor, traj, ctx, now)
        else:
            # only an episode with room left can take another anchor down to its own expansion
            episodes = [c for c in children if not is_leaf(c) and _capacity(c, ctx) > 0]
            free_leaves = [c for c in children if is_leaf(c) and c.anchor_id is None and c.state == "planned"]
            # a leaf that can happen at the anchor's time, if there is one
            slot = traj.anchor_slot(anchor_id)
            free_leaves = [c for c in free_leaves if leaf_allowed(traj, c, slot)] or free_leaves

            def distance(c: Event) -> float:
                return min(abs((c.start - moment).total_seconds()), abs((c.end - moment).total_seconds()))

            if episodes:
                _stretch_episode(min(episodes, key=distance), anchor, traj, now)
            elif free_leaves:
                _move_leaf(min(free_leaves, key=distance), anchor, traj, now)
            else:
                raise NoFit(
                    f"{parent.id} already has {len(children)} children, all anchored; "
                    f"anchor {anchor_id} does not fit. "
                    "Raise graph.max_events or lower anchors.per_month in the config."
                )
    _note_compatibility(parent, traj)
    traj.chain_edges(traj.children(parent.id))


def _note_compatibility(parent: Event, traj: Trajectory) -> None:
    """Anchored records become constraints for the sibling sessions around them."""
    children = traj.children(parent.id)
    for child in children:
        if not child.anchor_id:
            continue
        anchor = traj.anchor_by_id[child.anchor_id]
        note = f"consistent with {anchor.app} record {anchor.id} at {anchor.timestamp:%Y-%m-%d %H:%M}"
        for other in children:
            if other is not child and abs(other.start - anchor.timestamp) <= timedelta(days=2):
                if note not in other.requirements:
                    other.requirements.append(note)
        if not child.requirements or child.requirements[0] != f"embed anchor {anchor.id} unchanged":
            child.requirements.insert(0, f"embed anchor {anchor.id} unchanged")


__all__ = ["ground", "BLOCKS"]
