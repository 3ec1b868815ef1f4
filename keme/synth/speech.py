"""The speech act of a line, so that small talk answers the line it goes with.

"That's a good place to start." may follow a plan; it may not follow "I got ripped off". A line's act is
inferred from its words: a thanks, a complaint, good news, a request, a question, a plan, or a plain
statement. A small-talk part declares the acts it fits (`acts:` in parts.yaml); a part that declares none
fits only the plain acts (question, request, plan, statement), so a complaint is answered only by a part
written for it (a sympathetic word), good news only by one written for that (a cheer), and a thanks only
by a thanks reply. Nothing here knows the world: the act is read off the line alone.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from keme.text.resources import Parts

THANKS, COMPLAINT, GOOD_NEWS, REQUEST, QUESTION, PLAN, STATEMENT = (
    "thanks",
    "complaint",
    "good_news",
    "request",
    "question",
    "plan",
    "statement",
)
ACTS = (THANKS, COMPLAINT, GOOD_NEWS, REQUEST, QUESTION, PLAN, STATEMENT)
PLAIN = frozenset({REQUEST, QUESTION, PLAN, STATEMENT})  # what an undeclared part fits
MARKED = frozenset({THANKS, COMPLAINT, GOOD_NEWS})  # answered only by a part declared for it

_EN: dict[str, re.Pattern[str]] = {
    THANKS: re.compile(r"^\W*(?:thanks|thank you|thx|ty|cheers)\b", re.IGNORECASE),
    COMPLAINT: re.compile(
        r"\b(?:ripped off|rip-?off|scam(?:med)?|overcharg\w*|annoy\w*|frustrat\w*|ugh+|hate|terrible|awful"
        r"|worst|exhausted|stressed|stress(?:ing)?|sick|hurts?|aching|broke(?:n)?|ruin\w*|disappoint\w*"
        r"|sucks?|nightmare|fed up|so done|can't believe|cannot believe|too expensive|lost my|late again"
        r"|complain\w*|miserable|struggling|drained|burn(?:ed|t) out|rough (?:day|week)|bad (?:day|week)"
        r"|filing a complaint|upset|worried|anxious|nervous|can't sleep|couldn't sleep)\b",
        re.IGNORECASE,
    ),
    GOOD_NEWS: re.compile(
        r"\b(?:got the job|got promoted|promoted|great news|good news|finally|yay|woo+|nailed it|passed"
        r"|won(?!['’])|so happy|thrilled|excited|can't wait|proud|engaged|it worked|best day"
        r"|love (?:it|that|this))\b"
        r"|!!",
        re.IGNORECASE,
    ),
    REQUEST: re.compile(
        r"^(?:[a-z]+[,:—-]?\s+)?(?:can|could|would|will) you\b|^(?:please|pls)\b"
        r"|^(?:remind|help|set|add|make|put|log|book|find|draft|mark|keep|save|track|show|tell|give|send"
        r"|turn|move|file|pull|block|write)\b",
        re.IGNORECASE,
    ),
    PLAN: re.compile(
        r"\b(?:i'm going to|i'm gonna|gonna|i'll|i will|planning|plan is|thinking (?:of|about)|want to"
        r"|going to|next (?:week|month|weekend)|tomorrow)\b",
        re.IGNORECASE,
    ),
}
_ZH: dict[str, re.Pattern[str]] = {
    THANKS: re.compile(r"^\W*(?:谢谢|多谢|感谢|谢啦|谢了)"),
    COMPLAINT: re.compile(
        r"烦|气死|被坑|坑了|被骗|太贵|难受|累死|崩溃|郁闷|吐槽|糟糕|倒霉|坏了|疼|失眠|睡不着|焦虑|压力"
        r"|后悔|无语|心累|不爽|生气|讨厌|太难了|头大|头疼|完蛋|抓狂|受不了|紧张|担心|不放心|委屈|想哭"
    ),
    GOOD_NEWS: re.compile(
        r"太好了|终于|好消息|升职|升了|拿到offer|通过了|过了！|赢了|激动|兴奋|开心|高兴|成功了|搞定了"
        r"|超爱|爱了|！！"
    ),
    REQUEST: re.compile(
        r"^(?:.{0,6}[，,\s])?(?:帮我|帮忙|提醒我|给我|麻烦|能不能帮|可以帮|能帮|记一下|记得|设个|设一个|把)"
    ),
    PLAN: re.compile(r"打算|准备|计划|想去|要去|明天|下周|周末去|下个月"),
    QUESTION: re.compile(r"[?？]$|[吗呢么嘛吧啥][\W]*$|要不要|能不能|是不是|怎么|什么|哪|多少|几[个点天]"),
}


def act_of(text: str, lang: str) -> str:
    """The speech act of `text`: a thanks first, then a complaint (a grumble asked as a question is
    still a grumble), good news, a request, a question, a plan, else a statement."""
    rules = _ZH if lang == "zh" else _EN
    head = text.strip()
    for act in (THANKS, COMPLAINT, GOOD_NEWS, REQUEST):
        if rules[act].search(head):
            return act
    if ends_asking(head, lang) or (QUESTION in rules and rules[QUESTION].search(head)):
        return QUESTION
    if rules[PLAN].search(head):
        return PLAN
    return STATEMENT


# a Chinese question typed without its mark: the last clause asks ("每天的学习时长定多少合适"),
# and the line ends on no stop ("我也不知道吃什么好。" tells)
_ZH_UNMARKED_QUESTION = re.compile(
    r"(?:[吗呢么嘛吧啥]|(\w)不\1|可不可以|怎么|什么|为什么|哪|多少|几[个点天次]|多久|多长)[^，,。！!；;：:]*$"
)
# an English one: a last sentence that opens like a question ("is a power bank necessary or overkill")
_EN_UNMARKED_QUESTION = re.compile(
    r"(?:(?:^|[.!]\s+)(?:is|are|am|was|were|do|does|did|can|could|should|would|will|what|how|why|when|where|"
    r"which|who|any)\b"  # a sentence that opens like a question
    r"|(?:[,;—-]\s*|\b(?:so|and|but|then)\s+)(?:(?:what|how|why|when|where)\s+(?:is|are|am|was|were|do|"
    r"does|did|can|could|should|would|will)|(?:is|are|do|does|did|can|could|should|would|will)\s+(?:i|you|it|we|"
    r"they|he|she|that|this|there))\b)"  # or a clause that asks ("…, so when do I actually work")
    r"[^.!]*$",
    re.IGNORECASE,
)


def ends_asking(text: str, lang: str) -> bool:
    """Whether a line ends by asking: its question mark, or a last clause that asks without one (a Chinese
    question word, "X不X"; an English sentence opening like a question): a reply to it answers a question,
    no "有道理，" or "Good point." before the answer."""
    head = text.rstrip()
    if head.endswith(("?", "？")):
        return True
    pattern = _ZH_UNMARKED_QUESTION if lang == "zh" else _EN_UNMARKED_QUESTION
    return pattern.search(head) is not None


def fits_act(declared: Collection[str], act: str | None) -> bool:
    """Whether a part declaring `declared` acts may go with a line of `act` (None: any part may)."""
    if act is None:
        return True
    if not declared:
        return act in PLAIN
    return act in declared


def part_problems(parts: Parts) -> list[str]:
    """What is wrong with the acts a language's small-talk parts declare: an act no line can have, or a
    reply (an ack) that consoles (fits a complaint) and also cheers (fits good news). A neutral lead-in
    ("hey,", "在吗") may go before either."""
    out = []
    for kind, items in parts.by_kind.items():
        for part in items:
            where = f"{kind}: {part.template.source!r}"
            unknown = sorted(set(part.acts) - set(ACTS))
            if unknown:
                out.append(f"{where} declares unknown act(s) {unknown}")
            if kind == "acks" and {COMPLAINT, GOOD_NEWS} <= part.acts:
                out.append(f"{where} fits both a complaint and good news")
    return out
