"""One exception tree: every exception class keme, eval and baselines define is a KemeError.

A command meets only these and the builtins; `keme.cli.main` prints a KemeError as a message, so a
class outside the tree would reach the user as an "internal error" instead of what to fix.
"""

from __future__ import annotations

import ast
import importlib
import inspect
from pathlib import Path

import pytest

from keme.errors import KemeError, NoFit, SynthesisError

ROOT = Path(__file__).resolve().parents[1]


def modules_with_classes() -> list[str]:
    found = []
    for tree in ("keme", "eval", "baselines"):
        for path in sorted((ROOT / tree).rglob("*.py")):
            nodes = ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if any(isinstance(node, ast.ClassDef) and node.bases for node in nodes):
                parts = list(path.relative_to(ROOT).with_suffix("").parts)
                found.append(".".join(parts[:-1] if parts[-1] == "__init__" else parts))
    return found


def exception_classes() -> list[type[BaseException]]:
    classes = []
    for name in modules_with_classes():
        module = importlib.import_module(name)
        classes += [
            obj
            for obj in vars(module).values()
            if inspect.isclass(obj) and obj.__module__ == name and issubclass(obj, BaseException)
        ]
    return classes


def test_the_walk_finds_the_exception_classes():
    names = {cls.__name__ for cls in exception_classes()}
    assert {
        "ResourceError",
        "TemplateError",
        "ProofError",
        "PhrasingError",
        "RealizationError",
        "NoRoom",
        "DatasetError",
        "RunError",
        "StorageError",
        "LLMError",
    } <= names


def test_every_exception_class_is_a_kemeerror():
    outside = [
        f"{cls.__module__}.{cls.__qualname__}"
        for cls in exception_classes()
        if not issubclass(cls, KemeError)
    ]
    assert outside == [], (
        "derive these from keme.errors.KemeError (keep a builtin as a second base if callers catch it)"
    )


@pytest.mark.parametrize(
    "name, builtin",
    [
        ("keme.text.resources:ResourceError", ValueError),
        ("keme.text.template:TemplateError", ValueError),
        ("keme.qa.verify:ProofError", ValueError),
        ("keme.text.fill:PhrasingError", KeyError),
        ("keme.synth.realizer:RealizationError", RuntimeError),
        ("keme.synth.moments:NoRoom", RuntimeError),
    ],
)
def test_an_error_keeps_the_builtin_its_callers_catch(name, builtin):
    module, _, attr = name.partition(":")
    cls = getattr(importlib.import_module(module), attr)
    assert issubclass(cls, KemeError) and issubclass(cls, builtin)


def test_a_planning_misfit_is_a_synthesis_error():
    assert issubclass(NoFit, SynthesisError) and issubclass(NoFit, RuntimeError)


def test_a_phrasing_error_reads_as_written():
    from keme.text.fill import PhrasingError, fill

    with pytest.raises(PhrasingError) as caught:
        fill("At {merchant}?", {})
    assert (
        str(caught.value)
        == "template 'At {merchant}?' uses slot {merchant}, which this question does not provide"
    )
