"""Filler sessions: the haystack a persona's own sessions are buried in, drawn from the filler bank.

`haystack.tokens` in a config sets the size a persona's data should reach; `add_filler` adds everyday
assistant conversations (keme/text/<lang>/filler/) in the gaps between the persona's sessions until
it does. Filler is marked (`Session.filler`, every message `smalltalk`), states no claim, and names
nothing of the persona's world: the bank's lines are checked against the cue lexicon and the persona
vocabularies (`problems`, run by `python -m keme.synth.filler check en`), and the topics a persona gets
leave out every one that names a string of that persona (`entity_strings`). keme.validate proves it
again on the written data, against every question.
"""

from __future__ import annotations

import bisect
import functools
import random
import re
import sys
import unicodedata
from collections import Counter
from datetime import date, datetime, time, timedelta

from keme.config import SynthConfig
from keme.errors import SynthesisError
from keme.models import Message, Session
from keme.seeding import rng_for
from keme.stats import entity_strings
from keme.synth.state import Trajectory
from keme.text.filler import FillerBank, FillerError, Mentions, Topic, load_filler, vocabulary
from keme.text.resources import LANGUAGES
from keme.text.tokens import count_tokens
from keme.world.cues import Cues, load_cues

EVENT_ID = "filler"  # filler belongs to no event of the graph
PATTERN = "filler"
MAX_REPEATS = 1  # a persona hears each exact filler message once (the near-duplicate share stays low)
DAY_START, DAY_END = time(7, 30), time(23, 30)

_DIGIT = re.compile(r"[0-9０-９]")
_PUNCT = re.compile(r"[\s\W_]+")
# a user line that says something about the user could back or contradict a persona fact
_PERSONAL = {
    "en": re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|mine|myself|we|we're|we've|our|ours|us)\b", re.IGNORECASE),
    "zh": re.compile(r"我|咱|俺"),
}
_ASKING_ZH = re.compile(r"帮我|给我|告诉我|教教我|教我|跟我|替我|为我|让我看看")
# cue lists whose match makes a line say something about now, a place or the persona's things
_CUE_LISTS = (
    "today_weekday",
    "day_of_month",
    "dated_weekday",
    "office",
    "commute",
    "overtime",
    "workday",
    "arrival",
    "trip_day_one",
    "trip_return",
    "first_day_job",
    "party_size",
    "split",
    "purpose_for_someone",
    "purpose_shared",
    "purpose_not_shared",
    "training_per_week",
    "week_count",
)
# what the cue lexicon lets pass because the persona's own lines say it of a plan, and filler must not say
# at all: it would tie a general chat to a day or an hour of the persona's
_DAY_WORDS = {
    "en": r"\b(?:today|tonight|tomorrow|yesterday|this (?:morning|afternoon|evening|weekend)|last night|"
    r"weekend|next week|last week)\b",
    "zh": r"今天|今晚|今早|明天|明早|明晚|昨天|昨晚|前天|后天|晚上|早上|上午|下午|中午"
    r"|周末|上周|下周|这周|本周",
}
_MONTH_NAMES_EN = re.compile(
    r"\b(?:January|February|March|April|June|July|August|September|October|November|December)\b"
)


@functools.cache
def _cue_rules(lang: str) -> tuple[re.Pattern[str], list[tuple[str, re.Pattern[str]]]]:
    """(any rule at all, each rule with what it means): compiled once per language, so that checking a
    bank of thousands of lines costs a pass of one pattern over each."""
    cues = load_cues(lang)
    long_names = [w for names in cues.weekdays for w in names if len(w) >= (6 if lang == "en" else 2)]
    weekday = "(?:" + "|".join(map(re.escape, long_names)) + ")"
    rules: list[tuple[str, str]] = [
        (f"names a time of day ({c.name})", p) for c in cues.times for p in c.patterns
    ]
    if lang == "en":
        rules.append(("names a weekday", rf"\b{weekday}\b"))
        rules.append(("names a month", _MONTH_NAMES_EN.pattern))
    else:
        rules += [
            ("names a weekday or month", re.escape(w)) for w in long_names + list(cues.month_abbreviations)
        ]
    for name in _CUE_LISTS:
        rules += [(f"matches the {name} cue", p.replace("{weekday}", weekday)) for p in getattr(cues, name)]
    rules.append(("names a day or a time of day", _DAY_WORDS[lang]))
    flags = re.IGNORECASE
    compiled = [(why, re.compile(p, 0 if why == "names a month" else flags)) for why, p in rules]
    plain = [re.sub(r"\(\?P<\w+>", "(?:", p) for _, p in rules]
    return re.compile("|".join(f"(?:{p})" for p in plain), flags), compiled


