"""A part of a dataset: one JSONL file of one record model, declared once as an attribute of `Dataset`.

    personas = Part("personas.jsonl", Persona)

is the whole declaration: loading, writing, the manifest entry, the hash checks and the
content hash all go through `PARTS`, so a new part (claims, schedules) is one such line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Generic, TypeVar, overload

from pydantic import BaseModel

if TYPE_CHECKING:
    from keme.dataset.dataset import Dataset

M = TypeVar("M", bound=BaseModel)


class Part(Generic[M]):
    """On the class, the declaration (file name, model); on a dataset, its records (assign to replace
    them)."""

    def __init__(self, file: str, model: type[M]) -> None:
        self.file = file
        self.model = model
        self.name = file.removesuffix(".jsonl")

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, dataset: None, owner: type) -> Part[M]: ...

    @overload
    def __get__(self, dataset: Dataset, owner: type) -> list[M]: ...

    def __get__(self, dataset: Dataset | None, owner: type) -> Part[M] | list[M]:
        if dataset is None:
            return self
        return dataset.records(self)

    def __set__(self, dataset: Dataset, records: list[M]) -> None:
        dataset.replace(self, records)

    def __repr__(self) -> str:
        return f"Part({self.file!r}, {self.model.__name__})"


def parts_of(cls: type) -> tuple[Part[Any], ...]:
    """The parts a class declares, in declaration order (the order of the files in every listing and hash)."""
    return tuple(value for value in vars(cls).values() if isinstance(value, Part))
