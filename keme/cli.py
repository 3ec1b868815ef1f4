"""The `keme` command line."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from keme.errors import KemeError

app = typer.Typer(add_completion=False, no_args_is_help=True, help="MobileMem / KEME: synthesize, check and describe memory benchmarks.")
console = Console()
err = Console(stderr=True)


def _fail(exc: KemeError) -> None:
    err.print("[bold red]error:[/]", escape(str(exc)), highlight=False)
    raise typer.Exit(2)


def _synthesize(config: Path, out: Path, seed: Optional[int], resume: bool, force: bool):
    from keme.config import load_config
    from keme.synth.pipeline import Progress as Hooks
    from keme.synth.pipeline import synthesize

    cfg = load_config(config)
    if seed is not None:
        cfg = cfg.model_copy(update={"seed": seed})
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        tasks: dict[str, int] = {}

        def on_chapter(pid: str, done: int, total: int) -> None:
            if pid not in tasks:
                tasks[pid] = bar.add_task(f"persona {pid}", total=total)
            bar.update(tasks[pid], completed=done)

        def on_persona(pid: str, done: int, total: int) -> None:
            if pid in tasks:
                bar.update(tasks[pid], completed=bar.tasks[tasks[pid]].total)

        started = time.perf_counter()
        manifest = synthesize(cfg, out, resume=resume, force=force, progress=Hooks(on_persona, on_chapter))
    return manifest, time.perf_counter() - started


@app.command()
def synth(
    config: Path = typer.Option(..., "--config", "-c", help="YAML config (see configs/)"),
    out: Path = typer.Option(..., "--out", "-o", help="dataset directory to write"),
    seed: Optional[int] = typer.Option(None, help="override the config's seed"),
    resume: bool = typer.Option(False, help="continue an interrupted run from its checkpoints"),
    force: bool = typer.Option(False, help="replace a dataset made from another config"),
) -> None:
    """Synthesize a dataset (prior, event graph, sessions) into OUT."""
    try:
        manifest, seconds = _synthesize(config, out, seed, resume, force)
    except KemeError as exc:
        _fail(exc)
    stats = manifest.stats
    console.print(
        f"[green]wrote[/] {out}: {stats['personas']} personas, {stats['sessions']} sessions, "
        f"{stats['messages']} messages, {stats['attribute_updates']} attribute updates, "
        f"{stats.get('qa', 0)} QA items in {seconds:.1f}s"
    )


@app.command("validate")
def validate_cmd(dataset: Path = typer.Argument(..., help="dataset directory")) -> None:
    """Check every invariant of DATASET; exit 1 naming each violation."""
    from keme.validate import validate

    violations = validate(dataset)
    for violation in violations:
        typer.echo(f"✗ {violation}")
    if violations:
        console.print(f"[bold red]{len(violations)} violation(s)[/] in {dataset}")
        raise typer.Exit(1)
    console.print(f"[green]✓[/] {dataset}: all invariants hold")


def _stats_table(stats: dict) -> Table:
    table = Table(title="dataset", show_header=False)
    for key, value in stats.items():
        if isinstance(value, dict):
            value = ", ".join(f"{k}: {v}" for k, v in value.items())
        table.add_row(key, str(value))
    return table


@app.command()
def stats(
    dataset: Path = typer.Argument(..., help="dataset directory"),
    as_json: bool = typer.Option(False, "--json", help="print JSON"),
) -> None:
    """Count what DATASET holds."""
    from keme.stats import trajectory_stats
    from keme.validate import load_dataset

    try:
        data = load_dataset(dataset)
    except KemeError as exc:
        _fail(exc)
    numbers = trajectory_stats(data.personas, data.anchors, data.graphs, data.sessions)
    if data.qa:
        from keme.qa.build import qa_stats
        from keme.qa.facts import worlds_from

        worlds = {w.persona.id: w for w in worlds_from(data.personas, data.sessions, data.graphs, data.anchors)}
        numbers |= qa_stats(data.qa, worlds)
    if as_json:
        typer.echo(json.dumps(numbers, ensure_ascii=False, indent=2))
    else:
        console.print(_stats_table(numbers))


@app.command()
def qa(dataset: Path = typer.Argument(..., help="dataset directory made by `keme synth`")) -> None:
    """(Re)build DATASET's question–answer pairs (the QA stage of `keme synth`, run alone)."""
    from keme.qa.build import run_qa_stage

    try:
        report = run_qa_stage(dataset)
    except KemeError as exc:
        _fail(exc)
    selected = sum(report["selected_by_type"].values())
    console.print(f"[green]wrote[/] {dataset / 'qa.jsonl'}: {selected} items from {report['candidates']} candidates")
    console.print("rejected: " + (", ".join(f"{k} {v}" for k, v in report["rejected_by_reason"].items()) or "none"))


@app.command()
def schema(out: Path = typer.Option(..., "--out", "-o", help="directory for the *.schema.json files")) -> None:
    """Export the JSON Schema of every record type."""
    from keme.schema import export_schemas

    for path in export_schemas(out):
        console.print(f"wrote {path}")


@app.command()
def demo(
    config: Path = typer.Option(Path("configs/demo.yaml"), help="demo config"),
    out: Path = typer.Option(Path("out/demo"), help="where the demo dataset goes"),
) -> None:
    """The main job: synthesize the demo dataset, validate it and print its stats."""
    from keme.stats import trajectory_stats
    from keme.validate import load_dataset, validate

    if not config.exists():
        _fail(KemeError(f"{config}: not found; run from the repository root or pass --config"))
    try:
        manifest, seconds = _synthesize(config, out, None, False, True)
    except KemeError as exc:
        _fail(exc)
    console.rule("[bold]MobileMem demo")
    console.print(f"synthesized {out} in {seconds:.1f}s (seed {manifest.seed})")
    violations = validate(out)
    for violation in violations:
        typer.echo(f"✗ {violation}")
    if violations:
        raise typer.Exit(1)
    console.print("[green]✓[/] validation: all invariants hold")
    data = load_dataset(out)
    numbers = trajectory_stats(data.personas, data.anchors, data.graphs, data.sessions)
    numbers |= {k: v for k, v in manifest.stats.items() if k in ("qa", "qa_by_type", "qa_by_hops", "qa_by_format")}
    console.print(_stats_table(numbers))


if __name__ == "__main__":
    app()
