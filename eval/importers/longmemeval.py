"""LongMemEval (S / M / oracle) to a keme dataset.

Each instance has its own haystack, so each becomes its own persona (scope).
Conventions follow the official retrieval code: only user turns are indexed
(recorded in the manifest as `conventions.retrieval_roles`, which `keme eval`
honours), turn-level evidence is the turns marked `has_answer`, and an answer
session whose user turns carry no `has_answer` is relabelled as not an
evidence session ("noans"). Question ids ending in `_abs` are abstention items.
Dates use `%Y/%m/%d (%a) %H:%M`.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from eval.importers.common import infer_spec, read_json_records, write_dataset
from keme.models import AnswerSpec, Message, Persona, Proof, QAItem, Quote, Session

TYPES = {
    "single-session-user": "single_hop", "single-session-assistant": "single_hop",
    "single-session-preference": "preference_generalization", "temporal-reasoning": "temporal_reasoning",
    "knowledge-update": "knowledge_update", "multi-session": "multi_hop",
}
DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"


def parse_date(text: str) -> datetime:
    try:
        return datetime.strptime(text.strip(), DATE_FORMAT)
    except ValueError:
        return datetime.strptime(text.strip().split(" (")[0], "%Y/%m/%d")


def import_longmemeval(path: Path, out: Path) -> dict[str, Any]:
    instances = read_json_records(path)
    personas, sessions, items = [], [], []
    counts: Counter = Counter()
    for instance in instances:
        qid = str(instance["question_id"])
        session_ids = instance.get("haystack_session_ids") or []
        dates = instance.get("haystack_dates") or []
        haystack = instance.get("haystack_sessions") or []
        answer_sessions = set(map(str, instance.get("answer_session_ids") or []))
        own: list[Session] = []
        evidence_messages: list[str] = []
        evidence_sessions: list[str] = []
        for position, turns in enumerate(haystack):
            raw_id = str(session_ids[position]) if position < len(session_ids) else f"session-{position}"
            try:
                start = parse_date(dates[position])
            except (IndexError, ValueError):
                counts["unparsed_dates"] += 1
                start = (own[-1].end + timedelta(hours=1)) if own else datetime(2023, 1, 1, 9)
            session_id = f"{qid}:{raw_id}"
            messages = []
            user_evidence = False
            for turn_index, turn in enumerate(turns, start=1):
                role = "user" if turn.get("role") == "user" else "assistant"
                message_id = f"{session_id}_{turn_index}"
                messages.append(Message(id=message_id, role=role, content=str(turn.get("content", "")),
                                        timestamp=start + timedelta(seconds=30 * (turn_index - 1))))
                if turn.get("has_answer"):
                    evidence_messages.append(message_id)
                    user_evidence = user_evidence or role == "user"
            if raw_id in answer_sessions:
                if user_evidence or not any(t.get("role") == "user" for t in turns):
                    evidence_sessions.append(session_id)
                else:
                    counts["noans_relabelled_sessions"] += 1
            if messages:
                own.append(Session(id=session_id, persona_id=qid, event_id=session_id, language="en",
                                   pattern="longmemeval", start=messages[0].timestamp, end=messages[-1].timestamp,
                                   messages=messages))
        counts["answer_session_ids_unresolved"] += len(answer_sessions - {s.id.split(":", 1)[1] for s in own})
        own.sort(key=lambda s: s.start)
        try:
            asked = parse_date(instance.get("question_date", ""))
        except ValueError:
            counts["unparsed_dates"] += 1
            asked = own[-1].end + timedelta(days=1) if own else datetime(2023, 6, 1)
        if own and asked < own[-1].end:
            counts["question_before_last_session"] += 1
        abstain = qid.endswith("_abs")
        answer = str(instance.get("answer", ""))
        spec = AnswerSpec(kind="abstain", value="abstain") if abstain else infer_spec(answer, asked.year)
        kind = "abstention" if abstain else TYPES.get(instance.get("question_type", ""), "single_hop")
        if not own:
            counts["instances_without_sessions"] += 1
            continue
        personas.append(Persona(id=qid, name="user", language="en", country="US", start=own[0].start,
                                end=max(own[-1].end, asked), dimensions={}))
        sessions += own
        items.append(QAItem(
            id=qid, persona_id=qid, question=str(instance.get("question", "")), answer=answer, spec=spec,
            type=kind, subtype=f"longmemeval.{instance.get('question_type', 'unknown')}",  # type: ignore[arg-type]
            evidence=evidence_messages, evidence_sessions=evidence_sessions, asked_at=max(asked, own[-1].end),
            hops=2 if kind == "multi_hop" else 1, difficulty="medium", language="en", node=qid,
            proof=Proof(op="imported", quotes=[Quote(message_id=m) for m in evidence_messages],
                        args={"source": "longmemeval", "question_type": str(instance.get("question_type", ""))}),
        ))
    stats = {"personas": len(personas), "sessions": len(sessions), "messages": sum(len(s.messages) for s in sessions),
             "qa": len(items), "import": dict(sorted(counts.items())),
             "conventions": {"retrieval_roles": ["user"]}}
    write_dataset(out, "longmemeval", personas, sessions, items, stats)
    return stats
