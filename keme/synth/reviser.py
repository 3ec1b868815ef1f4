"""The reviser: after each expansion or realization, make the future follow from the past.

It only touches *future* events that are still planned (not expanded, not
realized): it modifies them (a new employer's colleagues, a new city in the
titles), deletes them (no more sessions at the old gym; a weekend lost to a
deadline), postpones them (training resumes after an illness) or adds them (a
new commute after a move, a vet visit after adopting a pet). Every action is
recorded with its reason. Events that carry anchors are never deleted or moved.
"""

from __future__ import annotations

import random
from datetime import datetime, time, timedelta

from keme.models import Event, Revision
from keme.models.catalog import CHANGES
from keme.seeding import rng_for
from keme.synth.changes import follow_up_due, holds_changes, with_due
from keme.synth.context import PlanContext
from keme.synth.moments import NoRoom, shrink_to_leaf_if_single
from keme.synth.params import colleagues, episode_params, fitness_goal, social_params
from keme.synth.planner import chapter_changes, episode_event, plan_change_episode
from keme.synth.state import Trajectory, is_leaf
from keme.synth.where import overlaps_trip
from keme.world.places import OCCASION_EPISODES
from keme.world.venues import elsewhere

FOLLOW_UP_CHANCE = {"commute_change": 0.8, "gym_change": 0.9}
PAIRED = {"relocate": "job_change", "job_change": "relocate"}  # keme.synth.lifecycle.pair_relocation


def _chapter_of(event: Event, traj: Trajectory) -> Event:
    while event.parent_id is not None:
        event = traj.events[event.parent_id]
    return event


def _episode_kind(event: Event) -> str:
    return event.params.get("_episode", event.kind)


def _future(traj: Trajectory, now: datetime) -> list[Event]:
    return [e for e in traj.graph.events if e.state == "planned" and e.start > now and e.depth > 0]


def _movable(event: Event) -> bool:
    return not event.pending_anchors and event.anchor_id is None


def _delete(event: Event, traj: Trajectory, now: datetime, reason: str) -> None:
    traj.remove_event(event.id)
    traj.record(
        Revision(
            at=now,
            agent="reviser",
            action="delete",
            event_id=event.id,
            reason=reason,
            detail={"title": event.title, "window": f"{event.start:%Y-%m-%d}..{event.end:%Y-%m-%d}"},
        )
    )


def _modify(event: Event, traj: Trajectory, now: datetime, reason: str, **changes: str) -> None:
    detail = {}
    for field, value in changes.items():
        if field.startswith("param:"):
            key = field[len("param:") :]
            detail[key] = f"{event.params.get(key, '')} -> {value}"
            event.params[key] = value
        else:
            detail[field] = f"{getattr(event, field)} -> {value}"
            setattr(event, field, value)
    traj.record(
        Revision(at=now, agent="reviser", action="modify", event_id=event.id, reason=reason, detail=detail)
    )


def _replace_text(traj: Trajectory, now: datetime, old: str, new: str, reason: str) -> None:
    """Future events that still name the old value (a company, a city) are rewritten."""
    if not old or old == new:
        return
    for event in _future(traj, now):
        changes = {}
        if old in event.title:
            changes["title"] = event.title.replace(old, new)
        if old in event.summary:
            changes["summary"] = event.summary.replace(old, new)
        for key, value in event.params.items():
            if value == old and not key.startswith("set:"):
                changes[f"param:{key}"] = new
        if changes:
            _modify(event, traj, now, reason, **changes)


def add_follow_up(
    name: str,
    cause: Event,
    traj: Trajectory,
    ctx: PlanContext,
    rng: random.Random,
    now: datetime,
    reason: str,
    here: bool = True,
) -> None:
    """Schedule a change episode soon after `cause`: in this chapter if it fits (and `here`), else in the
    next one, and over by `follow_up_due` either way (a commute planned months after a move to another
    city is a consequence the world would not wait for: keme/world/check/lifecycle.py holds it to the
    catalog's relocation window). The same change already planned later than that is taken back and
    placed sooner."""
    chapter = _chapter_of(cause, traj)
    due = follow_up_due(cause, ctx)
    for event in [e for e in traj.graph.events if e.change == name and e.state == "planned"]:
        if event.end.date() <= due or not _movable(event) or event.depth > 1:
            return  # in time, or held by a record, or a moment of an episode already under way
        _delete(event, traj, now, f"{reason}: by {due.isoformat()}, not {event.end:%Y-%m-%d}")
    for held in [c for c in _later_chapters(chapter, traj) if name in chapter_changes(c)][:1]:
        if held.start.date() <= due:  # the chapter that holds it already: over by the due day there
            _modify(held, traj, now, reason, **{"param:_due": with_due(held, name, due)})
            return
        rest = [c for c in chapter_changes(held) if c != name]
        _modify(held, traj, now, f"{reason}: by {due.isoformat()}", **{"param:changes": ",".join(rest)})
    earliest = (max(now, cause.end) + timedelta(days=1)).date()
    change = CHANGES[name]
    fits = (chapter.end.date() - earliest).days + 1 >= change.days[0]
    if here and fits and len(traj.children(chapter.id)) < ctx.cfg.graph.max_events:
        episode = plan_change_episode(name, chapter, traj, ctx, rng, earliest=earliest)
        try:
            shrink_to_leaf_if_single(episode, traj, ctx, rng, not_before=earliest)
        except NoRoom:
            episode = None  # no free block after its cause this chapter: the next chapter's, below
        if episode is not None:
            traj.add_event(episode)
            traj.record(Revision(at=now, agent="reviser", action="add", event_id=episode.id, reason=reason))
            if not traj.add_edge(cause.id, episode.id, "causes"):
                traj.chain_edges(traj.children(chapter.id))
            return
    later = [c for c in _later_chapters(chapter, traj) if holds_changes(c)]
    if later:
        target = later[0]
        changes = chapter_changes(target)
        updates = {"param:_due": with_due(target, name, due)}
        if name not in changes:
            updates["param:changes"] = ",".join(changes + [name])
        _modify(target, traj, now, reason + " (no room left this chapter)", **updates)


