"""The QA stage of `keme synth --workers N`: each persona's questions drafted and finished in Ray tasks.

A persona's items come from three steps (keme.qa.build): candidates, filtered and selected
(`picked_drafts`), which depends on the persona alone and is most of the stage's time; their formats
(`apply_formats`), which carries one Balancer over the personas in order and is cheap; and the numbered,
verified items with the claims they rest on (`final_items`), again the persona's alone and costly. So the
first and last steps are tasks and the middle one stays in the driver, persona after persona, between
them: the items, their order and the report are those of `keme.qa.build.qa_stage`.

Shipped: each persona's World once (about 2.6 MB pickled a persona-year, in the object store, read by both
of its tasks), its selected drafts and their rng back to the driver and, formatted, out again (about 0.3 MB
each way), the finished items back. The LLM brain's rewording (`llm_pass`) runs in the driver.
"""

from __future__ import annotations

import random

from keme.cluster import Cluster
from keme.config import QASpec
from keme.dataset import Dataset
from keme.models import QAItem
from keme.qa.build import (
    QAReport,
    add_qa,
    apply_formats,
    balancer,
    final_items,
    llm_pass,
    picked_drafts,
    spec_for,
)
from keme.qa.draft import Draft
from keme.qa.facts import World, worlds_of
from keme.qa.options import Values


def picked_task(world: World, spec: QASpec, seed: int) -> tuple[list[Draft], random.Random, QAReport]:
    report = QAReport()
    chosen, rng = picked_drafts(world, spec, seed, report)
    return chosen, rng, report


def final_task(chosen: list[Draft], world: World) -> tuple[list[QAItem], QAReport]:
    report = QAReport()
    return final_items(chosen, world, report), report


def _add(report: QAReport, part: QAReport) -> None:
    report.add(part)


def qa_stage_distributed(dataset: Dataset, cfg, cluster: Cluster, brain=None) -> QAReport:
    """`keme.qa.build.qa_stage` with the per-persona steps as Ray tasks: the same items and report."""
    worlds = worlds_of(dataset)
    refs = [cluster.put(world) for world in worlds]
    specs = [spec_for(world, cfg) for world in worlds]
    picked = [cluster.submit(picked_task, ref, spec, cfg.seed) for ref, spec in zip(refs, specs)]
    report = QAReport()
    balance = balancer(cfg)
    finishing = []
    for index, (chosen, rng, part) in enumerate(
        cluster.results(picked, lambda i: f"QA of {worlds[i].persona.id}")
    ):
        _add(report, part)
        world = worlds[index]
        apply_formats(chosen, specs[index], rng, world.lang, Values.of(world), balance)
        finishing.append(cluster.submit(final_task, chosen, refs[index]))
    items: list[QAItem] = []
    for index, (own, part) in enumerate(
        cluster.results(finishing, lambda i: f"QA of {worlds[i].persona.id}")
    ):
        _add(report, part)
        items += llm_pass(own, worlds[index], brain, cfg, report, items)
    add_qa(dataset, worlds, items, report)
    return report
