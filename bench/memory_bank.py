"""Memory Bank retrieval at 10,000 entries, side by side with bm25s (issue #5).

Entries come from synthesized trajectories (one per message: title = first
clause, keywords as the distiller extracts them, content = the message); the
500 queries are the trajectories' own questions. Printed:

- index build time (in memory, and rebuilt from the SQLite file) — target <= 1 s;
- search latency p50/p95 with field weights and boosts on (the seed's injection:
  search, quotas, hits update) — target p95 <= 2 ms;
- agreement with bm25s (method "lucene": idf = ln(1 + (N - df + 0.5)/(df + 0.5)),
  k1 1.2, b 0.75) with weights and boosts off, on identical tokens: share of
  queries whose top-10 are equal — target >= 99 %. Equal means the same ten
  scores (bm25s omits BM25's constant (k1 + 1) factor, so ours are divided by
  2.2) and the same documents above the tenth score; documents tied exactly at
  the cut may differ, because bm25s orders ties arbitrarily. Strict set equality
  is printed too;
- single-query throughput of both, weights and boosts off, same process — target >= 1x.

    python bench/memory_bank.py [--entries 10000] [--queries 500]
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/eval.py would shadow the `eval` package: keep this folder off the import path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

import bm25s

from baselines.memory_bank.bank import MemoryBank, open_bank
from baselines.memory_bank.distill import keywords
from baselines.memory_bank.index import FLAT, keyword_term
from baselines.memory_bank.records import SemanticEntry, ms
from eval.metrics import percentile
from keme.synth.limits import parse_config
from keme.synth.pipeline import synthesize_persona
from keme.text.tokens import memory_bank_terms

ROOT = Path(__file__).resolve().parents[1]


def corpus(entries: int, queries: int) -> tuple[list[SemanticEntry], list[str], datetime]:
    from keme.qa.build import QAReport, build_items
    from keme.qa.facts import world_of

    items, questions, seed = [], [], 0
    now = datetime(2027, 1, 1)
    while len(items) < entries:
        language = "en" if seed % 2 == 0 else "zh"
        cfg = parse_config(
            f"name: b\nseed: {seed}\npersonas:\n  - {{language: {language}, start: 2026-01-01, months: 12}}\n"
        )
        traj = synthesize_persona(0, cfg)
        world = world_of(traj.view())
        questions += [q.question for q in build_items(world, cfg.qa, cfg.seed, QAReport())]
        for session in traj.sessions:
            for message in session.messages:
                title = message.content.split("\n")[0][:60]
                items.append(
                    SemanticEntry(
                        id=f"sem-{len(items) + 1}",
                        title=title,
                        content=message.content,
                        keywords=keywords(message.content),
                        polarity="negative" if len(items) % 7 == 0 else "positive",
                        app=message.app,
                        created_at=ms(message.timestamp),
                        message_ids=[message.id],
                        session_ids=[session.id],
                    )
                )
        seed += 1
    step = max(1, len(questions) // queries)
    return items[:entries], questions[::step][:queries], now


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=500)
    args = parser.parse_args()
    entries, queries, now = corpus(args.entries, args.queries)
    print(f"{len(entries)} entries, {len(queries)} queries")

    # -- index build
    started = time.perf_counter()
    bank = MemoryBank(semantic_limit=len(entries))
    for entry in entries:
        bank._index(entry.model_copy())
    built = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as tmp:
        stored = open_bank(Path(tmp) / "bank.sqlite", semantic_limit=len(entries))
        stored.store.write(semantic=entries)
        started = time.perf_counter()
        reopened = open_bank(Path(tmp) / "bank.sqlite", semantic_limit=len(entries))
        rebuilt = time.perf_counter() - started
        assert len(reopened.semantic) == len(entries)
    print(f"index build: {built:.3f} s in memory, {rebuilt:.3f} s rebuilt from SQLite (target <= 1 s)")

    # -- search latency, weights and boosts on (the seed's injection path)
    latencies = []
    for i, query in enumerate(queries):
        started = time.perf_counter()
        bank.inject(query, now + timedelta(minutes=i))
        latencies.append((time.perf_counter() - started) * 1000)
    print(
        f"search with weights + boosts + injection: p50 {percentile(latencies, 50):.3f} ms, "
        f"p95 {percentile(latencies, 95):.3f} ms (target p95 <= 2 ms)"
    )

    # -- agreement with bm25s, weights and boosts off, identical tokens
    flat = MemoryBank(weights=FLAT, boosts=False, semantic_limit=len(entries))
    for entry in entries:
        flat._index(entry.model_copy())
    docs = [
        memory_bank_terms(e.title)
        + [keyword_term(k) for k in e.keywords if keyword_term(k)]
        + memory_bank_terms(e.content)
        for e in entries
    ]
    reference = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
    reference.index(docs, show_progress=False)
    vocab = reference.vocab_dict
    ids = [e.id for e in entries]
    query_terms = [[t for t in flat.index.query_terms(q) if t in vocab] for q in queries]
    agree = strict = comparable = 0
    for terms in query_terms:
        if not terms:
            continue
        comparable += 1
        ours = [(s.entry.id, s.score / 2.2) for s in flat.search(" ".join(terms), now, limit=10)]
        docs_idx, scores = reference.retrieve([terms], k=10, show_progress=False)
        theirs = [(ids[i], float(s)) for i, s in zip(docs_idx[0], scores[0]) if s > 0]
        same_scores = len(ours) == len(theirs) and all(
            abs(a[1] - b[1]) <= 1e-4 * max(1.0, a[1])
            for a, b in zip(ours, sorted(theirs, key=lambda x: -x[1]))
        )
        cut = ours[-1][1] if ours else 0.0
        above = lambda rows: {i for i, score in rows if score > cut * (1 + 1e-4)}  # noqa: E731
        agree += same_scores and above(ours) == above(theirs)
        strict += {i for i, _ in ours} == {i for i, _ in theirs}
    print(
        f"top-10 agreement with bm25s (lucene IDF): {agree}/{comparable} = {agree / comparable:.1%} "
        f"equal up to ties at the cut, {strict / comparable:.1%} identical sets (target >= 99 %)"
    )

    # -- single-query throughput, same process
    usable = [t for t in query_terms if t]
    started = time.perf_counter()
    for terms in usable:
        flat.search(" ".join(terms), now, limit=10)
    ours_qps = len(usable) / (time.perf_counter() - started)
    started = time.perf_counter()
    for terms in usable:
        reference.retrieve([terms], k=10, show_progress=False, n_threads=1)
    theirs_qps = len(usable) / (time.perf_counter() - started)
    print(
        f"single-query throughput: Memory Bank {ours_qps:,.0f} q/s, bm25s {theirs_qps:,.0f} q/s, "
        f"ratio {ours_qps / theirs_qps:.2f}x (target >= 1x)"
    )


if __name__ == "__main__":
    main()
