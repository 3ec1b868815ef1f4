"""Rule-based, offline distillation of a session into fact and skill drafts (no model calls).

The seed's facts arrive with explicit keys from the GUI agent; a replayed chat has none, so these
rules decide what becomes a fact and under which key:

(a) An app record (a system message with an app name) becomes a dated record fact
    "<kind>:<YYYY-MM-DD>" — kind from lexicon.app_kind (Wallet/钱包 -> bill), date = the day the app
    reported it on the replay clock (not a date written inside it). Records never update each other:
    the second record of one kind on one day becomes "<kind>:<date>:2", the third ":3", and so on
    (`allocate`), across sessions too.
(b) A user statement — not a question, in the first person (I/my/we…, 我) — that names persona
    attributes (lexicon.ATTRIBUTES) is filed under each named attribute key ("health.allergy"), so a
    later statement with the same key deprecates it: a knowledge update. The whole message is the
    value; rules cannot reliably cut out the value span.
    Every other user message becomes a dated "said:<date>[:n]" note, so nothing the user said is lost
    to the BM25 fallback (the seed has no notion of free talk; dropping it would leave most questions
    unanswerable).
(c) An assistant reply holding an enumerated procedure — 3+ numbered (1. / 1) / 1、/ 第一步 / ①) or
    bulleted (- * •) items, one per line or numbered inline — becomes a skill: its steps are the items,
    its trigger requires the last two content words of the user request before it (the topic usually
    comes last, in both languages), its context is the session's language ("lang:en").
Assistant small talk and system messages without an app are not memories here.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from baselines.factmem import lexicon
from baselines.factmem.skills import Skill
from baselines.text import message_text
from keme.models import Message, Session
from keme.text.tokens import search_terms

MIN_STEPS = 3
TRIGGER_WORDS = 2

_LINE_ITEM = re.compile(
    r"^\s*(?:\d{1,2}\s*[.)、．]|[-*•·]|第[一二三四五六七八九十\d]+步[：:，,]?|[①-⑩])\s*(\S.*)$"
)
_INLINE_NUMBER = re.compile(r"(?:^|(?<=\s))(\d{1,2})[.)]\s+|[①-⑩]")
_EN_STOP = frozenset(
    (
        "a",
        "an",
        "the",
        "and",
        "or",
        "but",
        "if",
        "of",
        "to",
        "in",
        "on",
        "at",
        "for",
        "with",
        "from",
        "by",
        "about",
        "into",
        "over",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "am",
        "do",
        "does",
        "did",
        "doing",
        "have",
        "has",
        "had",
        "can",
        "could",
        "would",
        "should",
        "will",
        "shall",
        "may",
        "might",
        "must",
        "i",
        "me",
        "my",
        "we",
        "our",
        "you",
        "your",
        "he",
        "she",
        "it",
        "its",
        "they",
        "them",
        "their",
        "this",
        "that",
        "these",
        "those",
        "what",
        "which",
        "who",
        "whom",
        "how",
        "when",
        "where",
        "why",
        "there",
        "here",
        "just",
        "so",
        "very",
        "too",
        "also",
        "some",
        "any",
        "all",
        "please",
        "tell",
        "show",
        "help",
        "give",
        "get",
        "got",
        "make",
        "let",
        "want",
        "need",
        "know",
        "like",
        "again",
        "now",
        "then",
        "than",
        "not",
        "no",
        "yes",
        "okay",
        "ok",
        "hi",
        "hey",
        "hello",
        "thanks",
        "thank",
        "way",
        "ways",
        "step",
        "steps",
    )
)
_ZH_FUNCTION = frozenset(
    "我你他她它们的了吗呢吧啊呀么什怎如何个这那是有在和就都也要想请帮问好做给一下能会可以该还再把被让"
)


@dataclass(frozen=True)
class FactDraft:
    key: str  # an attribute key, or a dated base key to be suffixed by `allocate`
    dated: bool
    value: str
    at: datetime
    source: str
    message_id: str
    session_id: str


@dataclass(frozen=True)
class SkillDraft:
    skill: Skill  # version "1.0.0"; the store bumps it if the name exists
    at: datetime
    message_ids: tuple[str, ...]  # the request and the reply
    session_id: str


def allocate(base: str, taken: Callable[[str], bool]) -> str:
    """`base` if free, else the first free of base:2, base:3, …"""
    if not taken(base):
        return base
    n = 2
    while taken(f"{base}:{n}"):
        n += 1
    return f"{base}:{n}"


def procedure_steps(text: str) -> list[str] | None:
    """The items of an enumerated procedure with at least MIN_STEPS items, else None."""
    items = [m.group(1).strip() for line in text.splitlines() if (m := _LINE_ITEM.match(line))]
    if len(items) >= MIN_STEPS:
        return items
    marks = list(_INLINE_NUMBER.finditer(text))
    numbers = [int(m.group(1)) if m.group(1) else "①②③④⑤⑥⑦⑧⑨⑩".index(m.group(0)) + 1 for m in marks]
    if len(marks) >= MIN_STEPS and numbers == list(range(1, len(marks) + 1)):
        ends = [m.start() for m in marks[1:]] + [len(text)]
        inline = [text[m.end() : end].strip() for m, end in zip(marks, ends)]
        if all(inline):
            return inline
    return None


def _content_words(text: str) -> list[str]:
    words: list[str] = []
    for token in search_terms(text):
        if token.isascii():
            keep = len(token) >= 3 and not token.isdigit() and token not in _EN_STOP
        else:
            keep = not any(ch in _ZH_FUNCTION for ch in token)
        if keep and token not in words:
            words.append(token)
    return words


def trigger_for(request: str) -> str | None:
    """A case-insensitive regex requiring (in any order) the request's last TRIGGER_WORDS content words."""
    words = _content_words(request)[-TRIGGER_WORDS:]
    if not words:
        return None
    parts = [rf"\b{re.escape(w)}\b" if w.isascii() else re.escape(w) for w in words]
    return "(?is)^" + "".join(f"(?=.*{p})" for p in parts)