def _cue_problem(text: str, cues: Cues, lang: str) -> str | None:
    any_rule, rules = _cue_rules(lang)
    if any_rule.search(text):
        for why, pattern in rules:
            if found := pattern.search(text):
                return f"{why} ({found.group(0)!r})"
    objects = [p for values in cues.objects.values() for p in values]
    if cues.any(objects, text) and cues.any(cues.broken + cues.repaired + cues.working, text):
        return "says an object is broken, working or repaired"
    return None


def line_problem(text: str, user: bool, lang: str, cues: Cues, words: Mentions | None) -> str | None:
    """Why one line may not be filler, or None."""
    if _DIGIT.search(text):
        return "has a digit (spell general numbers out, or leave them out)"
    if user:
        said = _ASKING_ZH.sub("", text) if lang == "zh" else text
        if found := _PERSONAL[lang].search(said):
            return f"a user line about the user ({found.group(0)!r}): ask for general information instead"
    if words is not None and (found := words.find(text)):
        return f"names {found!r} from the persona vocabularies (pools, persona values, catalog)"
    return _cue_problem(text, cues, lang)


def _user_line(where: str) -> bool:
    return where.startswith(("openers", "thanks")) or ".asks[" in where or ".ask[" in where


def _problems(lang: str, bank: FillerBank) -> list[tuple[str, str, str]]:
    cues = load_cues(lang)
    words = Mentions(vocabulary(lang), lang)
    found = []
    for where, text in bank.lines():
        if why := line_problem(text, _user_line(where), lang, cues, words):
            found.append((where, why, text))
    return found


def problems(lang: str, bank: FillerBank | None = None) -> list[str]:
    """Every line of a language's filler bank that breaks the filler contract, with where and why."""
    return [
        f"{lang}/filler {where}: {why}: {text}"
        for where, why, text in _problems(lang, bank or load_filler(lang))
    ]


@functools.cache
def usable_bank(lang: str) -> FillerBank:
    """The bank without the lines that break the contract (and the topics that hold one): what synthesis
    draws from, so that a bank being written never puts a bad line into data."""
    bank = load_filler(lang)
    bad = {where for where, _, _ in _problems(lang, bank)}
    wrappers = {
        name: [t for i, t in enumerate(getattr(bank, name)) if f"{name}[{i}]" not in bad]
        for name in ("openers", "thanks", "intros", "outros")
    }
    spoiled = {where.split(".")[1] for where in bad if where.startswith("topics.")}
    return bank.model_construct(**wrappers, topics=[t for t in bank.topics if t.id not in spoiled])


# ---------------------------------------------------------------- drawing sessions
def _unsayable(traj: Trajectory) -> set[str]:
    """What this persona's filler must not say: its entity strings (name, attribute values, the names in its
    events and records) but one-word lowercase labels (a priority, a record kind) that are no attribute's
    value; punctuation and width folded as keme.qa.haystack reads them."""
    values = {v.value for attr in traj.persona.attributes() for v in attr.versions}
    found = set()
    for value in entity_strings(traj.view()):
        if " " not in value and value == value.lower() and value.isascii() and value not in values:
            continue
        found.add(_plain(value))
    return found


def _plain(text: str) -> str:
    return _PUNCT.sub(" ", unicodedata.normalize("NFKC", text)).strip()


def _allowed(bank: FillerBank, traj: Trajectory) -> FillerBank:
    """The bank without the topics and wrappers that name a string of this persona, so that none of its
    filler can be read as being about it."""
    names = Mentions(_unsayable(traj), traj.persona.language)

    def clean(texts: list[str]) -> bool:
        return not any(names.find(_plain(t)) for t in texts)

    topics = [
        t
        for t in bank.topics
        if clean(t.asks + t.answer + [x for f in t.follow_ups for x in f.ask + f.answer])
    ]
    wrappers = {
        name: [t for t in getattr(bank, name) if clean([t])]
        for name in ("openers", "thanks", "intros", "outros")
    }
    return bank.model_construct(**wrappers, topics=topics)


