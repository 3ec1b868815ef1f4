"""Distractors in other voices: what someone else says of themselves, and the question asked before.

- `other_person`: a line of the user's evidence (or an app record, as theirs) quoted as another person's
  words ("My friend Sam said: 'since I'm vegan ...'"), a value of the persona's own swapped for one the
  persona never held. It is recorded as claims about that person (`person:<name>`), never about the
  persona or its events, so the ledger's answer stays the persona's own.
- `asked_before`: the user asked about the same thing earlier and left it for later (the assistant
  neither answers nor claims not to know: the evidence may already be in the trajectory). It asserts
  nothing, so it is small talk; it shares the question's key terms, which is what makes it a
  distractor. One per question by default (`bench/hardneg.py --without asked_before` measures the
  difficulty without it); `like_question` uses it for the questions most like this one.
- `other_ask`: someone else asked the user the same question, and the answer for them was another value
  ("Keisha asked me the same thing: '...' For Keisha it was keto."). It is recorded as a claim about
  that person; it needs nothing but the question's text, so it works on imported data as well. Three
  per question by default (`HardnegSettings.asks`; `--without other_ask` measures without them).
- `other_person` in free text (imported dialogues, no ledger): an evidence line quoted as a friend's
  words, the gold swapped for another question's where the line says it as written.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta

from keme.hardneg.twins import _DATE, _TIME, MIN_SWAP, _pattern, other_value
from keme.models import Claim, Message, Session

QUOTES = {
    "en": ('{name}: "{line}"', '{name} texted: "{line}"', '{name} said "{line}"'),
    "zh": ("{name}说：“{line}”", "{name}发消息：“{line}”", "{name}：“{line}”"),
}
FORWARDS = {
    "en": ('{name} sent me a screenshot of theirs: "{line}"', '{name} forwarded me this: "{line}"'),
    "zh": ("{name}把自己那条截图发给我：“{line}”", "{name}转发给我的：“{line}”"),
}
REPLIES = {
    "en": ("Ha, that sounds like {name}.", "Good to know about {name}.", "That's very {name}."),
    "zh": ("哈哈，很像{name}会说的话。", "了解，{name}是这样的。", "挺有{name}的风格。"),
}
ASKS = {
    "en": (
        "Quick one, I'll look it up later: {question}",
        "Remind me to check this: {question}",
        "{question} Actually, never mind, not now.",
    ),
    "zh": ("先记一下，回头再查：{question}", "提醒我查一下：{question}", "{question}算了，先不说这个。"),
}
LATER = {  # the assistant leaves it for later: it claims neither to know nor not to know
    "en": (
        "Sure, just ask me again when you have a minute.",
        "Okay, we can go through it later.",
        "No rush, bring it up again whenever you like.",
    ),
    "zh": ("好的，你有空再问我。", "行，回头我们再一起看。", "不着急，想起来再跟我说。"),
}
OTHER_ASKS = {
    "en": (
        '{name} asked me the same thing the other day: "{question}"',
        '{name} was wondering too: "{question}"',
        'Funny, {name} texted me this morning: "{question}"',
    ),
    "zh": (
        "{name}前几天也问过我：“{question}”",
        "{name}也在问：“{question}”",
        "{name}今天早上发消息问我：“{question}”",
    ),
}
THEIR_ANSWER = {
    "en": (" For {name} it was {value}.", " {name}'s answer was {value}.", " In {name}'s case: {value}."),
    "zh": ("{name}那边是{value}。", "{name}的答案是{value}。", "换成{name}的话是{value}。"),
}
OTHER_REPLIES = {
    "en": ("Got it, that one's {name}'s.", "Noted as {name}'s, not yours.", "Okay, that's about {name}."),
    "zh": ("明白，这是{name}的情况。", "记下了，是{name}的，不是你的。", "好的，这说的是{name}。"),
}
THEIRS_THEN = {  # the question's day, said of the friend's own (free text: the day it asks about)
    "en": (" That was theirs, {prep} {when}.", " Theirs, not mine, {prep} {when}."),
    "zh": ("那是他们{when}的事。", "说的是他们自己{when}的情况。"),
}
FRIENDS = {
    "en": ('A friend told me: "{line}"', 'My cousin texted: "{line}"', 'Someone at work said "{line}"'),
    "zh": ("朋友跟我说：“{line}”", "我表姐发消息：“{line}”", "同事说：“{line}”"),
}
NAME_PREDICATES = ("person", "companion", "colleague", "relative", "social_circle.best_friend")


def names_of(claims: list[Claim], persona_name: str) -> list[str]:
    """The people the persona talks about (who another voice can be)."""
    names = {c.value for c in claims if c.predicate in NAME_PREDICATES and c.value != persona_name}
    return sorted(n for n in names if 2 <= len(n) <= 30 and "," not in n and " and " not in n)


def chat_session(
    sid: str, pid: str, language: str, when: datetime, lines: list[tuple[str, str, list[Claim]]]
) -> tuple[Session, list[Claim]]:
    """A distractor session of `lines` (role, text, the claims the text states), 40 s apart; a line with
    no claim is small talk."""
    messages, claims = [], []
    for i, (role, text, own) in enumerate(lines, start=1):
        mid = f"{sid}-m{i:02d}"
        bound = [
            c.model_copy(update={"id": f"{mid}-c{k}", "message_id": mid, "said": text})
            for k, c in enumerate(own, start=1)
        ]
        messages.append(
            Message(
                id=mid,
                role=role,
                content=text,
                timestamp=when + timedelta(seconds=40 * (i - 1)),
                claims=[c.id for c in bound],
                smalltalk=not bound,
            )
        )
        claims += bound
    session = Session(
        id=sid,
        persona_id=pid,
        event_id=f"{sid}-e",
        language=language,
        pattern="hardneg",
        start=messages[0].timestamp,
        end=messages[-1].timestamp,
        messages=messages,
    )
    return session, claims


def _about(name: str, predicate: str, value: str, pid: str, when: datetime, text: str) -> Claim:
    """A claim the user states about another person (ids and message bound by `_session`)."""
    return Claim.model_construct(
        id="",
        persona_id=pid,
        message_id="",
        speaker="user",
        subject=f"person:{name}",
        predicate=predicate,
        value=value,
        valid_from=when,
        valid_to=None,
        said=text,
    )


def other_person(
    message: Message,
    claims: list[Claim],
    names: list[str],
    pool: dict[str, list[str]],
    held: dict[str, set[str]],
    sid: str,
    pid: str,
    language: str,
    when: datetime,
    rng: random.Random,
) -> tuple[Session, list[Claim]] | None:
    """The user's `message` as another person's words, recorded as claims about that person: a value of
    the persona's own swapped for one the persona never held (`held`: predicate -> values), the rest as
    said. None when the line is the assistant's, states a date or time in words (it may be relative),
    names a value of the persona that cannot be swapped, or names everyone who could say it."""
    if message.role == "assistant" or not claims or not names:
        return None
    line = message.content
    for claim in claims:
        if claim.value not in line and (_DATE.match(claim.value) or _TIME.match(claim.value)):
            return None
    recorded: list[tuple[str, str]] = []
    for claim in claims:
        value = claim.value
        if claim.subject == "persona":
            if len(value) < MIN_SWAP or _pattern(value).search(line) is None:
                return None
            unheld = {p: [v for v in values if v not in held.get(p, set())] for p, values in pool.items()}
            value = other_value(claim.value, claim.predicate, unheld, rng)
            if value is None or value in held.get(claim.predicate, set()):
                return None
            line = _pattern(claim.value).sub(value, line)
            if _pattern(claim.value).search(line):
                return None
        recorded.append((claim.predicate, value))
    speakers = [n for n in names if n not in line]
    if not speakers:
        return None
    name = rng.choice(speakers)  # not someone the line names ("It's me and Ethan", said by Ethan)
    quotes = FORWARDS if message.role == "system" else QUOTES  # an app record: the other person's own
    text = rng.choice(quotes[language]).format(name=name, line=line)
    said = [_about(name, predicate, value, pid, when, text) for predicate, value in dict.fromkeys(recorded)]
    reply = rng.choice(REPLIES[language]).format(name=name)
    return chat_session(sid, pid, language, when, [("user", text, said), ("assistant", reply, [])])


def asked_before(
    question: str, sid: str, pid: str, language: str, when: datetime, rng: random.Random
) -> tuple[Session, list[Claim]]:
    """The question asked earlier, with no answer given."""
    ask = rng.choice(ASKS[language]).format(question=question)
    return chat_session(
        sid, pid, language, when, [("user", ask, []), ("assistant", rng.choice(LATER[language]), [])]
    )


def other_ask(
    question: str,
    name: str,
    answer: tuple[str, str, str] | None,
    sid: str,
    pid: str,
    language: str,
    when: datetime,
    rng: random.Random,
) -> tuple[Session, list[Claim]]:
    """Someone else asked the same question; `answer` (predicate, value, value as said), when given, is
    theirs: the value is said and, where the predicate is a ledger one, recorded as a claim about that
    person."""
    text = rng.choice(OTHER_ASKS[language]).format(name=name, question=question)
    said = []
    if answer is not None:
        predicate, value, said_as = answer
        text += rng.choice(THEIR_ANSWER[language]).format(name=name, value=said_as)
        if predicate:
            said.append(_about(name, predicate, value, pid, when, text))
    reply = rng.choice(OTHER_REPLIES[language]).format(name=name)
    return chat_session(sid, pid, language, when, [("user", text, said), ("assistant", reply, [])])


def quoted(
    message: Message,
    swaps: list[tuple[list[str], list[str]]],
    qualifiers: list[str],
    reply_role: str,
    sid: str,
    pid: str,
    language: str,
    when: datetime,
    rng: random.Random,
) -> tuple[Session, list[Claim]] | None:
    """For free text (no ledger): an evidence line quoted as someone else's words. `swaps` pairs each
    gold's forms with the values that may stand in for it; where the line writes a gold, one of its
    stand-ins takes its place (None when it has none). The days the question names (`qualifiers`) that
    the line does not are said as the friend's own, so the quote matches the question as closely as the
    evidence does. The caller's rule check still holds the result to stating no gold."""
    line = message.content
    for forms, others in swaps:
        for form in forms:
            found = re.search(re.escape(form), line, flags=re.IGNORECASE)
            if found is None:
                continue
            choices = [o for o in others if o.casefold() != form.casefold()]
            if not choices:
                return None
            line = line[: found.start()] + rng.choice(choices) + line[found.end() :]
    text = rng.choice(FRIENDS[language]).format(line=line)
    missing = [q for q in qualifiers if q.casefold() not in line.casefold()]
    if missing:
        day = missing[0]
        prep = "in" if re.fullmatch(r"\D+\s\d{4}", day) else "on"  # in April 2026, on May 10
        text += rng.choice(THEIRS_THEN[language]).format(when=day, prep=prep)
    reply = rng.choice(REPLIES[language]).format(name="them" if language == "en" else "他们")
    session, claims = chat_session(
        sid, pid, language, when, [(message.role, text, []), (reply_role, reply, [])]
    )
    if message.speaker:
        first = session.messages[0].model_copy(update={"speaker": message.speaker})
        session = session.model_copy(update={"messages": [first, *session.messages[1:]]})
    return session, claims
