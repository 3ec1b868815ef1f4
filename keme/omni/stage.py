"""The render stage: choose sessions, render their screenshots, attach them as user-shared image messages.

Every template is placed at least once per persona when the trajectory has a
session it fits (or, for screens any session can carry, any free session);
the rest of the budget goes to the best-fitting sessions. A screenshot is
shared by a new user message right after the session's first message, with a
timestamp strictly between its neighbours, so no existing message id, time or
evidence link changes. Facts are read back from the rendered page.
"""

from __future__ import annotations

import hashlib
import io
import random
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import timedelta

from keme.config import OmniSpec
from keme.dataset import Dataset, PersonaView
from keme.errors import KemeError
from keme.models import Anchor, EventGraph, ImageRecord, Message, Persona, Session
from keme.omni import scenes
from keme.omni.render import Renderer
from keme.seeding import rng_for
from keme.stats import message_counts

IMAGES = "images"
IMAGE_MARK = "-i"  # image message ids: <session id>-i<k>


@dataclass
class RenderReport:
    images: int = 0
    by_template: Counter = field(default_factory=Counter)
    by_language: Counter = field(default_factory=Counter)
    seconds: float = 0.0
    missing: list[str] = field(default_factory=list)  # templates no session could carry, per persona
    face_check: str = "off"

    def as_dict(self) -> dict:
        return {
            "images": self.images,
            "by_template": dict(sorted(self.by_template.items())),
            "by_language": dict(sorted(self.by_language.items())),
            "seconds": round(self.seconds, 2),
            "shots_per_second": round(self.images / self.seconds, 1) if self.seconds else None,
            "missing_templates": self.missing,
            "face_check": self.face_check,
        }


def strip_images(sessions: list[Session]) -> list[Session]:
    """The sessions without earlier image messages (re-rendering starts from the text trajectory)."""
    return [
        s.model_copy(update={"messages": [m for m in s.messages if not m.images]})
        if any(m.images for m in s.messages)
        else s
        for s in sessions
    ]


def _slot(session: Session) -> int | None:
    """Where a shared-screenshot message fits: after the first message with room for a strictly later
    stamp."""
    for index in range(len(session.messages) - 1):
        gap = session.messages[index + 1].timestamp - session.messages[index].timestamp
        if gap >= timedelta(seconds=2):
            return index + 1
    return None


def _contexts(persona: Persona, sessions: list[Session], graph: EventGraph, anchors: dict[str, Anchor]):
    events = {e.id: e for e in graph.events}
    for session in sessions:
        leaf = events.get(session.event_id)
        episode = (
            events.get(leaf.parent_id) if leaf is not None and leaf.depth == 2 and leaf.parent_id else leaf
        )
        anchor = anchors.get(session.anchor_id) if session.anchor_id else None
        yield session, leaf, episode, anchor


def plan(
    persona: Persona,
    sessions: list[Session],
    graph: EventGraph,
    anchors: dict[str, Anchor],
    spec: OmniSpec,
    seed: int,
) -> list[tuple[Session, str, scenes.Context]]:
    """Which session shows which template: every template once where possible, then the best fits."""
    rng = rng_for(seed, persona.id, "omni")
    months = max(1, round((persona.end - persona.start).days / 30))
    target = max(len(spec.templates), round(spec.per_month * months)) if spec.per_month else 0
    free: dict[str, tuple] = {}
    fits: dict[str, list[str]] = defaultdict(list)
    for session, leaf, episode, anchor in _contexts(persona, sessions, graph, anchors):
        if _slot(session) is None:
            continue
        free[session.id] = (session, leaf, episode, anchor)
        for template in scenes.kinds(session, leaf, episode, anchor):
            if template in spec.templates:
                fits[template].append(session.id)
    chosen: dict[str, str] = {}

    def take(template: str, pool: list[str]) -> bool:
        options = [sid for sid in pool if sid not in chosen]
        if not options:
            return False
        chosen[rng.choice(options)] = template
        return True

    order = list(spec.templates)
    rng.shuffle(order)
    ordinary = [sid for sid, (_, _, _, anchor) in free.items() if anchor is None]
    for template in order:  # coverage first: specific fits, then any ordinary session for generic screens
        if len(chosen) >= target:
            break
        if not take(template, fits[template]) and template in scenes.GENERIC:
            take(template, ordinary)
    while len(chosen) < target:  # then round-robin over templates, so no app dominates the budget
        placed = [t for t in order if len(chosen) < target and take(t, fits[t])]
        if not placed:
            break
    out = []
    for sid, template in sorted(chosen.items()):
        session, leaf, episode, anchor = free[sid]
        ctx = scenes.Context(persona, session, leaf, episode, anchor, rng_for(seed, persona.id, "omni", sid))
        out.append((session, template, ctx))
    return out


