"""Variety around the beats: session shapes, small talk from parts.yaml, and the per-persona usage budget.

A session's shape (a long planning thread, a quick check-in, an app share with no reply) decides which
beats are said; the register (casual or polite, leaning by persona) and the shape pick which small-talk
parts may go around them. Parts assert nothing, so the facts a session states stay exactly those of its
beats. The usage budget counts every line a persona has said, normalized (the values a line says ->
<E>, digit runs -> #): a line already said is drawn again, with another option or other parts, a few
times before the least used candidate is taken.
"""

from __future__ import annotations

import functools
import random
import re
from collections import Counter
from dataclasses import dataclass

from keme.seeding import derive_seed
from keme.stats import sentence_keys
from keme.synth.said import Variants, said_before
from keme.synth.said import variants as variant_bank
from keme.synth.speech import PLAN, QUESTION, STATEMENT, act_of, ends_asking, fits_act
from keme.text.resources import Exchange, Parts, TalkPart
from keme.text.template import Context, Template, render
from keme.world.cues import load_cues

THREAD, QUICK, SHARE = "thread", "quick", "share"
SHARE_P = 0.6  # an app record with no update or reveal due: shared with (almost) no talk
QUICK_P = 0.1  # otherwise: a one- or two-beat check-in
BURST_P = {THREAD: (0.9, 0.75, 0.4), QUICK: (0.3, 0.0, 0.0)}  # a first, second, third user run
CLOSING = {THREAD: (0.25, 0.08, 0.67), QUICK: (0.0, 0.35, 0.65)}  # keep, drop, closer-part the last beat
THREAD_EXTRA_P = 0.25  # a planning thread keeps its optional beats a little more often: it runs long
CASUAL_LEAN = (0.85, 0.6, 0.3)  # personas lean casual, mixed, or polite
LINE_WEIGHT = 3  # a line said again whole, against one sentence of it said again (exchange_lines)

DIGITS = re.compile(r"\d+")
ACK_LIKE_EN = frozenset(
    "sure ok okay got done right yes yep yeah noted of absolutely happy great good alright understood fair "
    "makes totally no perfect nice".split()
)
ACK_LIKE_ZH = (
    "好",
    "行",
    "收到",
    "明白",
    "了解",
    "没问题",
    "嗯",
    "OK",
    "ok",
    "可以",
    "懂",
    "当然",
    "放心",
    "哈哈",
)
END_EN = ".!?…)\"'"
END_ZH = "。！？!?～…，,：:)）」』~"
REQUEST_EN = re.compile(
    r"(?:[a-z]+[,:—-]?\s+)?(?:can|could|would|will) you\b|(?:please|pls)\b"
    r"|(?:remind|help|set|add|make|put|log|book|find|draft|mark|keep|save|track|show|tell|give|send|turn|move"
    r"|file|pull|block|write)\b"
)
REQUEST_ZH = re.compile(
    r"(?:.{0,6}[，,\s])?(?:帮我|帮忙|提醒我|给我|麻烦|能不能帮|可以帮|能帮|记一下|记得|设个|设一个|把)"
)
THANKS_EN = re.compile(r"\W*(?:thanks|thank you|thx|ty|cheers)\b", re.IGNORECASE)
THANKS_ZH = re.compile(r"\W*(?:谢谢|多谢|感谢|谢啦|谢了)")
SPLIT_EN = re.compile(r"(?<=[.!?])\s+(?=\S)")
SPLIT_ZH = re.compile(r"(?<=[。！？!?～，,])\s*(?=\S)")


@dataclass(frozen=True)
class Style:
    """How a session goes: its shape, its register, its closing, and whether the user sends a burst."""

    shape: str  # thread | quick | share
    register: str  # casual | polite
    closing: str = "keep"  # keep | drop | closer
    bursts: int = 0  # runs of several user messages in a row

    @property
    def talk_shape(self) -> str:
        """The shape tag parts are chosen by (a share's one line reads like a quick check)."""
        return THREAD if self.shape == THREAD else QUICK


