"""Drive the four agents over simulated time, checkpoint, resume: the synthesis stage of a dataset.

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

from keme.brains import Brain, ProceduralBrain, make_brain
from keme.config import SynthConfig
from keme.dataset import Dataset
from keme.dataset.commit import recover
from keme.dataset.io import atomic_write_bytes, atomic_write_text, dump_json, iter_jsonl, jsonl_bytes
from keme.dataset.lock import LOCK_FILE
from keme.dataset.manifest import MANIFEST, Manifest, read_manifest
from keme.dataset.paths import inside
from keme.errors import KemeError, SynthesisError
from keme.models import Claim, EventGraph, Session
from keme.prior.anchors import build_anchors
from keme.prior.persona import build_persona, persona_id
from keme.seeding import rng_for
from keme.stats import trajectory_stats
from keme.synth import planner
from keme.synth.context import PlanContext
from keme.synth.filler import add_filler
from keme.synth.state import Checkpoint, Trajectory, is_leaf
from keme.text import resources
from keme.world.ledger import Ledger, close_versions
from keme.world.predicates import checked_predicates
from keme.world.schedule import schedule_of

WORK = ".work"
WORK_MARK = "identity.json"  # written when the checkpoint area is made: only a marked area is removed
IMAGES = "images"
FAULT_ENV = "KEME_FAULT_AFTER_CHECKPOINTS"  # test hook: SIGKILL the process after N checkpoints


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

    def chunk_path(self, pid: str, number: int, part: str = "sessions") -> Path:
        return self.root / f"{pid}.{part}.{number:03d}.jsonl"

    def save(
        self, traj: Trajectory, chunks: list[list[int]], done: bool, stats: dict[str, int] | None = None
    ) -> list[list[int]]:
        """Persist new sessions and their claims as a chunk, then the small state that names the chunks
        (each chunk: [sessions, claims]) and the brain's counts for this persona so far (`stats`)."""
        pid = traj.persona.id
        sessions_written = sum(c[0] for c in chunks)
        claims_written = sum(c[1] for c in chunks)
        new = traj.sessions[sessions_written:]
        if new:
            data, count = jsonl_bytes(new)
            claims, claim_count = jsonl_bytes(traj.claims[claims_written:])
            atomic_write_bytes(self.chunk_path(pid, len(chunks), "claims"), claims)
            atomic_write_bytes(self.chunk_path(pid, len(chunks)), data)
            chunks = chunks + [[count, claim_count]]
        state = traj.checkpoint(done=done).model_copy(update={"sessions": [], "claims": []})
        # model_dump_json keeps dict order (sorted keys would reorder params and change the output bytes)
        head = {"chunks": chunks, "stats": stats or {}}
        payload = json.dumps(head, sort_keys=True)[:-1] + ', "checkpoint": ' + state.model_dump_json() + "}\n"
        atomic_write_text(self.state_path(pid), payload)
        self.writes += 1
        if self.fault_after is not None and self.writes >= self.fault_after:
            os.kill(os.getpid(), signal.SIGKILL)
        return chunks

    def load(self, pid: str) -> tuple[Trajectory, list[list[int]], bool, dict[str, int]] | None:
        """The persona's trajectory at its last checkpoint, its chunks, whether it was done, and the brain's
        counts for it up to then."""
        path = self.state_path(pid)
        if not path.exists():
            return None
        payload = json.loads(path.read_text(encoding="utf-8"))
        cp = Checkpoint.model_validate(payload["checkpoint"])
        chunks: list[list[int]] = payload["chunks"]
        if not all(isinstance(c, list) and len(c) == 2 for c in chunks):
            raise KemeError(
                f"{path}: checkpoint from another keme version (chunks {chunks[:3]}); rerun without --resume"
            )
        sessions: list[Session] = []
        claims: list[Claim] = []
        for number, counts in enumerate(chunks):
            for kind, model, found in (("sessions", Session, sessions), ("claims", Claim, claims)):
                chunk = self.chunk_path(pid, number, kind)
                part = list(iter_jsonl(chunk, model))
                expected = counts[0] if kind == "sessions" else counts[1]
                if len(part) != expected:
                    raise KemeError(
                        f"{chunk}: expected {expected} {kind}, found {len(part)}; rerun without --resume"
                    )
                found += part
        cp = cp.model_copy(update={"sessions": sessions, "claims": claims})
        return Trajectory.from_checkpoint(cp), chunks, cp.done, payload.get("stats", {})


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
    ledger = Ledger(checked_predicates(res))
    traj = Trajectory(persona, anchors, {a.id: a.sha256 for a in anchors}, graph, ledger=ledger)
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