def share_message(session: Session, index: int, text: str, path: str, caption: str) -> Message:
    before, after = session.messages[index - 1].timestamp, session.messages[index].timestamp
    stamp = before + timedelta(seconds=max(1, int((after - before).total_seconds()) // 2))
    return Message(
        id=f"{session.id}{IMAGE_MARK}1",
        role="user",
        content=text,
        timestamp=stamp,
        images=[path],
        captions=[caption],
    )


def render_views(
    views: list[PersonaView],
    sessions: list[Session],
    spec: OmniSpec,
    seed: int,
    renderer: Renderer,
    progress=None,
) -> tuple[list[Session], list[ImageRecord], dict[str, bytes], RenderReport]:
    """Render every planned screenshot of every persona.

    Returns `sessions` (the dataset's, in their order) with earlier image messages gone and the new
    ones in, the image records, the PNGs by path, and the report.
    """
    report = RenderReport()
    sessions = strip_images(sessions)
    text_only = {s.id: s for s in sessions}
    started = time.perf_counter()
    if any(v.persona.language == "zh" for v in views) and not renderer.cjk_fonts_ok():
        raise KemeError(
            "Chinese text would render as missing-glyph boxes: no CJK font in chromium "
            "(install one: apt-get install -y fonts-noto-cjk)"
        )
    replaced: dict[str, Session] = {}
    records: list[ImageRecord] = []
    pngs: dict[str, bytes] = {}
    for view in views:
        persona = view.persona
        own = [text_only[s.id] for s in view.sessions]
        shots = plan(persona, own, view.graph, view.anchors, spec, seed)
        placed = {t for _, t, _ in shots}
        report.missing += [f"{persona.id}:{t}" for t in spec.templates if t not in placed]
        # the share lines in a shuffled cycle per persona: none said more than once a round
        lines = list(scenes.resources(persona.language)["share"])
        random.Random(f"{seed}:{persona.id}:share").shuffle(lines)
        for number, (session, template, ctx) in enumerate(sorted(shots, key=lambda x: x[0].start), start=1):
            scene = scenes.build(template, ctx)
            shot = renderer.render(template, scene.screen)
            image_id = f"{persona.id}-img{number:03d}"
            path = f"{IMAGES}/{image_id}.png"
            pngs[path] = shot.png
            index = _slot(session)
            caption = scene.caption()
            text = lines[(number - 1) % len(lines)]
            message = share_message(session, index, text, path, caption)
            replaced[session.id] = session.model_copy(
                update={"messages": [*session.messages[:index], message, *session.messages[index:]]}
            )
            records.append(
                ImageRecord(
                    id=image_id,
                    persona_id=persona.id,
                    session_id=session.id,
                    message_id=message.id,
                    path=path,
                    sha256=hashlib.sha256(shot.png).hexdigest(),
                    template=template,
                    language=session.language,
                    caption=caption,
                    about=scene.about,
                    facts=shot.facts,
                    dom_text=shot.text,
                    screen=scene.screen.model_dump(mode="json"),
                    width=renderer.size["width"],
                    height=renderer.size["height"],
                )
            )
            report.images += 1
            report.by_template[template] += 1
            report.by_language[session.language] += 1
            if progress is not None:
                progress(report.images)
    report.seconds = time.perf_counter() - started
    return [replaced.get(s.id, s) for s in sessions], records, pngs, report


def face_check(records: list[ImageRecord], pngs: dict[str, bytes]) -> str:
    """Optional insightface pass (extra 'faces'): counts detected faces; degrades with one clear message."""
    try:
        from insightface.app import FaceAnalysis  # type: ignore[import-not-found]
    except ImportError:
        return "skipped: insightface is not installed (pip install -e '.[faces]')"
    try:
        analysis = FaceAnalysis(providers=["CPUExecutionProvider"])
        analysis.prepare(ctx_id=-1)
    except Exception as exc:  # noqa: BLE001 - its model download fails offline in many ways
        return (
            f"skipped: insightface could not load its models ({type(exc).__name__}: {exc}); "
            "they download from the network"
        )

    import numpy as np
    from PIL import Image

    faces = sum(
        len(analysis.get(np.asarray(Image.open(io.BytesIO(pngs[r.path])).convert("RGB"))[:, :, ::-1]))
        for r in records
    )
    return f"ran: {faces} faces in {len(records)} images"


def render_stage(dataset: Dataset, spec: OmniSpec, seed: int, progress=None) -> RenderReport:
    """The omni stage: screenshots for the dataset's sessions, added to it (in memory) with their messages.

    Earlier screenshots give way: their messages leave the sessions, their records and PNGs the dataset
    (the files go when the dataset is written). The manifest gets the counts and the stage's report.
    """
    with Renderer(scale=spec.scale) as renderer:
        sessions, records, pngs, report = render_views(
            dataset.views(), dataset.sessions, spec, seed, renderer, progress
        )
    report.face_check = face_check(records, pngs) if spec.face_check else "off"
    dataset.sessions = sessions
    dataset.images = records
    dataset.blobs = dict(pngs)
    dataset.manifest.stats["images"] = report.images
    dataset.manifest.stats["images_by_template"] = dict(sorted(report.by_template.items()))
    dataset.manifest.stats |= message_counts(sessions)  # the screenshots' own messages count too
    dataset.manifest.stages["render"] = {
        k: v for k, v in report.as_dict().items() if k not in ("seconds", "shots_per_second")
    }
    return report