def choose_style(rng: random.Random, seed: int, persona_id: str, has_anchor: bool, must_talk: bool) -> Style:
    """Draw a session's style; `must_talk` (an update or a reveal is due) rules out a bare app share."""
    lean = CASUAL_LEAN[derive_seed(seed, "register", persona_id) % len(CASUAL_LEAN)]
    register = "casual" if rng.random() < lean else "polite"
    if has_anchor and not must_talk and rng.random() < SHARE_P:
        return Style(SHARE, register)
    shape = QUICK if rng.random() < QUICK_P else THREAD
    closing = rng.choices(("keep", "drop", "closer"), CLOSING[shape])[0]
    bursts = 0
    for chance in BURST_P[shape]:
        if rng.random() >= chance:
            break
        bursts += 1
    return Style(shape, register, closing, bursts)


WORDING = "="  # the key of a wording as said (the other keys are normalized: no "=" leads them)


class SmallTalk:
    """What one persona has said in small talk: a part's sentence is said once in the persona's span.

    A kind's parts are spread over the span (by `progress`, 0 at its start, 1 at its end): at any moment
    at most HEAD + pool x progress of them are said, so that the year does not spend them all in its first
    weeks. When none is left the line goes without small talk: nothing rather than a repeat. Two wordings
    are the same sentence when the repetition measure would call them so (keme.stats.sentence_keys).
    Parts drawn for a session are held until the session is kept (`begin`, `keep`), so that a session
    drawn again does not spend them; `state` is what a checkpoint stores."""

    HEAD = 3  # parts of a kind a persona may say before the pacing starts

    def __init__(self, said: dict[str, str] | None = None):
        self.said: dict[str, str] = dict(said or {})  # key -> kind
        self.held: dict[str, str] = {}
        self.by_kind: Counter[str] = Counter(self.said.values())
        self.spent: set[str] = {k[1:] for k in self.said if k.startswith(WORDING)}
        self.progress = 1.0

    def keys(self, text: str, lang: str) -> tuple[str, ...]:
        return _small_keys(text, lang)

    def at(self, progress: float) -> None:
        """Where in the persona's span the session being drawn is (0: its start, 1: its end)."""
        self.progress = min(1.0, max(0.0, progress))

    def fresh(self, text: str, lang: str) -> bool:
        return not any(k in self.said or k in self.held for k in self.keys(text, lang))

    def room(self, kind: str, pool: int) -> bool:
        """Whether the pacing lets the persona say another part of `kind` (of `pool` parts) now."""
        held = sum(1 for k in self.held.values() if k == kind)
        return self.by_kind[kind] + held < self.HEAD + pool * self.progress

    def hold(self, text: str, kind: str, lang: str) -> None:
        keys = self.keys(text, lang)
        self.held[keys[0]] = kind
        for key in keys[1:]:
            self.held.setdefault(key, "")
        self.held.setdefault(WORDING + text, "")

    def wordings(self) -> set[str]:
        """The exact wordings said or held: a part of one wording (its source) among them is said."""
        return self.spent | {k[1:] for k in self.held if k.startswith(WORDING)}

    def begin(self) -> None:
        self.held.clear()

    def keep(self) -> None:
        self.spent.update(k[1:] for k in self.held if k.startswith(WORDING))
        self.said.update(self.held)
        self.by_kind.update(k for k in self.held.values() if k)
        self.held.clear()

    def state(self) -> dict[str, str]:
        return dict(self.said)


@functools.lru_cache(maxsize=8192)
def _small_keys(text: str, lang: str) -> tuple[str, ...]:
    """The keys a small-talk wording is remembered by (an emoji, which has no word, by itself)."""
    keys = sentence_keys(DIGITS.sub("#", text), lang)[1]
    return tuple(keys) if keys[0] else (text.strip(),)


def line_key(text: str, said: tuple[str, ...] | list[str]) -> str:
    """The line as the usage budget counts it: every value it says -> <E>, digit runs -> #."""
    for value in sorted({s for s in said if s}, key=lambda s: (-len(s), s)):  # no set order: hash-seeded
        text = text.replace(value, "<E>")
    return DIGITS.sub("#", text)


