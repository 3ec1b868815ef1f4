"""Reports: per-question results, summary.json, the leaderboard (CSV, Markdown, rich) and a plot.

Metrics are recomputed from the stage logs, so a resumed run reports exactly
what an uninterrupted one would (timings aside). Unprefixed retrieval metrics
are at message granularity; `session_`-prefixed ones at session granularity.
Every leaderboard score carries a 95 % bootstrap interval resampled by persona,
and each system a paired test against the next one down (eval/uncertainty.py).
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path
from statistics import mean, pstdev
from typing import TYPE_CHECKING, Any

from eval.contract import Hit
from eval.disagreement import THRESHOLD_DEFAULT, disagree, disagreement_summary
from eval.failures import (
    CATEGORIES,
    LABELS,
    FailureAnalysis,
    Ledger,
    Outcome,
    breakdown,
    classify,
    verdict_of,
)
from eval.llm_judge import LLMJudge
from eval.log import Log
from eval.metrics import (
    KS,
    bleu1,
    evidence_groups,
    evidence_in_context,
    percentile,
    ranked_ids,
    retrieval_scores,
    session_groups,
    token_f1,
)
from eval.reader import LLMReader
from eval.replay import Replay
from eval.uncertainty import B_DEFAULT, LEVEL, SEED_DEFAULT, interval, paired, resamples
from keme.dataset.findings import finding_counts
from keme.dataset.io import atomic_write_text, dump_json
from keme.llm.health import summarize as summarize_failures
from keme.models import QAItem

if TYPE_CHECKING:  # eval.run imports this module when it writes the reports
    from eval.run import Settings

BREAKDOWN_METRICS = (
    "recall_any@5",
    "recall_any@10",
    "recall_all@10",
    "ndcg_any@10",
    "locomo_recall@10",
    "mrr",
    "session_recall_any@5",
    "evidence_in_context",
    "accuracy",
    "llm_accuracy",
    "token_f1",
)
LEADERBOARD = (
    ("recall_any@5", "R-any@5"),
    ("recall_all@5", "R-all@5"),
    ("ndcg_any@10", "nDCG@10"),
    ("locomo_recall@10", "LoCoMo-R@10"),
    ("session_recall_any@5", "sess R-any@5"),
    ("mrr", "MRR"),
    ("evidence_in_context", "in ctx"),
    ("accuracy", "acc"),
    ("llm_accuracy_mean", "LLM acc"),
    ("llm_accuracy_std", "LLM acc sd"),  # over the judge's runs; the interval is over questions
    ("retrieve_p95_ms", "p95 ms"),
    ("ingest_messages_per_s", "ingest msg/s"),
    ("context_tokens_mean", "ctx tok"),
    ("peak_rss_mb", "peak MB"),
    ("memory_llm_calls", "LLM calls"),  # the memory system's own LLM use (ingest + retrieval)
    ("memory_llm_tokens", "LLM tok"),
    ("ingest_s_per_session", "s/session"),
    ("memory_llm_unparseable", "LLM unparsed"),  # replies the system's library could not read
    ("memory_llm_retries", "LLM retries"),
)
# shown only when some system of the run calls an LLM to store or retrieve (mem0, LangMem): for the others
# they are 0 and msg/s already says what ingest costs
LLM_COST = (
    "memory_llm_calls",
    "memory_llm_tokens",
    "ingest_s_per_session",
    "memory_llm_unparseable",
    "memory_llm_retries",
)
# measured on the machine (wall time, memory): two runs of the same work differ in these and nowhere else
MEASURED = frozenset(
    {
        "retrieve_p50_ms",
        "retrieve_p95_ms",
        "ingest_seconds",
        "ingest_messages_per_s",
        "ingest_s_per_session",
        "peak_rss_mb",
    }
)
# per-question means with a 95 % interval in summary.json (`intervals`), the leaderboard's scores among them
INTERVALS = (
    "recall_any@5",
    "recall_all@5",
    "ndcg_any@5",
    "ndcg_any@10",
    "locomo_recall@10",
    "session_recall_any@5",
    "mrr",
    "accuracy",
    "llm_accuracy_mean",
)
# the first of these that a system has ranks the leaderboard
HEADLINE = ("llm_accuracy_mean", "accuracy", "recall_any@5")
FEW_PERSONAS = 5  # below this the report says the persona-level spread rests on very few values


NOT_VERIFIED = (
    "NOT VERIFIED: the dataset's hashes and invariants were not checked (--no-verify, or a dataset handed "
    "to the harness without keme.validate.verified_dataset), so these scores may come from tampered or "
    "broken data"
)
_MARKDOWN = str.maketrans(
    {
        "\\": "\\\\",
        "|": "\\|",
        "`": "\\`",
        "*": "\\*",
        "[": "\\[",
        "]": "\\]",
        "<": "&lt;",
        ">": "&gt;",
        "&": "&amp;",
        "\n": " ",
        "\r": " ",
    }
)


def markdown_text(value: object) -> str:
    """A value as inert Markdown table text: no cell breaks, no markup, no HTML (system names come from
    users)."""
    return str(value).translate(_MARKDOWN)


def _load(path: Path) -> list[dict[str, Any]]:

    return Log(path).records()


def question_results(
    system_dir: Path,
    questions: dict[str, QAItem],
    session_of: Mapping[str, str] | None = None,
    failures: FailureAnalysis | None = None,
) -> list[dict[str, Any]]:
    """One row per question: retrieval scores at both granularities, the answer and verdicts if any, and
    with `failures` why a wrong question was got wrong (eval.failures).

    Evidence is scored by groups (eval.metrics): an evidence message or any message that restates it.
    `session_of` (message id -> session id) places every group member in its session; without it the
    session groups are the item's evidence sessions. A context-window system (`query_based` false in its
    system.json) gets `evidence_in_context` instead of rank metrics.
    """
    retrieved = {r["question_id"]: r for r in _load(system_dir / "retrieve.jsonl")}
    answers = {r["question_id"]: r for r in _load(system_dir / "answer.jsonl")}
    verdicts = {r["question_id"]: r["verdicts"] for r in _load(system_dir / "judge.jsonl")}
    info_path = system_dir / "system.json"
    ranks = json.loads(info_path.read_text()).get("query_based", True) if info_path.exists() else True
    rows = []
    for qid, record in retrieved.items():
        item = questions.get(qid)
        if item is None:
            continue
        hits = [
            Hit(text="", score=h["score"], message_ids=h["m"], session_ids=h["s"]) for h in record["hits"]
        ]
        row: dict[str, Any] = {
            "question_id": qid,
            "persona_id": item.persona_id,
            "type": item.type,
            "subtype": item.subtype,
            "language": item.language,
            "hops": item.hops,
            "format": item.format,
            "gold_messages": len(item.evidence),
            "retrieve_ms": record["seconds"] * 1000,
            "context_tokens": record["context_tokens"],
        }
        groups = evidence_groups(item.evidence, item.also_supported_by)
        if not ranks:
            if groups:
                context = record.get("context_m", ranked_ids(hits, "message"))
                row["evidence_in_context"] = evidence_in_context(context, groups)
        else:
            if groups:
                row |= retrieval_scores(ranked_ids(hits, "message"), groups)
            by_session = session_groups(groups, session_of) if session_of is not None else []
            by_session = by_session or evidence_groups(item.evidence_sessions, {})
            if by_session:
                session = retrieval_scores(ranked_ids(hits, "session"), by_session)
                row |= {f"session_{k}": v for k, v in session.items()}
        if qid in answers:
            answer = answers[qid]["answer"]
            row |= {
                "answer": answer,
                "gold": item.answer,
                "token_f1": token_f1(answer, item.answer),
                "bleu1": bleu1(answer, item.answer),
            }
            judged = verdicts.get(qid, {})
            row["verdicts"] = {name: v["correct"] for name, v in judged.items()}
            parted = disagree(row["verdicts"])
            if parted is not None:
                row["judges_disagree"] = parted
            if "rule" in judged:
                row["accuracy"] = float(judged["rule"]["correct"])
            if "llm" in judged:
                row["llm_accuracy"] = float(judged["llm"]["correct"])
                row["llm_runs"] = judged["llm"].get("runs", [])
        if failures is not None and (qid in answers or not failures.with_reader):
            ranked = ranked_ids(hits, "message")
            context = record.get("context_m") or [m for h in hits[: failures.k] for m in h.message_ids]
            answer = answers[qid]["answer"] if qid in answers else None
            outcome = Outcome(ranked, context, answer, verdict_of(row.get("verdicts", {})))
            row["failure"] = classify(item, groups, outcome, failures.ledger)
        rows.append(row)
    return sorted(rows, key=lambda r: r["question_id"])


def _means(rows: list[dict[str, Any]], keys: list[str]) -> dict[str, float]:
    out = {}
    for key in keys:
        values = [r[key] for r in rows if key in r]
        if values:
            out[key] = round(mean(values), 4)
    return out


def summarize(
    system_dir: Path, rows: list[dict[str, Any]], disagreement_threshold: float = THRESHOLD_DEFAULT
) -> dict[str, Any]:
    retrieval_keys = [
        f"{m}@{k}" for m in ("recall_any", "recall_all", "ndcg_any", "locomo_recall") for k in KS
    ] + ["mrr"]
    keys = retrieval_keys + [f"session_{k}" for k in retrieval_keys] + ["accuracy", "token_f1", "bleu1"]
    keys += ["evidence_in_context"]  # context-window systems: the share whose context holds the evidence
    summary: dict[str, Any] = {
        "questions": len(rows),
        "questions_with_evidence": sum(1 for r in rows if r["gold_messages"]),
    }
    summary |= _means(rows, keys)
    summary |= llm_judge_summary(rows)
    summary |= disagreement_summary(rows, disagreement_threshold)
    latencies = [r["retrieve_ms"] for r in rows]
    summary["retrieve_p50_ms"] = round(percentile(latencies, 50), 3)
    summary["retrieve_p95_ms"] = round(percentile(latencies, 95), 3)
    summary["context_tokens_mean"] = round(mean(r["context_tokens"] for r in rows), 1) if rows else 0
    ingest = {}
    for record in _load(system_dir / "ingest.jsonl"):
        ingest[record["persona_id"]] = record  # the last record of a persona counts
    seconds = sum(r["seconds"] for r in ingest.values())
    messages = sum(r["messages"] for r in ingest.values())
    summary["ingest_messages"] = messages
    summary["ingest_seconds"] = round(seconds, 4)
    summary["ingest_messages_per_s"] = round(messages / seconds, 1) if seconds else None
    storage = [r.get("storage_bytes") for r in ingest.values()]
    summary["storage_bytes"] = sum(storage) if storage and all(s is not None for s in storage) else None
    stored = [r.get("memories") for r in ingest.values()]
    summary["memories"] = sum(stored) if stored and all(n is not None for n in stored) else None
    usage: dict[str, int] = defaultdict(int)
    memory_usage: dict[str, int] = defaultdict(int)  # the memory system's own: ingest and retrieval
    memory_records = list(ingest.values()) + _load(system_dir / "retrieve.jsonl")
    for record in memory_records + _load(system_dir / "answer.jsonl"):
        for key, value in record.get("usage", {}).items():
            usage[key] += value
    for record in memory_records:
        for key, value in record.get("usage", {}).items():
            memory_usage[key] += value
    summary["usage"] = dict(usage)
    # what the memory system itself cost (the reader's answering is not its cost)
    summary["memory_llm_calls"] = memory_usage["llm_calls"]
    summary["memory_llm_tokens"] = memory_usage["prompt_tokens"] + memory_usage["completion_tokens"]
    summary["memory_llm_unparseable"] = memory_usage["llm_unparseable"]
    summary["memory_llm_retries"] = memory_usage["llm_retries"]
    sessions = sum(r.get("sessions", 0) for r in ingest.values())
    summary["ingest_s_per_session"] = round(seconds / sessions, 3) if sessions else None
    info_path = system_dir / "system.json"
    info = json.loads(info_path.read_text()) if info_path.exists() else {}
    summary["peak_rss_mb"] = round(info.get("peak_rss_bytes", 0) / 2**20, 1)
    summary["publishable"] = info.get("publishable", True)
    summary["query_based"] = info.get("query_based", True)  # False: a context window, not a ranking
    summary["answered_by"] = info.get("answered_by")
    summary["fingerprint"] = info.get("fingerprint")
    for field in ("type", "language", "hops"):
        groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            groups[str(row[field])].append(row)
        summary[f"by_{field}"] = {
            g: {"questions": len(v)} | _means(v, list(BREAKDOWN_METRICS)) for g, v in sorted(groups.items())
        }
    return summary


def llm_judge_summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """LLM-judge accuracy as mean ± std over its k runs, and its agreement with the rule judge."""
    judged = [r for r in rows if r.get("llm_runs")]
    if not judged:
        return {}
    runs = max(len(r["llm_runs"]) for r in judged)  # a run without a verdict is missing, not WRONG
    per_run = [mean(float(r["llm_runs"][i]) for r in judged if len(r["llm_runs"]) > i) for i in range(runs)]
    out: dict[str, Any] = {
        "llm_accuracy_mean": round(mean(per_run), 4),
        "llm_accuracy_std": round(pstdev(per_run), 4) if runs > 1 else 0.0,
        "llm_judge_runs": runs,
    }
    both = [r for r in judged if "accuracy" in r]
    if both:
        rule = [r["accuracy"] == 1.0 for r in both]
        llm = [r["llm_accuracy"] == 1.0 for r in both]
        agree = mean(float(a == b) for a, b in zip(rule, llm))
        p_rule, p_llm = mean(map(float, rule)), mean(map(float, llm))
        chance = p_rule * p_llm + (1 - p_rule) * (1 - p_llm)
        out["judge_agreement"] = round(agree, 4)
        out["judge_kappa"] = round((agree - chance) / (1 - chance), 4) if chance < 1 else 1.0
    return out


def missing_answers(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Questions retrieved but not answered, and answered but not judged: what failed LLM calls left out."""
    return {
        "answers_missing": sum(1 for r in rows if "answer" not in r),
        "verdicts_missing": sum(1 for r in rows if "answer" in r and not r.get("verdicts")),
    }


