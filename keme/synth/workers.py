"""`keme synth --workers N`: each persona's trajectory is a Ray task (keme.cluster).

A task runs `persona_trajectory` for one persona with a brain of its own (built from the config), writing
its chapter checkpoints into out/.work itself, and resuming from whatever checkpoint this run left there
(the driver wiped it unless --resume): a task Ray retries after its worker died, or a persona of a killed
run, goes on from its last chapter. It returns the trajectory (about 2.7 MB pickled for a persona-year), the
brain's counts for the persona (kept with each checkpoint, so a resumed persona counts what an uninterrupted
one does) and, for an LLM brain, its client's usage per stage. The driver takes them in persona order,
merges the counts and usage into its own brain, and builds the dataset as `keme.synth.pipeline.synthesize`
does: the same bytes.

A worker must see out/.work: on several nodes, --out must be on a filesystem they share (checked; a worker
that cannot see it stops the run with a KemeError naming the host). The LLM call cache is a directory of
files each written by an atomic rename (keme.llm.cache), so workers share it safely; on several nodes it is
shared only if KEME_LLM_CACHE points every node at one shared directory.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from keme.brains import Brain, make_brain
from keme.cluster import Cluster, host
from keme.config import SynthConfig
from keme.dataset import Dataset
from keme.errors import KemeError
from keme.llm.ledger import StageUsage
from keme.prior.persona import persona_id
from keme.synth.pipeline import WORK, Progress, _Work, dataset_of, persona_trajectory
from keme.synth.state import Trajectory
from keme.text import resources
from keme.world.predicates import checked_predicates

Shipped = tuple[Trajectory, dict[str, int], dict[str, StageUsage]]


def persona_task(index: int, cfg: SynthConfig, out: Path, make: Callable[[SynthConfig], Brain]) -> Shipped:
    """In a worker: one persona's trajectory, resumed from its checkpoint in out/.work if it has one."""
    root = out / WORK
    if not (root / "identity.json").exists():
        raise KemeError(
            f"a Ray worker on {host()} cannot see {root}: a run on several nodes needs --out on a "
            "filesystem every node shares"
        )
    brain = make(cfg)
    client = getattr(brain, "client", None)
    try:
        traj = persona_trajectory(index, cfg, _Work(root), brain, resume=True, progress=Progress())
    finally:
        if client is not None:
            client.close()
    usage = dict(client.ledger.stages) if client is not None else {}
    return traj, brain.stats.as_dict(), usage


def synthesize_distributed(
    cfg: SynthConfig,
    out: Path,
    brain: Brain,
    cluster: Cluster,
    *,
    progress: Progress | None = None,
    make: Callable[[SynthConfig], Brain] = make_brain,
    then: tuple[str, ...] = (),
) -> Dataset:
    """`keme.synth.pipeline.synthesize` with one Ray task per persona; `brain` receives the workers' counts
    (and LLM usage), each worker builds its own with `make`. The caller has prepared `out`
    (`prepare_output`): a resumed run's checkpoints are there, a new run's work area is empty. `then`: the
    modules of the next stage's tasks, imported in each worker once it is done with its personas."""
    progress = progress or Progress()
    total = len(cfg.personas)
    where = out.resolve()  # a worker's working directory is not the driver's
    refs = [cluster.submit(persona_task, index, cfg, where, make) for index in range(total)]
    if then:
        cluster.preload(*then)
    for language in dict.fromkeys(spec.language for spec in cfg.personas):
        # while the workers synthesize: what the later stages load in this process (seconds of YAML)
        checked_predicates(resources.get(language))
    trajectories = []
    client = getattr(brain, "client", None)
    for index, (traj, counts, usage) in enumerate(
        cluster.results(refs, lambda i: f"persona {persona_id(i)}")
    ):
        brain.stats.merge(counts)
        if client is not None:
            client.ledger.merge(usage)
        chapters = len(traj.children(None))
        progress.on_chapter(traj.persona.id, chapters, chapters)
        progress.on_persona(traj.persona.id, index + 1, total)
        trajectories.append(traj)
    return dataset_of(cfg, trajectories)
