"""JSON Schema export for every record type on disk."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import BaseModel

from keme.config import SynthConfig
from keme.dataset.io import atomic_write_text
from keme.dataset.manifest import Manifest
from keme.models import Anchor, Claim, EventGraph, Message, Persona, QAItem, ScheduleBlock, Session

RECORDS: dict[str, type[BaseModel]] = {
    "persona": Persona,
    "anchor": Anchor,
    "event_graph": EventGraph,
    "session": Session,
    "message": Message,
    "schedule_block": ScheduleBlock,
    "claim": Claim,
    "qa_item": QAItem,
    "manifest": Manifest,
    "config": SynthConfig,
}


def export_schemas(out: Path) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, model in RECORDS.items():
        path = out / f"{name}.schema.json"
        atomic_write_text(path, json.dumps(model.model_json_schema(), indent=2, ensure_ascii=False) + "\n")
        written.append(path)
    return written
