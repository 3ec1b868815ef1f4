"""Proof that a persona's filler sessions state nothing its questions depend on.

Filler (keme/synth/filler.py) is the haystack: chats that must not touch the persona's world. This
check does not trust the generator's own rules; it reads the written data:

- a filler session is marked, has no anchor, no screenshot, and every message of it is small talk;
- no claim of the ledger is said in a filler message, and no question cites one as evidence, but a
  question about the chats themselves (at what time of day the user chats: every session counts);
- no filler message names a string of the persona's world (its name, attribute values, event and
  record values: keme.stats.entity_strings) or a string a question depends on (a gold value, alias or
  item, the value of a qualifier it asks about, an abstention term), and none states a digit;
- no filler user message speaks about the user (first person), which could back or contradict a fact.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from keme.dataset.views import PersonaView
from keme.models import QAItem
from keme.stats import entity_strings
from keme.text.normalize import norm_text

_FIRST_PERSON = {
    "en": re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|mine|myself|we|we're|we've|our|ours|us)\b"),
    "zh": re.compile(r"我(?!们)|我们|咱|俺"),
}
_ZH_REQUESTS = re.compile(r"帮我|给我|告诉我|教教我|教我|跟我|替我|为我|让我看看")
_DIGIT = re.compile(r"\d")
_PLAIN = re.compile(r"^(?:yes|no|[a-z]|\d[\d.,:\- ]*)$")  # a yes/no, a letter, a number or a date


def question_strings(items: Iterable[QAItem]) -> set[str]:
    """The strings the persona's questions depend on, as said (numbers, dates, yes/no and letters aside:
    filler states no digit, and a bare letter or yes/no is no statement)."""
    found: set[str] = set()
    for item in items:
        spec = item.spec
        found.update(v for v in [spec.value, spec.option_value, *spec.aliases, *spec.items] if v)
        for query in item.queries:
            found.update(v for v in query.where.values() if v)
        found.update(getattr(item.proof.args, "terms", None) or [])  # an abstention's absent terms
    return {s for s in found if not _PLAIN.match(norm_text(s))}


def _pattern(words: set[str], lang: str) -> re.Pattern[str] | None:
    normal = {norm_text(w) for w in words}
    normal = {w for w in normal if len(w) >= (2 if lang == "zh" else 3)}
    if not normal:
        return None
    alternation = "|".join(re.escape(w) for w in sorted(normal, key=lambda w: (-len(w), w)))
    return re.compile(rf"(?<!\w)(?:{alternation})(?!\w)" if lang == "en" else f"(?:{alternation})")


def filler_problems(view: PersonaView) -> list[tuple[str, str]]:
    """(where, what) for every way a persona's filler could touch what its questions ask."""
    filler = [s for s in view.sessions if s.filler]
    if not filler:
        return []
    lang = view.lang
    out: list[tuple[str, str]] = []
    messages = {m.id: s.id for s in filler for m in s.messages}
    sessions = {s.id for s in filler}
    for claim in view.claims:
        if claim.message_id in messages:
            out.append((claim.id, f"a claim said in filler message {claim.message_id}"))
    for item in view.qa:
        if item.queries and all(q.aggregate == "sessions" for q in item.queries):
            continue  # a question about the chats themselves (when the user chats) counts filler chats too
        cited = [m for m in item.evidence if m in messages] + [
            s for s in item.evidence_sessions if s in sessions
        ]
        cited += [m for ms in item.also_supported_by.values() for m in ms if m in messages]
        if cited:
            out.append((item.id, f"cites filler as evidence: {cited[:3]}"))
    words = entity_strings(view) | question_strings(view.qa)
    pattern = _pattern(words, lang)
    for session in filler:
        if session.anchor_id is not None:
            out.append((session.id, f"a filler session holds app record {session.anchor_id}"))
        for message in session.messages:
            where = message.id
            if not message.smalltalk or message.claims or message.images or message.app:
                out.append((where, "a filler message must be small talk with no claim, image or app"))
            if _DIGIT.search(message.content):
                out.append((where, "a filler message states a digit"))
            normal = norm_text(message.content)
            if pattern is not None and (found := pattern.search(normal)):
                out.append(
                    (where, f"a filler message names {found.group(0)!r}, which the persona's data uses")
                )
            if message.role == "user":
                said = _ZH_REQUESTS.sub("", message.content) if lang == "zh" else normal
                if found := _FIRST_PERSON[lang].search(said):
                    out.append((where, f"a filler user message speaks about the user ({found.group(0)!r})"))
    return out
