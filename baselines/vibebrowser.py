"""VibeBrowser agent memory (seed: vibebrowser-openclaw-memory.txt): durable and daily entries, found by
BM25 over stemmed terms with a tag boost, a sigmoid normalisation and a 30-day temporal decay.

Search, as the seed lists it, with the choices made where it leaves room:
  1. BM25, k1 = 1.2, b = 0.75, written here; IDF is the Lucene form ln(1 + (N - df + 0.5) / (df + 0.5)),
     which stays positive for terms in most entries; a query term counts once however often it is repeated.
  2-3. Porter stems and English stop words (`baselines.stemming`); CJK text as character bigrams.
  4. Tag boost: x1.15 on the raw BM25 score when any query term equals a (stemmed) term of an entry tag.
     Applied before normalisation, so the raw relevance is exactly 15% higher.
  6. Normalisation: the seed says "sigmoid ... same pattern as OpenClaw's bm25RankToScore", which is
     relevance / (1 + relevance); so norm = s / (1 + s) for a raw score s >= 0.
  5. Decay: final = norm x (0.5 + 0.5 x 2^(-age_days / 30)), age from the entry's creation to the query
     time (the replay clock). The seed does not say whether durable entries decay; as in OpenClaw, where
     MEMORY.md is evergreen, durable entries do not (factor 1) and daily entries do.
Only entries created at or before the query time exist for a search (IDF and average length included):
that is the store a real browser would have held then.

The harness adapter distils each session without an LLM: the seed's agent "proactively stores user
preferences, account details, addresses, recurring instructions, and important decisions" as durable
memories, so user messages matching an English/Chinese intent lexicon (`durable_category`) become durable
entries; every other message with at least one searchable term becomes a daily entry, timestamped at the
message. One entry per message keeps each hit traceable to its message and session.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import numpy as np

from baselines.stemming import analyze, stem
from baselines.store import fingerprint
from baselines.text import message_text
from eval.contract import Hit, Query, Retrieval, Usage
from keme.models import Message, Session

Kind = Literal["durable", "daily"]
KINDS: tuple[Kind, ...] = ("durable", "daily")
K1, B = 1.2, 0.75
TAG_BOOST = 1.15
HALF_LIFE_DAYS = 30.0
# The seed gives no defaults for VibeBrowser's memory_search; these are OpenClaw's (maxResults 6, minScore
# 0.35).
DEFAULT_MAX_RESULTS, DEFAULT_MIN_SCORE = 6, 0.35
NAMESPACE = "vibe_memory"  # the chrome.storage.local key the seed names
_DAY_SECONDS = 86_400.0


# ---------------------------------------------------------------- scoring formulas
def lucene_idf(n_docs: int, df: int) -> float:
    return math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))


def bm25_term(
    tf: float, df: int, n_docs: int, doc_len: float, avg_len: float, k1: float = K1, b: float = B
) -> float:
    """One query term's BM25 contribution to one document."""
    return lucene_idf(n_docs, df) * tf * (k1 + 1.0) / (tf + k1 * (1.0 - b + b * doc_len / avg_len))


def sigmoid_normalize(raw: float) -> float:
    """Raw BM25 score to [0, 1): s / (1 + s), OpenClaw's bm25RankToScore pattern."""
    return raw / (1.0 + raw) if raw > 0 else 0.0


def decay_factor(kind: Kind, age_days: float, half_life_days: float = HALF_LIFE_DAYS) -> float:
    """Half pure relevance, half recency-weighted relevance; durable entries are evergreen."""
    if kind == "durable":
        return 1.0
    return 0.5 + 0.5 * 2.0 ** (-max(0.0, age_days) / half_life_days)


def epoch(moment: datetime) -> float:
    """Seconds since 1970; a naive replay-clock time is read as UTC (all times of a dataset share one
    convention)."""
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


# ---------------------------------------------------------------- store
@dataclass(frozen=True)
class Entry:
    id: str
    kind: Kind
    text: str
    tags: tuple[str, ...]
    created: datetime
    message_ids: tuple[str, ...] = ()
    session_ids: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return asdict(self) | {"created": self.created.isoformat()}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Entry:
        return Entry(
            id=data["id"],
            kind=data["kind"],
            text=data["text"],
            tags=tuple(data["tags"]),
            created=datetime.fromisoformat(data["created"]),
            message_ids=tuple(data["message_ids"]),
            session_ids=tuple(data["session_ids"]),
        )


@dataclass(frozen=True)
class Found:
    """A search result: `score` is the final 0-1 score; `bm25` the raw score before the tag boost."""

    entry: Entry
    score: float
    bm25: float
    tag_match: bool