def _later_chapters(chapter: Event, traj: Trajectory) -> list[Event]:
    """The chapters after `chapter` not planned into episodes yet, in order."""
    return [c for c in traj.children(None) if c.start > chapter.end and c.state == "planned"]


def _add_episode(
    kind: str,
    params: dict[str, str],
    cause: Event,
    traj: Trajectory,
    ctx: PlanContext,
    rng: random.Random,
    now: datetime,
    days_ahead: tuple[int, int],
    reason: str,
) -> None:
    chapter = _chapter_of(cause, traj)
    first = (now + timedelta(days=rng.randint(*days_ahead))).date()
    last = first + timedelta(days=rng.randint(1, 3))
    if last > chapter.end.date() or len(traj.children(chapter.id)) >= ctx.cfg.graph.max_events:
        return
    if kind in OCCASION_EPISODES and overlaps_trip(first, last, traj):
        return  # seeing someone in the home city waits until the persona is back
    episode = episode_event(traj, chapter, kind, first, last, params, ctx)
    try:
        shrink_to_leaf_if_single(episode, traj, ctx, rng, not_before=first)
    except RuntimeError:
        return
    traj.add_event(episode)
    traj.record(Revision(at=now, agent="reviser", action="add", event_id=episode.id, reason=reason))
    traj.chain_edges(traj.children(chapter.id))


def _scheduled(name: str, leaf: Event, traj: Trajectory) -> bool:
    """Whether change `name` is still to come: an episode not planned into moments yet, or a later
    chapter's."""
    chapter = _chapter_of(leaf, traj)
    return any(e.change == name and e.state == "planned" for e in traj.graph.events) or any(
        name in chapter_changes(c) for c in _later_chapters(chapter, traj)
    )


def _after_change(leaf: Event, traj: Trajectory, ctx: PlanContext, rng: random.Random, now: datetime) -> None:
    name = leaf.change
    assert name is not None
    persona = traj.persona
    change = CHANGES[name]
    old = {
        k: (persona.attribute(k).versions[-2].value if len(persona.attribute(k).versions) > 1 else "")
        for k in change.attributes
    }
    new = {k: persona.attribute(k).versions[-1].value for k in change.attributes}
    cause = traj.events.get(leaf.parent_id) if leaf.depth == 2 and leaf.parent_id else leaf
    if new.get("sport.main_sport"):
        _refit_goals(leaf, traj, ctx, now, new["sport.main_sport"])
    partner = PAIRED.get(name)
    if partner and _scheduled(partner, leaf, traj):  # the other half of a move for a new job
        reason = f"{name} realized in {leaf.id}: {partner} goes with it"
        # not into this chapter: its episodes were planned for the job it has (a project would change hands)
        add_follow_up(partner, cause, traj, ctx, rng, now, reason, here=False)
    for follow_up in change.follow_ups:
        # a move to another city always changes the commute (keme/world/check/lifecycle.py); a new job may not
        chance = 1.0 if name == "relocate" else FOLLOW_UP_CHANCE.get(follow_up, 1.0)
        if rng.random() < chance:
            add_follow_up(
                follow_up, cause, traj, ctx, rng, now, f"{name} realized in {leaf.id}: {follow_up} follows"
            )
    if name == "job_change":
        _replace_text(
            traj, now, old["career.company"], new["career.company"], f"now working at {new['career.company']}"
        )
        team = colleagues(ctx.cfg.seed, persona, new["career.company"], ctx.res)
        for event in _future(traj, now):
            if _episode_kind(event) in ("work_project", "promotion") and "colleague" in event.params:
                _modify(
                    event,
                    traj,
                    now,
                    f"new team at {new['career.company']}",
                    **{"param:colleague": rng.choice(team)},
                )
    elif name == "relocate":
        _replace_text(traj, now, old["home.city"], new["home.city"], f"moved to {new['home.city']}")
        for event in _future(traj, now):
            if _episode_kind(event) == "fitness" and _movable(event):
                _delete(
                    event,
                    traj,
                    now,
                    f"moved to {new['home.city']}: training at the old gym stops until a new one is found",
                )
            elif _movable(event) and (venue := elsewhere(event.params, new["home.city"], ctx.lang)):
                _delete(event, traj, now, f"moved to {new['home.city']}: {venue} is not in the new city")
    elif name == "adopt_pet":
        params = episode_params("pet", rng, traj, ctx, now)
        _add_episode(
            "pet",
            params,
            leaf,
            traj,
            ctx,
            rng,
            now,
            (7, 20),
            f"{new['pets.pet_name']} needs a first vet check-up",
        )
    elif name == "relationship":
        params = social_params(rng, traj, ctx, now, new["social_circle.partner"], "partner")
        _add_episode(
            "social",
            params,
            leaf,
            traj,
            ctx,
            rng,
            now,
            (3, 12),
            f"seeing {new['social_circle.partner']} again",
        )
    elif name == "new_phone":
        params = episode_params("tech", rng, traj, ctx, now) | {"device": new["tech.phone"]}
        _add_episode(
            "tech", params, leaf, traj, ctx, rng, now, (1, 6), f"setting up the new {new['tech.phone']}"
        )
    else:
        topic = {
            "new_sport": "fitness",
            "diet_change": "cooking",
            "budget_change": "finance",
            "savings_goal": "finance",
            "new_course": "learning",
            "promotion": "work_project",
            "new_show": "entertainment",
            "gym_change": "fitness",
            "commute_change": "work_project",
        }.get(name)
        note = f"after {name}: " + ", ".join(f"{k}={v}" for k, v in new.items())
        for event in _future(traj, now):
            if _episode_kind(event) == topic and note not in event.requirements:
                _modify(
                    event,
                    traj,
                    now,
                    f"{name} changes what this event assumes",
                    requirements=event.requirements + [note],
                )  # type: ignore[arg-type]


