"""A config the planner can carry out: keme.config's schema, then the planner's limits, checked when it is
loaded.

A config within the schema can still ask a chapter to ground more anchors than its graph can hold
(`keme.synth.capacity`); that depends on the planner, which the config module sits below, so it is
checked here. `load_config` and `parse_config` are what every caller that synthesizes uses: a config
they return synthesizes, and one they refuse is named with file:line, the persona and the fix.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from keme.config import SynthConfig, read_config, read_config_file
from keme.days import month_windows
from keme.errors import KemeError
from keme.prior.persona import trajectory_window
from keme.synth.capacity import chapter_loads

Problem = tuple[tuple[Any, ...], str]  # (where in the YAML, what is wrong and how to fix it)


def parse_config(text: str, source: str = "<config>", seed: int | None = None) -> SynthConfig:
    """Validate a config's text: the schema (`keme.config.read_config`), then the planner's limits.

    `seed` replaces the config's own (`keme synth --seed`) before the limits, which depend on it, are checked.
    """
    read = read_config(text, source, seed)
    problems = limit_problems(read.config)
    if problems:
        lines = [f"{source}: the configuration exceeds a limit of the planner"]
        lines += [f"  {read.where(loc)}: {'.'.join(map(str, loc))}: {message}" for loc, message in problems]
        raise KemeError("\n".join(lines))
    return read.config


def load_config(path: Path | str, seed: int | None = None) -> SynthConfig:
    """Read and validate a config file (see `parse_config`); unreadable files and bad UTF-8 are named too."""
    return parse_config(read_config_file(path), str(path), seed)


def limit_problems(cfg: SynthConfig) -> list[Problem]:
    """Chapters that receive more anchors than they can ground (see `keme.synth.capacity`), one per persona.

    The worst case over all seeds is checked first; only when it does not fit are this seed's anchors
    drawn and counted, so a config is refused exactly when its seed would fail.
    """
    problems = []
    for index in range(len(cfg.personas)):
        bound = chapter_loads(cfg, index)
        if all(load.most_anchors <= load.room for load in bound):
            continue
        loads = chapter_loads(cfg, index, exact=True)
        worst = max(loads, key=lambda load: load.most_anchors - load.room)
        if worst.most_anchors <= worst.room:
            continue
        graph = cfg.graph
        if graph.max_depth == 1:
            why = (
                f"at graph.max_depth 1 every anchor is a session of its own, and a chapter has at most "
                f"graph.max_events ({graph.max_events}) sessions"
            )
            fixes = "lower anchors.per_month, use graph.max_depth 2, or raise graph.max_events"
        else:
            why = (
                f"with graph.max_events {graph.max_events} and the episode kinds the weights allow, "
                f"a chapter grounds at most {worst.room}"
            )
            fixes = "lower anchors.per_month or raise graph.max_events"
        if (worst.start.year, worst.start.month) != (worst.end.year, worst.end.month):
            fixes += f" (one-month chapters need graph.max_events of at least {_calendar_months(cfg, index)})"
        problems.append(
            (
                ("personas", index),
                (
                    f"with seed {cfg.seed} the chapter {worst.months} receives {worst.most_anchors} anchors, "
                    f"but {why}; {fixes}"
                ),
            )
        )
    return problems


def _calendar_months(cfg: SynthConfig, index: int) -> int:
    return len(month_windows(*trajectory_window(cfg.personas[index])))