@dataclass
class _Index:
    """Inverted index over entry slots; appends are incremental, deletions leave a dead slot."""

    postings: dict[str, tuple[list[int], list[int]]] = field(default_factory=dict)
    lengths: list[int] = field(default_factory=list)
    created: list[float] = field(default_factory=list)
    alive: list[bool] = field(default_factory=list)
    _arrays: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None

    def add(self, terms: list[str], created: float) -> int:
        slot = len(self.lengths)
        for term, tf in Counter(terms).items():
            docs, tfs = self.postings.setdefault(term, ([], []))
            docs.append(slot)
            tfs.append(tf)
        self.lengths.append(len(terms))
        self.created.append(created)
        self.alive.append(True)
        self._arrays = None
        return slot

    def remove(self, slot: int) -> None:
        self.alive[slot] = False
        self._arrays = None

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        if self._arrays is None:
            self._arrays = (
                np.asarray(self.lengths, dtype=np.float64),
                np.asarray(self.created, dtype=np.float64),
                np.asarray(self.alive, dtype=bool),
            )
        return self._arrays

    def scores(self, terms: list[str], now: float, k1: float, b: float) -> np.ndarray:
        """BM25 of every slot for the unique `terms`, over the entries alive and created by `now` (others
        score 0)."""
        lengths, created, alive = self.arrays()
        scores = np.zeros(len(lengths))
        visible = alive & (created <= now)
        n_docs = int(visible.sum())
        if not n_docs:
            return scores
        avg_len = float(lengths[visible].mean()) or 1.0
        for term in dict.fromkeys(terms):
            if term not in self.postings:
                continue
            docs, tfs = (np.asarray(x) for x in self.postings[term])
            keep = visible[docs]
            df = int(keep.sum())
            if not df:
                continue
            docs, tf = docs[keep], tfs[keep].astype(np.float64)
            norm = k1 * (1.0 - b + b * lengths[docs] / avg_len)
            scores[docs] += lucene_idf(n_docs, df) * tf * (k1 + 1.0) / (tf + norm)
        return scores


def tag_terms(tags: tuple[str, ...] | list[str]) -> frozenset[str]:
    return frozenset(t for tag in tags for t in analyze(tag))


class VibeMemory:
    """One user's memory with the seed's tool surface (memory_search/get/write/status/delete).

    Times are passed in (`now`), never read from the wall clock. Storage mirrors chrome.storage.local:
    entries serialised as JSON under the `vibe_memory` namespace; `storage_bytes` is that JSON's size.
    """

    def __init__(
        self,
        k1: float = K1,
        b: float = B,
        tag_boost: float = TAG_BOOST,
        half_life_days: float = HALF_LIFE_DAYS,
    ):
        self.k1, self.b, self.tag_boost, self.half_life_days = k1, b, tag_boost, half_life_days
        self.entries: dict[str, Entry] = {}
        self._slot: dict[str, int] = {}
        self._by_slot: list[str] = []
        self._tags: list[frozenset[str]] = []
        self._index = _Index()
        self._bytes: dict[str, int] = {}
        self._counter = 0

    # -- tools
    def memory_write(
        self,
        kind: Kind,
        text: str,
        tags: list[str] | tuple[str, ...] = (),
        *,
        now: datetime,
        message_ids: tuple[str, ...] = (),
        session_ids: tuple[str, ...] = (),
    ) -> Entry:
        if kind not in KINDS:
            raise ValueError(f"kind must be 'durable' or 'daily', not {kind!r}")
        self._counter += 1
        entry = Entry(
            id=f"mem_{self._counter:06d}",
            kind=kind,
            text=text,
            tags=tuple(dict.fromkeys(tags)),
            created=now,
            message_ids=tuple(message_ids),
            session_ids=tuple(session_ids),
        )
        self._add(entry)
        return entry

    def memory_get(self, entry_id: str) -> Entry | None:
        return self.entries.get(entry_id)

    def memory_delete(self, entry_id: str) -> bool:
        if entry_id not in self.entries:
            return False
        del self.entries[entry_id]
        del self._bytes[entry_id]
        self._index.remove(self._slot.pop(entry_id))
        return True

    def memory_status(self, top_tags: int = 10) -> dict[str, Any]:
        kinds = Counter(e.kind for e in self.entries.values())
        tags = Counter(t for e in self.entries.values() for t in e.tags)
        return {
            "total": len(self.entries),
            "by_kind": {kind: kinds.get(kind, 0) for kind in KINDS},
            "top_tags": [{"tag": tag, "count": count} for tag, count in tags.most_common(top_tags)],
            "storage": {"namespace": NAMESPACE, "bytes": self.storage_bytes()},
        }

    def memory_search(
        self,
        query: str,
        *,
        now: datetime,
        max_results: int = DEFAULT_MAX_RESULTS,
        min_score: float = DEFAULT_MIN_SCORE,
    ) -> list[Found]:
        terms = analyze(query)
        if not terms or not self.entries:
            return []
        now_s = epoch(now)
        raw = self._index.scores(terms, now_s, self.k1, self.b)
        query_terms = set(terms)
        created = self._index.created  # epoch(entry.created) of each slot, worked out once at write time
        found = []
        for slot in np.flatnonzero(raw > 0):
            entry = self.entries[self._by_slot[slot]]
            matched = bool(self._tags[slot] & query_terms)
            boosted = raw[slot] * (self.tag_boost if matched else 1.0)
            age_days = (now_s - created[slot]) / _DAY_SECONDS
            score = sigmoid_normalize(boosted) * decay_factor(entry.kind, age_days, self.half_life_days)
            if score >= min_score:
                found.append(
                    (
                        -float(score),
                        -created[slot],
                        entry.id,
                        Found(entry, float(score), float(raw[slot]), matched),
                    )
                )
        found.sort()  # best score, then newest, then id (ids are unique: the Found itself is never compared)
        return [row[3] for row in found[:max_results]]

    # -- storage
    def storage_bytes(self) -> int:
        return sum(self._bytes.values())

    def to_json(self) -> dict[str, Any]:
        return {
            NAMESPACE: {"counter": self._counter, "entries": [e.to_json() for e in self.entries.values()]}
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], **params: float) -> VibeMemory:
        """A store rebuilt from a `to_json` snapshot (the index is derived, so it is not saved)."""
        store = cls(**params)
        for item in data[NAMESPACE]["entries"]:
            store._add(Entry.from_json(item))
        store._counter = data[NAMESPACE]["counter"]
        return store

    def _add(self, entry: Entry) -> None:
        self.entries[entry.id] = entry
        self._bytes[entry.id] = len(json.dumps(entry.to_json(), ensure_ascii=False).encode())
        self._slot[entry.id] = self._index.add(analyze(entry.text), epoch(entry.created))
        self._by_slot.append(entry.id)
        self._tags.append(tag_terms(entry.tags))


