"""Talk about a document says only what the document holds: read from the document's own text.

A session about a document record (a lease, a pay stub, a W-2) may not take for granted a signature, a
deadline, contract clauses or amounts its text does not have ("Check the last pages, that's where the
signature lines are" of a pay stub; "Explain it like I'm not a lawyer" of a blood test), may not deny one
it has ("Nothing flagged as a hard deadline" of a lease to sign within 21 days), and may not treat a
one-page record as a long read. The document's features are read here from its title, type and summary
with this module's own cue words, apart from the generator's profile table (keme.synth.documents).

A question only asks ("Any deadlines in there?"), and a clause that says "if" only supposes: neither takes
the feature for granted; the answer is held to the document.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from keme.models import Message, Session
from keme.models.anchor import DocumentRecord
from keme.world.check.base import Finding, World, clauses, quote

RULE = "documents"
SHORT_PAGES = 2  # a record this short is no long read


@dataclass(frozen=True)
class Topic:
    """A feature a line may take for granted: the words that take it for granted in a message, and the
    words that show it in the document's own text."""

    name: str
    said: str
    held: str
    excused: bool = True  # a question, a supposition or a denial of it takes nothing for granted


TOPICS: dict[str, tuple[Topic, ...]] = {
    "en": (
        Topic(
            "a signature",
            r"\bsign(?:ed|ing|ature|atures)?\b(?![ -](?:off|of|up|in|out)\b)",
            r"\bsign(?:ed|ing|ature)?\b(?![ -](?:off|of|up|in|out)\b)",
        ),
        Topic(
            "a deadline",
            r"\bdeadlines?\b|\bsign-by\b|\bdue (?:on|by|date)\b",
            r"\bwithin \d+ days\b|\bdue\b|\bdeadline\b|\bby the \d",
        ),
        Topic(
            "contract language",
            r"not a lawyer|\blawyers?\b|\bclauses?\b|\blegalese\b|\bfine print\b",
            r"\b(?:agreement|contract|lease|policy|terms)\b",
        ),
        Topic("amounts", r"\bamounts?\b|\bmoney\b", r"\$\s?\d"),
    ),
    "zh": (
        Topic("签字", r"签字|签名|签署|签之前|要签|签了|签完", r"签"),
        Topic("截止时间", r"截止|期限|时间节点|deadline", r"前交|截止|最后还款日|\d+\s*[号日]前|到期前"),
        Topic("合同条款", r"条款|律师|法律|说法比较模糊|责任", r"合同|协议|保单|保险|条款"),
        Topic("金额", r"金额|费用", r"[¥￥]\s?\d|\d+\s?(?:元|万)"),
    ),
}
# a line that makes a short record a long read: said of a record of SHORT_PAGES pages or fewer
LONG_READ = {
    "en": r"cover to cover|too tired to read|\bugh, \d+ pages\b|\ball \d+ pages\b|\bskim the last page",
    "zh": r"看到半夜|没空看|全看|哪几页|开头几页|双面打印|最后几页",
}
ONE_PAGE = {"en": r"\b1 pages\b", "zh": r"(?<!\d)1页我"}
# a line that denies a feature: (the feature's topic name, the words)
DENIALS: dict[str, tuple[tuple[str, str], ...]] = {
    "en": (
        (
            "a deadline",
            r"\bno (?:hard )?deadlines?\b|nothing flagged as a hard deadline|\bno date to act on\b",
        ),
        ("a signature", r"\bnothing to sign\b|\bno signature\b|\bdoesn't need (?:a )?signature\b"),
    ),
    "zh": (
        ("截止时间", r"没有(?:什么)?(?:截止|期限|时间节点|要赶的时间)"),
        ("签字", r"不用签|无需签|没有要签|不需要签"),
    ),
}
_QUESTION = {"en": r"\?", "zh": r"[？?]|吗|有没有|需不需要|要不要|是不是"}
_SUPPOSE = {"en": r"\bif\b|\bwhether\b|\bunless\b|\bare there\b", "zh": r"如果|要是|的话|万一|是否"}
_NEGATED = {"en": r"\b(?:no|not|nothing|never|without)\b|n't\b", "zh": r"[没不无别]"}