def run_trajectory(
    traj: Trajectory,
    cfg: SynthConfig,
    res: resources.Resources,
    save: Callable[[Trajectory, bool], None] | None = None,
    on_chapter: Callable[[int, int], None] | None = None,
    brain: Brain | None = None,
) -> Trajectory:
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
    traj.claims = close_versions(traj.claims, traj.persona)  # after the save: chunks keep claims as said
    return traj


def check_anchors_untouched(traj: Trajectory) -> None:
    for anchor in traj.anchors:
        if (
            anchor.content_hash() != traj.anchor_hashes[anchor.id]
            or anchor.sha256 != traj.anchor_hashes[anchor.id]
        ):
            raise SynthesisError(
                f"anchor {anchor.id} changed during synthesis; anchors are fixed inputs the QA is proved "
                "against, so a brain must not edit them"
            )


def synthesize_persona(index: int, cfg: SynthConfig, brain: Brain | None = None) -> Trajectory:
    """One persona, in memory, no checkpoints (library use and benchmarks)."""
    res = resources.get(cfg.personas[index].language)
    traj = run_trajectory(start_trajectory(index, cfg, res), cfg, res, brain=brain or make_brain(cfg))
    add_filler(traj, cfg)
    return traj


# ---------------------------------------------------------------- the dataset directory
def _identity(cfg: SynthConfig) -> dict[str, object]:
    return {"config_fingerprint": cfg.fingerprint(), "seed": cfg.seed}