# ---------------------------------------------------------------- distillation (shared with OpenClaw)
# Which user messages hold a durable fact, by category; the first matching rule names it. English
# patterns are matched case-insensitively on the text with curly apostrophes straightened.
DURABLE_RULES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("health", re.compile(r"\ballerg(?:ic|y|ies)\b|\bintoleran(?:t|ce)\b|过敏|忌口", re.IGNORECASE)),
    (
        "account",
        re.compile(
            r"\b(?:password|passcode|username|login|pin code|account (?:number|id)|card ending)\b"
            r"|密码|账号|用户名|卡号",
            re.IGNORECASE,
        ),
    ),
    (
        "personal",
        re.compile(
            r"\bi live\b|\bi(?:'m| am) from\b|\bmy (?:home )?address\b|\bi work (?:at|for|as|in)\b"
            r"|\bmy [a-z' -]{1,30}? (?:is|are)\b"
            r"|我住|我家(?:在|住)|我在.{1,12}(?:上班|工作)|我叫|我是.{1,6}人|地址|我的.{1,10}是",
            re.IGNORECASE,
        ),
    ),
    (
        "preference",
        re.compile(
            r"\b(?:i|we) (?:really |usually |generally |much |always |just )?"
            r"(?:prefer|like|love|hate|dislike|enjoy)\b"
            r"|\bfavou?rite\b|喜欢|最爱|偏好|爱吃|讨厌|习惯|一般都",
            re.IGNORECASE,
        ),
    ),
    (
        "decision",
        re.compile(
            r"\b(?:i|we)(?:'ve| have)? decided\b"
            r"|\b(?:i|we)(?:'m| am|'re| are|'ll| will) go(?:ing)? with\b|\bi chose\b"
            r"|决定|定了|就选",
            re.IGNORECASE,
        ),
    ),
    (
        "instruction",
        re.compile(
            r"\bfrom now on\b|\bgoing forward\b|\balways\b|\bnever\b"
            r"|\bremember (?:that|this|to)\b|\bdon't forget\b"
            r"|以后|从现在(?:开始|起)|今后|记住|别忘了|每次都|总是",
            re.IGNORECASE,
        ),
    ),
)


def durable_category(message: Message) -> str | None:
    """The durable-fact category of a user message (preference, account, ...), or None: not durable."""
    if message.role != "user":
        return None
    text = message.content.replace("\u2019", "'")
    return next((name for name, rule in DURABLE_RULES if rule.search(text)), None)


