"""Packages depend downward only (README "Architecture", DESIGN.md "Layers").

Every import of every module under keme/, eval/ and baselines/ is read with `ast`, the ones inside
functions included (an import that only dodges a cycle is still a dependency), and each edge between
two packages must point down the layers below.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TREES = ("keme", "eval", "baselines")

# Bottom up; a unit may import the units of lower layers, never those of its own layer or above
# (except PEERS, which form one unit of work: the planner and the brains that drive it).
KEME_LAYERS: list[set[str]] = [
    {"keme", "keme.errors"},  # the package (its version) and the exception root
    {"keme.yamlload"},  # the one YAML reader, bounded and strict
    {"keme.cluster"},  # Ray for distributed runs (--workers): connection, tasks, their errors
    {"keme.days", "keme.seeding"},  # calendars and holidays; seeded random streams
    {"keme.models"},  # the records on disk and the vocabularies (attribute keys, the life catalog)
    {"keme.text"},  # languages: tokens, dates, normalisation, templates and their resources
    {"keme.dataset"},  # the Dataset object: parts, views, loading, the staged commit, paths, locks
    {"keme.stats"},  # statistics of a dataset, which synthesis records in the manifest
    {"keme.llm"},  # the LLM client, its cache and local server
    {"keme.config"},  # the synthesis config schema and its YAML reader
    {"keme.schema"},  # JSON Schema export of the records and the config
    {"keme.world"},  # the catalog of what goes with what, world state, the coherence checker
    {"keme.prior"},  # personas, anchors, people
    {"keme.synth", "keme.brains"},  # the planner and the brains that drive it
    {"keme.omni"},  # screenshots
    {"keme.qa"},  # facts, questions, proofs
    {"keme.validate"},  # whole-dataset checks
    {"keme.hardneg"},  # hard trajectories around existing questions, re-proved by the validator's checks
    {"keme.cli"},  # the commands: may import anything, eval included
]
PEERS = {"keme.synth", "keme.brains"}
RANK = {unit: i for i, layer in enumerate(KEME_LAYERS) for unit in layer}

# eval and baselines sit beside keme's upper layers and reach only its bottom.
EVAL_MAY_IMPORT = {
    "keme",
    "keme.errors",
    "keme.yamlload",
    "keme.cluster",
    "keme.models",
    "keme.text",
    "keme.dataset",
    "keme.llm",
}
BASELINES_MAY_IMPORT = {"keme", "keme.errors", "keme.models", "keme.text", "keme.dataset"}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def unit(module: str) -> str:
    """The package an edge is judged by: keme.<subpackage or module>, or the top package."""
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[0] == "keme" else parts[0]


def imports(path: Path, text: str | None = None) -> list[tuple[str, int]]:
    """Every module `path` imports (absolute, or relative resolved), with its line, at any depth."""
    module = module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = []
    source = path.read_text(encoding="utf-8") if text is None else text
    for node in ast.walk(ast.parse(source, str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append((target, node.lineno))
            for alias in node.names:  # `from pkg import sub` imports the module pkg.sub
                candidate = ROOT.joinpath(*f"{target}.{alias.name}".split("."))
                if candidate.with_suffix(".py").exists() or candidate.is_dir():
                    found.append((f"{target}.{alias.name}", node.lineno))
    return [(name, line) for name, line in found if name.split(".")[0] in TREES]


def edges() -> dict[tuple[str, str], list[str]]:
    """(importing module, imported module) -> where, for every import between two different units."""
    out: dict[tuple[str, str], list[str]] = defaultdict(list)
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            source = module_name(path)
            for target, line in imports(path):
                if unit(source) != unit(target):
                    out[(source, target)].append(f"{path.relative_to(ROOT)}:{line}")
    return out


def allowed(source: str, target: str) -> bool:
    a, b = unit(source), unit(target)
    if a == "eval":
        return b in EVAL_MAY_IMPORT
    if a == "baselines":
        return b in BASELINES_MAY_IMPORT or target in ("eval.contract", "keme.qa.blind")  # no_memory
    if a == "keme.cli":
        return True
    if b in ("eval", "baselines"):
        return False
    return RANK[b] < RANK[a] or {a, b} <= PEERS


def test_every_keme_unit_has_a_layer():
    units = {unit(module_name(p)) for p in (ROOT / "keme").rglob("*.py")}
    assert units - set(RANK) == set(), "give the new keme module a layer in KEME_LAYERS"


def test_every_import_between_packages_points_down():
    wrong = [
        f"{source} -> {target} ({', '.join(where)})"
        for (source, target), where in sorted(edges().items())
        if not allowed(source, target)
    ]
    assert wrong == [], "imports against the layers:\n" + "\n".join(wrong)


def test_the_harness_names_memory_systems_by_string_only():
    assert not any(unit(target) == "baselines" for source, target in edges() if unit(source) == "eval")


def test_the_layer_check_sees_imports_inside_functions():
    probe = ROOT / "keme" / "text" / "probe.py"  # never written: its text is parsed as if it were there
    text = "def late():\n    from keme.synth.state import Trajectory\n    return Trajectory\n"
    assert ("keme.synth.state", 2) in imports(probe, text)
    assert not allowed("keme.text.probe", "keme.synth.state")


def test_the_layer_check_resolves_relative_imports():
    probe = ROOT / "keme" / "text" / "probe.py"
    assert ("keme.models", 1) in imports(probe, "from ..models import Session\n")
    assert not allowed("keme.text.probe", "keme.prior")


def first_party_imports_inside_functions(path: Path) -> list[str]:
    """`module:line` of each import of keme/eval/baselines made inside a function body."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            found += [
                f"{path.relative_to(ROOT)}:{inner.lineno}"
                for inner in ast.walk(node)
                if isinstance(inner, ast.ImportFrom)
                and (inner.level or (inner.module or "").split(".")[0] in TREES)
                or isinstance(inner, ast.Import)
                and any(a.name.split(".")[0] in TREES for a in inner.names)
            ]
    return found


def test_only_the_cli_defers_its_own_imports():
    """A deferred first-party import elsewhere hides a dependency (or a cycle); the CLI defers so that a
    command loads only the stages it runs. Optional third-party extras (playwright, insightface, mcp, ...)
    may still load late anywhere."""
    deferred = [
        where
        for tree in TREES
        for path in sorted((ROOT / tree).rglob("*.py"))
        if path != ROOT / "keme/cli.py"
        for where in first_party_imports_inside_functions(path)
    ]
    assert deferred == []
