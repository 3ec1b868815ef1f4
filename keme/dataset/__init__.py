"""The dataset: one object holding every part (keme.dataset.dataset), per-persona views, the directory on disk
(atomic JSONL files, a manifest of hashes, one commit per command, a lock per directory) and readers with
precise errors."""

from keme.dataset.dataset import PART_FILES, PARTS, Dataset, Scan
from keme.dataset.parts import Part
from keme.dataset.problems import DatasetError, Violation
from keme.dataset.views import PersonaView

__all__ = ["PARTS", "PART_FILES", "Dataset", "DatasetError", "Part", "PersonaView", "Scan", "Violation"]