# Topic tags: a tag applies when the message has one of its English words (compared as Porter stems)
# or contains one of its other strings (Chinese words, currency signs).
TOPICS: dict[str, tuple[str, str]] = {
    "money": (
        "pay paid payment charge charged spent spend cost price bill budget refund salary",
        "$ ¥ 支付 支出 付款 花了 账单 报销 预算 工资",
    ),
    "health": (
        "doctor clinic hospital sick fever prescription pharmacy symptom medicine",
        "医院 医生 药 病 发烧 挂号 体检",
    ),
    "work": (
        "work job meeting deadline boss manager coworker colleague project presentation",
        "上班 工作 会议 老板 领导 同事 加班 项目 汇报",
    ),
    "family": (
        "mom dad mother father sister brother grandma grandpa aunt uncle cousin wife husband son daughter",
        "爸 妈 姐 哥 弟弟 妹妹 表妹 表哥 奶奶 爷爷 外婆 姥 小姨 舅 叔",
    ),
    "travel": ("flight trip hotel airport travel vacation", "机票 航班 酒店 旅行 旅游 高铁 行程"),
    "food": ("restaurant dinner lunch breakfast eat recipe cook", "餐厅 吃 饭 菜 做饭"),
    "fitness": ("workout gym run swim bench plank exercise", "健身 跑步 锻炼 游泳"),
    "shopping": ("bought buy order purchase", "买 下单 购物"),
    "schedule": ("calendar appointment reminder schedule", "日程 提醒 预约 待办"),
}
_TOPIC_STEMS = {tag: frozenset(stem(w) for w in words.split()) for tag, (words, _) in TOPICS.items()}
_TOPIC_STRINGS = {tag: tuple(strings.split()) for tag, (_, strings) in TOPICS.items()}


def topic_tags(text: str) -> list[str]:
    terms = set(analyze(text))
    lowered = text.casefold()
    return [
        tag for tag in TOPICS if terms & _TOPIC_STEMS[tag] or any(s in lowered for s in _TOPIC_STRINGS[tag])
    ]


@dataclass(frozen=True)
class Memo:
    """What the distiller writes for one message."""

    kind: Kind
    text: str
    tags: tuple[str, ...]


def distill(message: Message) -> Memo | None:
    """A message as a memory entry: durable if it states a durable fact, daily otherwise, None if
    unsearchable.

    Tags: the app's name for app (system) messages, the durable category, then the topic tags.
    """
    text = message_text(message)
    if not analyze(text):
        return None
    category = durable_category(message)
    app = [message.app.casefold()] if message.role == "system" and message.app else []
    tags = tuple(dict.fromkeys(app + ([category] if category else []) + topic_tags(text)))
    return Memo("durable" if category else "daily", text, tags)


# ---------------------------------------------------------------- harness adapter
class VibeBrowser:
    """The harness adapter: distils sessions into a VibeMemory per scope and searches it.

    retrieve asks memory_search for k results with min_score 0, so that recall is measured over every
    matching entry rather than cut at the tool's 0.35 default.
    """

    def __init__(
        self,
        k1: float = K1,
        b: float = B,
        tag_boost: float = TAG_BOOST,
        half_life_days: float = HALF_LIFE_DAYS,
    ):
        self.name = "vibebrowser"
        self.params = {"k1": k1, "b": b, "tag_boost": tag_boost, "half_life_days": half_life_days}
        self.stores: dict[str, VibeMemory] = {}

    def config_fingerprint(self) -> str:
        return fingerprint(self.name, **self.params, stemmer="porter", distill="lexicon-v1")

    def _store(self, scope: str) -> VibeMemory:
        return self.stores.setdefault(scope, VibeMemory(**self.params))

    def reset(self, scope: str) -> None:
        self.stores[scope] = VibeMemory(**self.params)

    def ingest(self, scope: str, session: Session) -> Usage:
        store = self._store(scope)
        for message in session.messages:
            memo = distill(message)
            if memo is not None:
                store.memory_write(
                    memo.kind,
                    memo.text,
                    memo.tags,
                    now=message.timestamp,
                    message_ids=(message.id,),
                    session_ids=(session.id,),
                )
        return Usage()

    def flush(self, scope: str) -> None:
        """Nothing pending: the index grows with every write."""

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        found = self._store(scope).memory_search(query.text, now=query.now, max_results=k, min_score=0.0)
        return Retrieval(
            hits=[
                Hit(
                    text=f.entry.text,
                    score=f.score,
                    timestamp=f.entry.created,
                    message_ids=list(f.entry.message_ids),
                    session_ids=list(f.entry.session_ids),
                )
                for f in found
            ]
        )

    def size(self, scope: str) -> int:
        return len(self._store(scope).entries)

    def storage_bytes(self, scope: str) -> int:
        return self._store(scope).storage_bytes()

    def save(self, scope: str, path: Path) -> None:
        path.mkdir(parents=True, exist_ok=True)
        (path / f"{NAMESPACE}.json").write_text(json.dumps(self._store(scope).to_json(), ensure_ascii=False))

    def load(self, scope: str, path: Path) -> None:
        data = json.loads((path / f"{NAMESPACE}.json").read_text())
        self.stores[scope] = VibeMemory.from_json(data, **self.params)
