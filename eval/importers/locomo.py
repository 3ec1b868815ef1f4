"""LoCoMo (`locomo10.json`) to and from a keme dataset.

Each sample becomes a persona (speaker_a) whose sessions are the sample's
dialogue sessions; speaker_a's turns are `user`, speaker_b's `assistant`, and
each message keeps its speaker name. Turn ids `D<session>:<turn>` become
message ids `<sample_id>:D<s>:<t>`. QA categories map as 1 multi-hop, 2
temporal, 3 open-domain, 4 single-hop, 5 adversarial (no `answer`: the gold is
to abstain; `adversarial_answer` is kept in the proof args). Evidence lists are
normalised: split on ';', ',' and spaces, leading zeros dropped, 'D8:6' forms
only; ids that still do not resolve are counted, never fatal.
"""

from __future__ import annotations

import re
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from eval.importers.common import infer_spec, read_json_records, write_dataset
from keme.errors import KemeError
from keme.models import AnswerSpec, Message, Persona, Proof, QAItem, Quote, Session

CATEGORIES = {1: "multi_hop", 2: "temporal_reasoning", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
_TURN = re.compile(r"D\s*0*(\d+)\s*:\s*0*(\d+)", re.I)
_SESSION_KEY = re.compile(r"^session_(\d+)$")


def parse_when(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' (LoCoMo's session_N_date_time)."""
    cleaned = re.sub(r"\s+", " ", text.strip())
    for pattern in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return datetime.strptime(cleaned.upper().replace(" ON ", " on "), pattern.replace("%p", "%p"))
        except ValueError:
            continue
    raise ValueError(f"unrecognised LoCoMo date {text!r}")


def normalize_evidence(raw: Any) -> tuple[list[str], int]:
    """Turn ids from a messy evidence list; returns (ids 'D<s>:<t>', number of pieces that were not ids)."""
    pieces = raw if isinstance(raw, list) else [raw]
    found, junk = [], 0
    for piece in pieces:
        if not isinstance(piece, str):
            junk += 1
            continue
        matches = _TURN.findall(piece)
        if not matches:
            junk += 1 if piece.strip() else 0
        found += [f"D{int(s)}:{int(t)}" for s, t in matches]
    return list(dict.fromkeys(found)), junk


def import_locomo(path: Path, out: Path) -> dict[str, Any]:
    samples = read_json_records(path)
    personas, sessions, items = [], [], []
    counts: Counter = Counter()
    for index, sample in enumerate(samples):
        sample_id = str(sample.get("sample_id") or f"sample-{index}")
        conversation = sample.get("conversation")
        if not isinstance(conversation, dict):
            raise KemeError(f"{path}: sample {sample_id} has no conversation object")
        speaker_a = conversation.get("speaker_a", "A")
        numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION_KEY.match(key)))
        known: dict[str, tuple[str, datetime]] = {}
        own_sessions = []
        for number in numbers:
            turns = conversation.get(f"session_{number}") or []
            raw_when = conversation.get(f"session_{number}_date_time", "")
            try:
                start = parse_when(raw_when)
            except ValueError:
                counts["unparsed_dates"] += 1
                start = (own_sessions[-1].end + timedelta(days=1)) if own_sessions else datetime(2023, 1, 1, 9)
            messages = []
            for position, turn in enumerate(turns):
                dia = normalize_evidence(turn.get("dia_id", ""))[0]
                turn_id = dia[0] if dia else f"D{number}:{position + 1}"
                text = str(turn.get("text", ""))
                if turn.get("blip_caption"):
                    text = f"{text} [shares a photo: {turn['blip_caption']}]".strip()
                speaker = turn.get("speaker", "")
                message_id = f"{sample_id}:{turn_id}"
                if message_id in known:
                    counts["duplicate_turn_ids"] += 1
                    message_id = f"{message_id}#{position + 1}"
                when = start + timedelta(seconds=30 * position)
                messages.append(Message(id=message_id, role="user" if speaker == speaker_a else "assistant",
                                        speaker=speaker or None, content=text, timestamp=when))
                known[turn_id] = (message_id, when)
            if not messages:
                continue
            session_id = f"{sample_id}:S{number}"
            own_sessions.append(Session(
                id=session_id, persona_id=sample_id, event_id=session_id, language="en", pattern="locomo",
                start=messages[0].timestamp, end=messages[-1].timestamp, messages=messages,
            ))
        if not own_sessions:
            counts["samples_without_sessions"] += 1
            continue
        session_of = {m.id: s.id for s in own_sessions for m in s.messages}
        end = own_sessions[-1].end
        personas.append(Persona(id=sample_id, name=speaker_a, language="en", country="US",
                                start=own_sessions[0].start, end=end, dimensions={}))
        sessions += own_sessions
        for number, qa in enumerate(sample.get("qa") or [], start=1):
            category = qa.get("category")
            kind = CATEGORIES.get(category)
            if kind is None:
                counts["unknown_category"] += 1
                continue
            ids, junk = normalize_evidence(qa.get("evidence", []))
            counts["evidence_pieces_not_ids"] += junk
            resolved = [known[i][0] for i in ids if i in known]
            counts["evidence_resolved"] += len(resolved)
            counts["evidence_unresolved"] += len(ids) - len(resolved)
            if category == 5:
                answer = "Not mentioned in the conversation."
                spec = AnswerSpec(kind="abstain", value="abstain")
            else:
                answer = str(qa.get("answer", ""))
                spec = infer_spec(answer, end.year)
            items.append(QAItem(
                id=f"{sample_id}:q{number}", persona_id=sample_id, question=str(qa.get("question", "")), answer=answer,
                spec=spec, type=kind, subtype=f"locomo.category{category}",  # type: ignore[arg-type]
                evidence=resolved, evidence_sessions=list(dict.fromkeys(session_of[m] for m in resolved)),
                asked_at=end + timedelta(days=1), hops=2 if category == 1 else 1, difficulty="medium", language="en",
                node=sample_id, proof=Proof(op="imported", quotes=[Quote(message_id=m) for m in resolved],
                                            args={"source": "locomo", "category": str(category),
                                                  "adversarial_answer": str(qa.get("adversarial_answer", ""))}),
            ))
    stats = {"personas": len(personas), "sessions": len(sessions), "messages": sum(len(s.messages) for s in sessions),
             "qa": len(items), "import": dict(sorted(counts.items()))}
    write_dataset(out, "locomo", personas, sessions, items, stats)
    return stats


def export_locomo(dataset: Path, out: Path) -> dict[str, Any]:
    """A keme dataset in LoCoMo's format (category by type: see TYPE_CATEGORY)."""
    import json

    from keme.dataset.io import atomic_write_text
    from keme.validate import load_dataset

    data = load_dataset(dataset)
    samples = []
    for persona in data.personas:
        own = sorted((s for s in data.sessions if s.persona_id == persona.id), key=lambda s: s.start)
        conversation: dict[str, Any] = {"speaker_a": persona.name, "speaker_b": "Assistant"}
        dia: dict[str, str] = {}
        for number, session in enumerate(own, start=1):
            turns = []
            for position, message in enumerate(session.messages, start=1):
                dia[message.id] = f"D{number}:{position}"
                speaker = persona.name if message.role == "user" else (message.app or "Assistant")
                turns.append({"speaker": message.speaker or speaker, "dia_id": f"D{number}:{position}", "text": message.content})
            conversation[f"session_{number}"] = turns
            conversation[f"session_{number}_date_time"] = session.start.strftime("%-I:%M %p on %-d %B, %Y").lower()
        qa = []
        for item in data.qa:
            if item.persona_id != persona.id:
                continue
            category = TYPE_CATEGORY.get(item.type, 3)
            record: dict[str, Any] = {"question": item.question, "evidence": [dia[m] for m in item.evidence if m in dia],
                                      "category": category}
            if category == 5:
                record["adversarial_answer"] = item.answer
            else:
                record["answer"] = item.answer
            qa.append(record)
        samples.append({"sample_id": persona.id, "conversation": conversation, "qa": qa,
                        "observation": {}, "session_summary": {}, "event_summary": {}})
    atomic_write_text(out, json.dumps(samples, ensure_ascii=False, indent=1))
    return {"samples": len(samples), "qa": sum(len(s["qa"]) for s in samples)}


TYPE_CATEGORY = {"multi_hop": 1, "temporal_reasoning": 2, "open_domain": 3, "single_hop": 4, "abstention": 5,
                 "knowledge_update": 1, "summarization": 1, "relationship": 4, "implicit_preference": 3,
                 "preference_generalization": 3, "adversarial": 4, "visual_reasoning": 4}