@dataclass
class Line:
    text: str
    key: str
    said: tuple[str, ...]
    links: set[str]
    parts: tuple[str, ...] = ()  # sources of the small-talk parts around it
    # what the template line says, (kind, name, value, text) as render reports it: its claims to be
    reports: tuple[tuple[str, str, str, str], ...] = ()
    says: tuple[tuple[str, str], ...] = ()  # what the exchange declares its user line states
    body: str = ""  # the template line as rendered, before small talk dresses it (bench/diversity.py)
    source: str = ""  # the template line's source text
    asks: str = "statement"  # request | question | statement: what a reply to the line answers
    sentences: tuple[str, ...] = ()  # the said-memory keys of its content sentences (keme.synth.said)
    small: tuple[tuple[str, str], ...] = ()  # the small-talk parts said with it, (text, kind)
    act: str = "statement"  # its speech act (keme.synth.speech): the small talk around and after it fits it


class Talk:
    """Renders lines for one session under the persona's usage budget, with small talk around them."""

    TRIES = 7
    PART_TRIES = 6  # renderings of parts tried before a line goes without small talk
    BARE_TRIES = 3  # draws of another option before small talk is forced around the line
    OPENER_P, SEGUE_P, FOLLOW_P, ACK_P, OFFER_P = 0.45, 0.1, 0.15, 0.3, 0.12

    def lead_p(self, kind: str) -> float:
        return self.OPENER_P if kind == "openers" else self.SEGUE_P

    def __init__(
        self,
        parts: Parts,
        style: Style,
        rng: random.Random,
        usage: Counter[str],
        lang: str,
        part_of_day: str | None = None,
        variants: Variants | None = None,
        small: SmallTalk | None = None,
    ):
        self.parts = parts
        self.variants = variants if variants is not None else variant_bank(lang)
        self.small = small if small is not None else SmallTalk()
        # parts see only the time of day, and only when the whole session window lies in one part of it
        slots = {"part_of_day": part_of_day} if part_of_day else {}
        self.ctx = Context(lang=lang, rng=rng, persona={}, slots=slots)
        self.style = style
        self.rng = rng
        self.usage = usage
        self.lang = lang
        self.session: Counter[str] = Counter()
        self.parts_said: set[str] = set()  # part sources this session used: none twice in a session
        self.opened = False
        self.final = False  # the line being said is the session's last message: a wish may end it
        self.heard: str | None = None  # question | statement: the last accepted line, what the next follows
        self.heard_act: str | None = None  # the speech act of the last accepted line (keme.synth.speech)
        self.drafted: set[str] = set()  # keys of the small talk in the lines being drawn, not yet accepted

    def used(self, key: str) -> int:
        return self.usage[key] + self.session[key]

    def accept(self, *lines: Line) -> None:
        self.drafted = set()
        for line in lines:
            for text, kind in line.small:
                self.small.hold(text, kind, self.lang)
            self.session[line.key] += 1
            self.session.update(line.sentences)
            self.parts_said.update(line.parts)
            self.heard = line.asks
            self.heard_act = line.act

    # -- parts ----------------------------------------------------------------------------------
    def part(
        self,
        kind: str,
        after: str | None = None,
        leads: str | None = None,
        fact: bool = False,
        act: str | None = None,
        exclude: frozenset[str] = frozenset(),
    ) -> tuple[str, tuple[str, ...], str] | None:
        """One part of `kind` that fits the session and that the persona has not said, rendered; its said
        values (for the key) and its source; None when every fitting part is said (or the pacing holds
        the rest back): the line then goes without. `fact`: the line states a fact, so no hedge; `act`:
        the speech act of the line the part goes with, which the part must declare it fits."""
        pool = len(self.parts.by_kind.get(kind, ()))
        if not self.small.room(kind, pool):
            return None
        tried = set(self.small.wordings()) | exclude  # a part of one wording, said: not drawn at all
        for _ in range(self.PART_TRIES):
            chosen = self.pick(kind, after, leads, fact, exclude=tried, act=act)
            if chosen is None:
                return None
            said: list[str] = []
            text = render(chosen.template, self.ctx, on_said=lambda _k, _n, _v, shown: said.append(shown))
            keys = set(self.small.keys(text, self.lang))
            if self.small.fresh(text, self.lang) and not keys & self.drafted:
                self.drafted |= keys  # one line of an exchange may not say what the other says
                return text, tuple(said), chosen.template.source
            tried.add(chosen.template.source)
        return None

    def pick(
        self,
        kind: str,
        after: str | None = None,
        leads: str | None = None,
        fact: bool = False,
        exclude: set[str] | frozenset[str] = frozenset(),
        act: str | None = None,
    ) -> TalkPart | None:
        """The part itself: one that fits where it goes (a greeting only in the first reply, a wish only in
        the last message, "one more question" only before a question, no hedge next to a fact, a cheer only
        with good news), new to the session if it can be; None if none fits."""
        fits = self.parts.options(kind, self.style.register, self.style.talk_shape, after)
        fits = tuple(
            p
            for p in fits
            if self.ctx.can_render(p.template)
            and self.placed(p, kind, leads)
            and not (fact and p.hedge)
            and not (fact and _tells_news(p.template.source, self.lang))
            and fits_act(p.acts, act)
            and p.template.source not in exclude
        )
        fresh: tuple[TalkPart, ...] = tuple(p for p in fits if p.template.source not in self.parts_said)
        return self.rng.choice(fresh or fits) if fits else None

    def placed(self, part: TalkPart, kind: str, leads: str | None) -> bool:
        """Whether `part` may go here: its `at` and `leads` tags against the session so far."""
        if part.leads is not None and part.leads != leads:
            return False
        if part.at == "start":
            return not self.opened
        if part.at == "end":
            return kind == "closers" or self.final
        return True

    def standalone(
        self, kind: str, after: str | None = None, fact: bool = False, asking: bool = True
    ) -> Line | None:
        """A message that is only small talk (a closer, a follow-up sent on its own), under the budget;
        None when the persona has no part of the kind left to say. A follow-up fits the act of the user's
        line it trails (the last accepted line): no "ugh." after good news. `asking=False`: no part that
        asks ("Thoughts?" sent after the reply's opening was chosen would get "Got it." for an answer)."""
        self.drafted = set()
        act = self.heard_act if kind == "followups" else None
        exclude = frozenset(
            () if asking else (p.template.source for p in self.parts.by_kind.get(kind, ()) if self._asks(p))
        )
        first = self.part(kind, after, fact=fact, act=act, exclude=exclude)
        if first is None:
            return None
        text, said, source = first
        sources: tuple[str, ...] = (source,)
        small = [(text, kind)]
        twice = self.rng.random() < 0.3
        second = self.part(kind, after, fact=fact, act=act, exclude=exclude) if twice else None
        if second is not None:
            more, said_more, other = second  # two parts of the kind: "ok cool — makes sense"
            ends = {p.template.source for p in self.parts.by_kind.get(kind, ()) if p.at == "end"}
            if (
                other != source
                and not {source, other} <= ends
                and self.small.fresh(more, self.lang)
                and not _same_words(text, more, self.lang)
            ):
                small.append((more, kind))
                if source in ends:  # a wish goes last: "Good. Nothing else for now. Have a good evening."
                    text, more, said, said_more, source, other = more, text, said_more, said, other, source
                text, said, sources = join(self.lang, "", text, more), said + said_more, (source, other)
        line = Line(text, line_key(text, said), said, set(), sources, asks=reply_to(text, self.lang))
        line.small = tuple(small)
        self.accept(line)
        return line

    # -- lines ----------------------------------------------------------------------------------
    def line(
        self,
        template: Template,
        role: str,
        ctx: Context,
        force: bool,
        heard: str | None = None,
        says: bool = False,
        heard_act: str | None = None,
        act: str | None = None,
    ) -> Line:
        """A template line rendered, dressed in parts, with its budget key and the persona keys it used;
        `heard`: whether the line it answers asked (question) or told (statement); `says`: the line
        declares a state in words, so it states a fact even without a value; `heard_act`: the speech act of
        the line it answers, which an ack before it must fit; `act`: the line's own act as its exchange
        declares it (None: read off its words)."""
        links: set[str] = set()
        reports: list[tuple[str, str, str, str]] = []
        wording = self.variants.least_said(template, self.used, self.rng.choice)  # in words not said yet
        core = render(wording.template, ctx, links.add, on_said=lambda *heard: reports.append(heard))
        keep_case = bool(wording.template.parts) and wording.template.parts[0].kind != "text"
        fact = says or bool(reports) or bool(links)
        own = act or act_of(core, self.lang)
        text, extra, sources, small = self.dress(core, role, force, keep_case, heard, fact, heard_act, own)
        values = tuple(r[3] for r in reports) + extra
        line = Line(
            text,
            line_key(text, values),
            values,
            links,
            sources,
            tuple(reports),
            body=core,
            source=template.source,
            sentences=wording.keys,
            small=small,
        )
        line.asks = reply_to(core, self.lang)
        line.act = own
        if ends_asking(text, self.lang) and not ends_asking(core, self.lang) and own in (STATEMENT, PLAN):
            # a part that asks went after it ("…Thoughts?", "…你觉得呢？"): the reply answers a question
            line.asks, line.act = "question", QUESTION
        return line

    def dress(
        self,
        core: str,
        role: str,
        force: bool,
        keep_case: bool = False,
        heard: str | None = None,
        fact: bool = False,
        heard_act: str | None = None,
        own: str | None = None,
    ) -> tuple[str, tuple[str, ...], tuple[str, ...], tuple[tuple[str, str], ...]]:
        """`core` with small talk around it, the values the parts said, their sources and (text, kind)
        each; `force`: at
        least one part (the plain line was said before). A lead-in fits what it answers (`heard`): "Can
        do." follows a request, "That makes sense." an explanation, not a question; no part next to a
        line that states a fact (`fact`) hedges it. Each part fits a speech act (keme.synth.speech): an ack
        the act of the line it answers (`heard_act`), a user's part the act of the user's own line."""
        said: list[str] = []
        sources: list[str] = []
        kinds: list[tuple[str, str | None, bool]] = []  # (kind, after, before the line)
        asks = asks_of(core, self.lang)
        own = own or act_of(core, self.lang)
        if reply_to(core, self.lang) == "thanks":
            asks = "thanks"  # nothing but a part made for it goes after a thanks
        if role == "user":
            lead = "segues" if self.opened else "openers"
            before = self.rng.random() < ((0.75 if self.opened else 0.7) if force else self.lead_p(lead))
            follow = self.rng.random() < (0.15 if force else self.FOLLOW_P) or (force and not before)
            kinds = [(lead, heard, True)] * before + [("followups", asks, False)] * follow
        else:
            ack = (
                not self._starts_like_ack(core)
                and not _opens_with_reaction(core)
                and self.rng.random() < (0.8 if force else self.ACK_P)
            )
            offer = not ends_asking(core, self.lang) and (
                self.rng.random() < (0.3 if force else self.OFFER_P) or (force and not ack)
            )
            kinds = [("acks", heard, True)] * ack + [("offers", None, False)] * offer
        prefix = suffix = ""
        small: list[tuple[str, str]] = []
        acts = {"openers": own, "segues": own, "followups": own, "acks": heard_act, "offers": None}
        for kind, after, before in kinds:
            found = self.part(kind, after, asks if before else None, fact, acts[kind])
            if found is None:  # said out: the line goes without
                continue
            text, s, source = found
            said += s
            sources.append(source)
            small.append((text, kind))
            if before:
                prefix = text
            else:
                suffix = text
        return join(self.lang, prefix, core, suffix, keep_case), tuple(said), tuple(sources), tuple(small)

    def _asks(self, part: TalkPart) -> bool:
        return ends_asking(part.template.source, self.lang)

    def _starts_like_ack(self, core: str) -> bool:
        if self.lang == "zh":
            return core.startswith(ACK_LIKE_ZH)
        first = re.split(r"[\s,.!—:;-]+", core.strip(), maxsplit=1)[0].lower()
        return first in ACK_LIKE_EN