def _skill_draft(session: Session, request: Message | None, reply: Message) -> SkillDraft | None:
    steps = procedure_steps(reply.content)
    if steps is None or request is None:
        return None
    trigger = trigger_for(request.content)
    if trigger is None:
        return None
    name = "how:" + "-".join(_content_words(request.content)[-TRIGGER_WORDS:])
    skill = Skill(name=name, trigger=trigger, context=(f"lang:{session.language}",), steps=tuple(steps))
    return SkillDraft(skill, reply.timestamp, (request.id, reply.id), session.id)


def _user_drafts(session: Session, message: Message) -> list[FactDraft]:
    text = message.content
    keys = (
        [] if lexicon.is_question(text) or not lexicon.is_first_person(text) else lexicon.attribute_keys(text)
    )
    if keys:
        return [
            FactDraft(key, False, text, message.timestamp, "user", message.id, session.id) for key in keys
        ]
    day = message.timestamp.date().isoformat()
    return [FactDraft(f"{lexicon.SAID}:{day}", True, text, message.timestamp, "user", message.id, session.id)]


def distill(session: Session) -> tuple[list[FactDraft], list[SkillDraft]]:
    """Fact and skill drafts of one session, in message order."""
    facts: list[FactDraft] = []
    skills: list[SkillDraft] = []
    last_request: Message | None = None
    for message in session.messages:
        if not message.content.strip():
            continue
        if message.role == "system" and message.app:
            key = f"{lexicon.app_kind(message.app)}:{message.timestamp.date().isoformat()}"
            facts.append(
                FactDraft(
                    key,
                    True,
                    message_text(message),
                    message.timestamp,
                    f"app:{message.app}".replace("|", "/"),
                    message.id,
                    session.id,
                )
            )
        elif message.role == "user":
            facts += _user_drafts(session, message)
            last_request = message
        elif message.role == "assistant":
            draft = _skill_draft(session, last_request, message)
            if draft is not None:
                skills.append(draft)
    return facts, skills
