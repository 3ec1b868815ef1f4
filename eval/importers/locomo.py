"""LoCoMo (`locomo10.json`) to and from a keme dataset.

Each sample becomes a persona (speaker_a) whose sessions are the sample's
dialogue sessions; speaker_a's turns are `user`, speaker_b's `assistant`, and
each message keeps its speaker name (systems see "name: text", eval.replay) and a
shared photo's `blip_caption` as its caption. Turn ids `D<session>:<turn>` become
message ids `<sample_id>:D<s>:<t>`. QA categories map as 1 multi-hop, 2
temporal, 3 open-domain, 4 single-hop, 5 adversarial (no `answer`: the gold is
to abstain; `adversarial_answer` is kept in the proof args). Evidence lists are
normalised: split on ';', ',' and spaces, leading zeros dropped, 'D8:6' forms
only; ids that still do not resolve are counted, never fatal.

Every record is checked against the small models below (`Turn`, `QARecord`);
one that does not fit is skipped and noted with its position. A sample id
that is not a safe file name is renamed (slug + hash; the original is kept in
`stats.renamed_ids` and each question's proof args); a repeated `dia_id` keeps
the first turn for evidence and gives the later one a `#<n>` id; sessions are
put in time order and moved apart when their dates would make them overlap.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, ValidationError

from eval.importers.common import (
    Notes,
    Text,
    arrange,
    describe,
    import_file,
    imported_session,
    infer_spec,
    language_of,
    refuse_broken,
    source_date,
    written_as,
)
from eval.importers.export_io import refuse_oversized, write_json_array
from keme.dataset import Dataset
from keme.dataset.findings import empty_gold
from keme.dataset.lock import target_lock
from keme.errors import KemeError
from keme.models import AnswerSpec, Message, Persona, QAItem, Quote, Session
from keme.models.proof import ImportedArgs, ImportedProof

CATEGORIES = {1: "multi_hop", 2: "temporal_reasoning", 3: "open_domain", 4: "single_hop", 5: "adversarial"}
_TURN = re.compile(r"D\s*:?\s*0*(\d{1,6})\s*:\s*0*(\d{1,6})(?!\d)", re.I)  # "D:11:26" too
_SESSION_KEY = re.compile(r"^session_([0-9]+)$")
STEP = timedelta(seconds=30)  # between the turns of a session (LoCoMo has one date per session)


class Turn(BaseModel):
    """One dialogue turn of a LoCoMo session."""

    model_config = ConfigDict(extra="ignore")

    speaker: Text
    text: Text = ""
    dia_id: Text | None = None
    blip_caption: Text | None = None


class QARecord(BaseModel):
    """One question of a LoCoMo sample."""

    model_config = ConfigDict(extra="ignore")

    question: Text
    answer: Text | StrictInt | StrictFloat | None = None
    adversarial_answer: Text | StrictInt | StrictFloat | None = None
    evidence: Any = None
    category: StrictInt


def parse_when(text: str) -> datetime:
    """'1:56 pm on 8 May, 2023' (LoCoMo's session_N_date_time)."""
    cleaned = re.sub(r"\s+", " ", text.strip())
    for pattern in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%I:%M %p on %B %d, %Y"):
        try:
            return datetime.strptime(cleaned.upper().replace(" ON ", " on "), pattern)
        except ValueError:
            continue
    raise ValueError(f"unrecognised LoCoMo date {text!r}")


def normalize_evidence(raw: Any) -> tuple[list[str], int]:
    """Turn ids from a messy evidence list; returns (ids 'D<s>:<t>', number of pieces that were not ids)."""
    ids, junk = evidence_pieces(raw)
    return ids, len(junk)


def evidence_pieces(raw: Any) -> tuple[list[str], list[str]]:
    """(turn ids 'D<s>:<t>' found in a messy evidence list, the pieces that hold none, as written)."""
    pieces = raw if isinstance(raw, list) else [raw]
    found: list[str] = []
    junk: list[str] = []
    for piece in pieces:
        if not isinstance(piece, str):
            if piece is not None:
                junk.append(json.dumps(piece)[:80])
            continue
        matches = _TURN.findall(piece)
        if not matches and piece.strip():
            junk.append(piece)
        found += [f"D{int(s)}:{int(t)}" for s, t in matches]
    return list(dict.fromkeys(found)), junk


def _sample_id(sample: dict[str, Any], index: int, used: set[str], notes: Notes) -> str:
    raw = sample.get("sample_id")
    if isinstance(raw, bool) or not isinstance(raw, (str, int)) or raw == "":
        why = "missing" if raw in (None, "") else f"not a string ({raw!r:.40})"
        notes.problem("sample_ids_replaced", f"sample {index + 1}", f"sample_id {why}; named sample-{index}")
        raw = f"sample-{index}"
    return notes.unique_id(str(raw), used, "duplicate_sample_ids", f"sample {index + 1}")


def _session_keys(conversation: dict[str, Any], where: str, notes: Notes) -> list[tuple[int, str]]:
    """(number, key) of each `session_<N>` key, by number; an unusable or repeated number is noted."""
    keys: dict[int, str] = {}
    for key in conversation:
        match = _SESSION_KEY.match(key)
        if match is None:
            continue
        if len(match.group(1)) > 6:
            notes.problem("sessions_skipped", f"{where}, {key[:40]}", "session number too large")
        elif (number := int(match.group(1))) in keys:
            notes.problem(
                "sessions_skipped", f"{where}, {key}", f"repeats session number {number} ({keys[number]})"
            )
        else:
            keys[number] = key
    return sorted(keys.items())


def _turns(raw: Any, where: str, notes: Notes) -> list[tuple[int, Turn]]:
    if not isinstance(raw, list):
        notes.problem("sessions_skipped", where, f"expected a list of turns, found {type(raw).__name__}")
        return []
    turns = []
    for position, record in enumerate(raw):
        turn = notes.parse(Turn, record, "turns_skipped", f"{where}, turn {position + 1}")
        if turn is not None:
            turns.append((position, turn))
    return turns


SAMPLE_KEYS = ("sample_id", "conversation", "qa")  # what keme models; the rest of a sample is kept verbatim
TURN_KEYS = ("speaker", "dia_id", "text", "blip_caption")
KEME_MESSAGE = ("role", "app", "captions", "smalltalk")  # a turn keme wrote: what LoCoMo has no field for


def _import_sample(
    sample: Any, index: int, used: set[str], notes: Notes
) -> tuple[Persona, list[Session], list[QAItem]] | None:
    where = f"sample {index + 1}"
    if not isinstance(sample, dict):
        notes.problem("samples_skipped", where, f"expected a JSON object, found {type(sample).__name__}")
        return None
    sample_id = _sample_id(sample, index, used, notes)
    where = f"sample {index + 1} ({sample_id})"
    conversation = sample.get("conversation")
    if not isinstance(conversation, dict):
        notes.problem("samples_skipped", where, "no conversation object")
        return None
    speaker_a = conversation.get("speaker_a")
    if not isinstance(speaker_a, str) or not speaker_a:
        notes.problem(
            "samples_skipped", where, "conversation.speaker_a is not a name (needed to tell the user's turns)"
        )
        return None
    speaker_a = notes.clean(speaker_a)
    planned: list[tuple[int, str, list[tuple[int, Turn]]]] = []
    starts: list[datetime] = []
    for number, key in _session_keys(conversation, where, notes):
        turns = _turns(conversation[key], f"{where}, {key}", notes)
        if not turns:
            continue
        start = source_date(
            conversation.get(f"{key}_date_time"), f"{where}, {key}_date_time", notes, parse_when
        )
        if start is None:  # a day after the previous session, or a fixed day for the first
            start = (
                starts[-1] + STEP * len(planned[-1][2]) + timedelta(days=1)
                if starts
                else datetime(2023, 1, 1, 9)
            )
        planned.append((number, key, turns))
        starts.append(start)
    if not planned:
        notes.count("samples_without_sessions")
        return None
    known: dict[str, tuple[str, str]] = {}  # turn id -> (message id, session id), the first turn with that id
    message_ids: set[str] = set()
    sessions = []
    kept_turns: dict[str, dict[str, Any]] = {}  # message id -> the turn's fields keme has no model for
    kept_sessions: dict[str, dict[str, Any]] = {}  # session id -> its number and date as written
    raw_turns = {key: conversation[key] for _, key, _ in planned}
    for i, start in arrange(starts, [len(t) for _, _, t in planned], STEP, timedelta(minutes=1), notes):
        number, key, turns = planned[i]
        session_id = f"{sample_id}:S{number}"
        kept_sessions[session_id] = {"number": number, "date_time": conversation.get(f"{key}_date_time")}
        messages = []
        for offset, (position, turn) in enumerate(turns):
            dia = normalize_evidence(turn.dia_id)[0] if turn.dia_id is not None else []
            if not dia:
                notes.count("turns_without_dia_id")
            turn_id = dia[0] if dia else f"D{number}:{position + 1}"
            message_id = f"{sample_id}:{turn_id}"
            if turn_id in known:
                notes.problem(
                    "duplicate_turn_ids",
                    f"{where}, session_{number}, turn {position + 1}",
                    f"dia_id {turn_id} already used; kept for evidence is the first",
                )
                message_id = f"{message_id}#{position + 1}"
                if message_id in message_ids:
                    message_id = f"{sample_id}:{turn_id}#S{number}.{position + 1}"
            message_ids.add(message_id)
            raw = raw_turns[key][position]
            extra = {k: v for k, v in raw.items() if k not in TURN_KEYS and k != "keme"}
            if "dia_id" in raw and raw["dia_id"] != turn_id:
                extra["dia_id"] = raw["dia_id"]
            if extra:
                kept_turns[message_id] = extra
            own = raw.get("keme") if isinstance(raw.get("keme"), dict) else {}
            role = "user" if turn.speaker == speaker_a else "assistant"
            messages.append(
                Message(
                    id=message_id,
                    role=own.get("role", role)
                    if own.get("role") in ("user", "assistant", "system")
                    else role,
                    app=own.get("app") if isinstance(own.get("app"), str) else None,
                    speaker=None if own.get("role") == "system" else turn.speaker or None,
                    content=turn.text,
                    # the photo itself is not in the file: its caption is what a captioning model said
                    captions=own.get("captions")
                    if _strings(own.get("captions"))
                    else ([turn.blip_caption] if turn.blip_caption else []),
                    smalltalk=own.get("smalltalk") is True,
                    timestamp=start + STEP * offset,
                )
            )
            known.setdefault(turn_id, (message_id, session_id))
        sessions.append(imported_session(session_id, sample_id, "locomo", messages))
    end = sessions[-1].end
    imported_keys = {k for _, key, _ in planned for k in (key, f"{key}_date_time")}
    own_persona = sample.get("keme") if isinstance(sample.get("keme"), dict) else {}
    source = {
        "format": "locomo",
        "speaker_b": conversation.get("speaker_b"),
        "sample": {k: v for k, v in sample.items() if k not in SAMPLE_KEYS and k != "keme"},
        # what no imported session stands for: other keys, and dates or turn lists of sessions left out
        "conversation": {
            k: v
            for k, v in conversation.items()
            if k not in ("speaker_a", "speaker_b") and k not in imported_keys
        },
        "sessions": kept_sessions,
        "turns": kept_turns,
    }
    persona = Persona(
        id=sample_id,
        name=speaker_a,
        language=_language(own_persona.get("language"))
        or language_of([m.content for s in sessions for m in s.messages]),
        country=own_persona.get("country") if isinstance(own_persona.get("country"), str) else "US",
        start=sessions[0].start,
        end=end,
        dimensions={},
        source=source,
    )
    qa = sample.get("qa")
    if qa is not None and not isinstance(qa, list):
        notes.problem(
            "qa_skipped", f"{where}, qa", f"expected a list of questions, found {type(qa).__name__}"
        )
        qa = []
    items = [
        item
        for number, record in enumerate(qa or [], start=1)
        if (item := _question(record, number, sample_id, where, end, known, notes)) is not None
    ]
    return persona, sessions, items


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _language(value: Any) -> str | None:
    return value if value in ("en", "zh") else None


def _question(
    record: Any,
    number: int,
    sample_id: str,
    where: str,
    end: datetime,
    known: dict[str, tuple[str, str]],
    notes: Notes,
) -> QAItem | None:
    qa = notes.parse(QARecord, record, "qa_skipped", f"{where}, question {number}")
    if qa is None:
        return None
    kind = CATEGORIES.get(qa.category)
    if kind is None:
        notes.problem("unknown_category", f"{where}, question {number}", f"category {qa.category} is not 1-5")
        return None
    # an empty gold imports flagged (keme.dataset.findings) rather than vanishing from the count
    if qa.category != 5 and qa.answer is None:
        notes.problem(
            "qa_skipped", f"{where}, question {number}", "no answer (only category 5 may go without one)"
        )
        return None
    ids, junk = evidence_pieces(qa.evidence if qa.evidence is not None else [])
    notes.count("evidence_pieces_not_ids", len(junk))
    resolved = [known[i] for i in ids if i in known]
    unresolved = junk + [i for i in ids if i not in known]
    notes.count("evidence_resolved", len(resolved))
    notes.count("evidence_unresolved", len(ids) - len(resolved))
    if qa.category == 5:  # LoCoMo scores every adversarial question by "not mentioned" (its evaluation.py)
        answer = NOT_MENTIONED
        spec = AnswerSpec(kind="abstain", value="abstain")
    else:
        answer = str(qa.answer)
        spec = infer_spec(answer, end.year)
        if empty_gold(answer):
            notes.problem("empty_golds", f"{where}, question {number}", f"answer {answer!r}; flagged")
    messages = [m for m, _ in resolved]
    written = [i for i in ids if i in known]
    fields = {}  # what the source wrote in another form than keme keeps it
    if (not isinstance(qa.answer, str) or qa.category == 5) and qa.answer is not None:
        fields["answer"] = qa.answer  # a number, or an answer beside category 5 (a label conflict: flagged)
    if not isinstance(qa.adversarial_answer, str) and qa.adversarial_answer is not None:
        fields["adversarial_answer"] = qa.adversarial_answer
    if qa.evidence != written:
        fields["evidence"] = qa.evidence
    extra = {k: v for k, v in record.items() if k not in QARecord.model_fields and k != "keme"}
    if extra:
        fields["extra"] = extra
    args = ImportedArgs(
        source="locomo",
        category=qa.category,
        adversarial_answer=None if qa.adversarial_answer is None else str(qa.adversarial_answer),
        source_sample_id=notes.renamed.get(sample_id),
        unresolved_evidence=unresolved or None,
        source_fields=fields or None,
    )
    item = dict(
        id=f"{sample_id}:q{number}",
        persona_id=sample_id,
        question=qa.question,
        answer=answer,
        spec=spec,
        type=kind,
        subtype=f"locomo.category{qa.category}",
        evidence=messages,
        evidence_sessions=list(dict.fromkeys(s for _, s in resolved)),
        asked_at=end + timedelta(days=1),
        hops=2 if qa.category == 1 else 1,
        difficulty="medium",
        language=language_of([qa.question]),
        node=sample_id,
        proof=ImportedProof(op="imported", quotes=[Quote(message_id=m) for m in messages], args=args),
    )
    own = record.get("keme")
    if isinstance(own, dict):  # a file keme wrote: what the format has no field for
        item.update({k: v for k, v in own.items() if k in KEME_QA})
    try:
        return QAItem(**item)
    except ValidationError as exc:
        notes.problem("qa_skipped", f"{where}, question {number}", f"keme fields do not fit: {describe(exc)}")
        return None


NOT_MENTIONED = "Not mentioned in the conversation."
KEME_QA = (
    "answer",
    "spec",
    "type",
    "subtype",
    "asked_at",
    "hops",
    "difficulty",
    "format",
    "options",
    "language",
)
"""A question's fields keme writes under its `keme` key (LoCoMo has none for them) and reads back."""


def import_locomo(path: Path, out: Path, force: bool = False) -> dict[str, Any]:
    """Import a LoCoMo file into the dataset directory `out` (new or empty; an existing dataset only with
    `force`)."""
    used: set[str] = set()
    return import_file(
        path,
        out,
        "locomo",
        lambda sample, index, notes: _import_sample(sample, index, used, notes),
        "no sample has a session with turns",
        force,
    )


def export_locomo(data: Dataset, out: Path) -> dict[str, Any]:
    """A loaded keme dataset in LoCoMo's format; returns what was written, counted.

    Lossless where the format allows: an imported LoCoMo sample comes back with its categories, golds and
    adversarial answers, evidence, dates, turn ids and every field keme keeps verbatim (observations,
    summaries, image urls); a keme question goes out in the nearest category (TYPE_CATEGORY; an
    abstention is category 5) with what LoCoMo has no field for under a `keme` key, which LoCoMo's
    readers ignore and `keme import locomo` restores. Refuses a dataset whose ids do not resolve (the
    export would drop records without a word) and an `out` inside the dataset or that is a directory.
    """

    if out.is_dir():
        raise KemeError(
            f"--out {out} is a directory; give the JSON file to write, e.g. {out / 'locomo.json'}"
        )
    if data.root is not None and data.root.resolve() in out.resolve().parents:
        raise KemeError(f"--out {out} is inside the dataset {data.root}; write the export elsewhere")
    refuse_broken(data)
    refuse_oversized(data)
    samples = []
    counts: Counter[str] = Counter()
    for view in data.views():
        sample, dia = _sample_of(view, counts)
        sample["qa"] = [_qa_of(item, dia, view.persona, counts) for item in view.qa]
        samples.append(sample)
    try:
        with target_lock(out, "keme export locomo"):  # a second export to the same file is refused
            write_json_array(out, samples, indent=1)
    except OSError as exc:
        raise KemeError(f"{out}: cannot write ({exc.strerror or exc})") from exc
    return {
        "samples": len(samples),
        "qa": sum(len(s["qa"]) for s in samples),
        "messages": sum(len(s.messages) for s in data.sessions),
        **dict(sorted(counts.items())),
    }


def _source(persona: Persona) -> dict[str, Any]:
    """What a LoCoMo import kept verbatim for this persona ({} for any other)."""
    source = persona.source or {}
    return source if source.get("format") == "locomo" else {}


def _sample_of(view: Any, counts: Counter[str]) -> tuple[dict[str, Any], dict[str, str]]:
    """A persona's sample without its questions, and each message's turn id.

    What a LoCoMo import kept (session numbers and dates as written, turn ids, the sample's observations
    and summaries) is written back only while the persona has exactly the sessions it came with: a
    dataset that dropped, added or renamed sessions (`keme hardneg`) is numbered afresh by position,
    and the annotations, which describe the other conversation, are left out and counted."""
    persona = view.persona
    source = _source(persona)
    kept_sessions = source.get("sessions") or {}
    kept_turns = source.get("turns") or {}
    intact = bool(source) and {s.id for s in view.sessions} == set(kept_sessions)
    if source and not intact:
        counts["samples_renumbered"] += 1
    speaker_b = source.get("speaker_b") or next(
        (m.speaker for s in view.sessions for m in s.messages if m.role == "assistant" and m.speaker),
        "Assistant",
    )
    conversation: dict[str, Any] = {"speaker_a": persona.name, "speaker_b": speaker_b}
    dia: dict[str, str] = {}
    for position, session in enumerate(view.sessions, start=1):
        kept = (kept_sessions.get(session.id) or {}) if intact else {}
        number = kept.get("number") if isinstance(kept.get("number"), int) else position
        turns = []
        for place, message in enumerate(session.messages, start=1):
            extra = {k: v for k, v in (kept_turns.get(message.id) or {}).items() if intact or k != "dia_id"}
            turn_id = _turn_id(message.id, persona.id) if intact else None
            dia[message.id] = turn_id or f"D{number}:{place}"
            speaker = _speaker(message, persona.name, speaker_b)
            turn = {"speaker": speaker, "dia_id": dia[message.id], "text": message.content}
            if message.captions:
                turn["blip_caption"] = " ".join(message.captions)
            turn |= extra  # img_url, query, a dia_id as written, ...
            own = _keme_turn(message, speaker == persona.name)
            if own:
                turn["keme"] = own
                counts["turns_with_keme_fields"] += 1
            if message.role == "system":
                counts["app_records_as_turns"] += 1
            turns.append(turn)
        conversation[f"session_{number}"] = turns
        written = kept.get("date_time")
        conversation[f"session_{number}_date_time"] = (
            written if written_as(written, session.start, parse_when) else _when(session.start)
        )
    if intact:
        conversation |= source.get("conversation") or {}
    sample: dict[str, Any] = {"sample_id": _sample_name(view), "conversation": conversation}
    kept_sample = source.get("sample") if intact else None
    if isinstance(kept_sample, dict) and kept_sample:
        sample |= kept_sample
    else:  # LoCoMo's annotations: keme has none to give (or they describe the conversation before an edit)
        sample |= {"observation": {}, "session_summary": {}, "event_summary": {}}
    if not source:
        sample["keme"] = {"language": persona.language, "country": persona.country}
    return sample, dia


def _sample_name(view: Any) -> str:
    """The sample id as the source wrote it (an id keme made safe is kept in the questions' proof args)."""
    for item in view.qa:
        original = getattr(item.proof.args, "source_sample_id", None)
        if original:
            return original
    return view.persona.id


def _turn_id(message_id: str, sample_id: str) -> str | None:
    """'D3:7' of an imported message id '<sample>:D3:7' (None for a repeated turn id's '#' form)."""
    prefix = f"{sample_id}:"
    rest = message_id[len(prefix) :] if message_id.startswith(prefix) else ""
    return rest if re.fullmatch(r"D[0-9]+:[0-9]+", rest) else None


def _speaker(message: Message, speaker_a: str, speaker_b: str) -> str:
    if message.speaker:
        return message.speaker
    if message.role == "user":
        return speaker_a
    return message.app or speaker_b if message.role == "system" else speaker_b


def _keme_turn(message: Message, said_by_a: bool) -> dict[str, Any]:
    """What a keme message holds that LoCoMo's turn cannot: a role its speaker does not tell (an app
    record), its app, several captions, small talk."""
    own: dict[str, Any] = {}
    if message.role != ("user" if said_by_a else "assistant"):
        own["role"] = message.role
    if message.app:
        own["app"] = message.app
    if len(message.captions) > 1:
        own["captions"] = list(message.captions)
    if message.smalltalk:
        own["smalltalk"] = True
    return own


def _when(moment: datetime) -> str:
    """LoCoMo's session date: '1:56 pm on 8 May, 2023'."""
    hour = moment.hour % 12 or 12
    noon = "am" if moment.hour < 12 else "pm"
    return f"{hour}:{moment.minute:02d} {noon} on {moment.day} {moment:%B}, {moment.year}"


def _qa_of(item: QAItem, dia: dict[str, str], persona: Persona, counts: Counter[str]) -> dict[str, Any]:
    """One question as a LoCoMo record: its source category when it came from LoCoMo, else the nearest."""
    args = item.proof.args if isinstance(item.proof.args, ImportedArgs) else None
    from_locomo = args is not None and args.source == "locomo" and args.category is not None
    fields = (args.source_fields or {}) if from_locomo else {}
    abstain = item.spec.kind == "abstain"
    category = args.category if from_locomo else (5 if abstain else TYPE_CATEGORY.get(item.type, 3))
    record: dict[str, Any] = {"question": item.question}
    raw = fields.get("answer")
    if not (category == 5 and abstain):
        record["answer"] = raw if raw is not None and str(raw) == item.answer else item.answer
    elif raw is not None:  # category 5 that also gave an answer, as published
        record["answer"] = raw
    if category == 5:
        bait = args.adversarial_answer if args is not None else None
        if bait is not None:
            raw = fields.get("adversarial_answer")
            record["adversarial_answer"] = raw if raw is not None and str(raw) == bait else bait
        else:
            counts["category5_without_adversarial_answer"] += 1
    ids = [dia[m] for m in item.evidence]
    raw = fields.get("evidence")
    record["evidence"] = raw if "evidence" in fields and _resolves_to(raw, ids, dia) else ids
    record["category"] = category
    if from_locomo:
        record |= fields.get("extra") or {}
        restored = {
            "answer": NOT_MENTIONED if category == 5 and abstain else str(record.get("answer")),
            "type": "adversarial" if category == 5 else CATEGORIES[category],
            "subtype": f"locomo.category{category}",
        }
        own = {k: v for k, v in _keme_qa(item).items() if restored.get(k, v) != v and k in restored}
    else:
        own = _keme_qa(item)
    if own:
        record["keme"] = own
    counts[f"qa_category{category}"] += 1
    return record


def _resolves_to(raw: Any, ids: list[str], dia: dict[str, str]) -> bool:
    """Whether evidence as the source wrote it names exactly these turns (then it goes back as written)."""
    found = [i for i in evidence_pieces(raw)[0] if i in set(dia.values())]
    return found == ids


def _keme_qa(item: QAItem) -> dict[str, Any]:
    return item.model_dump(mode="json", include=set(KEME_QA))


TYPE_CATEGORY = {
    "multi_hop": 1,
    "temporal_reasoning": 2,
    "open_domain": 3,
    "single_hop": 4,
    "abstention": 5,
    "knowledge_update": 1,
    "summarization": 1,
    "relationship": 4,
    "implicit_preference": 3,
    "preference_generalization": 3,
    "adversarial": 4,  # keme's adversarial questions have an answer (LoCoMo's 5 has none): kept under `keme`
    "visual_reasoning": 4,
}
