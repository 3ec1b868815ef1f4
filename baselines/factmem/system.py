"""The "factmem" memory system: the harness adapter over facts, skills and the write chain.

ingest distills each session by rule (distill.py) and writes the drafts in one transaction: dated
records get the next free ":n" key, attribute statements deprecate the previous value of their key,
procedures become skills (a repeated name gets the next patch version). Every write is a chain event.

retrieve ranks in tiers: (1) exact-key hits (search.query_keys) — for each key its versions visible at
query.now, newest first, so the value current at `now` (the ACTIVE row, once the last write is in the
past) leads and the superseded history follows, marked "(superseded)"; (2) skills whose trigger
matches the question in its language (loading them on demand, as the seed's skill layer does);
(3) BM25 over all fact values to fill up to k. Tier scores are ordinal: a tier's hits score above the
next tier's best. Hits carry the source message and session ids; nothing written after `now` is
returned. One scope = one directory under `root` (see scope.py).
"""

from __future__ import annotations

import itertools
import json
import shutil
import tempfile
import weakref
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

import numpy as np

from baselines.factmem import lexicon
from baselines.factmem.db import atomic
from baselines.factmem.distill import MIN_STEPS, TRIGGER_WORDS, allocate, distill
from baselines.factmem.scope import ScopeMemory, install_copy
from baselines.factmem.search import FactDoc, FactIndex, query_keys
from baselines.store import fingerprint
from eval.contract import Hit, Query, Retrieval, Usage
from keme.dataset.paths import scope_path
from keme.models import Session
from keme.text.tokens import has_han


@dataclass(frozen=True)
class _Candidate:
    text: str
    at: datetime
    ref: str | None
    fact_id: int | None = None


def _ref(message_ids: list[str] | tuple[str, ...], session_id: str) -> str:
    return json.dumps({"m": list(message_ids), "s": [session_id]})


def _ids(ref: str | None) -> tuple[list[str], list[str]]:
    data = json.loads(ref) if ref else {}
    return list(data.get("m", [])), list(data.get("s", []))


def scope_directory(root: Path, scope: str) -> Path:
    """A file-system-safe directory per scope, inside `root` (an altered name gets a hash so two scopes never
    collide)."""
    return scope_path(root, scope)