def _read_identity(marker: Path) -> dict | None:
    """The identity keme synth wrote into its work area, or None when `marker` holds anything else."""
    try:
        identity = json.loads(marker.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(identity, dict) or set(identity) != {"config_fingerprint", "seed"}:
        return None
    return identity


def _present(out: Path) -> list[str]:
    """Top-level entries and the files under images/, as paths relative to `out` (the lock and work area
    aside)."""
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


def prepare_output(out: Path, cfg: SynthConfig, *, resume: bool, force: bool) -> None:
    """Decide whether `out` may receive this dataset; the caller holds its lock.

    A write a killed command left unfinished is finished or discarded first (keme.dataset.commit).
    What a directory's dataset owns is what its manifest lists (plus the manifest). A dataset from
    another config or seed is replaced only with --force (or when resuming the run that --force
    started), and only when the new one is written: then the files it owned and the new one does
    not list are removed, so a kill before that leaves the old dataset whole. A directory holding
    anything else, not a keme dataset's, is refused even with --force, and a file a user added to a
    dataset (a photo in images/) stays where it is.
    """
    recover(out)
    identity = _identity(cfg)
    work = out / WORK
    marker = work / WORK_MARK
    current = _read_identity(marker) if work.exists() else None
    if (out / MANIFEST).exists():
        try:
            manifest = read_manifest(out)
        except KemeError as exc:
            raise KemeError(
                f"{exc}; keme cannot tell which files in {out} are the dataset's, so it will not write "
                f"there: remove the directory yourself or choose another --out"
            ) from exc
        for name in manifest.files:
            inside(out, name)
        same = (
            manifest.config_fingerprint == identity["config_fingerprint"]
            and manifest.seed == identity["seed"]
        )
        if not same and not force and not (resume and current == identity):
            raise KemeError(
                f"{out} holds a dataset from another config or seed ({manifest.name}, seed {manifest.seed}); "
                "choose another --out or pass --force to replace it"
            )
    elif present := _present(out):
        shown = ", ".join(present[:5]) + (" …" if len(present) > 5 else "")
        raise KemeError(
            f"{out} is not empty and holds no keme dataset ({shown}); keme deletes only files a "
            "dataset of its own lists, even with --force: choose another --out or empty it yourself"
        )
    if work.exists() or work.is_symlink():
        _check_work(work, marker)
        if resume and current != identity and not force:
            raise KemeError(
                f"{work} belongs to another config or seed; rerun without --resume, or pass --force"
            )
        if not resume or current != identity:
            shutil.rmtree(work)
    work.mkdir(parents=True, exist_ok=True)
    atomic_write_text(marker, dump_json(identity))


def synthesize(
    cfg: SynthConfig, out: Path, brain: Brain, *, resume: bool = False, progress: Progress | None = None
) -> Dataset:
    """The synthesis stage: every persona's trajectory, checkpointed per chapter in out/.work, as a new
    dataset.

    The dataset (personas, anchors, graphs, sessions, their counts) is in memory; the command adds
    its other stages and writes it (see `keme.cli.synthesize_dataset`), then removes the work area.
    `keme.synth.workers` runs the same personas as Ray tasks.
    """
    progress = progress or Progress()
    fault = os.environ.get(FAULT_ENV)
    work = _Work(out / WORK, fault_after=int(fault) if fault else None)
    total = len(cfg.personas)
    trajectories = []
    for index in range(total):
        trajectories.append(persona_trajectory(index, cfg, work, brain, resume=resume, progress=progress))
        progress.on_persona(persona_id(index), index + 1, total)
    return dataset_of(cfg, trajectories)


def dataset_of(cfg: SynthConfig, trajectories: list[Trajectory]) -> Dataset:
    """A new dataset of `cfg` holding the trajectories (in persona order)."""
    dataset = Dataset(
        Manifest(
            name=cfg.name,
            seed=cfg.seed,
            # a config without filler is recorded as it was before the haystack setting existed
            config=cfg.model_dump(mode="json", exclude={"haystack"} if cfg.haystack.tokens is None else None),
            config_fingerprint=cfg.fingerprint(),
            files={},
        )
    )
    add_trajectories(dataset, trajectories)
    return dataset


def _counts_since(brain: Brain, before: dict[str, int]) -> dict[str, int]:
    """What the brain counted since `before` (its counts then)."""
    now = brain.stats.as_dict()
    return {k: v - before.get(k, 0) for k, v in now.items() if v != before.get(k, 0)}


def persona_trajectory(
    index: int, cfg: SynthConfig, work: _Work, brain: Brain, *, resume: bool, progress: Progress
) -> Trajectory:
    """One persona's whole trajectory: resumed from its checkpoint in `work` or run from its prior, with
    checkpoints per chapter (the unit a distributed run hands to a worker).

    Each checkpoint keeps the brain's counts for this persona, and a resumed persona adds them back to
    `brain`, so a resumed run counts what an uninterrupted one does.
    """
    pid = persona_id(index)
    res = resources.get(cfg.personas[index].language)
    checked_predicates(res)
    before = brain.stats.as_dict()
    loaded = work.load(pid) if resume else None
    chunks: list[list[int]] = []
    if loaded is not None:
        traj, chunks, done, counted = loaded
        brain.stats.merge(counted)
    else:
        traj, done = start_trajectory(index, cfg, res), False
    if not done:
        state = {"chunks": chunks}

        def save(t: Trajectory, finished: bool) -> None:
            state["chunks"] = work.save(t, state["chunks"], finished, _counts_since(brain, before))

        run_trajectory(traj, cfg, res, save, lambda d, n: progress.on_chapter(pid, d, n), brain=brain)
    add_filler(traj, cfg)  # drawn anew on a resume, never checkpointed: it depends on the finished year alone
    return traj


def add_trajectories(dataset: Dataset, trajectories: list[Trajectory]) -> None:
    """Synthesis's part of the dataset: the trajectories' own records (graphs put in the order the file
    keeps)."""
    for traj in trajectories:
        traj.graph.events.sort(key=lambda e: e.id)
        traj.graph.edges.sort(key=lambda x: (x.source, x.target))
        traj.claims = close_versions(traj.claims, traj.persona)
    dataset.personas = [t.persona for t in trajectories]
    dataset.anchors = [a for t in trajectories for a in t.anchors]
    dataset.graphs = [t.graph for t in trajectories]
    dataset.sessions = [s for t in trajectories for s in t.sessions]
    dataset.claims = [c for t in trajectories for c in t.claims]
    dataset.schedule = [
        b
        for t in trajectories
        for b in schedule_of(t.persona, t.graph, t.persona.country, t.sessions, t.anchors)
    ]
    dataset.manifest.stats = trajectory_stats(
        dataset.personas, dataset.anchors, dataset.graphs, dataset.sessions, dataset.claims
    )


def record_brain(dataset: Dataset, brain: Brain) -> None:
    """Retry, fallback and anomaly counts, and LLM usage per stage, into the manifest's stages."""
    entry: dict = {"brain": brain.name, "personas": len(dataset.personas), "agents": brain.stats.as_dict()}
    client = getattr(brain, "client", None)
    if client is not None:
        entry["llm"] = {
            "provider": client.config.provider,
            "model": client.config.model,
            "stages": client.ledger.as_dict(),
        }
    dataset.manifest.stages["synth"] = entry


def _check_work(work: Path, marker: Path) -> None:
    """`work` is a checkpoint area keme synth made (it holds `marker`, or nothing yet): anything else at
    that name is the user's, refused rather than removed."""
    if work.is_symlink() or not work.is_dir() or (_read_identity(marker) is None and any(work.iterdir())):
        raise KemeError(
            f"{work} was not made by keme synth (it holds no {marker.name} keme wrote); keme will neither "
            "use nor remove it: move it away or choose another --out"
        )


def remove_work(out: Path) -> None:
    """The checkpoints, once the dataset they led to is written (only an area keme synth marked)."""
    work = out / WORK
    if not work.is_symlink() and _read_identity(work / WORK_MARK) is not None:
        shutil.rmtree(work, ignore_errors=True)