class _Draw:
    """One persona's filler draws: topics dealt like cards, lines kept under MAX_REPEATS."""

    def __init__(self, bank: FillerBank, topics: list[Topic], rng: random.Random, lang: str):
        self.bank, self.topics, self.rng, self.lang = bank, topics, rng, lang
        self.deck: list[Topic] = []
        self.said: Counter[str] = Counter()
        self.joiner = "" if lang == "zh" else " "

    def topic(self) -> Topic:
        if not self.deck:
            self.deck = list(self.topics)
            self.rng.shuffle(self.deck)
        return self.deck.pop()

    def _fresh(self, candidates: list[str]) -> str | None:
        for text in candidates:
            if self.said[text] < MAX_REPEATS:
                self.said[text] += 1
                return text
        return None

    def user(self, asks: list[str], wrappers: list[str], p_wrap: float) -> str | None:
        """An ask as said, maybe after a wrapper; another wording or wrapper when one is said already."""
        asks = self.rng.sample(asks, len(asks))
        plain = list(asks) if self.rng.random() >= p_wrap else []
        picked = self.rng.sample(wrappers, len(wrappers))
        return self._fresh(plain + [f"{w}{self.joiner}{a}" for w in picked for a in asks] + asks)

    def reply(self, sentences: list[str], least: int, intro: float, outro: float) -> str | None:
        """The first sentence and some of the others, in order, maybe with an intro or an outro (`intro`,
        `outro`: how likely); another selection, then wrappers, when the text is said already."""
        for attempt in range(12):
            keep = self.rng.randint(min(least, len(sentences)), len(sentences))
            # the first sentence answers the ask; the others are dropped here and there
            chosen = [0] + sorted(self.rng.sample(range(1, len(sentences)), keep - 1))
            parts = [sentences[i] for i in chosen]
            if self.rng.random() < (intro if attempt < 4 else 0.8):
                parts.insert(0, self.rng.choice(self.bank.intros))
            if self.rng.random() < (outro if attempt < 4 else 0.8):
                parts.append(self.rng.choice(self.bank.outros))
            text = self._fresh([self.joiner.join(parts)])
            if text is not None:
                return text
        return None

    def dialogue(self) -> list[tuple[str, str]] | None:
        """(role, text) turns of one conversation: one to three topics, as people move on to another
        question in the same chat; None when the first topic's lines are said out."""
        turns: list[tuple[str, str]] = []
        for n in range(self.rng.choice((1, 2, 2, 3))):
            part = self._about(self.topic(), first=n == 0)
            if part is None:
                break
            turns += part
        return turns or None

    def _about(self, topic: Topic, first: bool) -> list[tuple[str, str]] | None:
        """An ask, its answer and follow-ups on one topic."""
        ask = self.user(topic.asks, self.bank.openers if first else self.bank.thanks, 0.4 if first else 0.7)
        answer = self.reply(topic.answer, max(3, len(topic.answer) * 2 // 3), 0.5, 0.0)
        if ask is None or answer is None:
            return None
        turns = [("user", ask), ("assistant", answer)]
        follows = self.rng.sample(topic.follow_ups, self.rng.randint(1, len(topic.follow_ups)))
        for n, follow in enumerate(follows):
            ask = self.user(follow.ask, self.bank.thanks, 0.5)
            last = n == len(follows) - 1
            reply = self.reply(follow.answer, max(2, len(follow.answer) - 1), 0.2, 0.3 if last else 0.0)
            if ask is None or reply is None:
                break
            turns += [("user", ask), ("assistant", reply)]
        return turns


class _Calendar:
    """Free time in a persona's year: filler goes where no session of its own (or earlier filler) is."""

    def __init__(self, sessions: list[Session], first: date, last: date, margin: timedelta):
        self.first, self.days = first, (last - first).days + 1
        self.margin = margin
        self.busy: dict[date, list[tuple[datetime, datetime]]] = {}
        for session in sessions:
            self.add(session.start, session.end)

    def add(self, start: datetime, end: datetime) -> None:
        day = start.date()
        while day <= end.date():
            bisect.insort(self.busy.setdefault(day, []), (start, end))
            day += timedelta(days=1)

    def free(self, start: datetime, end: datetime) -> bool:
        lo, hi = start - self.margin, end + self.margin
        for day in {start.date(), end.date()}:
            for a, b in self.busy.get(day, ()):
                if a <= hi and lo <= b:
                    return False
        return True

    def slot(self, rng: random.Random, minutes: int) -> datetime | None:
        span = (DAY_END.hour * 60 + DAY_END.minute) - (DAY_START.hour * 60 + DAY_START.minute) - minutes
        for _ in range(20):
            day = self.first + timedelta(days=rng.randrange(self.days))
            start = datetime.combine(day, DAY_START) + timedelta(minutes=rng.randrange(max(1, span)))
            if self.free(start, start + timedelta(minutes=minutes)):
                return start
        return None


def _stamp(turns: list[tuple[str, str]], start: datetime, rng: random.Random) -> list[datetime]:
    times, now = [], start
    for role, text in turns:
        times.append(now)
        # the user reads the reply and types; the assistant answers in seconds
        wait = rng.randint(20, 90) + len(text) // 12 if role == "assistant" else rng.randint(4, 25)
        now += timedelta(seconds=wait)
    return times


def persona_tokens(sessions: list[Session]) -> int:
    return sum(count_tokens(m.content) for s in sessions for m in s.messages)


def add_filler(traj: Trajectory, cfg: SynthConfig) -> int:
    """Bury the persona's sessions in filler up to `cfg.haystack.tokens`; returns the filler tokens added.

    Deterministic from (seed, persona): a resumed synthesis draws the same filler again.
    """
    target = cfg.haystack.tokens
    if target is None:
        return 0
    have = persona_tokens(traj.sessions)
    if have >= target:
        return 0
    persona = traj.persona
    lang = persona.language
    bank = _allowed(usable_bank(lang), traj)
    topics = bank.topics
    if not topics:
        return 0
    rng = rng_for(cfg.seed, persona.id, "filler")
    draw = _Draw(bank, topics, rng, lang)
    chapters = [e for e in traj.graph.events if e.depth == 0] or traj.graph.events
    if not chapters:
        return 0
    first = min(e.start for e in chapters).date()
    last = max(e.end for e in chapters).date()
    calendar = _Calendar(traj.sessions, first, last, timedelta(minutes=5))
    drawn: list[tuple[datetime, list[tuple[str, str]], list[datetime]]] = []
    added, misses = 0, 0
    while have + added < target and misses < 200:
        turns = draw.dialogue()
        if turns is None:
            misses += 1
            continue
        times = _stamp(turns, datetime.min, rng)
        minutes = int((times[-1] - times[0]).total_seconds() // 60) + 1
        start = calendar.slot(rng, minutes)
        if start is None:
            misses += 1
            continue
        times = [start + (t - datetime.min) for t in times]
        calendar.add(times[0], times[-1])
        drawn.append((start, turns, times))
        added += sum(count_tokens(text) for _, text in turns)
    if have + added < target:
        raise SynthesisError(
            f"{persona.id}: filler reached {have + added:,} of haystack.tokens {target:,}: the {lang} filler "
            f"bank ({len(topics)} usable topics) or the free time in {first}..{last} ran out; lower "
            f"haystack.tokens, lengthen the persona's months, or add topics to keme/text/{lang}/filler/"
        )
    drawn.sort(key=lambda d: d[0])
    filler = []
    for n, (start, turns, times) in enumerate(drawn, 1):
        session_id = f"{persona.id}-f{n:05d}"
        messages = [
            Message(id=f"{session_id}-m{i:02d}", role=role, content=text, timestamp=t, smalltalk=True)
            for i, ((role, text), t) in enumerate(zip(turns, times, strict=True), 1)
        ]
        filler.append(
            Session(
                id=session_id,
                persona_id=persona.id,
                event_id=EVENT_ID,
                language=lang,
                pattern=PATTERN,
                start=times[0],
                end=times[-1],
                messages=messages,
                filler=True,
            )
        )
    traj.sessions = sorted(traj.sessions + filler, key=lambda s: (s.start, s.id))
    return added


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] != "check" or argv[1] not in LANGUAGES:
        print(f"usage: python -m keme.synth.filler check {{{'|'.join(LANGUAGES)}}}")
        return 2
    try:
        bank = load_filler(argv[1])
    except FillerError as exc:
        print(exc)
        return 1
    found = problems(argv[1], bank)
    for line in found:
        print(line)
    print(f"{argv[1]}: {len(bank.topics)} topics, {len(found)} problem(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
