"""The id rule and the image-path rule: the only data that may end up in a file name.

Ids (persona, session, message, event, anchor, QA, image) become file and
directory names in memory systems and eval runs, so every id field of the
models uses `Id`: ASCII letters, digits and `_ . : # -`, starting with a letter,
a digit or `_`, at most 128 characters. Such an id cannot name a parent
directory (`..`), the directory itself (`.`), an absolute path, another drive,
a hidden file, and it reads the same everywhere (no lookalike letters).
Importers turn any other source id into a safe one with `safe_id`; the dataset
loader refuses the rest (the message names the id and the reason).

Image paths (`ImageRecord.path`, `Message.images`) use `ImagePath`: a relative
POSIX path under `images/` whose every segment follows the id rule.
"""

from __future__ import annotations

import hashlib
import re
from typing import Annotated

from pydantic import AfterValidator, WithJsonSchema

ID_MAX = 128
ID_CHARS = "ASCII letters, digits and _ . : # -"
ID_PATTERN = r"^[A-Za-z0-9_][A-Za-z0-9_.:#-]{0,127}$"
IMAGE_DIR = "images"
IMAGE_PATH_PATTERN = r"^images(/[A-Za-z0-9_][A-Za-z0-9_.:#-]{0,127})+$"

_ID = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:#-]*")
_BAD_CHAR = re.compile(r"[^A-Za-z0-9_.:#-]")
_SLUG_DROP = re.compile(r"[^A-Za-z0-9_.-]+")


def _show(value: str) -> str:
    """The value as the user should see it in a message: repr (NUL, surrogates visible), cut when very
    long."""
    text = repr(value)
    return text if len(text) <= 60 else f"{text[:50]}...' ({len(value)} characters)"


def _describe(char: str) -> str:
    if char == "\x00":
        return "a NUL byte"
    if char in "/\\":
        return f"a path separator {char!r}"
    if not char.isascii():
        return f"the non-ASCII character {char!r} (U+{ord(char):04X})"
    if not char.isprintable() or char.isspace():
        return f"the character {char!r}"
    return f"{char!r}"


def id_problem(value: object) -> str | None:
    """Why `value` is not a safe id, or None when it is."""
    if not isinstance(value, str):
        return f"is a {type(value).__name__}, not a string"
    if not value:
        return "is empty"
    if len(value) > ID_MAX:
        return f"is {len(value)} characters long (at most {ID_MAX})"
    bad = _BAD_CHAR.search(value)
    if bad:
        return f"contains {_describe(bad.group())}"
    if not _ID.fullmatch(value):
        return f"starts with {value[0]!r}"
    return None


def is_safe_id(value: object) -> bool:
    return id_problem(value) is None


def check_id(value: str) -> str:
    problem = id_problem(value)
    if problem is not None:
        raise ValueError(
            f"id {_show(value)} {problem}; an id may hold only {ID_CHARS}, must start with a letter, "
            f"digit or _ and have at most {ID_MAX} characters (ids become file names)"
        )
    return value


def relative_file_problem(value: object) -> str | None:
    """Why `value` is not a plain relative file path inside a dataset ('qa.jsonl',
    'images/p01-img001.png')."""
    if not isinstance(value, str):
        return f"is a {type(value).__name__}, not a string"
    if "\\" in value:
        return "contains a backslash (use '/')"
    for segment in value.split("/"):
        problem = id_problem(segment)
        if problem is not None:
            return f"has a segment {_show(segment)} that {problem}"
    return None


def image_path_problem(value: object) -> str | None:
    """Why `value` is not a relative path under images/, or None when it is."""
    if isinstance(value, str) and "\\" not in value and not value.startswith(IMAGE_DIR + "/"):
        return f"is not under {IMAGE_DIR}/"
    return relative_file_problem(value)


def check_image_path(value: str) -> str:
    problem = image_path_problem(value)
    if problem is not None:
        raise ValueError(
            f"image path {_show(value)} {problem}; image paths are relative to the dataset, under "
            f"{IMAGE_DIR}/, each segment {ID_CHARS}, not starting with '.'"
        )
    return value


Id = Annotated[
    str,
    AfterValidator(check_id),
    WithJsonSchema({"type": "string", "pattern": ID_PATTERN, "maxLength": ID_MAX}),
]
ImagePath = Annotated[
    str, AfterValidator(check_image_path), WithJsonSchema({"type": "string", "pattern": IMAGE_PATH_PATTERN})
]


def digest(text: str, length: int = 12) -> str:
    """A short hex SHA-256 of any text (lone surrogates included)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:length]


def safe_id(raw: str, max_slug: int = 40) -> str:
    """`raw` itself when it is a safe id; otherwise a readable slug of it plus a hash of the original.

    Deterministic (the same source id always maps to the same id) and, by the
    hash, distinct for distinct source ids; at most max_slug + 13 characters.
    """
    if is_safe_id(raw) and len(raw) <= max_slug + 13:
        return raw
    slug = _SLUG_DROP.sub("_", raw.encode("ascii", "ignore").decode()).lstrip("._-")[:max_slug].rstrip("._-")
    return f"{slug or 'id'}-{digest(raw)}"
