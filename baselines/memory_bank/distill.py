"""Rule-based distillation of a session into Memory Bank records (the offline stand-in for the LLM step).

What goes where:
- episodic: exactly one episode per session (the seed's "one entry per task"):
  its goal is the user's first message, its events every message, its summary
  the working-memory snapshot after replaying the session step by step;
- semantic, at most 7 entries per session:
  * each app record (a system message named after its app) — app knowledge,
    attributed to that app;
  * at most 1 chat preference: the first user message that hits an intent
    keyword ("from now on", "prefer", "like", … and Chinese equivalents), as the
    seed's chat-preference distillation does;
  * up to 3 positive experiences: the user messages richest in specifics
    (amounts, numbers, capitalised names), with the assistant's reply;
  * up to 2 negative experiences: user messages that report something going
    wrong ("doesn't work", "broke", "坏了", …), mirroring the seed's pitfalls.
"""

from __future__ import annotations

import re

from baselines.memory_bank.records import Episode, SemanticEntry, ms
from baselines.memory_bank.working import WorkingMemory
from keme.models import Session

PREFERENCE = re.compile(
    r"from now on|\bprefer|\bi (?:really )?(?:like|love|hate)\b|\balways\b|\bnever\b|\bfavou?rite\b|allergic"
    r"|以后|喜欢|偏好|习惯|总是|从不|最爱|过敏|不吃",
    re.I,
)
PROBLEM = re.compile(
    r"doesn'?t work|not working|broke|broken|failed|fails|error|can'?t|won'?t"
    r"|keeps? (?:crash|disconnect|dropp)"
    r"|坏了|不行|失败|出问题|没反应|报错|打不开|连不上",
    re.I,
)
_SPECIFIC = re.compile(r"[$¥￥]\s?\d|\d|\b[A-Z][a-z]+(?:\s[A-Z][a-z]+)*")
_KEYWORD = re.compile(r"\b[A-Z][\w'&-]+(?:\s[A-Z][\w'&-]+)*|[$¥￥]\s?\d[\d,.]*")


def keywords(text: str, limit: int = 5) -> list[str]:
    """Retrieval keywords: capitalised names and amounts, as whole words (the seed indexes keywords
    unsplit)."""
    found = [k.strip() for k in _KEYWORD.findall(text) if len(k.strip()) > 1]
    return list(dict.fromkeys(found))[:limit]


def _title(text: str) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line[:80]


def distill(session: Session, new_id) -> tuple[Episode, list[SemanticEntry]]:
    working = WorkingMemory()
    events = []
    for message in session.messages:
        who = message.app or message.role
        working.add_step(f"{who}: {message.content}")
        events.append({"t": message.timestamp.isoformat(), "role": who, "text": message.content[:300]})
    user_turns = [m for m in session.messages if m.role == "user"]
    created = ms(session.end)
    episode = Episode(
        id=new_id("epi"),
        goal=(user_turns[0].content if user_turns else session.messages[0].content)[:200],
        events=events,
        summary=working.build_context(),
        created_at=created,
        message_ids=[m.id for m in session.messages],
        session_ids=[session.id],
    )
    reply_after = {a.id: b for a, b in zip(session.messages, session.messages[1:]) if b.role == "assistant"}
    entries: list[SemanticEntry] = []

    def entry(
        message,
        title: str,
        content: str,
        polarity: str = "positive",
        app: str | None = None,
        extra: list[str] | None = None,
    ) -> SemanticEntry:
        ids = [message.id] + (
            [reply_after[message.id].id] if message.id in reply_after and message.role == "user" else []
        )
        return SemanticEntry(
            id=new_id("sem"),
            title=title,
            content=content,
            keywords=keywords(content) + (extra or []),
            polarity=polarity,
            app=app,
            created_at=ms(message.timestamp),
            message_ids=ids,
            session_ids=[session.id],
        )

    for message in session.messages:
        if message.role == "system" and message.app:
            entries.append(
                entry(
                    message,
                    f"{message.app}: {_title(message.content)}",
                    message.content,
                    app=message.app,
                    extra=[message.app],
                )
            )
    preference = next((m for m in user_turns if PREFERENCE.search(m.content)), None)
    if preference is not None:
        entries.append(entry(preference, f"Preference: {_title(preference.content)}", preference.content))
    problems = [m for m in user_turns if PROBLEM.search(m.content) and m is not preference][:2]
    for message in problems:
        reply = reply_after.get(message.id)
        entries.append(
            entry(
                message,
                _title(message.content),
                message.content + ("\n" + reply.content if reply else ""),
                polarity="negative",
            )
        )
    taken = {id(preference)} | {id(m) for m in problems}
    rich = sorted(
        (m for m in user_turns if id(m) not in taken),
        key=lambda m: (-len(_SPECIFIC.findall(m.content)), m.timestamp),
    )
    for message in [m for m in rich if _SPECIFIC.search(m.content)][:3]:
        reply = reply_after.get(message.id)
        entries.append(
            entry(message, _title(message.content), message.content + ("\n" + reply.content if reply else ""))
        )
    return episode, entries
