"""The LLM brain: each agent asks the model, checks the answer against the invariants, and falls back.

Every call gets only what its role needs — the node, its details, the few
persona facts at stake and a compatibility context capped at
`brain.context_tokens` — never the whole graph or profile. A reply that breaks
an invariant goes back to the model with the list of problems; after
`brain.retries` such rounds the node falls back as configured (`procedural`,
`anomalous`: procedural output flagged and kept out of QA, or `fail`).

Roles: the planner plans a chapter's episodes (an episode's moments still come
from the catalogue, since each moment needs its dialogue pattern); the grounder
chooses among events that all cover an anchor; the realizer writes the
dialogue; the reviser proposes edits to future events on top of the
procedural consequences (which carry the persona's logic). In hybrid mode only
the realizer asks the model.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Literal, TypeVar

from pydantic import BaseModel, Field

from keme.brains.base import BrainStats
from keme.brains.procedural import ProceduralBrain
from keme.brains.prompts import feedback, render
from keme.dataset import PersonaView
from keme.days import holidays_between
from keme.errors import SynthesisError
from keme.llm import CallFailed, LLMClient, StructuredOutputError
from keme.llm.client import parse_structured
from keme.models import Event, Message, Revision, Session
from keme.models.catalog import CHANGES, EPISODE_KINDS
from keme.prior.anchors import anchor_message_text
from keme.synth import grounder, planner, realizer, reviser
from keme.synth.moments import shrink_to_leaf_if_single
from keme.synth.params import SET
from keme.synth.planner import chapter_changes
from keme.synth.state import Trajectory, is_leaf
from keme.text import lang as fmt
from keme.text import resources
from keme.text.template import Context
from keme.text.tokens import count_tokens, han_count, has_han
from keme.world.catalog import load_catalog
from keme.world.check import check_world
from keme.world.cues import load_cues
from keme.world.held import Held, disagreements, held_values, said
from keme.world.ledger import Report
from keme.world.schedule import schedule_of, where_slots

T = TypeVar("T", bound=BaseModel)
MAX_HELD = 16  # held values listed in a realizer prompt: the moment's own first, then the scopes'

ATTRIBUTE_LABELS = {
    "en": {
        "home.city": "city",
        "home.neighborhood": "neighborhood",
        "career.company": "employer",
        "career.job_title": "job title",
        "diet.diet_type": "diet",
        "sport.main_sport": "main sport",
        "sport.gym": "gym",
        "transport.commute_mode": "commute",
        "tech.phone": "phone",
        "entertainment.favorite_show": "favorite show",
        "finance.monthly_budget": "monthly budget",
        "finance.savings_goal": "savings goal",
        "social_circle.partner": "partner",
        "pets.pet_name": "pet's name",
        "pets.pet_species": "pet",
        "learning.current_course": "current course",
        "routine.training_per_week": "workouts a week",
        "routine.commute_minutes": "one-way commute (minutes)",
    },
    "zh": {
        "home.city": "城市",
        "home.neighborhood": "住的片区",
        "career.company": "公司",
        "career.job_title": "职位",
        "diet.diet_type": "饮食",
        "sport.main_sport": "主要运动",
        "sport.gym": "健身房",
        "transport.commute_mode": "通勤方式",
        "tech.phone": "手机",
        "entertainment.favorite_show": "最爱的剧",
        "finance.monthly_budget": "每月预算",
        "finance.savings_goal": "存钱目标",
        "social_circle.partner": "对象",
        "pets.pet_name": "宠物名字",
        "pets.pet_species": "宠物",
        "learning.current_course": "在学的课",
        "routine.training_per_week": "每周运动次数",
        "routine.commute_minutes": "单程通勤分钟数",
    },
}
KIND_DESCRIPTIONS = {
    "en": {
        "trip": "a trip away (at least 6 days including planning)",
        "work_project": "a project at work with a deadline",
        "health": "feeling unwell, maybe a doctor visit",
        "fitness": "a training plan",
        "social": "an occasion with someone",
        "shopping": "choosing and buying something",
        "cooking": "cooking a dish",
        "entertainment": "a show, book or film",
        "finance": "a budget check",
        "learning": "a study session",
        "family": "a call with family",
        "weekend": "a free-day activity",
        "wellbeing": "a low day",
        "tech": "a device problem",
        "pet": "pet care",
    },
    "zh": {
        "trip": "出门旅行（含准备至少 6 天）",
        "work_project": "有截止日期的工作项目",
        "health": "身体不适，可能去看医生",
        "fitness": "一段训练计划",
        "social": "和某人的聚会或纪念日",
        "shopping": "挑选并购买东西",
        "cooking": "在家做菜",
        "entertainment": "追剧、看书或电影",
        "finance": "记账复盘",
        "learning": "学习打卡",
        "family": "和家人通话",
        "weekend": "周末活动",
        "wellbeing": "情绪低落的一天",
        "tech": "设备出问题",
        "pet": "照顾宠物",
    },
}


# ---------------------------------------------------------------- output shapes
class PlannedEpisode(BaseModel):
    kind: str
    title: str = Field(max_length=120)
    start_day: int
    days: int


class ChapterPlan(BaseModel):
    episodes: list[PlannedEpisode] = Field(max_length=20)


class GroundChoice(BaseModel):
    event_id: str


class Exchange(BaseModel):
    user: str = Field(min_length=1, max_length=400)
    assistant: str = Field(min_length=1, max_length=400)


class Dialogue(BaseModel):
    """Exchanges rather than free turns: the shape itself makes the roles alternate, starting with the
    user."""

    exchanges: list[Exchange] = Field(min_length=3, max_length=6)

    def turns(self) -> list[tuple[str, str]]:
        return [t for e in self.exchanges for t in (("user", e.user), ("assistant", e.assistant))]


class Action(BaseModel):
    action: Literal["modify", "delete"]
    event_id: str
    title: str = ""
    reason: str = Field(default="", max_length=300)


class Revisions(BaseModel):
    actions: list[Action] = Field(max_length=10)


def _repeats(text: str) -> bool:
    """A degenerate loop: the same sentence three times or more."""
    sentences = [s.strip() for s in re.split(r"[.!?。！？\n]", text) if len(s.strip()) > 8]
    return any(sentences.count(s) >= 3 for s in set(sentences))


DETAIL_KEYS = frozenset(
    {
        "destination",
        "attraction",
        "project",
        "colleague",
        "symptom",
        "clinic",
        "goal",
        "person",
        "restaurant",
        "product",
        "dish",
        "title",
        "relative",
        "activity",
        "place",
        "device",
        "target_company",
        "target_city",
        "vet_clinic",
        "resource",
        "gift",
    }
)


def _size(text: str, lang: str) -> int:
    """Words in English, characters in Chinese."""
    return han_count(text) // 2 if lang == "zh" else len(text.split())


def _language_problems(texts: list[str], lang: str, what: str) -> list[str]:
    if lang == "zh":
        bad = [i for i, t in enumerate(texts) if not has_han(t)]
        return [f"{what} {i + 1} is not written in Chinese" for i in bad[:3]]
    bad = [i for i, t in enumerate(texts) if han_count(t) > 0.1 * max(1, len(t))]
    return [f"{what} {i + 1} is not written in English" for i in bad[:3]]


class LLMBrain:
    def __init__(self, cfg, client: LLMClient, hybrid: bool = False):
        self.cfg = cfg
        self.client = client
        self.hybrid = hybrid
        self.name = "hybrid" if hybrid else "llm"
        self.procedural = ProceduralBrain()
        self.stats = BrainStats()

    # ---------------------------------------------------------------- the ask / check / feedback loop
    def _ask(
        self,
        role: str,
        prompt: str,
        shape: type[T],
        check: Callable[[T], list[str]],
        max_tokens: int | None = None,
    ) -> tuple[T | None, str]:
        history = [{"role": "user", "content": prompt}]
        problems: list[str] = []
        for attempt in range(self.cfg.brain.retries + 1):
            self.stats.add(role, "attempts")
            raw = ""
            try:
                completion = self.client.chat(
                    history,
                    stage=f"synth.{role}",
                    schema=shape.model_json_schema(),
                    max_tokens=max_tokens,
                    seed=self.cfg.llm.seed + attempt,
                )
                raw = completion.content
                output = parse_structured(raw, shape)
                problems = check(output)
            except StructuredOutputError as exc:
                problems, output = [str(exc)], None
            # counted by the client; a dead endpoint raises FatalError, which stops synthesis
            except CallFailed as exc:
                self.stats.add(role, "call_errors")
                return None, f"the LLM call failed: {exc}"
            if not problems:
                self.stats.add(role, "accepted")
                return output, ""
            if attempt < self.cfg.brain.retries:
                self.stats.add(role, "retries")
                history = history + feedback(raw, problems)
        return None, "; ".join(problems[:4])

    def _fallback(self, role: str, node: Event, reason: str, procedural: Callable[[], object]):
        mode = self.cfg.brain.fallback
        if mode == "fail":
            raise SynthesisError(
                f"{role} failed for {node.id} after {self.cfg.brain.retries + 1} attempts: {reason}"
            )
        self.stats.add(role, "fallbacks")
        result = procedural()
        if mode == "anomalous":
            node.anomaly = f"{role}: {reason}"[:500]
            self.stats.add(role, "anomalies")
        return result

    def _lang(self, traj: Trajectory) -> str:
        return traj.persona.language

    def _persona(self, traj: Trajectory, when: datetime) -> dict[str, str]:
        p = traj.persona
        value = lambda key: p.value_at(key, when)  # noqa: E731
        if p.language == "zh":
            parts = [
                f"住在{value('home.city')}{value('home.neighborhood')}",
                f"在{value('career.company')}做{value('career.job_title')}",
                f"平时{value('sport.main_sport')}",
            ]
            parts.append(
                f"对象是{value('social_circle.partner')}" if value("social_circle.partner") else "单身"
            )
            if value("pets.pet_name"):
                parts.append(f"养了一只{value('pets.pet_species')}叫{value('pets.pet_name')}")
            return {"name": p.name, "brief": "，".join(parts) + "。"}
        parts = [
            f"lives in {value('home.neighborhood')}, {value('home.city')}",
            f"works as a {value('career.job_title')} at {value('career.company')}",
            f"into {value('sport.main_sport')}",
        ]
        parts.append(
            f"dating {value('social_circle.partner')}" if value("social_circle.partner") else "single"
        )
        if value("pets.pet_name"):
            parts.append(f"has a {value('pets.pet_species')} called {value('pets.pet_name')}")
        return {"name": p.name.split(" ")[0], "brief": "; ".join(parts) + "."}

    # ---------------------------------------------------------------- planner
    def expand_chapter(self, chapter, traj, ctx, rng):
        if self.hybrid:
            return self.procedural.expand_chapter(chapter, traj, ctx, rng)
        lang = self._lang(traj)
        lo, hi = chapter.start.date(), chapter.end.date()
        days = (hi - lo).days + 1
        changes = chapter_changes(chapter)
        allowed = [
            k
            for k in EPISODE_KINDS.values()
            if all(traj.persona.value_at(r, chapter.start) for r in k.requires)
        ]
        graph = ctx.cfg.graph
        count = max(
            graph.min_events, min(round(days / 30.4 * graph.episodes_per_month), graph.max_events - 3)
        )
        holidays = [
            ((d - lo).days + 1, name) for d, name in holidays_between(lo, hi, traj.persona.country, lang)
        ]
        prompt = render(
            "planner",
            lang,
            persona=self._persona(traj, chapter.start),
            month=chapter.params["month_name"],
            days=days,
            first_day=fmt.format_date(lo, lang),
            holidays=holidays[:8],
            count=count,
            changes=[{"name": c, "description": planner.title_and_summary(c, lang, {})[1]} for c in changes],
            kinds=[{"name": k.name, "description": KIND_DESCRIPTIONS[lang][k.name]} for k in allowed],
        )
        names = {k.name for k in allowed}

        def check(plan: ChapterPlan) -> list[str]:
            problems = []
            if not graph.min_events <= len(plan.episodes) <= graph.max_events - 3:
                problems.append(
                    f"plan between {graph.min_events} and {graph.max_events - 3} episodes, "
                    f"not {len(plan.episodes)}"
                )
            for i, ep in enumerate(plan.episodes, start=1):
                if ep.kind not in names and ep.kind not in changes:
                    problems.append(f"episode {i}: kind {ep.kind!r} is not allowed")
                if not 1 <= ep.start_day <= days or ep.days < 1 or ep.start_day + ep.days - 1 > days:
                    problems.append(
                        f"episode {i}: days {ep.start_day}..{ep.start_day + ep.days - 1} "
                        f"leave the month (1..{days})"
                    )
                if ep.kind == "trip" and ep.days < 6:
                    problems.append(f"episode {i}: a trip needs at least 6 days")
                if not ep.title.strip() or "{" in ep.title:
                    problems.append(f"episode {i}: give it a real title")
            problems += _language_problems([ep.title for ep in plan.episodes], lang, "title")
            for change in changes:
                n = sum(ep.kind == change for ep in plan.episodes)
                if n != 1:
                    problems.append(f"the change {change!r} must appear exactly once (found {n})")
            if sum(ep.kind == "trip" for ep in plan.episodes) > 1:
                problems.append("at most one trip")
            return problems

        plan, reason = self._ask("planner", prompt, ChapterPlan, check, max_tokens=700)
        if plan is not None:
            built = self._build_chapter(plan, chapter, traj, ctx, rng)
            if built is not None:
                return built
            reason = "the plan could not be placed in free day blocks"
        return self._fallback(
            "planner", chapter, reason, lambda: self.procedural.expand_chapter(chapter, traj, ctx, rng)
        )

    def _build_chapter(self, plan: ChapterPlan, chapter, traj, ctx, rng) -> list[Event] | None:
        lo = chapter.start.date()
        own = frozenset(chapter.pending_anchors)
        built: list[Event] = []
        try:
            # the changes first, like the rule planner: an episode drawn after them sees what they set (a
            # fitness goal for every main sport its window spans)
            for ep in sorted(plan.episodes, key=lambda e: (e.kind not in CHANGES, e.start_day, e.kind)):
                first = lo + timedelta(days=ep.start_day - 1)
                last = first + timedelta(days=ep.days - 1)
                if ep.kind in CHANGES:
                    event = planner.plan_change_episode(
                        ep.kind, chapter, traj, ctx, rng, earliest=lo, window=(first, last)
                    )
                else:
                    event = planner.regular_episode(ep.kind, first, last, chapter, traj, ctx, rng)
                if event is None:
                    raise ValueError(f"{ep.kind} does not fit {first}..{last}")
                event.title = ep.title.strip()
                shrink_to_leaf_if_single(event, traj, ctx, rng, own)
                traj.add_event(event)
                built.append(event)
        except (RuntimeError, ValueError):
            for event in built:
                traj.remove_event(event.id)
            return None
        if len(built) < ctx.cfg.graph.min_events:
            for event in built:
                traj.remove_event(event.id)
            return None
        return built

    def expand_episode(self, episode, traj, ctx, rng):
        return self.procedural.expand_episode(episode, traj, ctx, rng)

    # ---------------------------------------------------------------- grounder
    def ground(self, parent, traj, ctx, now):
        if self.hybrid:
            return self.procedural.ground(parent, traj, ctx, now)
        lang = self._lang(traj)
        res = resources.get(lang)
        for anchor_id in sorted(parent.pending_anchors, key=lambda a: traj.anchor_by_id[a].timestamp):
            anchor = traj.anchor_by_id[anchor_id]
            candidates = [
                c
                for c in traj.children(parent.id)
                if c.start <= anchor.timestamp <= c.end and (not is_leaf(c) or c.anchor_id is None)
            ]
            if len(candidates) < 2:
                continue  # no choice to make: the procedural rules decide
            ids = {c.id for c in candidates}
            prompt = render(
                "grounder",
                lang,
                persona=self._persona(traj, now),
                when=f"{anchor.timestamp:%Y-%m-%d %H:%M}",
                record=anchor_message_text(anchor, res),
                candidates=[
                    {
                        "id": c.id,
                        "title": c.title,
                        "start": f"{c.start:%Y-%m-%d %H:%M}",
                        "end": f"{c.end:%Y-%m-%d %H:%M}",
                    }
                    for c in candidates
                ],
            )
            choice, reason = self._ask(
                "grounder",
                prompt,
                GroundChoice,
                lambda out: [] if out.event_id in ids else [f"{out.event_id!r} is not a candidate"],
                max_tokens=60,
            )
            if choice is None:
                self.stats.add("grounder", "fallbacks")
                continue
            chosen = traj.events[choice.event_id]
            parent.pending_anchors.remove(anchor_id)
            if is_leaf(chosen):
                chosen.anchor_id = anchor_id
            else:
                chosen.pending_anchors.append(anchor_id)
        grounder.ground(parent, traj, ctx, now)

    # ---------------------------------------------------------------- realizer
    def _context(self, leaf: Event, traj: Trajectory) -> str:
        """Recent sessions and nearby app records, newest first, cut at `brain.context_tokens`."""
        lines: list[str] = []
        budget = self.cfg.brain.context_tokens
        for session in reversed(traj.sessions[-12:]):
            event = traj.events.get(session.event_id)
            line = f"{session.start:%Y-%m-%d}: {event.title if event else session.pattern}"
            if count_tokens(line) > budget:
                break
            budget -= count_tokens(line)
            lines.append(line)
        res = resources.get(traj.persona.language)
        for anchor in traj.anchors:
            if abs(anchor.timestamp - leaf.start) <= timedelta(days=2) and anchor.id != leaf.anchor_id:
                line = (
                    f"{anchor.timestamp:%Y-%m-%d %H:%M} {anchor.app_name}: "
                    f"{anchor_message_text(anchor, res)[:200]}"
                )
                if count_tokens(line) > budget:
                    break
                budget -= count_tokens(line)
                lines.append(line)
        return "\n".join(lines)

    def realize(self, leaf, traj, cfg, res, rng):
        persona = traj.persona
        lang = persona.language
        anchor = traj.anchor_by_id[leaf.anchor_id] if leaf.anchor_id else None
        start = anchor.timestamp if anchor is not None else leaf.start
        values = realizer._persona_values(persona, start)
        pattern = res.patterns[leaf.kind]
        ctx = Context(lang=lang, rng=rng, persona=values, pools=res.flat_pools)
        reveal_keys = realizer._reveals(pattern.reveals, ctx, persona, start, cfg, res)
        labels = ATTRIBUTE_LABELS[lang]
        facts = [
            {
                "key": k,
                "label": labels.get(k, k.split(".")[1].replace("_", " ")),
                "value": values[k],
                "known": realizer.revealed(persona, k, start),
            }
            for k in reveal_keys
        ]
        params = realizer.merged_params(leaf, traj)
        change = CHANGES[leaf.change] if leaf.change else None
        update = (
            [{"key": k, "label": labels.get(k, k), "value": params[SET + k]} for k in change.attributes]
            if change
            else []
        )
        details = sorted((k, v) for k, v in params.items() if not k.startswith(("_", SET)))
        record = {"app": anchor.app_name, "text": anchor_message_text(anchor, res)} if anchor else None
        place = where_slots(persona, traj.graph.events, leaf, persona.country, lang)
        traj.ledger.begin(realizer.scene_of(leaf, traj))
        templates = [
            t for beat in pattern.beats if not isinstance(beat, str) for x in beat.options for t in (x.u, x.a)
        ]
        held = held_values(traj.ledger, realizer.scene_of(leaf, traj), templates, rng)
        prompt = render(
            "realizer",
            lang,
            persona=self._persona(traj, start),
            date=fmt.format_date(start.date(), lang),
            part_of_day=fmt.part_of_day(start, lang),
            where=place.get("where"),
            event={"title": leaf.title, "summary": leaf.summary},
            details=details,
            record=record,
            context=self._context(leaf, traj),
            facts=facts,
            update=update,
            held=held[:MAX_HELD],
            min_exchanges=3,
            max_exchanges=6,
        )

        cues = load_cues(lang)

        def check(dialogue: Dialogue) -> list[str]:
            turns = dialogue.turns()
            problems = []
            texts = [text.strip() for _, text in turns]
            if any(not t for t in texts):
                problems.append("a message is empty")
            if len(set(texts)) < len(texts):
                problems.append("two messages are identical")
            if any(_repeats(t) for t in texts):
                problems.append("a message repeats the same sentence over and over")
            problems += _language_problems(texts, lang, "message")
            short = [
                i + 1
                for i, (role, text) in enumerate(turns)
                if _size(text, lang) < (3 if role == "user" else 5)
            ]
            if short:
                problems.append(f"messages {short[:4]} are too short to be real conversation")
            named = [v for k, v in details if k in DETAIL_KEYS and len(v) > 2]
            if named and not any(v in text for v in named for _, text in turns):
                problems.append(
                    "the chat never mentions what is happening (e.g. "
                    + ", ".join(f'"{v}"' for v in named[:3])
                    + ")"
                )
            user = [text for role, text in turns if role == "user"]
            for fact in facts:
                if not any(fact["value"] in u for u in user):
                    problems.append(f'the user never writes "{fact["value"]}" ({fact["label"]}) exactly')
                elif fact["known"] and any(fact["value"] in u and cues.any(cues.news, u) for u in user):
                    problems.append(
                        f'"{fact["value"]}" ({fact["label"]}) was told before: the user presents it as news'
                    )
            if update:
                announcing = [
                    i
                    for i, (role, text) in enumerate(turns)
                    if role == "user" and all(f["value"] in text for f in update)
                ]
                if not announcing:
                    problems.append(
                        "no single user message states the new value(s) exactly: "
                        + ", ".join(f'"{f["value"]}"' for f in update)
                    )
                elif any(f["value"] in text for _, text in turns[: announcing[0]] for f in update):
                    problems.append("the new value appears before the user announces it")
            problems += disagreements(turns, held, cues)
            if not problems:  # said at any time the leaf allows: its first and its last minutes
                latest = max(start, leaf.end - timedelta(minutes=len(turns) + 1))
                for when in dict.fromkeys((start, latest)):
                    problems += [
                        p for p in world_problems(turns, leaf, traj, anchor, res, when) if p not in problems
                    ]
            return problems

        dialogue, reason = self._ask("realizer", prompt, Dialogue, check, max_tokens=self.cfg.llm.max_tokens)
        if dialogue is not None:
            session = self._commit_dialogue(dialogue, leaf, traj, anchor, facts, change, rng, res, held)
            if session is not None:
                return session
            reason = "the dialogue repeats an earlier session"
        return self._fallback(
            "realizer", leaf, reason, lambda: self.procedural.realize(leaf, traj, cfg, res, rng)
        )

    def _commit_dialogue(
        self, dialogue: Dialogue, leaf, traj, anchor, facts, change, rng, res, held: list[Held]
    ):
        """The dialogue as a session whose messages carry the claims they state: the persona facts and
        change they write, each held value they write and each count they state (keme.world.held.said);
        a count the world did not hold yet becomes world state, so later sessions say the same."""
        drafts = []
        if anchor is not None:
            drafts.append(realizer.anchor_draft(anchor, res))
        announced = False
        cues = load_cues(traj.persona.language)
        for role, text in dialogue.turns():
            draft = realizer.Draft(role, text.strip())
            draft.said = said(text, held, cues)
            for report in draft.said:
                traj.ledger.recall(report.name, lambda value=report.value: value)
            if role == "user":
                draft.links = {f["key"] for f in facts if f["value"] in text}
                draft.said += [
                    Report("persona", f["key"], f["value"], f["value"]) for f in facts if f["value"] in text
                ]
                if (
                    change is not None
                    and not announced
                    and all(realizer.merged_params(leaf, traj)[SET + k] in text for k in change.attributes)
                ):
                    draft.update = change.name
                    announced = True
                    new = {k: realizer.merged_params(leaf, traj)[SET + k] for k in change.attributes}
                    draft.said += [Report("persona", k, v, v) for k, v in new.items()]
            drafts.append(draft)
        return realizer.commit(leaf, drafts, traj, rng, author="llm")

    # ---------------------------------------------------------------- reviser
    def revise(self, event, traj, ctx, rng, now):
        self.procedural.revise(event, traj, ctx, rng, now)
        if (
            self.hybrid
            or not is_leaf(event)
            or not (event.change or event.kind in ("health_symptom", "work_deadline"))
        ):
            return
        lang = self._lang(traj)
        future = sorted(
            (e for e in traj.graph.events if e.state == "planned" and e.start > now and e.depth > 0),
            key=lambda e: e.start,
        )[:12]
        if not future:
            return
        if event.change:
            params = realizer.merged_params(event, traj)
            happened = f"{event.change}: " + ", ".join(
                params.get(SET + k, "") for k in CHANGES[event.change].attributes
            )
        else:
            happened = event.title
        listed = {e.id: e for e in future}
        fixed = {e.id for e in future if e.pending_anchors or e.anchor_id}
        prompt = render(
            "reviser",
            lang,
            persona=self._persona(traj, now),
            happened=happened,
            future=[
                {"id": e.id, "title": e.title, "start": f"{e.start:%Y-%m-%d}", "fixed": e.id in fixed}
                for e in future
            ],
        )

        def check(out: Revisions) -> list[str]:
            problems = []
            for i, action in enumerate(out.actions, start=1):
                if action.event_id not in listed:
                    problems.append(f"action {i}: {action.event_id!r} is not one of the future events listed")
                elif action.action == "delete" and action.event_id in fixed:
                    problems.append(
                        f"action {i}: {action.event_id} is fixed (it holds an app record) "
                        "and cannot be deleted"
                    )
                if action.action == "modify" and (not action.title.strip() or len(action.title) > 80):
                    problems.append(f"action {i}: a modify needs a new title under 80 characters")
            return problems

        out, reason = self._ask("reviser", prompt, Revisions, check, max_tokens=300)
        if out is None:
            self.stats.add("reviser", "fallbacks")  # the procedural consequences above stand alone
            return
        for action in out.actions:
            target = traj.events.get(action.event_id)
            if target is None:
                continue
            why = f"LLM reviser: {action.reason or happened}"[:300]
            if action.action == "delete":
                reviser._delete(target, traj, now, why)
            else:
                before = target.title
                target.title = action.title.strip()
                traj.record(
                    Revision(
                        at=now,
                        agent="reviser",
                        action="modify",
                        event_id=target.id,
                        reason=why,
                        detail={"title": f"{before} -> {target.title}"},
                    )
                )


__all__ = ["LLMBrain", "SynthesisError"]


def world_problems(
    turns: list[tuple[str, str]], leaf: Event, traj: Trajectory, anchor, res, start: datetime
) -> list[str]:
    """What the coherence checker (keme.world.check) finds in an LLM dialogue, said as the session would
    be: its messages a minute apart from `start`, in the persona's schedule. The same checks `keme
    validate` runs, fed back so the model can fix what contradicts the world."""
    persona = traj.persona
    messages = []
    if anchor is not None:
        messages.append(
            Message(
                id="probe-m00",
                role="system",
                app=anchor.app_name,
                content=anchor_message_text(anchor, res),
                timestamp=start,
            )
        )
    for i, (role, text) in enumerate(turns):
        messages.append(
            Message(
                id=f"probe-m{i + 1:02d}", role=role, content=text, timestamp=start + timedelta(minutes=i + 1)
            )  # type: ignore[arg-type]
        )
    session = Session(
        id="probe",
        persona_id=persona.id,
        event_id=leaf.id,
        language=persona.language,
        pattern=leaf.kind,
        anchor_id=leaf.anchor_id,
        author="llm",
        start=messages[0].timestamp,
        end=messages[-1].timestamp,
        messages=messages,
    )
    view = PersonaView(
        persona,
        anchors=traj.anchors,
        graph=traj.graph,
        sessions=[session],
        schedule=schedule_of(persona, traj.graph, persona.country, [*traj.sessions, session], traj.anchors),
    )
    lang = persona.language
    ids = {m.id for m in messages}
    found = check_world(view, load_catalog(lang), load_cues(lang))
    return [f"{f.rule}: {f.text}".replace("probe-", "message ") for f in found if ids & set(f.message_ids)]