def _opens_with_reaction(core: str) -> bool:
    """Whether a reply opens on its own short exclamation ("恭喜通关！", "Congrats!"): an ack before it
    would react twice ("值得高兴。恭喜通关！")."""
    first = re.match(r"[^。！？!?.]*[。！？!?.]", core.strip())
    if first is None or not first.group().endswith(("！", "!")):
        return False
    return len(first.group()) <= 12 or len(first.group().split()) <= 4


def _same_words(first: str, second: str, lang: str) -> bool:
    """Whether two parts say it with the same word ("这下清楚多了 清楚了。", "got it, got it"): joined, the
    second only repeats the first."""
    if lang == "zh":
        grams = [
            {a + b for a, b in zip(t, t[1:]) if "\u4e00" <= a <= "\u9fff" and "\u4e00" <= b <= "\u9fff"}
            for t in (first, second)
        ]
    else:
        grams = [{w for w in re.findall(r"[a-z']+", t.lower()) if len(w) >= 3} for t in (first, second)]
    return bool(grams[0] & grams[1])


@functools.lru_cache(maxsize=4096)
def _tells_news(source: str, lang: str) -> bool:
    """Whether a small-talk part announces news ("跟你说个事", "fun fact:"): beside a line that states a
    persona fact it would tell that fact as news, though the persona may have told it long ago
    (keme/world/check/told.py). Read as it would open the fact: a segue that is no news alone ("对了，")
    is news before "我从小就对桃子过敏" (the cue 对了，我)."""
    cues = load_cues(lang)
    return cues.any(cues.news, source) or cues.any(cues.news, source + ("我" if lang == "zh" else " I'm "))


