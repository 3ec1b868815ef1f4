"""What gets replayed: per persona, its sessions in time order and the questions to ask.

Offline mode asks every question after the whole trajectory; online mode asks
each question as soon as replay reaches its `asked_at`, so a system only holds
sessions that ended before the question (it cannot see the future).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from keme.dataset import Dataset, PersonaView
from keme.dataset.manifest import MANIFEST
from keme.errors import KemeError
from keme.models import QAItem, Session

ROLES = ("user", "assistant", "system")
NO_VERIFY = "; or pass --no-verify to score it anyway (the report will say it was not verified)"


@dataclass
class Plan:
    """One persona's replay, derived from its view: sessions (role-filtered) and questions, both in time
    order."""

    persona_id: str
    sessions: list[Session]
    questions: list[QAItem]

    @property
    def messages(self) -> int:
        return sum(len(s.messages) for s in self.sessions)

    def steps(self, mode: str) -> Iterator[tuple[list[Session], QAItem | None]]:
        """Yield (sessions to ingest now, question to ask now); the last step may have no question."""
        if mode == "offline":
            yield self.sessions, None
            for question in self.questions:
                yield [], question
            return
        pending = list(self.sessions)
        for question in self.questions:
            ready = [s for s in pending if s.end <= question.asked_at]
            pending = pending[len(ready) :]
            yield ready, question
        if pending:
            yield pending, None


@dataclass
class Replay:
    dataset_sha: str  # the content replayed (Dataset.content_sha256): a resumed run must see the same
    roles: tuple[str, ...] | None
    plans: list[Plan]
    verified: bool = False  # the dataset passed keme.validate.check_dataset unchanged (Dataset.checked)
    speakers: bool = True  # a named speaker's turn reads "name: text"
    include_flagged: bool = False  # imported questions with source findings are asked too
    flagged: list[QAItem] = field(default_factory=list)  # those left out (include_flagged False)

    @property
    def questions(self) -> list[QAItem]:
        return [q for p in self.plans for q in p.questions]


IMAGE_MODES = ("caption", "none")


def _with_captions(message):
    """Text-only systems see a shared screenshot through its caption (what a captioning model would say)."""
    if not message.captions:
        return message
    shown = " ".join(f"[image: {caption}]" for caption in message.captions)
    return message.model_copy(update={"content": f"{message.content} {shown}".strip()})


def _with_speaker(message):
    """A turn of a dialogue between named people (LoCoMo) reads as it was said, "Caroline: ...": the
    questions name the speaker, so a system that indexes the bare text cannot tell whose turn it was."""
    if not message.speaker:
        return message
    return message.model_copy(update={"content": f"{message.speaker}: {message.content}"})


def _prepare(session: Session, roles: tuple[str, ...] | None, images: str, speakers: bool = True) -> Session:
    messages = [m for m in session.messages if roles is None or m.role in roles]
    if speakers:
        messages = [_with_speaker(m) for m in messages]
    if images == "caption":
        messages = [_with_captions(m) for m in messages]
    return session.model_copy(update={"messages": messages})


def plan_of(
    view: PersonaView,
    roles: tuple[str, ...] | None,
    images: str,
    limit: int | None,
    speakers: bool = True,
    include_flagged: bool = False,
) -> Plan:
    """A persona's replay: its sessions in time order as the systems see them, its questions by `asked_at`
    (an imported question flagged with a source finding only with `include_flagged`)."""
    sessions = [_prepare(s, roles, images, speakers) for s in view.sessions]
    asked = view.qa if include_flagged else [q for q in view.qa if not q.flags]
    questions = sorted(asked, key=lambda q: (q.asked_at, q.id))
    if limit is not None:
        questions = questions[:limit]
    return Plan(view.persona.id, [s for s in sessions if s.messages], questions)


def _default_roles(conventions: object, data: Dataset) -> tuple[str, ...] | None:
    """The dataset's retrieval roles (LongMemEval: user turns only), checked: they come from a file."""
    roles = conventions.get("retrieval_roles") if isinstance(conventions, dict) else None
    if not roles:
        return None
    if not isinstance(roles, list) or not all(role in ROLES for role in roles):
        raise KemeError(
            f"{data.root / MANIFEST if data.root else MANIFEST}: stats.conventions.retrieval_roles must "
            f"be a list of {', '.join(ROLES)}, not {roles!r}; restore the manifest or pass --roles"
        )
    return tuple(roles)


def replay_of(
    dataset: Dataset,
    roles: tuple[str, ...] | None = None,
    limit: int | None = None,
    images: str = "caption",
    speakers: bool = True,
    include_flagged: bool = False,
) -> Replay:
    """What to replay from a loaded dataset; `roles` defaults to the dataset's convention (all roles if none).

    The replay is `verified` only when the dataset itself passed keme.validate.check_dataset and no part
    was replaced since (`Dataset.checked`: `keme eval` checks it unless --no-verify); whatever the caller
    says, an unchecked dataset is reported as not verified. Imported questions flagged with source
    findings (keme.dataset.findings) are left out unless `include_flagged`, and listed in `flagged`.
    `images`: how shared screenshots reach a text memory system — "caption" appends each image's
    caption to its message, "none" leaves the bare message (the image paths stay on the message for
    systems that read images). `speakers`: a named speaker's turn reads "name: text" (off only to
    measure what the name is worth).
    """
    if images not in IMAGE_MODES:
        raise KemeError(f"images must be one of {IMAGE_MODES}, not {images!r}")
    if not dataset.qa:
        raise KemeError(
            f"{dataset.root}: no qa.jsonl — there is nothing to evaluate (run `keme qa {dataset.root}` first)"
        )
    if roles is None:
        roles = _default_roles(dataset.manifest.stats.get("conventions"), dataset)
    plans = [plan_of(view, roles, images, limit, speakers, include_flagged) for view in dataset.views()]
    flagged = [] if include_flagged else [q for q in dataset.qa if q.flags]
    empty = [plan.persona_id for plan in plans if plan.questions and not plan.sessions]
    if empty:
        kept = f" with only {', '.join(roles)} messages kept" if roles else ""
        raise KemeError(
            f"{dataset.root}: nothing to replay{kept} for personas {empty[:10]}, which have questions; "
            "their scores would be those of an empty memory (check --roles and the dataset)"
        )
    if not any(plan.questions for plan in plans):
        raise KemeError(
            f"{dataset.root}: every question is flagged with a source finding ({len(flagged)}); "
            "pass --include-flagged to score them as published"
        )
    return Replay(
        dataset.content_sha256(),
        roles,
        plans,
        verified=dataset.checked,
        speakers=speakers,
        include_flagged=include_flagged,
        flagged=flagged,
    )
