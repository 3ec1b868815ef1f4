"""Pydantic records that cross the dataset boundary (what lands in the JSONL files), and the vocabularies they
use: persona attribute keys (`attributes`), episode kinds, moments and life changes (`catalog`), app types and
screen templates. The bottom layer: every package may import it, it imports no other keme package."""

from keme.models.anchor import (
    APP_TYPES,
    Anchor,
    AnchorRecord,
    AppType,
    BillRecord,
    CalendarRecord,
    DocumentRecord,
    NoteRecord,
    ScreenRecord,
    TodoRecord,
    VoiceMemoRecord,
)
from keme.models.graph import Edge, Event, EventGraph, EventState, Revision
from keme.models.ids import Id, ImagePath, id_problem, image_path_problem, is_safe_id, safe_id
from keme.models.image import ImageRecord
from keme.models.persona import Attribute, AttributeVersion, Habits, Persona
from keme.models.proof import ARGS_OF, OP_NAMES, PROOF_OF, OpName
from keme.models.qa import QA_TYPES, AnswerSpec, Proof, QAItem, QAType, Query, Quote
from keme.models.session import Message, Role, Session
from keme.models.world import Claim, Place, ScheduleBlock, Speaker

__all__ = [
    "APP_TYPES",
    "ARGS_OF",
    "OP_NAMES",
    "OpName",
    "PROOF_OF",
    "QA_TYPES",
    "AnswerSpec",
    "Proof",
    "Query",
    "QAItem",
    "QAType",
    "Quote",
    "Anchor",
    "AnchorRecord",
    "AppType",
    "Attribute",
    "Claim",
    "Place",
    "ScheduleBlock",
    "Speaker",
    "AttributeVersion",
    "BillRecord",
    "CalendarRecord",
    "DocumentRecord",
    "Edge",
    "Event",
    "EventGraph",
    "EventState",
    "Id",
    "ImagePath",
    "ImageRecord",
    "Message",
    "NoteRecord",
    "Habits",
    "Persona",
    "Revision",
    "Role",
    "ScreenRecord",
    "Session",
    "TodoRecord",
    "VoiceMemoRecord",
    "id_problem",
    "image_path_problem",
    "is_safe_id",
    "safe_id",
]