def _refit_goals(leaf: Event, traj: Trajectory, ctx: PlanContext, now: datetime, sport: str) -> None:
    """A new main sport and the fitness goals that do not suit it (no hiking goal for a yoga person): an
    episode under way stops (its sessions still ahead are dropped: its goal was said, and nobody said it
    changed), an episode ahead gets a goal that suits the sport (it was never said). Its own random
    stream: a trajectory that needs no new goal draws nothing more than before."""
    fitting = set(ctx.catalog.goals_for(sport))
    rng = rng_for(ctx.cfg.seed, traj.persona.id, "refit", leaf.id)
    for event in list(traj.graph.events):
        goal = event.params.get("goal")
        if event.depth != 1 or not goal or goal in fitting or event.end <= now:
            continue
        if event.start > now and event.state == "planned":
            _modify(
                event,
                traj,
                now,
                f"the main sport is now {sport}",
                **{"param:goal": fitness_goal(rng, ctx.catalog, sport)},
            )
            continue
        for child in traj.children(event.id):
            if child.state == "planned" and child.start > now and _movable(child):
                _delete(child, traj, now, f"the main sport is now {sport}: training for {goal!r} stops")


def _rest_after_illness(leaf: Event, traj: Trajectory, rng: random.Random, now: datetime) -> None:
    symptom = (traj.events[leaf.parent_id].params if leaf.parent_id else leaf.params).get(
        "symptom", "illness"
    )
    chapter_end = _chapter_of(leaf, traj).end
    for event in _future(traj, now):
        if _episode_kind(event) != "fitness" or event.start > now + timedelta(days=7) or not _movable(event):
            continue
        if is_leaf(event) or event.end + timedelta(days=7) > chapter_end:
            _delete(event, traj, now, f"recovering from {symptom}: training skipped")
        else:
            before = f"{event.start:%Y-%m-%d}..{event.end:%Y-%m-%d}"
            traj.move_event(event, event.start + timedelta(days=7), event.end + timedelta(days=7))
            traj.record(
                Revision(
                    at=now,
                    agent="reviser",
                    action="modify",
                    event_id=event.id,
                    reason=f"recovering from {symptom}: training postponed a week",
                    detail={"window": f"{before} -> {event.start:%Y-%m-%d}..{event.end:%Y-%m-%d}"},
                )
            )


def _deadline_crunch(leaf: Event, traj: Trajectory, rng: random.Random, now: datetime) -> None:
    parent = traj.events.get(leaf.parent_id) if leaf.parent_id else None
    if parent is None or rng.random() > 0.5:
        return
    project = parent.params.get("project", "")
    for event in _future(traj, now):
        if _episode_kind(event) == "weekend" and event.start <= parent.end and _movable(event):
            _delete(event, traj, now, f"weekend plans dropped for the {project} deadline")


def revise(after: Event, traj: Trajectory, ctx: PlanContext, rng: random.Random, now: datetime) -> None:
    """Adjust the future after `after` was expanded or realized."""
    if not is_leaf(after):
        return
    if after.change:
        _after_change(after, traj, ctx, rng, now)
    if after.kind == "health_symptom":
        _rest_after_illness(after, traj, rng, now)
    elif after.kind == "work_deadline":
        _deadline_crunch(after, traj, rng, now)


__all__ = ["revise", "time"]
