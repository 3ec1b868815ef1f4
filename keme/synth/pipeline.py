"""Drive the four agents over simulated time, checkpoint, resume, and write the dataset.

The planner, grounder, realizer and reviser take turns in time order: the
earliest planned event is expanded (or, for a leaf, realized into a session),
and the reviser then adjusts what lies ahead. Because every random draw comes
from an RNG derived from (seed, persona, agent, event id), the order of work
is the only state, and a checkpoint taken at the start of each chapter lets a
killed run resume to the same bytes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

from keme.config import SynthConfig
from keme.dataset.lock import LOCK_FILE, directory_lock
from keme.dataset.io import atomic_write_bytes, atomic_write_text, dump_json, iter_jsonl, jsonl_bytes, write_jsonl
from keme.dataset.manifest import MANIFEST, FileEntry, Manifest, read_manifest, write_manifest
from keme.errors import KemeError, SynthesisError
from keme.models import Anchor, EventGraph, Persona, Session
from keme.prior.anchors import build_anchors
from keme.prior.persona import build_persona, persona_id
from keme.seeding import rng_for
from keme.brains import Brain, ProceduralBrain, make_brain
from keme.synth import planner
from keme.synth.planner import PlanContext
from keme.synth.state import Checkpoint, Trajectory, is_leaf
from keme.text import resources

WORK = ".work"
IMAGES = "images"
DATA_FILES = ("personas.jsonl", "anchors.jsonl", "graphs.jsonl", "sessions.jsonl")
FAULT_ENV = "KEME_FAULT_AFTER_CHECKPOINTS"  # test hook: SIGKILL the process after N checkpoints
MANIFEST_FAULT_ENV = "KEME_FAULT_BEFORE_MANIFEST"  # test hook: SIGKILL after the data files, before the manifest


@dataclass
class Progress:
    """Callbacks for a progress display; all optional."""

    on_persona: Callable[[str, int, int], None] = lambda pid, done, total: None
    on_chapter: Callable[[str, int, int], None] = lambda pid, done, total: None
    on_render: Callable[[object], None] = lambda report: None


@dataclass
class _Work:
    """The checkpoint area of an output directory."""

    root: Path
    writes: int = 0
    fault_after: int | None = field(default=None)

    def state_path(self, pid: str) -> Path:
        return self.root / f"{pid}.json"

    def chunk_path(self, pid: str, number: int) -> Path:
        return self.root / f"{pid}.sessions.{number:03d}.jsonl"

    def save(self, traj: Trajectory, chunks: list[int], done: bool) -> list[int]:
        """Persist new sessions as a chunk, then the small state that names the chunks."""
        pid = traj.persona.id
        written = sum(chunks)
        new = traj.sessions[written:]
        if new:
            data, count = jsonl_bytes(new)
            atomic_write_bytes(self.chunk_path(pid, len(chunks)), data)
            chunks = chunks + [count]
        state = traj.checkpoint(done=done).model_copy(update={"sessions": []})
        # model_dump_json keeps dict order (sorted keys would reorder params and change the output bytes)
        payload = '{"chunks": ' + json.dumps(chunks) + ', "checkpoint": ' + state.model_dump_json() + "}\n"
        atomic_write_text(self.state_path(pid), payload)
        self.writes += 1
        if self.fault_after is not None and self.writes >= self.fault_after:
            os.kill(os.getpid(), signal.SIGKILL)
        return chunks

    def load(self, pid: str) -> tuple[Trajectory, list[int], bool] | None:
        path = self.state_path(pid)
        if not path.exists():
            return None
        payload = json.loads(path.read_text(encoding="utf-8"))
        cp = Checkpoint.model_validate(payload["checkpoint"])
        chunks: list[int] = payload["chunks"]
        sessions: list[Session] = []
        for number, count in enumerate(chunks):
            part = list(iter_jsonl(self.chunk_path(pid, number), Session))
            if len(part) != count:
                raise KemeError(f"{self.chunk_path(pid, number)}: expected {count} sessions, found {len(part)}; rerun without --resume")
            sessions += part
        cp = cp.model_copy(update={"sessions": sessions})
        return Trajectory.from_checkpoint(cp), chunks, cp.done


def start_trajectory(index: int, cfg: SynthConfig, res: resources.Resources) -> Trajectory:
    """The prior (persona, frozen anchors) and the root plan, with anchors handed to chapters."""
    spec = cfg.personas[index]
    persona = build_persona(spec, index, cfg.seed, res)
    anchors = build_anchors(persona, cfg, res)
    ctx = PlanContext(cfg, res)
    chapters = planner.plan_chapters(persona, ctx, rng_for(cfg.seed, persona.id, "plan", "root"))
    for anchor in anchors:
        owner = next(c for c in chapters if c.start <= anchor.timestamp <= c.end)
        owner.pending_anchors.append(anchor.id)
    graph = EventGraph(persona_id=persona.id, events=chapters, edges=[])
    traj = Trajectory(persona, anchors, {a.id: a.sha256 for a in anchors}, graph)
    traj.reindex()
    traj.chain_edges(chapters)
    return traj


def step(event, traj: Trajectory, cfg: SynthConfig, res: resources.Resources, brain: Brain) -> None:
    """Expand (or realize) one event, then let the reviser adjust the future."""
    ctx = PlanContext(cfg, res)
    pid, seed = traj.persona.id, cfg.seed
    now: datetime = event.start
    if is_leaf(event):
        brain.realize(event, traj, cfg, res, rng_for(seed, pid, "realize", event.id))
        event.state = "realized"
        now = traj.sessions[-1].end
    else:
        rng = rng_for(seed, pid, "plan", event.id)
        if event.depth == 0:
            brain.expand_chapter(event, traj, ctx, rng)
        else:
            brain.expand_episode(event, traj, ctx, rng)
        brain.ground(event, traj, ctx, now)
        event.state = "expanded"
    brain.revise(event, traj, ctx, rng_for(seed, pid, "revise", event.id), now)


def run_trajectory(traj: Trajectory, cfg: SynthConfig, res: resources.Resources,
                   save: Callable[[Trajectory, bool], None] | None = None,
                   on_chapter: Callable[[int, int], None] | None = None, brain: Brain | None = None) -> Trajectory:
    brain = brain or ProceduralBrain()
    chapters = len(traj.children(None))
    while (event := traj.next_planned()) is not None:
        if event.depth == 0:
            if save is not None:
                save(traj, False)
            if on_chapter is not None:
                on_chapter(sum(1 for c in traj.children(None) if c.state != "planned"), chapters)
        step(event, traj, cfg, res, brain)
    check_anchors_untouched(traj)
    if save is not None:
        save(traj, True)
    return traj


def check_anchors_untouched(traj: Trajectory) -> None:
    for anchor in traj.anchors:
        if anchor.content_hash() != traj.anchor_hashes[anchor.id] or anchor.sha256 != traj.anchor_hashes[anchor.id]:
            raise SynthesisError(f"anchor {anchor.id} changed during synthesis; anchors are fixed inputs the QA is proved against, so a brain must not edit them")


def synthesize_persona(index: int, cfg: SynthConfig, brain: Brain | None = None) -> Trajectory:
    """One persona, in memory, no checkpoints (library use and benchmarks)."""
    res = resources.get(cfg.personas[index].language)
    return run_trajectory(start_trajectory(index, cfg, res), cfg, res, brain=brain or make_brain(cfg))


# ---------------------------------------------------------------- the dataset directory
def _identity(cfg: SynthConfig) -> dict[str, object]:
    return {"config_fingerprint": cfg.fingerprint(), "seed": cfg.seed}


def _read_identity(marker: Path) -> dict | None:
    try:
        return json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _inside(out: Path, name: str) -> Path:
    """A path the manifest lists, which must stay inside the dataset (data never becomes a path elsewhere)."""
    path = (out / name).resolve()
    if not name or Path(name).is_absolute() or not path.is_relative_to(out.resolve()):
        raise KemeError(f"{out / MANIFEST}: lists {name!r}, a path outside the dataset; refusing to touch it "
                        "(the manifest is damaged or not keme's)")
    return out / name


def _present(out: Path) -> list[str]:
    """Top-level entries and the files under images/, as paths relative to `out` (the lock and work area aside)."""
    if not out.is_dir():
        return []
    found = []
    for entry in sorted(out.iterdir()):
        if entry.name in (WORK, LOCK_FILE):
            continue
        if entry.name == IMAGES and entry.is_dir():
            found += [f"{IMAGES}/{p.relative_to(entry)}" for p in sorted(entry.rglob("*")) if not p.is_dir()]
        else:
            found.append(entry.name)
    return found


def _remove(out: Path, names: list[str]) -> None:
    for name in names:
        _inside(out, name).unlink(missing_ok=True)
    images = out / IMAGES
    if images.is_dir() and not any(images.iterdir()):
        images.rmdir()


def prepare_output(out: Path, cfg: SynthConfig, *, resume: bool, force: bool) -> None:
    """Decide whether `out` may receive this dataset, and clear what must go — only files keme owns.

    What a directory's dataset owns is what its manifest lists (plus the manifest); an unfinished
    synth (a work area, no manifest yet: killed before the manifest was written) owns the data
    files it writes first. A dataset from another config or seed is replaced only with --force,
    and --force deletes only those owned files: a directory holding anything else that is not a
    keme dataset's is refused even with --force, and a file a user added to a dataset (a photo in
    images/) stays where it is.
    """
    identity = _identity(cfg)
    work = out / WORK
    marker = work / "identity.json"
    current = _read_identity(marker) if work.exists() else None
    present = _present(out)
    if (out / MANIFEST).exists():
        try:
            manifest = read_manifest(out)
        except KemeError as exc:
            raise KemeError(f"{exc}; keme cannot tell which files in {out} are the dataset's, so it will not write "
                            f"there: remove the directory yourself or choose another --out") from exc
        owned = [MANIFEST, *manifest.files]
        for name in owned:
            _inside(out, name)
        same = manifest.config_fingerprint == identity["config_fingerprint"] and manifest.seed == identity["seed"]
        if not same and not force:
            raise KemeError(
                f"{out} holds a dataset from another config or seed ({manifest.name}, seed {manifest.seed}); "
                "choose another --out or pass --force to replace it"
            )
        if not same:
            _remove(out, owned)
    elif present:
        partial = [name for name in present if name in (*DATA_FILES, "qa.jsonl", "images.jsonl")]
        foreign = [name for name in present if name not in partial]
        if foreign or current is None:
            shown = ", ".join(foreign[:5] or present[:5]) + (" …" if len(foreign or present) > 5 else "")
            raise KemeError(f"{out} is not empty and holds no keme dataset ({shown}); keme deletes only files a "
                            "dataset of its own lists, even with --force: choose another --out or empty it yourself")
        if current != identity and not force:
            raise KemeError(f"{out} holds an unfinished synth from another config or seed; "
                            "pass --force to replace it, or choose another --out")
        if current != identity or not resume:  # starting over (the same config gives the same files)
            _remove(out, partial)
    if work.exists():
        if resume and current != identity and not force:
            raise KemeError(f"{work} belongs to another config or seed; rerun without --resume, or pass --force")
        if not resume or current != identity:
            shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    atomic_write_text(marker, dump_json(identity))


def dataset_stats(personas: list[Persona], anchors: list[Anchor], graphs: list[EventGraph], sessions: list[Session]) -> dict:
    from keme.stats import trajectory_stats

    return trajectory_stats(personas, anchors, graphs, sessions)


def write_dataset(out: Path, cfg: SynthConfig, trajectories: list[Trajectory]) -> Manifest:
    personas = [t.persona for t in trajectories]
    anchors = [a for t in trajectories for a in t.anchors]
    graphs = []
    for t in trajectories:
        graph = t.graph.model_copy(deep=True)
        graph.events.sort(key=lambda e: e.id)
        graph.edges.sort(key=lambda x: (x.source, x.target))
        graphs.append(graph)
    sessions = [s for t in trajectories for s in t.sessions]
    files = {}
    for name, records in (("personas.jsonl", personas), ("anchors.jsonl", anchors), ("graphs.jsonl", graphs),
                          ("sessions.jsonl", sessions)):
        digest, count, size = write_jsonl(out / name, records)
        files[name] = FileEntry(sha256=digest, records=count, bytes=size)
    if os.environ.get(MANIFEST_FAULT_ENV):
        os.kill(os.getpid(), signal.SIGKILL)
    manifest = Manifest(
        name=cfg.name, seed=cfg.seed, config=cfg.model_dump(mode="json"), config_fingerprint=cfg.fingerprint(),
        files=files, stats=dataset_stats(personas, anchors, graphs, sessions),
        stages={"synth": {"brain": "procedural", "personas": len(personas)}},
    )
    write_manifest(out, manifest)
    return manifest


def synthesize(cfg: SynthConfig, out: Path, *, resume: bool = False, force: bool = False,
               progress: Progress | None = None) -> Manifest:
    """Run the whole pipeline into `out`, holding its lock; resumable from the per-chapter checkpoints."""
    with directory_lock(out, "keme synth"):
        return _synthesize_locked(cfg, out, resume=resume, force=force, progress=progress or Progress())


def _synthesize_locked(cfg: SynthConfig, out: Path, *, resume: bool, force: bool, progress: Progress) -> Manifest:
    prepare_output(out, cfg, resume=resume, force=force)
    fault = os.environ.get(FAULT_ENV)
    work = _Work(out / WORK, fault_after=int(fault) if fault else None)
    brain = make_brain(cfg)
    brain_file = out / WORK / "brain.json"
    if resume and brain_file.exists():  # counts from before the interruption
        saved = json.loads(brain_file.read_text())
        brain.stats.merge(saved.get("stats", {}))
    trajectories = []
    total = len(cfg.personas)
    for index in range(total):
        pid = persona_id(index)
        res = resources.get(cfg.personas[index].language)
        loaded = work.load(pid) if resume else None
        chunks: list[int] = []
        if loaded is not None:
            traj, chunks, done = loaded
        else:
            traj, done = start_trajectory(index, cfg, res), False
        if not done:
            state = {"chunks": chunks}

            def save(t: Trajectory, finished: bool, state=state) -> None:
                atomic_write_text(brain_file, dump_json({"stats": brain.stats.as_dict()}))
                state["chunks"] = work.save(t, state["chunks"], finished)

            run_trajectory(traj, cfg, res, save, lambda d, n, pid=pid: progress.on_chapter(pid, d, n), brain=brain)
        trajectories.append(traj)
        progress.on_persona(pid, index + 1, total)
    write_dataset(out, cfg, trajectories)
    images = render_stage(out, cfg, trajectories, progress) if cfg.omni.enabled else []
    run_qa(out, cfg, trajectories, brain, images)
    record_brain(out, brain)
    shutil.rmtree(out / WORK, ignore_errors=True)
    return read_manifest(out)


def record_brain(out: Path, brain: Brain) -> None:
    """Retry, fallback and anomaly counts, and LLM usage per stage, into the manifest."""
    manifest = read_manifest(out)
    entry: dict = {"brain": brain.name, "agents": brain.stats.as_dict()}
    client = getattr(brain, "client", None)
    if client is not None:
        entry["llm"] = {"provider": client.config.provider, "model": client.config.model,
                        "stages": client.ledger.as_dict()}
    manifest.stages["synth"] = manifest.stages.get("synth", {}) | entry
    write_manifest(out, manifest)


def render_stage(out: Path, cfg: SynthConfig, trajectories: list[Trajectory], progress: Progress) -> list:
    """Omni: screenshots into out/images, image messages into the sessions (in memory too, for the QA stage)."""
    from keme.omni.stage import render_into

    sessions, images, report = render_into(
        out, [t.persona for t in trajectories], [s for t in trajectories for s in t.sessions],
        [t.graph for t in trajectories], [a for t in trajectories for a in t.anchors], cfg.omni, cfg.seed)
    progress.on_render(report)
    by_id = {s.id: s for s in sessions}
    for t in trajectories:
        t.sessions = [by_id[s.id] for s in t.sessions]
    return images


def run_qa(out: Path, cfg: SynthConfig, trajectories: list[Trajectory], brain: Brain | None = None,
           images: list | None = None) -> None:
    """The QA stage, on the trajectories just written."""
    from keme.qa.build import record_qa, synthesize_qa
    from keme.qa.facts import worlds_from

    personas = [t.persona for t in trajectories]
    worlds = worlds_from(personas, [s for t in trajectories for s in t.sessions], [t.graph for t in trajectories],
                         [a for t in trajectories for a in t.anchors], images or [])
    items, report = synthesize_qa(worlds, cfg, brain)
    record_qa(out, items, report, {w.persona.id: w for w in worlds})