def _per_question(row: dict[str, Any], key: str) -> float | None:
    """A row's value of a leaderboard metric; LLM accuracy is the share of its judge runs that said correct
    (so the mean over questions is the reported mean over runs)."""
    if key == "llm_accuracy_mean":
        runs = row.get("llm_runs")
        return mean(map(float, runs)) if runs else None
    return row.get(key)


def headline_metric(summary: dict[str, Any]) -> str:
    """The metric the leaderboard is ranked by: answer accuracy when answers were judged (the LLM judge's
    first), else recall_any@5."""
    systems = [m for m in summary["systems"].values() if not _blind(m)]
    return next((key for key in HEADLINE if any(key in m for m in systems)), HEADLINE[-1])


def _blind(metrics: dict[str, Any]) -> bool:
    """A blind baseline answering by a heuristic with no reader: a reference line, not a ranked system
    (its accuracy must not make a retrieval-only run rank by accuracy)."""
    return str(metrics.get("answered_by") or "").startswith("blind:")


def _ranked(metrics: dict[str, Any], headline: str) -> bool:
    return metrics.get("publishable", True) and not _blind(metrics) and metrics.get(headline) is not None


def _rank_key(name: str, metrics: dict[str, Any], headline: str) -> tuple[bool, bool, bool, float, str]:
    """Publishable systems first, then the ones the headline metric ranks (blind baselines and context
    windows without it after them), then by the headline metric, ties by name (so a reloaded summary,
    whose keys are sorted, ranks the same)."""
    return (
        not metrics.get("publishable", True),
        _blind(metrics),
        metrics.get(headline) is None,
        -(metrics.get(headline) or 0),
        name,
    )