def asks_of(text: str, lang: str) -> str:
    """question | statement: whether a line ends by asking (keme.synth.speech.ends_asking)."""
    return "question" if ends_asking(text, lang) else "statement"


def reply_to(text: str, lang: str) -> str:
    """What an answer to `text` answers: a thanks ("thanks, that helps", "谢谢"; only "Anytime." fits it), a
    request ("can you…", "remind me…", "帮我…"; "Can do." fits it), a question ("Good question." fits it) or
    a statement ("Makes sense." fits it)."""
    head = text.strip().lower()
    if (THANKS_ZH if lang == "zh" else THANKS_EN).match(head):
        return "thanks"
    if (REQUEST_ZH if lang == "zh" else REQUEST_EN).match(head):
        return "request"
    return asks_of(text, lang)


def join(lang: str, prefix: str, core: str, suffix: str, keep_case: bool = False) -> str:
    """Prefix, line and suffix as one message, spaced and cased the way the language writes them;
    `keep_case`: the line starts with a value (a name, a place), whose capital stays."""
    text = core
    if lang == "zh":
        if prefix:
            text = prefix + ("" if prefix[-1] in END_ZH else " ") + text
        if suffix:
            text = text + ("" if text[-1] in END_ZH or not text[-1].isalnum() else " ") + suffix
        return text
    if prefix:
        if prefix[-1] not in ".!?" and len(text) > 1 and text[1].islower() and not keep_case:
            first = text.split(" ", 1)[0].strip(",.!?")
            if first not in ("I", "I'm", "I'd", "I'll", "I've"):  # the line's own word, not a name
                text = text[0].lower() + text[1:]
        elif prefix[-1] in ".!?" and text[:1].islower():
            text = text[0].upper() + text[1:]
        text = prefix + " " + text
    if suffix:
        if text[-1] in END_EN or not text[-1].isalnum():
            if text[-1] in ".!?" and core[:1].isupper():
                suffix = suffix[0].upper() + suffix[1:]
            text = text + " " + suffix
        else:
            if len(suffix) > 1 and suffix[1].islower() and suffix.split(" ", 1)[0] not in ("I", "I'm", "I'd"):
                suffix = suffix[0].lower() + suffix[1:]
            text = text + " — " + suffix
    return text