def _text(record: DocumentRecord) -> str:
    return f"{record.title} · {record.doc_type} · {record.summary}"


def held(record: DocumentRecord, lang: str) -> set[str]:
    """The features the document's own text shows (topic names)."""
    text = _text(record)
    return {t.name for t in TOPICS[lang] if re.search(t.held, text, re.IGNORECASE)}


def _negated(clause: str, start: int, lang: str) -> bool:
    """A negator just before the cue ("nothing to sign", "不用签")."""
    window = clause[max(0, start - (32 if lang == "en" else 4)) : start]
    return re.search(_NEGATED[lang], window, re.IGNORECASE) is not None


def problems(content: str, record: DocumentRecord, lang: str) -> list[str]:
    """What `content` takes for granted or denies about the document that its text does not bear out."""
    has, out = held(record, lang), []
    for clause in clauses(content):
        excused = re.search(_QUESTION[lang] + "|" + _SUPPOSE[lang], clause, re.IGNORECASE) is not None
        for topic in TOPICS[lang]:
            if topic.name in has:
                continue
            for hit in re.finditer(topic.said, clause, re.IGNORECASE):
                if topic.excused and (excused or _negated(clause, hit.start(), lang)):
                    continue
                out.append(f"takes {topic.name} for granted (“{hit.group(0)}”), the document has none")
                break
        for name, words in DENIALS[lang]:
            found = re.search(words, clause, re.IGNORECASE)
            if name in has and found:
                out.append(f"denies {name} (“{found.group(0)}”) the document has")
    if record.pages <= SHORT_PAGES and (found := re.search(LONG_READ[lang], content, re.IGNORECASE)):
        out.append(f"makes a {record.pages}-page record a long read (“{found.group(0)}”)")
    if re.search(ONE_PAGE[lang], content):
        out.append("says one page in the plural")
    return list(dict.fromkeys(out))


def check(world: World) -> list[Finding]:
    lang = world.view.lang
    if lang not in TOPICS:
        return []
    out = []
    for session in world.view.sessions:
        record = _document(world, session)
        if record is None:
            continue
        aside = False  # the reply to a line of her life answers that line, not the document
        for message in _about(session):
            if message.role == "user" and not message.smalltalk:
                aside = _of_her_life(world, message)
            if aside or _of_her_life(world, message):
                continue
            for problem in problems(message.content, record, lang):
                out.append(_finding(world, message, record, problem))
    return out


def _about(session: Session) -> list[Message]:
    """The messages that speak of the document: all of a session about it, and in another session that
    brings it up, the first exchange (the mention; the rest is the session's own topic)."""
    said = [m for m in session.messages if m.role != "system"]
    if session.pattern == "anchor_document":
        return said
    out, lines = [], 0
    for message in said:
        lines += not message.smalltalk
        if lines > 2:
            break
        out.append(message)
    return out


def _of_her_life(world: World, message: Message) -> bool:
    """A line that states something of the persona or of an episode and nothing of the record (a fact she
    mentions in passing, a change she announces): not talk about the document."""
    subjects = {c.subject for c in world.claims_of.get(message.id, [])}
    return bool(subjects) and not any(s.startswith("anchor:") for s in subjects)


def _document(world: World, session: Session) -> DocumentRecord | None:
    anchor = world.view.anchors.get(session.anchor_id or "")
    record = anchor.record if anchor is not None else None
    return record if isinstance(record, DocumentRecord) else None


def _finding(world: World, message: Message, record: DocumentRecord, what: str) -> Finding:
    return world.finding(
        RULE,
        [message.id],
        f"{message.id}: of '{record.title}' ({record.doc_type}), {what} ({quote(message.content)})",
    )
