"""Mining: the sessions elsewhere in the corpus that a retriever would most likely take for a question's
evidence — the persona's own other sessions (its values from before an update among them), and for
imported dialogues the sessions of other conversations, told by this conversation's speakers.

Sessions are ranked by BM25 (bm25s, over the search terms the lexical systems use) against the
question and its evidence: a distractor is only useful if it looks like what is asked about.
"""

from __future__ import annotations

import re

import bm25s
import numpy as np

from keme.models import Message, Session
from keme.text.tokens import search_terms


def session_text(session: Session) -> str:
    return "\n".join(m.content for m in session.messages)


def rank(query: str, sessions: list[Session]) -> list[tuple[float, Session]]:
    """`sessions` by BM25 score against `query`, best first; sessions sharing no term are left out."""
    if not sessions:
        return []
    corpus = [search_terms(session_text(s)) or ["\x00"] for s in sessions]
    index = bm25s.BM25(method="lucene")
    index.index(corpus, show_progress=False)
    terms = [t for t in dict.fromkeys(search_terms(query)) if t in index.vocab_dict]
    if not terms:
        return []
    scores = np.asarray(index.get_scores(terms), dtype=float)
    order = sorted(range(len(sessions)), key=lambda i: (-scores[i], sessions[i].start, sessions[i].id))
    return [(float(scores[i]), sessions[i]) for i in order if scores[i] > 0]


def speakers(session: Session) -> list[str]:
    """The named speakers of an imported dialogue, in order of first turn."""
    return list(dict.fromkeys(m.speaker for m in session.messages if m.speaker))


def adapt(session: Session, names: dict[str, str]) -> Session:
    """A session of another conversation told by this one's speakers: each speaker name (as speaker and
    where the text says it) becomes the name it maps to."""
    if not names:
        return session
    pattern = re.compile("|".join(rf"\b{re.escape(n)}\b" for n in sorted(names, key=len, reverse=True)))

    def swap(message: Message) -> Message:
        return message.model_copy(
            update={
                "speaker": names.get(message.speaker or "", message.speaker),
                "content": pattern.sub(lambda m: names[m.group(0)], message.content),
            }
        )

    return session.model_copy(update={"messages": [swap(m) for m in session.messages]})
