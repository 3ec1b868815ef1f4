"""The LLM brain's QA roles: the composer rewords each question, the verifier gives a second opinion.

Neither can change what an item means. A reworded question must keep every
detail the question stated (the quoted values and dates), must not reveal the
answer, and must pass the full proof check again; otherwise the procedural
wording stays. The deterministic verifier remains the authority: the LLM
verifier's verdicts are counted (`advisory`) or, in `filter` mode, drop the
items it calls unsupported (never an item another one builds on).
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from keme.brains.base import BrainStats
from keme.brains.prompts import render
from keme.llm import CallFailed, LLMClient, StructuredOutputError
from keme.llm.client import parse_structured
from keme.models import QAItem
from keme.qa.facts import World
from keme.qa.verify import Verifier
from keme.text import lang as fmt
from keme.text.tokens import has_han


class Reworded(BaseModel):
    question: str = Field(max_length=400)


class Opinion(BaseModel):
    supported: bool
    reason: str = Field(default="", max_length=400)


def _kept_details(item: QAItem, lang: str) -> list[str]:
    """What the question states and a rewording must keep: quoted values and dates it mentions."""
    keep = [q.text for q in item.proof.quotes if q.text and q.text in item.question]
    for quote in item.proof.quotes:
        if quote.on is not None:
            shown = fmt.format_date(quote.on, lang)
            if shown in item.question:
                keep.append(shown)
    return list(dict.fromkeys(k for k in keep if k))


def reword(item: QAItem, world: World, client: LLMClient, stats: BrainStats, retries: int) -> QAItem:
    lang = world.lang
    keep = _kept_details(item, lang)
    verifier = Verifier(world)
    history = [
        {
            "role": "user",
            "content": render(
                "qa_composer", lang, persona={"name": world.persona.name}, keep=keep, question=item.question
            ),
        }
    ]
    for attempt in range(retries + 1):
        stats.add("qa_composer", "attempts")
        try:
            raw = client.chat(
                history,
                stage="qa.composer",
                schema=Reworded.model_json_schema(),
                max_tokens=120,
                seed=attempt,
            ).content
            text = parse_structured(raw, Reworded).question.strip()
        except StructuredOutputError as exc:
            raw, text, problems = exc.raw, "", [str(exc)]
        except CallFailed:  # counted by the client; FatalError stops the command
            stats.add("qa_composer", "call_errors")
            break
        else:
            problems = []
            if not text.endswith(("?", "？")):
                problems.append("the question must end with a question mark")
            if len(text) > 2.5 * len(item.question) + 40:
                problems.append("much too long")
            missing = [k for k in keep if k not in text]
            if missing:
                problems.append("keep these exactly: " + ", ".join(f'"{k}"' for k in missing))
            if lang == "zh" and not has_han(text):
                problems.append("write it in Chinese")
            if not problems:
                candidate = item.model_copy(update={"question": text})
                if not verifier.check(candidate):
                    stats.add("qa_composer", "accepted")
                    return candidate
                problems.append("it gives the answer away or changes the question")
        if attempt < retries:
            stats.add("qa_composer", "retries")
            history = history + [
                {"role": "assistant", "content": raw[:1000]},
                {
                    "role": "user",
                    "content": "Problems:\n- "
                    + "\n- ".join(problems)
                    + "\nReply again with corrected JSON only.",
                },
            ]
    stats.add("qa_composer", "fallbacks")
    return item


def second_opinion(item: QAItem, world: World, client: LLMClient, stats: BrainStats) -> bool | None:
    """The LLM's verdict on whether the evidence supports the answer (None if it could not say)."""
    evidence = [world.messages[m] for m in item.evidence[:8] if m in world.messages]
    if not evidence:
        return None
    prompt = render(
        "qa_verifier",
        world.lang,
        question=item.question,
        answer=item.answer,
        asked_at=f"{item.asked_at:%Y-%m-%d}",
        evidence=[
            {"time": f"{m.timestamp:%Y-%m-%d %H:%M}", "role": m.app or m.role, "content": m.content[:400]}
            for m in evidence
        ],
    )
    stats.add("qa_verifier", "attempts")
    try:
        raw = client.chat(
            [{"role": "user", "content": prompt}],
            stage="qa.verifier",
            schema=Opinion.model_json_schema(),
            max_tokens=120,
        ).content
        opinion = parse_structured(raw, Opinion)
    except (StructuredOutputError, CallFailed):
        stats.add("qa_verifier", "unreadable")
        return None
    stats.add("qa_verifier", "supported" if opinion.supported else "unsupported")
    return opinion.supported


def apply_llm_roles(items: list[QAItem], world: World, brain, cfg) -> tuple[list[QAItem], int]:
    """Reword (if enabled) and second-check every item; returns the items kept and how many were filtered."""
    client, stats = brain.client, brain.stats
    if cfg.brain.qa_composer:
        items = [reword(item, world, client, stats, cfg.brain.retries) for item in items]
    if cfg.brain.qa_verifier == "off":
        return items, 0
    referenced = {s for item in items for s in item.sub_questions}
    kept, dropped = [], 0
    for item in items:
        verdict = second_opinion(item, world, client, stats)
        if cfg.brain.qa_verifier == "filter" and verdict is False and item.id not in referenced:
            dropped += 1
            continue
        kept.append(item)
    return kept, dropped
