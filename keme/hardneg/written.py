"""Distractors an LLM writes (`keme hardneg --brain llm|hybrid`): a short chat on the question's topic,
in its key words, that must not answer it.

The instruction forbids restating the core facts (the gold and the evidence lines, as KEME's global
instruction does) and mentioning any amount, number, date, time or name. What comes back is then held
to the same rules, independently of the instruction: it is refused when it states the gold (the rule
check), copies an evidence line, holds a digit, a date, a known person's name or a capitalized name the
question and evidence do not (a value that could compete with the gold), has a message too short to be
one, shares no key word with the question, or is not in the trajectory's language. A refused reply
is asked again once with the problems named, then left out. The messages carry no claims: they state
nothing the ledger could hold, which is what the number and name checks enforce.
"""

from __future__ import annotations

import random
import re
from datetime import datetime

from pydantic import BaseModel, Field

from keme.brains.prompts import feedback, render
from keme.hardneg.prove import gold_forms, states
from keme.hardneg.voices import chat_session
from keme.llm import CallFailed, LLMClient, StructuredOutputError
from keme.llm.client import parse_structured
from keme.models import Claim, QAItem, Session
from keme.text import lang as fmt
from keme.text.dates import date_phrases
from keme.text.tokens import han_count, has_han

ANGLES = {
    "en": (
        "Let it be about someone else's experience with the same thing, not the user's own.",
        "Let it be about a plan on the same topic that the user dropped before it happened.",
        "Let it be a general question on the topic, with no personal facts in it.",
        "Let it be about what might happen, a hypothetical, not what did happen.",
    ),
    "zh": (
        "让对话讲别人在同一件事上的经历，而不是用户自己的。",
        "让对话讲用户在这个话题上的一个计划，后来没有做成。",
        "让对话是关于这个话题的一般性问题，不涉及任何个人事实。",
        "让对话讲可能会发生的事，一个假设，而不是真的发生了的事。",
    ),
}
EXCHANGES = 2
MIN_WORDS = 4  # words in English, pairs of characters in Chinese


def _size(text: str, language: str) -> int:
    return han_count(text) // 2 if language == "zh" else len(text.split())


def _terms(text: str, language: str) -> list[str]:
    """The words that carry a topic: English words of five letters or more, Chinese character pairs."""
    if language == "zh":
        runs = re.findall(r"[\u4e00-\u9fff]+", text)
        return [r[i : i + 2] for r in runs for i in range(len(r) - 1)]
    return [w.lower() for w in re.findall(r"[A-Za-z]{5,}", text)]


class Turn(BaseModel):
    user_message: str = Field(min_length=1, max_length=400)
    assistant_reply: str = Field(min_length=1, max_length=400)


class Written(BaseModel):
    exchanges: list[Turn] = Field(min_length=1, max_length=4)


def problems(
    reply: Written, item: QAItem, evidence: list[str], people: frozenset[str], language: str
) -> list[str]:
    """What makes a written chat unusable as a distractor for `item` (empty: usable)."""
    found = []
    texts = [t for turn in reply.exchanges for t in (turn.user_message, turn.assistant_reply)]
    text = "\n".join(texts)
    said = states(text, gold_forms(item))
    if said:
        found.append(f"it states the answer ({said!r})")
    for line in evidence:
        if len(line) >= 20 and line in text:
            found.append(f"it copies a line of the evidence ({line[:40]!r})")
    if re.search(r"\d", text) or date_phrases(text):
        found.append("it mentions a number or a date")
    known = f"{item.question}\n" + "\n".join(evidence)
    new_names = sorted(
        {
            m.group(1)
            for t in texts
            for m in re.finditer(r"(?<=[a-z,;:] )([A-Z][a-z]+)", t)
            if m.group(1) not in known
        }
    )
    if new_names:
        found.append(f"it names someone or something the question does not ({new_names[0]})")
    if any(_size(t, language) < MIN_WORDS for t in texts):
        found.append(f"a message is shorter than {MIN_WORDS} words")
    if not set(_terms(item.question, language)) & set(_terms(text, language)):
        found.append("it does not use the question's key words")
    named = sorted(n for n in people if len(n) > 1 and re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text))
    if named:
        found.append(f"it names a person ({named[0]})")
    for i, t in enumerate(texts, start=1):
        chinese = has_han(t) if language == "zh" else han_count(t) > 0.1 * max(1, len(t))
        if chinese != (language == "zh"):
            found.append(f"message {i} is not written in {'Chinese' if language == 'zh' else 'English'}")
            break
    return found


def write(
    client: LLMClient,
    item: QAItem,
    evidence: list[str],
    people: frozenset[str],
    name: str,
    sid: str,
    pid: str,
    language: str,
    when: datetime,
    rng: random.Random,
    retries: int = 1,
) -> tuple[tuple[Session, list[Claim]] | None, str]:
    """A written distractor session for `item` starting at `when` (None, and why, when the model's
    replies were all refused or the call failed)."""
    lang = language if language in ANGLES else "en"
    prompt = render(
        "hardneg",
        lang,
        name=name,
        date=fmt.format_date(when.date(), lang) + (f" {when.year}" if lang == "en" else ""),
        question=item.question,
        angle=rng.choice(ANGLES[lang]),
        facts=[item.answer, *evidence][:6],
        exchanges=EXCHANGES,
    )
    history = [{"role": "user", "content": prompt}]
    found: list[str] = []
    for attempt in range(retries + 1):
        raw = ""
        try:
            completion = client.chat(
                history,
                stage="hardneg.writer",
                schema=Written.model_json_schema(),
                seed=rng.randrange(1 << 30) + attempt,
            )
            raw = completion.content
            reply = parse_structured(raw, Written)
            found = problems(reply, item, evidence, people, lang)
        except StructuredOutputError as exc:
            found, reply = [str(exc)], None
        except CallFailed as exc:
            return None, f"the LLM call failed: {exc}"
        if reply is not None and not found:
            lines = []
            for turn in reply.exchanges:
                lines += [
                    ("user", turn.user_message.strip(), []),
                    ("assistant", turn.assistant_reply.strip(), []),
                ]
            return chat_session(sid, pid, language, when, lines), ""
        history = history + feedback(raw, found, limit=6)
    return None, "; ".join(found[:3])
