"""OpenClaw-style hybrid memory (seed: vibebrowser-openclaw-memory.txt): Markdown files on disk, indexed as
chunks in SQLite (FTS5 for keywords, float32 embedding blobs for exact cosine), merged 0.7 vector + 0.3 text,
then temporal decay and MMR re-ranking.

Facts carried over from OpenClaw, and the choices made where the seed leaves room:
- Files per scope: MEMORY.md (durable facts) and memory/YYYY-MM-DD.md (daily logs). The adapter writes each
  message as one line "- HH:MM who: text" under a session heading; who is the speaker's name when the
  dataset has one (imported dialogues), else the role; an app's record reads "system: [App] text".
  A `lines` table maps every heading and message line back to its message, session and time.
- Chunks: line-based, 400 tokens with 80 tokens of overlap (OpenClaw's defaults), at OpenClaw's 4
  characters per token: lines are packed up to 1,600 characters, a longer line is cut in pieces, and a
  new chunk starts with the trailing lines of the previous one up to 320 characters (at least one line).
  MiniLM reads at most 256 word pieces, so the vector side sees the start of a long chunk only.
- Keyword search: FTS5 with its default unicode61 tokenizer, query = every word of the question quoted and
  joined with AND (OpenClaw's buildFtsQuery). unicode61 does not segment Chinese: a run of Han characters
  is one token, so a Chinese query matches only when a whole run recurs verbatim.
  textScore = bm25RankToScore(rank) = r / (1 + r) with r = -rank (FTS5 ranks are negative).
- Vector search: exact cosine between the query's and each chunk's embedding (MiniLM by default).
- Merge: score = 0.7 vectorScore + 0.3 textScore over the union of the two candidate pools, each
  maxResults x 4 chunks (at most 200). Then temporal decay, score x 2^(-age_days / 30), with the age taken
  from the date in a daily file's name (midnight) to the query time; MEMORY.md is evergreen. Then MMR
  (lambda 0.7, Carbonell & Goldstein) over the merged list: relevance min-max normalised as OpenClaw does,
  similarity = cosine of chunk embeddings (OpenClaw uses token Jaccard; the brief asks for embeddings).
  Then the minScore cut, with OpenClaw's fallback to keyword hits at min(minScore, 0.3) when nothing passes.
  (OpenClaw ships decay and MMR switched off; the brief switches both on, and so does this adapter.)
- Replay clock: a chunk exists for a query only when every line in it was written by the query time
  (a chunk straddling the query time is left out). FTS5's IDF statistics still cover the whole table.
- Indexing happens after each ingested session (OpenClaw re-syncs when its watcher sees a memory file
  change) and again on flush; only changed files are re-chunked and only new chunk texts embedded, so the
  Usage an ingest returns counts the embeddings it caused.
The tool surface defaults are OpenClaw's (maxResults 6, minScore 0.35); the harness adapter asks for k
results with minScore 0 so that recall is measured over everything the merge returns.
"""

from __future__ import annotations

import hashlib
import math
import re
import shutil
import sqlite3
import tempfile
import weakref
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from typing import Any

import numpy as np

from baselines.dense import Embedder, MiniLM, shared_minilm
from baselines.store import fingerprint
from baselines.text import message_text
from baselines.vibebrowser import durable_category, epoch
from eval.contract import Hit, Query, Retrieval, Usage
from keme.dataset.paths import scope_path
from keme.models import Message, Session

CHUNK_TOKENS, CHUNK_OVERLAP = 400, 80
CHARS_PER_TOKEN = 4
VECTOR_WEIGHT, TEXT_WEIGHT = 0.7, 0.3
CANDIDATE_MULTIPLIER, MAX_CANDIDATES = 4, 200
HALF_LIFE_DAYS = 30.0
MMR_LAMBDA = 0.7
DEFAULT_MAX_RESULTS, DEFAULT_MIN_SCORE = 6, 0.35
SNIPPET_MAX_CHARS = 700
MEMORY_FILE = "MEMORY.md"
_DAILY = re.compile(r"^memory/(\d{4})-(\d{2})-(\d{2})\.md$")
_DAY_SECONDS = 86_400.0