class FactMem:
    def __init__(
        self,
        root: Path | str | None = None,
        k1: float = 1.2,
        b: float = 0.75,
        skill_idle_minutes: float = 30.0,
        skill_archive_days: float = 30.0,
    ):
        self.name = "factmem"
        self._owns_root = root is None  # a root we made is ours to delete on close
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="factmem-"))
        # and if the system is dropped without close(), it goes with the object (or at exit)
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.root, True) if self._owns_root else None
        self.k1, self.b = k1, b
        self.idle_after = timedelta(minutes=skill_idle_minutes)
        self.archive_after = timedelta(days=skill_archive_days)
        self._open: dict[str, ScopeMemory] = {}
        self._index: dict[str, tuple[int, FactIndex]] = {}

    def config_fingerprint(self) -> str:
        return fingerprint(
            self.name,
            k1=self.k1,
            b=self.b,
            idle=self.idle_after.total_seconds(),
            archive=self.archive_after.total_seconds(),
            lexicon=lexicon.fingerprint(),
            min_steps=MIN_STEPS,
            trigger_words=TRIGGER_WORDS,
        )

    # -- scopes
    def memory(self, scope: str) -> ScopeMemory:
        """The scope's open store (opened from disk on first use)."""
        if scope not in self._open:
            self._open[scope] = ScopeMemory.open(
                scope_directory(self.root, scope), self.idle_after, self.archive_after
            )
        return self._open[scope]

    def _close(self, scope: str) -> None:
        memory = self._open.pop(scope, None)
        if memory is not None:
            memory.close()
        self._index.pop(scope, None)

    def close(self) -> None:
        """Close every scope; a temporary root this object created is deleted with its contents."""
        for scope in list(self._open):
            self._close(scope)
        if self._cleanup is not None:
            self._cleanup()

    def reset(self, scope: str) -> None:
        self._close(scope)
        shutil.rmtree(scope_directory(self.root, scope), ignore_errors=True)
        self.memory(scope)

    # -- writing
    def ingest(self, scope: str, session: Session) -> Usage:
        memory = self.memory(scope)
        facts, skills = distill(session)
        with atomic(memory.conn):
            for draft in facts:
                key = allocate(draft.key, memory.facts.has) if draft.dated else draft.key
                memory.facts.put(
                    key,
                    draft.value,
                    draft.at,
                    source=draft.source,
                    context=f"{draft.session_id}/{draft.message_id}",
                    ref=_ref([draft.message_id], draft.session_id),
                )
            for draft in skills:
                skill = replace(draft.skill, version=memory.skills.next_version(draft.skill.name))
                memory.skills.add(
                    skill,
                    draft.at,
                    context=f"{draft.session_id}/{'+'.join(draft.message_ids)}",
                    ref=_ref(draft.message_ids, draft.session_id),
                )
        return Usage()

    def flush(self, scope: str) -> None:
        self._fact_index(scope)

    def _fact_index(self, scope: str) -> FactIndex:
        memory = self.memory(scope)
        count = memory.facts.count()
        cached = self._index.get(scope)
        if cached is None or cached[0] != count:
            docs = [FactDoc(v.id, v.key, f"{v.key}: {v.value}", v.at, v.ref) for v in memory.facts.versions()]
            cached = (count, FactIndex(docs, self.k1, self.b))
            self._index[scope] = cached
        return cached[1]

    # -- reading
    def _exact(self, memory: ScopeMemory, query: Query) -> list[_Candidate]:
        found: list[_Candidate] = []
        for probe in query_keys(query.text, query.now.year):
            keys = [probe.key]
            if probe.dated:
                n = 2
                while memory.facts.has(f"{probe.key}:{n}"):
                    keys.append(f"{probe.key}:{n}")
                    n += 1
            for key in keys:
                visible = sorted(
                    (v for v in memory.facts.history(key) if v.at <= query.now),
                    key=lambda v: (v.at, v.id),
                    reverse=True,
                )
                for rank, version in enumerate(visible):
                    label = key if rank == 0 else f"{key} (superseded)"
                    found.append(_Candidate(f"{label}: {version.value}", version.at, version.ref, version.id))
        return found

    def _skills(self, memory: ScopeMemory, query: Query) -> list[_Candidate]:
        features = {f"lang:{'zh' if has_han(query.text) else 'en'}"}
        found = []
        for skill in memory.skills.match(query.text, features, query.now):
            meta = memory.skills.meta(skill.name, skill.version)
            steps = "; ".join(str(step) for step in skill.steps)
            found.append(_Candidate(f"skill {skill.name}@{skill.version}: {steps}", meta.created, meta.ref))
        return found

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        if k <= 0:
            return Retrieval(hits=[])
        memory = self.memory(scope)
        index = self._fact_index(scope)
        tiers = [self._exact(memory, query), self._skills(memory, query)]
        scores = index.scores(query.text)
        matching = np.flatnonzero(scores > 0)
        order = matching[np.argsort(-scores[matching], kind="stable")]  # best first, ties by position
        bm25 = (  # built only as far as the k chosen below need
            (
                _Candidate(index.docs[i].text, index.docs[i].at, index.docs[i].ref, index.docs[i].fact_id),
                float(scores[i]),
            )
            for i in order
            if index.docs[i].at <= query.now
        )

        chosen: list[tuple[_Candidate, float | None]] = []
        seen: set[tuple[str, ...]] = set()
        for candidate, score in itertools.chain(((c, None) for tier in tiers for c in tier), bm25):
            message_ids, _ = _ids(candidate.ref)
            marker = tuple(message_ids) or (f"fact:{candidate.fact_id}",)
            if marker in seen:
                continue
            seen.add(marker)
            chosen.append((candidate, score))
            if len(chosen) >= k:
                break
        top = max((s for _, s in chosen if s is not None), default=0.0)
        ranked = sum(1 for _, s in chosen if s is None)
        hits = []
        for position, (candidate, score) in enumerate(chosen):
            message_ids, session_ids = _ids(candidate.ref)
            value = score if score is not None else top + (ranked - position)
            hits.append(
                Hit(
                    text=candidate.text,
                    score=value,
                    timestamp=candidate.at,
                    message_ids=message_ids,
                    session_ids=session_ids,
                )
            )
        return Retrieval(hits=hits)

    # -- size and persistence
    def size(self, scope: str) -> int:
        """Fact versions stored (every version counts: deprecated rows are kept)."""
        return self.memory(scope).facts.count()

    def storage_bytes(self, scope: str) -> int:
        return self.memory(scope).storage_bytes()

    def save(self, scope: str, path: Path) -> None:
        self.memory(scope).save(Path(path))

    def load(self, scope: str, path: Path) -> None:
        self._close(scope)
        install_copy(Path(path), scope_directory(self.root, scope))
        self.memory(scope)