def add_uncertainty(
    summary: dict[str, Any],
    rows: dict[str, list[dict[str, Any]]],
    *,
    b: int = B_DEFAULT,
    seed: int = SEED_DEFAULT,
) -> None:
    """Every leaderboard figure's 95 % interval, the ranking by the headline metric and a paired test of
    each publishable system against the next one, written into `summary` (one set of resamples for all)."""
    personas = {r["question_id"]: r["persona_id"] for system in rows.values() for r in system}
    evidence = {r["question_id"] for system in rows.values() for r in system if r["gold_messages"]}
    ids = sorted(personas)
    draws = resamples(ids, [personas[q] for q in ids], b=b, seed=seed)
    values: dict[str, dict[str, list[float | None]]] = {}
    for name, system in rows.items():
        by_id = {r["question_id"]: r for r in system}
        values[name] = {
            key: [_per_question(by_id[q], key) if q in by_id else None for q in ids] for key in INTERVALS
        }
        summary["systems"][name]["intervals"] = {
            key: interval(column, draws).as_dict()
            for key, column in values[name].items()
            if any(v is not None for v in column)
        }
    headline = headline_metric(summary)
    order = sorted(summary["systems"], key=lambda n: _rank_key(n, summary["systems"][n], headline))
    ranked = [n for n in order if _ranked(summary["systems"][n], headline) and n in values]
    for name, following in zip(ranked, ranked[1:]):
        test = paired(values[name][headline], values[following][headline], draws)
        summary["systems"][name]["vs_next"] = {"system": following, "metric": headline} | test.as_dict()
    summary["uncertainty"] = {
        "method": draws.describe(),
        "scheme": draws.scheme,
        "b": draws.b,
        "seed": draws.seed,
        "level": LEVEL,
        "questions": len(ids),
        "questions_with_evidence": len(evidence),
        "personas": draws.personas,
        "headline": headline,
        "order": order,
    }