# ---------------------------------------------------------------- formulas
@dataclass(frozen=True)
class Chunk:
    start_line: int  # 1-based, inclusive
    end_line: int
    text: str
    hash: str


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def chunk_markdown(content: str, tokens: int = CHUNK_TOKENS, overlap: int = CHUNK_OVERLAP) -> list[Chunk]:
    """Pack lines into chunks of at most tokens x 4 characters, each carrying the previous chunk's tail."""
    max_chars = max(32, tokens * CHARS_PER_TOKEN)
    overlap_cap = min(overlap * CHARS_PER_TOKEN, max_chars // 2)
    chunks: list[Chunk] = []
    current: list[tuple[int, str]] = []

    def emit() -> None:
        text = "\n".join(piece for _, piece in current)[:max_chars]
        chunks.append(Chunk(current[0][0], current[-1][0], text, _sha(text)))

    def carry() -> list[tuple[int, str]]:
        kept: list[tuple[int, str]] = []
        size = 0
        for number, piece in reversed(current if overlap_cap > 0 else []):
            if size + len(piece) + 1 > overlap_cap and kept:
                break
            size += len(piece) + 1
            kept.insert(0, (number, piece))
            if size >= overlap_cap:
                break
        return kept

    size = 0
    for number, line in enumerate(content.split("\n"), start=1):
        for piece in [line[i : i + max_chars] for i in range(0, len(line), max_chars)] or [""]:
            if size + len(piece) + 1 > max_chars and current:
                emit()
                current = carry()
                size = sum(len(p) + 1 for _, p in current)
            current.append((number, piece))
            size += len(piece) + 1
    if current:
        emit()
    return chunks


def build_fts_query(raw: str) -> str | None:
    """Every word (letters, digits, underscore) quoted, joined with AND; None when there is no word."""
    words = re.findall(r"\w+", raw)
    return " AND ".join(f'"{w}"' for w in words) if words else None


def bm25_rank_to_score(rank: float) -> float:
    """FTS5 rank (negative; more negative = more relevant) to [0, 1)."""
    if not math.isfinite(rank):
        return 1.0 / (1.0 + 999.0)
    if rank < 0:
        relevance = -rank
        return relevance / (1.0 + relevance)
    return 1.0 / (1.0 + rank)


def hybrid_score(
    vector_score: float,
    text_score: float,
    vector_weight: float = VECTOR_WEIGHT,
    text_weight: float = TEXT_WEIGHT,
) -> float:
    return vector_weight * vector_score + text_weight * text_score


def candidate_pool(max_results: int, multiplier: int = CANDIDATE_MULTIPLIER) -> int:
    """How many chunks each side (vector, keyword) contributes to the merge."""
    return min(MAX_CANDIDATES, max(1, max_results * multiplier))


def decay_multiplier(age_days: float, half_life_days: float = HALF_LIFE_DAYS) -> float:
    return math.exp(-math.log(2.0) / half_life_days * max(0.0, age_days))


def daily_date(path: str) -> date | None:
    """The date of a daily log path (memory/YYYY-MM-DD.md); None for MEMORY.md and undated files
    (evergreen)."""
    match = _DAILY.match(path)
    if not match:
        return None
    try:
        return date(*(int(g) for g in match.groups()))
    except ValueError:
        return None


def cosine_matrix(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit = vectors / np.where(norms == 0, 1.0, norms)
    return unit @ unit.T


def mmr_order(scores: list[float], similarity: np.ndarray, lam: float = MMR_LAMBDA) -> list[int]:
    """Maximal marginal relevance: repeatedly take argmax of lam*rel - (1-lam)*max sim to those taken.

    rel is the score min-max normalised to [0, 1] (all 1 when equal); ties go to the higher score.
    """
    n = len(scores)
    if n <= 1 or lam >= 1.0:
        return sorted(range(n), key=lambda i: -scores[i])
    values = np.asarray(scores, dtype=np.float64)
    spread = values.max() - values.min()
    relevance = (values - values.min()) / spread if spread > 0 else np.ones(n)
    closest = np.zeros(n)
    remaining = np.ones(n, dtype=bool)
    order: list[int] = []
    for _ in range(n):
        mmr = np.where(remaining, lam * relevance - (1.0 - lam) * closest, -np.inf)
        ties = np.flatnonzero(mmr == mmr.max())
        best = int(ties[np.argmax(values[ties])])
        order.append(best)
        remaining[best] = False
        closest = np.maximum(closest, similarity[:, best])
    return order


# ---------------------------------------------------------------- files
class MemoryFiles:
    """The Markdown workspace: MEMORY.md and memory/YYYY-MM-DD.md under one directory."""

    def __init__(self, root: Path):
        self.root = root
        (root / "memory").mkdir(parents=True, exist_ok=True)

    def paths(self) -> list[str]:
        daily = sorted(f"memory/{p.name}" for p in (self.root / "memory").glob("*.md"))
        return ([MEMORY_FILE] if (self.root / MEMORY_FILE).exists() else []) + daily

    def read(self, path: str) -> str:
        return self._resolve(path).read_text(encoding="utf-8")

    def append(self, path: str, title: str, lines: list[str]) -> int:
        """Append lines (a new file starts with its title); returns the 1-based number of the first one."""
        file = self._resolve(path)
        existing = file.read_text(encoding="utf-8") if file.exists() else ""
        prefix = "" if existing else f"{title}\n"
        with file.open("a", encoding="utf-8") as handle:
            handle.write(prefix + "".join(f"{line}\n" for line in lines))
        return existing.count("\n") + prefix.count("\n") + 1

    def get(self, path: str, from_line: int | None = None, lines: int | None = None) -> str:
        all_lines = self.read(path).split("\n")
        if all_lines and all_lines[-1] == "":
            all_lines.pop()
        start = max(1, from_line or 1) - 1
        end = len(all_lines) if lines is None else start + max(0, lines)
        return "\n".join(all_lines[start:end])

    def _resolve(self, path: str) -> Path:
        """Only memory files: MEMORY.md or memory/*.md, nothing outside the workspace."""
        clean = path.replace("\\", "/").lstrip("./")
        daily = clean.startswith("memory/") and clean.endswith(".md")
        if ".." in clean.split("/") or not (clean == MEMORY_FILE or daily):
            raise ValueError(f"not a memory file: {path!r}")
        return self.root / clean


# ---------------------------------------------------------------- index
_SCHEMA = """
CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (id TEXT PRIMARY KEY, path TEXT NOT NULL, start_line INTEGER NOT NULL,
    end_line INTEGER NOT NULL, hash TEXT NOT NULL, text TEXT NOT NULL, embedding BLOB NOT NULL, newest REAL);
CREATE INDEX IF NOT EXISTS chunks_by_path ON chunks(path);
CREATE VIRTUAL TABLE IF NOT EXISTS chunks_fts USING fts5(text, id UNINDEXED, path UNINDEXED);
CREATE TABLE IF NOT EXISTS lines (path TEXT NOT NULL, line INTEGER NOT NULL, message_id TEXT, session_id TEXT,
    ts TEXT NOT NULL, epoch REAL NOT NULL, PRIMARY KEY (path, line));
"""


@dataclass(frozen=True)
class LineRecord:
    line: int
    message_id: str | None
    session_id: str
    ts: datetime


class MemoryIndex:
    """SQLite index of the chunks of every memory file, with the line -> message map."""

    def __init__(self, db_path: Path):
        self.db = sqlite3.connect(db_path, check_same_thread=False)
        self.db.executescript(_SCHEMA)
        self._vectors: tuple[list[str], np.ndarray, np.ndarray] | None = None

    def close(self) -> None:
        self.db.close()

    def record_lines(self, path: str, records: list[LineRecord]) -> None:
        rows = [(path, r.line, r.message_id, r.session_id, r.ts.isoformat(), epoch(r.ts)) for r in records]
        self.db.executemany("INSERT OR REPLACE INTO lines VALUES (?, ?, ?, ?, ?, ?)", rows)
        self.db.commit()

    def sync(
        self, files: MemoryFiles, paths: list[str], embedder: Embedder, tokens: int, overlap: int
    ) -> int:
        """Re-chunk those of `paths` whose content changed; embed only the chunk texts a file did not have
        yet.

        Returns how many texts were embedded.
        """
        known = dict(self.db.execute("SELECT path, hash FROM files"))
        plans: list[tuple[str, str, list[Chunk], dict[str, bytes]]] = []
        for path in paths:
            content = files.read(path)
            digest = _sha(content)
            if known.get(path) != digest:
                old = dict(self.db.execute("SELECT hash, embedding FROM chunks WHERE path = ?", (path,)))
                plans.append((path, digest, chunk_markdown(content, tokens, overlap), old))
        if not plans:
            return 0
        missing = list(
            dict.fromkeys(c.text for _, _, chunks, old in plans for c in chunks if c.hash not in old)
        )
        fresh = {}
        if missing:
            vectors = np.asarray(embedder.embed(missing), dtype=np.float32)
            fresh = {_sha(text): vector.tobytes() for text, vector in zip(missing, vectors)}
        for path, digest, chunks, old in plans:
            self.db.execute("DELETE FROM chunks WHERE path = ?", (path,))
            self.db.execute("DELETE FROM chunks_fts WHERE path = ?", (path,))
            for chunk in chunks:
                chunk_id = _sha(f"{path}:{chunk.start_line}:{chunk.end_line}:{chunk.hash}")[:24]
                (newest,) = self.db.execute(
                    "SELECT MAX(epoch) FROM lines WHERE path = ? AND line BETWEEN ? AND ?",
                    (path, chunk.start_line, chunk.end_line),
                ).fetchone()
                self.db.execute(
                    "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        chunk_id,
                        path,
                        chunk.start_line,
                        chunk.end_line,
                        chunk.hash,
                        chunk.text,
                        old.get(chunk.hash) or fresh[chunk.hash],
                        newest,
                    ),
                )
                self.db.execute("INSERT INTO chunks_fts VALUES (?, ?, ?)", (chunk.text, chunk_id, path))
            self.db.execute("INSERT OR REPLACE INTO files VALUES (?, ?)", (path, digest))
        self.db.commit()
        self._vectors = None
        return len(missing)

    def vectors(self) -> tuple[list[str], np.ndarray, np.ndarray]:
        """Chunk ids, their embeddings (rows) and their newest line times (NaN: unknown), cached until a
        sync."""
        if self._vectors is None:
            rows = self.db.execute("SELECT id, embedding, newest FROM chunks ORDER BY rowid").fetchall()
            ids = [r[0] for r in rows]
            matrix = (
                np.vstack([np.frombuffer(r[1], dtype=np.float32) for r in rows])
                if rows
                else np.zeros((0, 0), dtype=np.float32)
            )
            newest = np.asarray([np.nan if r[2] is None else r[2] for r in rows], dtype=np.float64)
            self._vectors = (ids, matrix, newest)
        return self._vectors

    def search_vector(self, query: np.ndarray, now: float, limit: int) -> list[tuple[str, float]]:
        ids, matrix, newest = self.vectors()
        if not ids:
            return []
        norms = np.linalg.norm(matrix, axis=1) * (np.linalg.norm(query) or 1.0)
        cosine = matrix @ query / np.where(norms == 0, 1.0, norms)
        visible = np.flatnonzero(np.isnan(newest) | (newest <= now))
        best = visible[np.argsort(-cosine[visible], kind="stable")[:limit]]
        return [(ids[i], float(cosine[i])) for i in best]

    def search_keyword(self, fts_query: str, now: float, limit: int) -> list[tuple[str, float]]:
        """(chunk id, FTS5 rank) of the chunks matching every query word, best first."""
        return self.db.execute(
            "SELECT id, bm25(chunks_fts) AS rank FROM chunks_fts WHERE chunks_fts MATCH ? AND id IN "
            "(SELECT id FROM chunks WHERE newest IS NULL OR newest <= ?) ORDER BY rank LIMIT ?",
            (fts_query, now, limit),
        ).fetchall()

    def chunk(self, chunk_id: str) -> tuple[str, int, int, str]:
        """(path, start line, end line, text) of a chunk."""
        return self.db.execute(
            "SELECT path, start_line, end_line, text FROM chunks WHERE id = ?", (chunk_id,)
        ).fetchone()

    def lines_between(self, path: str, start: int, end: int) -> list[LineRecord]:
        rows = self.db.execute(
            "SELECT line, message_id, session_id, ts FROM lines "
            "WHERE path = ? AND line BETWEEN ? AND ? ORDER BY line",
            (path, start, end),
        ).fetchall()
        return [LineRecord(r[0], r[1], r[2], datetime.fromisoformat(r[3])) for r in rows]

    def count(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]


# ---------------------------------------------------------------- one user's memory (the tool surface)
@dataclass(frozen=True)
class Settings:
    chunk_tokens: int = CHUNK_TOKENS
    chunk_overlap: int = CHUNK_OVERLAP
    vector_weight: float = VECTOR_WEIGHT
    text_weight: float = TEXT_WEIGHT
    candidate_multiplier: int = CANDIDATE_MULTIPLIER
    half_life_days: float = HALF_LIFE_DAYS
    mmr_lambda: float = MMR_LAMBDA


@dataclass(frozen=True)
class SearchResult:
    path: str
    start_line: int
    end_line: int
    score: float
    snippet: str
    chunk_id: str
    text: str
    vector_score: float
    text_score: float


class OpenClawMemory:
    """One user's workspace: files, index and embedder; memory_search and memory_get as in OpenClaw."""

    def __init__(self, root: Path, embedder: Embedder, settings: Settings = Settings()):
        self.root, self.embedder, self.settings = root, embedder, settings
        self.files = MemoryFiles(root)
        self.index = MemoryIndex(root / "index.sqlite")
        # files written since the last sync (all, on opening)
        self.pending: set[str] = set(self.files.paths())

    def close(self) -> None:
        self.index.close()

    def write_session(self, session: Session) -> None:
        """Durable facts to MEMORY.md, everything else to the daily log of the session's date."""
        durable = [m for m in session.messages if durable_category(m)]
        daily = [m for m in session.messages if not durable_category(m)]
        day = session.start.date().isoformat()
        self._append(MEMORY_FILE, "# MEMORY", f"## {day} · session {session.id}", session, durable)
        heading = f"## Session {session.id} · {session.start:%H:%M}"
        self._append(f"memory/{day}.md", f"# {day}", heading, session, daily)

    def _append(self, path: str, title: str, heading: str, session: Session, messages: list[Message]) -> None:
        if not messages:
            return
        first = self.files.append(path, title, ["", heading] + [log_line(m) for m in messages])
        self.pending.add(path)
        records = [LineRecord(first + 1, None, session.id, session.start)]
        records += [LineRecord(first + 2 + i, m.id, session.id, m.timestamp) for i, m in enumerate(messages)]
        self.index.record_lines(path, records)

    def sync(self) -> int:
        """Index the files written since the last sync (OpenClaw syncs a dirty index before searching)."""
        if not self.pending:
            return 0
        paths = sorted(self.pending)
        embedded = self.index.sync(
            self.files, paths, self.embedder, self.settings.chunk_tokens, self.settings.chunk_overlap
        )
        self.pending.clear()
        return embedded

    def memory_get(self, path: str, from_line: int | None = None, lines: int | None = None) -> dict[str, Any]:
        return {"path": path, "text": self.files.get(path, from_line, lines)}

    def memory_search(
        self,
        query: str,
        *,
        now: datetime,
        max_results: int = DEFAULT_MAX_RESULTS,
        min_score: float = DEFAULT_MIN_SCORE,
    ) -> list[SearchResult]:
        s = self.settings
        self.sync()
        ids, matrix, _ = self.index.vectors()
        if not ids:
            return []
        now_s = epoch(now)
        pool = candidate_pool(max_results, s.candidate_multiplier)
        query_vector = np.asarray(self.embedder.embed([query])[0], dtype=np.float32)
        # OpenClaw skips the vector side for an all-zero query embedding
        has_vector = bool(np.any(query_vector))
        vector = dict(self.index.search_vector(query_vector, now_s, pool)) if has_vector else {}
        fts = build_fts_query(query)
        ranks = self.index.search_keyword(fts, now_s, pool) if fts else []
        keyword = {cid: bm25_rank_to_score(rank) for cid, rank in ranks}
        merged = []
        for cid in dict.fromkeys([*vector, *keyword]):
            path, start, end, text = self.index.chunk(cid)
            day = daily_date(path)
            factor = (
                1.0
                if day is None
                else decay_multiplier(
                    (now_s - epoch(datetime(day.year, day.month, day.day))) / _DAY_SECONDS, s.half_life_days
                )
            )
            score = (
                hybrid_score(vector.get(cid, 0.0), keyword.get(cid, 0.0), s.vector_weight, s.text_weight)
                * factor
            )
            merged.append(
                SearchResult(
                    path,
                    start,
                    end,
                    score,
                    text[:SNIPPET_MAX_CHARS],
                    cid,
                    text,
                    vector.get(cid, 0.0),
                    keyword.get(cid, 0.0),
                )
            )
        merged.sort(key=lambda r: -r.score)
        row = {cid: i for i, cid in enumerate(ids)}
        similarity = cosine_matrix(matrix[[row[r.chunk_id] for r in merged]])
        ranked = [merged[i] for i in mmr_order([r.score for r in merged], similarity, s.mmr_lambda)]
        strict = [r for r in ranked if r.score >= min_score]
        if strict or not keyword:
            return strict[:max_results]
        relaxed = min(min_score, s.text_weight)
        return [r for r in ranked if r.chunk_id in keyword and r.score >= relaxed][:max_results]

    def trace(self, result: SearchResult) -> list[LineRecord]:
        """The message and heading lines a result covers."""
        return self.index.lines_between(result.path, result.start_line, result.end_line)


def log_line(message: Message) -> str:
    text = " ".join(message_text(message).split("\n"))
    return f"- {message.timestamp:%H:%M} {message.speaker or message.role}: {text}"


# ---------------------------------------------------------------- harness adapter
class OpenClaw:
    """The harness adapter: one workspace directory per scope under `root` (a fresh temp dir by default)."""

    def __init__(
        self,
        root: Path | str | None = None,
        embedder: Embedder | None = None,
        chunk_tokens: int = CHUNK_TOKENS,
        chunk_overlap: int = CHUNK_OVERLAP,
        vector_weight: float = VECTOR_WEIGHT,
        text_weight: float = TEXT_WEIGHT,
        candidate_multiplier: int = CANDIDATE_MULTIPLIER,
        half_life_days: float = HALF_LIFE_DAYS,
        mmr_lambda: float = MMR_LAMBDA,
    ):
        self.name = "openclaw"
        self.root = Path(tempfile.mkdtemp(prefix="openclaw-")) if root is None else Path(root)
        # a temp root of our own goes when the system does (the harness does not always call close)
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.root, True) if root is None else None
        self._embedder = embedder
        self.settings = Settings(
            chunk_tokens,
            chunk_overlap,
            vector_weight,
            text_weight,
            candidate_multiplier,
            half_life_days,
            mmr_lambda,
        )
        self.stores: dict[str, OpenClawMemory] = {}

    @property
    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = shared_minilm()
        return self._embedder

    def config_fingerprint(self) -> str:
        model = getattr(self._embedder, "name", MiniLM.name)
        return fingerprint(self.name, model=model, distill="lexicon-v1", **vars(self.settings))

    def _dir(self, scope: str) -> Path:
        return scope_path(self.root, scope)

    def _store(self, scope: str) -> OpenClawMemory:
        if scope not in self.stores:
            self.stores[scope] = OpenClawMemory(self._dir(scope), self.embedder, self.settings)
        return self.stores[scope]

    def _drop(self, scope: str) -> None:
        store = self.stores.pop(scope, None)
        if store is not None:
            store.close()
        shutil.rmtree(self._dir(scope), ignore_errors=True)

    def reset(self, scope: str) -> None:
        self._drop(scope)
        self._store(scope)

    def ingest(self, scope: str, session: Session) -> Usage:
        store = self._store(scope)
        store.write_session(session)
        return Usage(embedded_texts=store.sync())

    def flush(self, scope: str) -> None:
        self._store(scope).sync()

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        store = self._store(scope)
        if not store.index.count():
            return Retrieval(hits=[])
        hits = []
        for result in store.memory_search(query.text, now=query.now, max_results=k, min_score=0.0):
            lines = store.trace(result)
            hits.append(
                Hit(
                    text=result.text,
                    score=result.score,
                    timestamp=max((line.ts for line in lines), default=None),
                    message_ids=[line.message_id for line in lines if line.message_id],
                    session_ids=list(dict.fromkeys(line.session_id for line in lines)),
                )
            )
        return Retrieval(hits=hits, usage=Usage(embedded_texts=1))

    def size(self, scope: str) -> int:
        return self._store(scope).index.count()

    def storage_bytes(self, scope: str) -> int:
        return sum(p.stat().st_size for p in self._dir(scope).rglob("*") if p.is_file())

    def save(self, scope: str, path: Path) -> None:
        self._store(scope).index.db.commit()
        shutil.copytree(self._dir(scope), path, dirs_exist_ok=True)

    def load(self, scope: str, path: Path) -> None:
        self._drop(scope)
        shutil.copytree(path, self._dir(scope))
        self._store(scope)

    def close(self) -> None:
        for scope in list(self.stores):
            self.stores.pop(scope).close()
        if self._cleanup is not None:
            self._cleanup()