def split_line(text: str, lang: str, whole: tuple[str, ...] = ()) -> tuple[str, str] | None:
    """A user line sent as two messages, cut at its first sentence (or clause) end; None if it has none.
    A value the line says (`whole`: a quoted screenshot text with sentences of its own) is never cut, so
    the half that says it still claims it."""
    pattern = SPLIT_ZH if lang == "zh" else SPLIT_EN
    shortest = 3 if lang == "zh" else 8
    spans = [(m.start(), m.end()) for value in whole if value for m in re.finditer(re.escape(value), text)]
    for match in pattern.finditer(text):
        if any(lo < match.start() < hi for lo, hi in spans):
            continue
        head, tail = text[: match.start()].strip(), text[match.end() :].strip()
        if len(head) >= shortest and len(tail) >= shortest:
            if lang == "zh" and head[-1] in "，,":
                head = head[:-1]
            return head, tail
    return None


def exchange_lines(
    talk: Talk, options: tuple[Exchange, ...], ctx: Context, user_only: bool = False
) -> list[Line] | None:
    """One exchange (or only its user line) under the budget: a candidate whose lines were said before is
    drawn again, another option or other parts, and the least used of the candidates is kept."""
    eligible = [ex for ex in options if ctx.can_render(ex.u) and (user_only or ctx.can_render(ex.a))]
    if not eligible:
        return None
    said = [said_count(talk, ex, user_only) for ex in eligible]
    unsaid = [ex for ex, n in zip(eligible, said) if n == min(said)]  # options in words not said yet
    best: list[Line] | None = None
    best_score = 0
    for attempt in range(talk.TRIES):
        talk.drafted = set()
        # the options in new words first; a line said whole before (one too short to count a sentence
        # of) may still send the draw to another option
        chosen = talk.rng.choice(unsaid if attempt < talk.BARE_TRIES else eligible)
        pairs = [("user", chosen.u)] if user_only else [("user", chosen.u), ("assistant", chosen.a)]
        lines: list[Line] = []
        for role, template in pairs:
            heard = lines[-1].asks if lines else talk.heard
            says = role == "user" and bool(chosen.says)
            heard_act = lines[-1].act if lines else talk.heard_act
            declared = chosen.speech if role == "user" else None
            lines.append(
                talk.line(template, role, ctx, attempt >= talk.BARE_TRIES, heard, says, heard_act, declared)
            )
        lines[0].says = chosen.says
        # a whole line said again weighs more than one of its sentences: it is the copy a reader sees
        score = sum(
            LINE_WEIGHT * talk.used(line.key) + said_before(line.sentences, talk.used) for line in lines
        )
        if best is None or score < best_score:
            best, best_score = lines, score
        if score <= min(said):  # as new as these options can be: no more draws
            break
        if attempt >= talk.BARE_TRIES and not any(line.small for line in lines):
            break  # the small talk that could dress it is said out: more draws would not make it new
    assert best is not None
    talk.accept(*best)
    talk.opened = True
    return best


def said_count(talk: Talk, exchange: Exchange, user_only: bool = False) -> int:
    """How many times the sentences of `exchange`'s least said wording were said before (0: all new)."""
    templates = (exchange.u,) if user_only else (exchange.u, exchange.a)
    return sum(talk.variants.least_count(t.source, talk.used) for t in templates)


def fresh(talk: Talk, options: tuple[Exchange, ...], ctx: Context) -> bool:
    """Whether some option of a beat can still be said in words not said before."""
    return any(said_count(talk, ex) == 0 for ex in options if ctx.can_render(ex.u) and ctx.can_render(ex.a))