def leaderboard_rows(summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The leaderboard as data (the CSV): ranked by the headline metric, each score with its interval
    bounds (`_low`, `_high`) and the paired test against the next system."""
    headline = headline_metric(summary)
    costly = any(m.get("memory_llm_calls") for m in summary["systems"].values())
    rows = []
    for name, metrics in summary["systems"].items():
        row: dict[str, Any] = {"system": name}
        intervals = metrics.get("intervals", {})
        for key, label in LEADERBOARD:
            value = metrics.get(key)
            if value is None or (key in LLM_COST and not costly):
                continue
            row[label] = value
            if key in intervals:
                row[f"{label}_low"], row[f"{label}_high"] = intervals[key]["ci95"]
            if key == headline and "vs_next" in metrics:
                test = metrics["vs_next"]
                row |= {
                    "vs_next": test["system"],
                    "vs_next_diff": test["diff"],
                    "vs_next_low": test["ci95"][0],
                    "vs_next_high": test["ci95"][1],
                    "vs_next_p": test["p"],
                    "vs_next_significant": test["significant"],
                }
        row["note"] = "" if metrics.get("publishable", True) else "oracle: unpublishable"
        rows.append(not_ranked(row, metrics))
    stored = summary.get("uncertainty", {}).get("order")
    if stored and set(stored) == {r["system"] for r in rows}:
        rows.sort(key=lambda r: stored.index(r["system"]))
    else:
        rows.sort(key=lambda r: _rank_key(r["system"], summary["systems"][r["system"]], headline))
    return rows


def figure(value: object) -> str:
    """Scores (0..1) and small figures to three decimals, tens to one, larger figures whole."""
    if value is None or _missing(value):
        return ""
    if isinstance(value, float):
        return f"{value:.3f}" if value < 10 else f"{value:.1f}" if value < 100 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def _bound(value: float | None) -> str:
    return "?" if value is None else f"{value:.2f}".replace("-0.00", "0.00")


def _versus(test: dict[str, Any], compact: bool = False) -> str:
    if test["diff"] is None:
        return "no paired questions"
    low, high = test["ci95"]
    mark = ">" if test["significant"] else "≈"
    if compact:
        return f"{mark} p {test['p']:.2f}"
    return f"{mark} {test['diff']:+.3f} [{_bound(low)}, {_bound(high)}], p {test['p']:.2f}"


def leaderboard_cells(
    summary: dict[str, Any], *, compact: bool = False
) -> tuple[list[str], list[dict[str, str]]]:
    """The leaderboard as text (Markdown, the terminal): the columns, and per system, ranked, each figure as
    `0.627 [0.48, 0.77]` and, after the headline, `≈` (not significant) or `>` against the next system.
    `compact` (a terminal's width) gives the interval of the headline figure only."""
    headline = headline_metric(summary)
    label_of = dict(LEADERBOARD)
    versus = "vs next" if compact else f"vs next ({label_of.get(headline, headline)})"
    tested = any("vs_next" in m for m in summary["systems"].values())
    columns: dict[str, None] = {"system": None}
    table = []
    for row in leaderboard_rows(summary):
        metrics = summary["systems"][row["system"]]
        intervals = metrics.get("intervals", {})
        cells = {"system": row["system"]}
        for key, label in LEADERBOARD:
            if label not in row:
                continue
            cells[label] = figure(row[label])
            if key in intervals and (key == headline or not compact):
                low, high = intervals[key]["ci95"]
                cells[label] += f" [{_bound(low)}, {_bound(high)}]"
            if key == headline and tested:
                cells[versus] = _versus(metrics["vs_next"], compact) if "vs_next" in metrics else ""
        cells["note"] = row["note"]
        columns |= dict.fromkeys(cells)
        table.append(cells)
    return list(columns), table


def rests_on(summary: dict[str, Any]) -> str:
    """One line: what the figures rest on."""
    facts = summary.get("uncertainty")
    if not facts:
        return ""
    personas = facts["personas"]
    line = (
        f"Figures rest on {facts['questions']} questions ({facts['questions_with_evidence']} with gold "
        f"evidence) from {personas} persona{'s' if personas != 1 else ''}."
    )
    if 1 < personas < FEW_PERSONAS:
        line += (
            f" With {personas} personas the intervals are wide where the personas differ: a ranking "
            "that should hold across personas needs more of them."
        )
    return line


def how_sure(summary: dict[str, Any], *, compact: bool = False) -> str:
    """The footnote saying what the intervals and the marks are."""
    facts = summary.get("uncertainty")
    if not facts:
        return ""
    label = dict(LEADERBOARD).get(facts["headline"], facts["headline"])
    which = f" (here of {label} only; of every figure in leaderboard.md)" if compact else ""
    versus = (
        f"vs next: the two-sided p of the {label} difference from the next system down, paired over the "
        "same resamples; ≈ its 95 % interval covers 0"
        if compact
        else f"vs next: the {label} difference from the next system down, paired over the same resamples, "
        "with its 95 % interval and two-sided p; ≈ the interval covers 0"
    )
    return (
        f"Each [low, high]{which} is a {facts['method']}; retrieval figures rest on the questions with gold "
        f"evidence. {versus} (the two are not told apart), > it does not."
    )


def _plain(text: str, width: int = 40) -> str:
    """Text matplotlib shows as written: `$` would start math mode (and a bad formula fails the plot); a
    long name is cut so the panels keep their room."""
    text = str(text).replace("\n", " ")
    text = text if len(text) <= width else text[: width - 1] + "…"
    return text.replace("$", r"\$")


# ---------------------------------------------------------------- blind baselines
def blind_note(summary: dict[str, Any], questions: list[QAItem]) -> str:
    """What answering without memories scores: which systems answered by a blind heuristic (not the
    reader), and what always abstaining gets, which is the share of abstention items."""
    blind = {
        name: m["answered_by"]
        for name, m in summary["systems"].items()
        if str(m.get("answered_by") or "").startswith("blind:")
    }
    parts = (
        [
            "blind baselines answer without a reader or memories (rule judge): "
            + ", ".join(f"{name} by {how.removeprefix('blind:')}" for name, how in blind.items())
        ]
        if blind
        else []
    )
    abstentions = sum(1 for q in questions if q.spec.kind == "abstain")
    if questions:
        parts.append(
            f"always abstaining is right on the {abstentions} abstention items of {len(questions)} "
            f"questions ({abstentions / len(questions):.3f})"
        )
    return "".join(f"; {p}" for p in parts)


# ---------------------------------------------------------------- context-window systems
RANK_METRICS = ("recall_any", "recall_all", "ndcg_any", "locomo_recall", "mrr")
RANK_LABELS = frozenset(
    label for key, label in LEADERBOARD if key.removeprefix("session_").startswith(RANK_METRICS)
)
NOT_A_RANKING = "—"


def not_ranked(row: dict[str, Any], metrics: dict[str, Any]) -> dict[str, Any]:
    """A context-window system's row: "—" for every rank metric (its hits are a context, not a ranking),
    its `in ctx` share instead; a ranking system has no `in ctx`."""
    if metrics.get("query_based", True):
        return row
    return row | {label: NOT_A_RANKING for label in RANK_LABELS}


def write_plot(summary: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure_, (ranks, left, right) = plt.subplots(
        1, 3, figsize=(16, 4.8), gridspec_kw={"width_ratios": [1.2, 1, 0.8]}
    )
    _plot_ranking(summary, ranks)
    for name, metrics in summary["systems"].items():
        ys = [metrics.get(f"recall_any@{k}") for k in KS]
        if all(y is not None for y in ys):
            style = "--" if not metrics.get("publishable", True) else "-"
            left.plot(KS, ys, style, marker="o", label=_plain(name))
    left.set_xscale("log")
    left.set_xticks(KS, [str(k) for k in KS])
    left.set_xlabel("k (messages)")
    left.set_ylabel("recall_any@k")
    left.set_ylim(0, 1.02)
    left.set_title("Retrieval recall vs k")
    if left.get_legend_handles_labels()[0]:
        left.legend(fontsize=8)
    names = [r["system"] for r in leaderboard_rows(summary)][::-1]  # top down, as the ranking
    latencies = [summary["systems"][n].get("retrieve_p95_ms") or 0 for n in names]
    right.barh([_plain(n) for n in names], latencies, color="#4c72b0")
    right.set_xlabel("retrieve p95 (ms)")
    right.set_title("Latency")
    figure_.suptitle(_plain(summary.get("title", "MobileMem leaderboard"), 120))
    figure_.tight_layout()
    figure_.savefig(path, dpi=110)
    plt.close(figure_)


def _plot_ranking(summary: dict[str, Any], axes) -> None:
    """The headline metric per system, ranked top down, with 95 % error bars; a bracket marked ≈ joins
    two adjacent systems whose difference is not significant."""
    headline = headline_metric(summary)
    rows = leaderboard_rows(summary)
    label = dict(LEADERBOARD).get(headline, headline)
    for y, row in enumerate(rows):
        metrics = summary["systems"][row["system"]]
        value = metrics.get(headline)
        if value is None:
            continue
        low, high = metrics.get("intervals", {}).get(headline, {}).get("ci95", [value, value])
        low, high = value if low is None else low, value if high is None else high
        oracle = not metrics.get("publishable", True)
        axes.errorbar(
            value,
            y,
            xerr=[[value - low], [high - value]],
            fmt="s" if oracle else "o",
            color="#999999" if oracle else "#4c72b0",
            capsize=3,
        )
        test = metrics.get("vs_next")
        if test and not test["significant"]:
            x, top, bottom = 1.04, y + 0.12, y + 0.88
            axes.plot([x, x + 0.02, x + 0.02, x], [top, top, bottom, bottom], color="#c44e52", lw=1.2)
            axes.text(x + 0.035, y + 0.5, "≈", va="center", color="#c44e52", fontsize=11)
    axes.set_yticks(range(len(rows)), [_plain(r["system"]) for r in rows])
    axes.invert_yaxis()
    axes.set_xlim(0, 1.12)
    axes.set_xlabel(f"{label} with 95 % interval")
    axes.set_title(f"Ranked by {label} (≈: not significantly different)")
    axes.grid(axis="x", alpha=0.3)


def source_findings_summary(items: list[QAItem], replay: Replay) -> dict[str, Any]:
    """What the source's own defects did to the run: how many flagged questions were left out (or kept,
    with --include-flagged), by kind, and which ({} when no question is flagged)."""
    flagged = [q for q in items if q.flags]
    if not flagged:
        return {}
    counts = finding_counts(flagged)
    counts.pop("flagged_items")
    kinds = ", ".join(f"{kind} {n}" for kind, n in counts.items())
    if replay.include_flagged:
        note = (
            f"{len(flagged)} questions flagged with source findings ({kinds}) are scored (--include-flagged)"
        )
    else:
        note = (
            f"{len(replay.flagged)} questions flagged with source findings ({kinds}) are left out of the "
            "scores (--include-flagged keeps them)"
        )
    return {
        "flagged": len(flagged),
        "left_out": len(replay.flagged),
        "by_kind": counts,
        "items": {q.id: q.flags for q in flagged},
        "note": note,
    }


def write_reports(settings: Settings, replay: Replay) -> dict[str, Any]:
    import pandas as pd

    questions = {q.id: q for q in replay.questions}
    session_of = {m: s for view in settings.data.views() for m, s in view.session_of.items()}
    summary: dict[str, Any] = {
        "dataset": str(settings.data.root),
        "mode": settings.mode,
        "k": settings.k,
        "verified": replay.verified,
        "retrieval_only": settings.reader is None,
        "note": "retrieval-only run: no reader configured, so no answers were generated or judged"
        if settings.reader is None
        else f"reader: {settings.reader.name}; judges: "
        + ", ".join(
            j.name + (f" ({j.prompts} prompts, {j.runs} runs)" if isinstance(j, LLMJudge) else "")
            for j in settings.judges
        ),
        "systems": {},
    }
    if not replay.verified:
        summary["note"] = f"{NOT_VERIFIED}; {summary['note']}"
    findings = source_findings_summary(settings.data.qa, replay)
    if findings:
        summary["source_findings"] = findings
        summary["note"] += "; " + findings["note"]
    readers = [settings.reader] if isinstance(settings.reader, LLMReader) else []
    clients = {
        id(c): c
        for c in (
            *(r.client for r in readers),
            *(j.client for j in settings.judges if isinstance(j, LLMJudge)),
        )
    }
    if clients:
        summary["llm"] = {
            stage: usage for c in clients.values() for stage, usage in c.ledger.as_dict().items()
        }
        limit = min(c.config.max_failure_fraction for c in clients.values())
        summary["llm_failures"] = summarize_failures(summary["llm"]).as_dict(limit)
    calibration = settings.out / "judge_calibration.json"
    if calibration.exists():
        summary["judge_calibration"] = json.loads(calibration.read_text())
        for name, probe in summary["judge_calibration"].items():
            if (probe.get("false_accept") or 0) >= 0.5:
                summary["note"] += (
                    f"; WARNING: the {name} judge accepted {probe['false_accept']:.0%} of known-wrong "
                    "answers in calibration, so its accuracy is not meaningful"
                )
    failures = FailureAnalysis(Ledger(settings.data.claims), settings.k, settings.reader is not None)
    results_lines = []
    missing = 0
    scored: dict[str, list[dict[str, Any]]] = {}
    for name in settings.systems:
        directory = settings.out / name
        rows = scored[name] = question_results(directory, questions, session_of, failures)
        summary["systems"][name] = summarize(directory, rows, settings.disagreement_threshold)
        if "judge_disagreement_warning" in summary["systems"][name]:
            summary["note"] += f"; WARNING: {name}: {summary['systems'][name]['judge_disagreement_warning']}"
        summary["systems"][name]["failures"] = breakdown(r.get("failure") for r in rows)
        if settings.reader is not None:
            gaps = missing_answers(rows)
            summary["systems"][name] |= gaps
            missing += sum(gaps.values())
        results_lines += [json.dumps({"system": name} | row, ensure_ascii=False) for row in rows]
    summary["note"] += blind_note(summary, list(questions.values()))
    if missing:
        summary["note"] += (
            f"; {missing} answers or verdicts are missing after failed LLM calls (not scored): "
            "run the same command again to ask for them"
        )
    add_uncertainty(summary, scored, b=settings.bootstrap)
    out = settings.out
    atomic_write_text(out / "results.jsonl", "".join(line + "\n" for line in results_lines))
    atomic_write_text(out / "summary.json", dump_json(summary))
    table = pd.DataFrame(leaderboard_rows(summary))
    atomic_write_text(out / "leaderboard.csv", table.to_csv(index=False))
    atomic_write_text(out / "leaderboard.md", _markdown(summary))
    write_plot(summary, out / "leaderboard.png")
    write_failure_plot(summary, out / "failures.png")
    return summary


def _missing(value: object) -> bool:
    return isinstance(value, float) and math.isnan(value)  # pandas fills a metric a system lacks with NaN


def _markdown_cell(column: str, text: str) -> str:
    """Names and notes come from users and are escaped; figures are ours and keep their `>` and `[`."""
    return markdown_text(text) if column in ("system", "note") else text


def _markdown(summary: dict[str, Any]) -> str:
    columns, table = leaderboard_cells(summary)
    cells = [markdown_text(c) for c in columns]
    header = "| " + " | ".join(cells) + " |\n|" + "|".join("---" for _ in cells) + "|\n"
    body = "".join(
        "| " + " | ".join(_markdown_cell(c, row.get(c, "")) for c in columns) + " |\n" for row in table
    )
    warning = f"**{markdown_text(NOT_VERIFIED)}**\n\n" if not summary.get("verified", True) else ""
    sure = "".join(f"\n{text}\n" for text in (rests_on(summary), how_sure(summary)) if text)
    note = (
        f"\n{markdown_text(summary['note'])}. "
        "Retrieval metrics at message granularity unless prefixed `sess`.\n"
    )
    parted = _disagreement_markdown(summary)
    return warning + parted + header + body + sure + note + _failure_markdown(summary)


def _disagreement_markdown(summary: dict[str, Any], shown: int = 20) -> str:
    """A warning above the table for each system whose judges disagree too often, with the questions."""
    lines = []
    for name, metrics in summary["systems"].items():
        if "judge_disagreement_warning" not in metrics:
            continue
        ids = metrics["judge_disagreements"]
        more = f", and {len(ids) - shown} more" if len(ids) > shown else ""
        lines.append(
            f"**WARNING — {markdown_text(name)}: {markdown_text(metrics['judge_disagreement_warning'])}.** "
            f"Questions: {markdown_text(', '.join(ids[:shown]))}{more}.\n\n"
        )
    return "".join(lines)


def _failure_markdown(summary: dict[str, Any]) -> str:
    """The failure analysis as a table: per system, its wrong questions by the step that failed."""
    systems = {name: m["failures"] for name, m in summary["systems"].items() if "failures" in m}
    if not any(sum(counts.values()) for counts in systems.values()):
        return ""
    wrong = "judged wrong" if not summary.get("retrieval_only") else "with evidence not all in the top k"
    lines = [
        f"\n### Why questions were got wrong (questions {wrong}, by the first step that failed)\n\n",
        "| system | wrong | " + " | ".join(markdown_text(LABELS[c]) for c in CATEGORIES) + " |\n",
        "|" + "---|" * (len(CATEGORIES) + 2) + "\n",
    ]
    for name, counts in systems.items():
        total = sum(counts.values())
        cells = [f"{counts[c]} ({counts[c] / total:.0%})" if total and counts[c] else "0" for c in CATEGORIES]
        lines.append(f"| {markdown_text(name)} | {total} | " + " | ".join(cells) + " |\n")
    lines.append(
        "\nCategories: eval/failures.py; the chart is failures.png, each question's in results.jsonl.\n"
    )
    return "".join(lines)


def write_failure_plot(summary: dict[str, Any], path: Path) -> None:
    """A stacked bar per system: its wrong questions by failure category."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [n for n, m in summary["systems"].items() if "failures" in m]
    figure_, axes = plt.subplots(figsize=(max(6, 1.1 * len(names) + 4), 4.8))
    bottom = [0] * len(names)
    colors = plt.get_cmap("tab10").colors
    for index, category in enumerate(CATEGORIES):
        heights = [summary["systems"][n]["failures"][category] for n in names]
        axes.bar(
            [_plain(n, 18) for n in names],
            heights,
            bottom=bottom,
            label=LABELS[category],
            color=colors[index],
        )
        bottom = [b + h for b, h in zip(bottom, heights)]
    axes.set_ylabel("wrong questions")
    axes.set_title("why questions were got wrong (first step that failed)")
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    axes.tick_params(axis="x", rotation=30)
    figure_.tight_layout()
    figure_.savefig(path, dpi=110)
    plt.close(figure_)
