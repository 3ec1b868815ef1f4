"""`keme export hf`: a keme dataset as a Hugging Face dataset directory (Parquet tables and a dataset card).

The directory an export writes (every table one config of the card, with one split, `test`):

    README.md                            the dataset card: YAML header the Hub reads, sizes, schema
    keme_manifest.json                   the source dataset's manifest, byte for byte (hash in the card)
    keme_export.json                     what was exported; marks a directory `--force` may replace
    data/test-00000-of-00001.parquet     qa, the default config
    <folder>/test-00000-of-00001.parquet sessions, messages, claims, personas, image_records (`images`)
    images/...                           the screenshot files, at the paths the tables name

Why qa sits in data/: `datasets` resolves a `data_dir` by trying `data/{split}-NNNNN-of-NNNNN.*` first,
so `load_dataset("parquet", data_dir=DIR)` reads that one table instead of merging every table (whose
schemas differ) into one split and failing. `load_dataset("parquet", data_dir=DIR/<folder>)` reads one
table (its file name gives the split), and `load_dataset(DIR, "<table>")` reads the card's configs. The
image table has a folder of its own so that a screenshot named like a split (`images/test-1.png`) is
never read as Parquet.

Bytes are deterministic: rows sorted, fixed writer options, no time in any metadata, so the same dataset
(and pyarrow version) gives the same files.
"""

from __future__ import annotations

import hashlib
import io
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Any, NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from pydantic_core import to_jsonable_python

from eval.importers.export_io import refuse_oversized
from keme.dataset import Dataset
from keme.dataset.io import atomic_write_bytes, dump_json, read_bytes
from keme.dataset.lock import target_lock
from keme.dataset.manifest import MANIFEST, Manifest, manifest_bytes
from keme.dataset.paths import PathEscape, file_problem, inside
from keme.dataset.staging import Made
from keme.errors import KemeError
from keme.models import Message, Session

SPLIT = "test"  # an evaluation benchmark: nothing in it is training data
SHARD = f"{SPLIT}-00000-of-00001.parquet"
MARKER = "keme_export.json"
SOURCE_MANIFEST = "keme_manifest.json"
DEFAULT_LICENSE = "apache-2.0"  # the project's (pyproject.toml), in the Hub's spelling
# fixed writer options: every option that changes bytes is named, so a pyarrow default change does not
WRITER: dict[str, Any] = {
    "version": "2.6",
    "data_page_version": "1.0",
    "compression": "zstd",
    "compression_level": 9,
    "use_dictionary": True,
    "write_statistics": True,
    "row_group_size": 1_000_000,
    "store_schema": True,
    "write_page_index": False,
    "write_page_checksum": False,
}

STRING = pa.string()
STRINGS = pa.list_(pa.string())
TIME = pa.timestamp("us")  # keme times are local wall-clock times, without a time zone
INT = pa.int64()
BOOL = pa.bool_()
SPEC = pa.struct(
    [
        ("kind", STRING),
        ("value", STRING),
        ("aliases", STRINGS),
        ("items", STRINGS),
        ("ordered", BOOL),
        ("unit", STRING),
        ("tolerance", pa.float64()),
        ("option_value", STRING),
        ("cover", INT),
    ]
)


# ---------------------------------------------------------------- the tables


@dataclass(frozen=True)
class Column:
    """One column: its Arrow type, what it means (for the card) and how a row gives its value."""

    name: str
    type: pa.DataType
    meaning: str
    get: Callable[[Any], Any]
    json: bool = False  # a JSON string of a nested or polymorphic field


@dataclass(frozen=True)
class Table:
    """One table: a config of the card, one Parquet file in `folder`."""

    name: str
    folder: str
    meaning: str
    rows: Callable[[Dataset], list[Any]]
    columns: tuple[Column, ...]

    @property
    def file(self) -> str:
        return f"{self.folder}/{SHARD}"


class MessageRow(NamedTuple):
    session: Session
    position: int
    message: Message


def _col(name: str, type_: pa.DataType, meaning: str, get: Callable[[Any], Any] | None = None) -> Column:
    return Column(name, type_, meaning, get or attrgetter(name))


def _json_col(name: str, meaning: str) -> Column:
    return Column(name, STRING, meaning, lambda row: _json(getattr(row, name)), json=True)


def _json(value: Any) -> str:
    """Canonical compact JSON of a field as keme writes it (nested models through their own serializers)."""
    return json.dumps(to_jsonable_python(value), ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def _by_id(records: list[Any]) -> list[Any]:
    return sorted(records, key=attrgetter("id"))


def _message_rows(data: Dataset) -> list[MessageRow]:
    """Every message with its session and place in it, in session order then dialogue order."""
    rows = [
        MessageRow(session, position, message)
        for session in data.sessions
        for position, message in enumerate(session.messages)
    ]
    return sorted(rows, key=lambda row: (row.session.id, row.position))


def _of_message(name: str) -> Callable[[MessageRow], Any]:
    return lambda row: getattr(row.message, name)


SESSIONS = Table(
    "sessions",
    "sessions",
    "one conversation between the persona and the assistant (its messages are in `messages`)",
    lambda data: _by_id(data.sessions),
    (
        _col("id", STRING, "session id"),
        _col("persona_id", STRING, "the persona (user) the session belongs to"),
        _col("language", STRING, "en or zh"),
        _col("start", TIME, "when the session starts (local time)"),
        _col("end", TIME, "when it ends (local time)"),
        _col("event_id", STRING, "the event of the persona's life the session talks about"),
        _col("anchor_id", STRING, "the app record (anchor) the session is about, if any"),
        _col("pattern", STRING, "dialogue pattern the realizer used"),
        _col("author", STRING, "which brain wrote the dialogue: procedural or llm"),
        _col(
            "filler",
            BOOL,
            "a haystack session (haystack.tokens): an everyday chat that states nothing about the persona",
        ),
        _col("message_ids", STRINGS, "ids of its messages, in order", lambda s: [m.id for m in s.messages]),
    ),
)

MESSAGES = Table(
    "messages",
    "messages",
    "one turn of a session: what a memory system replays",
    _message_rows,
    (
        _col("id", STRING, "message id (what `qa.evidence` names)", _of_message("id")),
        _col("session_id", STRING, "its session", lambda row: row.session.id),
        _col("persona_id", STRING, "its persona", lambda row: row.session.persona_id),
        _col("position", INT, "its place in the session, from 0", attrgetter("position")),
        _col("role", STRING, "user, assistant or system (an app's record)", _of_message("role")),
        _col("app", STRING, "the app that reported a system message", _of_message("app")),
        _col("speaker", STRING, "speaker name in imported human-human dialogues", _of_message("speaker")),
        _col("content", STRING, "the text", _of_message("content")),
        _col("timestamp", TIME, "when it was sent (local time)", _of_message("timestamp")),
        _col("images", STRINGS, "paths (under images/) of the screenshots it shares", _of_message("images")),
        _col("captions", STRINGS, "one caption per image, for text-only systems", _of_message("captions")),
        _col("claims", STRINGS, "ids of the claims it states (`claims` table)", _of_message("claims")),
        _col("smalltalk", BOOL, "asserts nothing about the persona's world", _of_message("smalltalk")),
    ),
)

QA = Table(
    "qa",
    "data",
    "one question, its gold answer, the messages that support it and a machine-checkable proof",
    lambda data: _by_id(data.qa),
    (
        _col("id", STRING, "question id"),
        _col("persona_id", STRING, "the persona whose history it asks about"),
        _col("language", STRING, "en or zh"),
        _col("type", STRING, "question type, e.g. single_hop, temporal_reasoning, abstention"),
        _col("subtype", STRING, "the generator, e.g. knowledge_update.previous"),
        _col("question", STRING, "the question as asked"),
        _col("answer", STRING, "the gold answer"),
        _col(
            "spec",
            SPEC,
            "what a correct answer must contain, for rule judging",
            lambda q: q.spec.model_dump(),
        ),
        _col("format", STRING, "open, single_choice or multiple_choice"),
        _col("options", STRINGS, "choices shown with the question, labelled A, B, ..."),
        _col("asked_at", TIME, "when the question is asked (local time); later messages are not evidence"),
        _col("evidence", STRINGS, "a minimal set of message ids that support the answer"),
        _col("evidence_sessions", STRINGS, "the sessions of those messages"),
        _json_col("also_supported_by", "evidence message id -> other message ids that state the same claims"),
        _col("claims", STRINGS, "ids of the claims the answer rests on"),
        _col("hops", INT, "reasoning steps"),
        _col("difficulty", STRING, "easy, medium or hard"),
        _col("sub_questions", STRINGS, "ids of the questions this one is composed of"),
        _col("node", STRING, "event graph node where the item was composed"),
        _json_col("proof", "how the answer follows from the messages: {op, quotes, args}, args per op"),
        _json_col("queries", "what the question asks in claim-ledger terms (keme.models.qa.Query)"),
        _col("source_question_id", STRING, "a hard-negative item: the question it was made around"),
        _col("distractor_kinds", STRINGS, "a hard-negative item: kinds of the distractor sessions"),
        _col(
            "flags",
            STRINGS,
            "an imported item's source findings ('kind: detail'): the benchmark's own label defects; "
            "keme eval leaves flagged items out of the scores unless --include-flagged",
        ),
    ),
)

CLAIMS = Table(
    "claims",
    "claims",
    "one statement about the persona's world, as said in one message (the ledger the proofs rest on)",
    lambda data: _by_id(data.claims),
    (
        _col("id", STRING, "claim id: `<message id>-c<k>`"),
        _col("persona_id", STRING, "its persona"),
        _col("message_id", STRING, "the message that states it"),
        _col("speaker", STRING, "user, assistant or app"),
        _col(
            "subject",
            STRING,
            "what it is about: `persona`, `event:<id>`, `anchor:<id>`, `person:<name>`, ...",
        ),
        _col("predicate", STRING, "what is said about it: an attribute key or a registered predicate"),
        _col("value", STRING, "the canonical value: plain digits, ISO dates, names as said"),
        _col("valid_from", TIME, "from when it holds (local time)"),
        _col("valid_to", TIME, "until when; null: until a later claim changes it"),
        _col("said", STRING, "the text of the message that states it"),
    ),
)

IMAGES = Table(
    "images",
    "image_records",
    "one screenshot shared in a session (the file is at `path`, relative to the export)",
    lambda data: _by_id(data.images),
    (
        _col("id", STRING, "image id"),
        _col("persona_id", STRING, "its persona"),
        _col("session_id", STRING, "the session it is shared in"),
        _col("message_id", STRING, "the user message that shares it"),
        _col("path", STRING, "the PNG, relative to the export directory (images/...)"),
        _col("sha256", STRING, "SHA-256 of the PNG"),
        _col("template", STRING, "the app screen it shows, e.g. train_ticket"),
        _col("language", STRING, "en or zh"),
        _col("width", INT, "pixels"),
        _col("height", INT, "pixels"),
        _col("caption", STRING, "what a captioning model would say; no small details"),
        _json_col("about", "what the screenshot is about (key -> text), for phrasing questions"),
        _json_col("facts", "data-fact name -> text read back from the rendered page"),
        _col("dom_text", STRING, "all visible text of the rendered page"),
        _json_col("screen", "the template's input, to re-render the image"),
    ),
)

PERSONAS = Table(
    "personas",
    "personas",
    "one simulated user, with the versioned attributes the questions ask about",
    lambda data: _by_id(data.personas),
    (
        _col("id", STRING, "persona id"),
        _col("name", STRING, "the persona's name"),
        _col("language", STRING, "en or zh"),
        _col("country", STRING, "where the persona lives"),
        _col("start", TIME, "first day of the trajectory"),
        _col("end", TIME, "last day of the trajectory"),
        _json_col(
            "dimensions",
            "dimension -> attribute -> {key, mutable, versions: [{value, valid_from, evidence}]}",
        ),
        _json_col(
            "habits",
            "what she does most of the time: usual payment method, usual chat block, regular places, "
            "with their shares (null for an imported persona)",
        ),
        _json_col("source", "an imported persona: its source record's fields keme has no model for"),
    ),
)

TABLES: tuple[Table, ...] = (QA, SESSIONS, MESSAGES, CLAIMS, IMAGES, PERSONAS)
# keme parts an export leaves out: synthesis internals that no question, answer or replay reads
NOT_EXPORTED = {
    "anchors.jsonl": "the app records sessions were realized from (their text is in the messages)",
    "graphs.jsonl": "the event graphs the planner built (sessions keep their event_id)",
    "schedule.jsonl": "where the persona was, hour by hour (the claims keep what the text states)",
}


# ---------------------------------------------------------------- Parquet


@dataclass(frozen=True)
class Written:
    """A table as exported: its rows in Arrow and the Parquet bytes of them."""

    table: Table
    arrow: pa.Table
    parquet: bytes

    @property
    def rows(self) -> int:
        return self.arrow.num_rows


def arrow_table(table: Table, data: Dataset) -> pa.Table:
    """`table`'s rows of `data` as an Arrow table with the declared schema."""
    rows = table.rows(data)
    schema = pa.schema([pa.field(c.name, c.type) for c in table.columns])
    arrays = [pa.array([_checked(c, row) for row in rows], type=c.type) for c in table.columns]
    return pa.Table.from_arrays(arrays, schema=schema)


def _checked(column: Column, row: Any) -> Any:
    """A row's value; a time with a time zone is refused (Arrow would silently shift it to UTC)."""
    value = column.get(row)
    if column.type == TIME and value is not None and value.tzinfo is not None:
        raise KemeError(
            f"{column.name} {value.isoformat()}: a time with a time zone; keme datasets keep local times "
            "without one (re-create the dataset)"
        )
    return value


def parquet_bytes(table: pa.Table) -> bytes:
    """The table as Parquet with the fixed writer options: the same table always gives the same bytes."""
    sink = io.BytesIO()
    pq.write_table(table, sink, **WRITER)
    return sink.getvalue()


def written_tables(data: Dataset) -> list[Written]:
    """The tables to write, in TABLES order: those with rows (`datasets` fails on an empty Parquet file).

    A dataset without questions is refused: they are the default config, what `data_dir=DIR` loads.
    """
    out = []
    for table in TABLES:
        arrow = arrow_table(table, data)
        if arrow.num_rows:
            out.append(Written(table, arrow, parquet_bytes(arrow)))
    if not out or out[0].table is not QA:
        raise KemeError(
            f"{data.root}: the dataset has no questions, so there is no benchmark to export; "
            f"build them first (`keme qa {data.root}`)"
        )
    return out


# ---------------------------------------------------------------- the card


def license_of(manifest: Manifest) -> str:
    """The manifest's own license (config or stats `license`), else the project's."""
    for where in (manifest.config or {}, manifest.stats):
        if isinstance(where.get("license"), str) and where["license"].strip():
            return where["license"].strip().lower()
    return DEFAULT_LICENSE


def size_category(rows: int) -> str:
    """The Hub's size bucket, by the rows of the largest table."""
    for limit, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K")):
        if rows < limit:
            return label
    return "100K<n<1M" if rows < 1_000_000 else "n>1M"


def card_header(data: Dataset, written: list[Written]) -> dict[str, Any]:
    """The YAML header the Hub reads: license, languages, sizes, and one config per table written.

    `dataset_info` gives each split's rows, which `load_dataset(DIR, table)` checks against what it read.
    """
    languages = sorted({p.language for p in data.personas} | {s.language for s in data.sessions})
    return {
        "license": license_of(data.manifest),
        "language": languages,
        "pretty_name": f"{data.manifest.name} (KEME long-term memory benchmark)",
        "size_categories": [size_category(max(w.rows for w in written))],
        "task_categories": ["question-answering"],
        "tags": ["long-term-memory", "conversational-memory", "personal-assistant", "keme"]
        + (["synthetic"] if data.manifest.source == "keme-synth" else []),
        "configs": [_config(w.table) for w in written],
        "dataset_info": [_info(w) for w in written],
    }


def _config(table: Table) -> dict[str, Any]:
    default = {"default": True} if table is QA else {}
    return {"config_name": table.name, **default, "data_files": [{"split": SPLIT, "path": table.file}]}


def _info(written: Written) -> dict[str, Any]:
    """A config's sizes as the Hub spells them (num_bytes: in memory, as `datasets` counts it)."""
    nbytes = written.arrow.nbytes
    return {
        "config_name": written.table.name,
        "splits": [{"name": SPLIT, "num_bytes": nbytes, "num_examples": written.rows}],
        "download_size": len(written.parquet),
        "dataset_size": nbytes,
    }


def _type_label(column: Column) -> str:
    if column.json:
        return "string (JSON)"
    if pa.types.is_list(column.type):
        return f"list<{column.type.value_type}>"
    if pa.types.is_struct(column.type):
        return "struct<" + ", ".join(f.name for f in column.type) + ">"
    return str(column.type)


def _md_table(header: list[str], rows: list[list[Any]]) -> list[str]:
    def line(cells: list[Any]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"

    return [line(header), line(["---"] * len(header)), *(line(r) for r in rows)]


def _sizes(data: Dataset, written: list[Written]) -> list[str]:
    """Rows per table, per language and per question type."""
    language_of = {m.id: s.language for s in data.sessions for m in s.messages}
    per_language = {
        "qa": Counter(q.language for q in data.qa),
        "sessions": Counter(s.language for s in data.sessions),
        "messages": Counter(s.language for s in data.sessions for _ in s.messages),
        "claims": Counter(language_of.get(c.message_id, "?") for c in data.claims),
        "images": Counter(i.language for i in data.images),
        "personas": Counter(p.language for p in data.personas),
    }
    languages = sorted({lang for counter in per_language.values() for lang in counter})
    types = Counter((q.type, q.language) for q in data.qa)
    kinds = sorted({kind for kind, _ in types})
    return [
        "## Sizes",
        "",
        *_md_table(["table", "rows"], [[w.table.name, w.rows] for w in written]),
        "",
        "Rows per language:",
        "",
        *_md_table(
            ["table", *languages], [[t, *(c[lang] for lang in languages)] for t, c in per_language.items()]
        ),
        "",
        "Questions per type:",
        "",
        *_md_table(
            ["type", *languages, "total"],
            [
                [k, *(types[k, lang] for lang in languages), sum(types[k, lang] for lang in languages)]
                for k in kinds
            ],
        ),
        "",
    ]


def _schema(written: list[Written]) -> list[str]:
    """Every column of every table written; JSON columns are named as such."""
    lines = [
        "## Schema",
        "",
        "Lists of ids and the answer spec are Arrow lists and structs; the fields that are deeply nested or "
        "differ from row to row (`qa.proof`, `qa.queries`, `qa.also_supported_by`, `images.about`, "
        "`images.facts`, `images.screen`, `personas.dimensions`, `personas.habits`) are JSON strings: "
        "`json.loads` gives the keme record's field back.",
        "",
    ]
    for table in (w.table for w in written):
        rows = [[f"`{c.name}`", f"`{_type_label(c)}`", c.meaning] for c in table.columns]
        lines += [f"### `{table.name}` ({table.file})", "", f"One row: {table.meaning}.", ""]
        lines += [*_md_table(["column", "type", "meaning"], rows), ""]
    empty = [f"`{t.name}`" for t in TABLES if t not in {w.table for w in written}]
    if empty:
        lines += [f"Not written, having no rows: {', '.join(empty)}.", ""]
    return lines


def _provenance(data: Dataset, hashes: dict[str, str]) -> list[str]:
    """How the dataset was made (the manifest) and the hashes that identify it."""
    manifest = data.manifest
    facts = [
        ["name", manifest.name],
        ["source", manifest.source],
        ["generator", f"{manifest.generator} {manifest.generator_version}"],
        ["schema version", manifest.schema_version],
        ["seed", manifest.seed if manifest.seed is not None else "-"],
        ["config fingerprint", manifest.config_fingerprint or "-"],
        ["stages", ", ".join(sorted(manifest.stages)) or "-"],
        ["manifest SHA-256", f"`{hashes['manifest_sha256']}`"],
        ["content SHA-256", f"`{hashes['content_sha256']}`"],
    ]
    lines = [
        "## How it was generated",
        "",
        *_md_table(["field", "value"], facts),
        "",
        f"`{SOURCE_MANIFEST}` is the source dataset's `manifest.json`, byte for byte: its SHA-256 is the "
        "manifest SHA-256 above, and it lists the SHA-256 of every file of the source dataset (what "
        "`keme validate` checks). The content SHA-256 is keme's hash over the manifest and every record "
        "file (`Dataset.content_sha256`): the same name with other content is another dataset.",
        "",
    ]
    if manifest.source != "keme-synth":
        lines += [
            f"Imported from `{manifest.source}`: the original benchmark's license governs its text; "
            "check it before publishing.",
            "",
        ]
    if manifest.config is not None:
        config = yaml.safe_dump(manifest.config, sort_keys=True, allow_unicode=True).rstrip()
        lines += ["The synthesis config:", "", "```yaml", config, "```", ""]
    lines += [
        "Not exported (synthesis internals that no question, answer or replay reads): "
        + "; ".join(f"`{name}`, {why}" for name, why in NOT_EXPORTED.items())
        + ".",
        "",
    ]
    return lines


LOADING = """## How to load

```python
from datasets import load_dataset

qa = load_dataset("DIR", "qa", split="test")              # a table by name, through this card's configs:
messages = load_dataset("DIR", "messages", split="test")  # qa (the default), sessions, messages, claims,
                                                          # images, personas
qa = load_dataset("parquet", data_dir="DIR", split="test")                     # data/: the qa table
sessions = load_dataset("parquet", data_dir="DIR/sessions", split="test")      # a table by its folder
images = load_dataset("parquet", data_dir="DIR/image_records", split="test")   # the images table
```

DIR is this directory (or the Hub repository's name, in the first two calls). Each table is one config
with one split, `test`. `load_dataset("parquet", data_dir=...)` does not read this card: given this
directory it reads `data/`, the questions; given a table's folder, that table. Times are local
wall-clock times without a time zone. A screenshot's file is `images.path`, relative to this directory.
The ids join the tables: `qa.evidence` and `images.message_id` -> `messages.id`, `qa.evidence_sessions`
and `messages.session_id` -> `sessions.id`, `qa.claims` and `messages.claims` -> `claims.id`.
"""


def card(data: Dataset, written: list[Written], hashes: dict[str, str]) -> str:
    """README.md: the YAML header, then sizes, schema, provenance and how to load it."""
    header = yaml.safe_dump(card_header(data, written), sort_keys=False, allow_unicode=True)
    intro = (
        "A long-term-memory benchmark for personal AI assistants, made with KEME (MobileMem): simulated "
        "users talk to their assistant over months; each question asks about what was said, with the "
        "messages that support its answer and a machine-checkable proof."
    )
    body = [
        f"# {data.manifest.name}",
        "",
        intro,
        "",
        *_sizes(data, written),
        *_schema(written),
        *_provenance(data, hashes),
        LOADING,
    ]
    return f"---\n{header}---\n\n" + "\n".join(body)


# ---------------------------------------------------------------- writing


def _refusal(data: Dataset, out: Path, force: bool) -> str | None:
    """Why the export may not be written to `out`, or None."""
    if data.root is not None:
        root, target = data.root.resolve(), out.resolve()
        if target == root or root in target.parents:
            return f"--out {out} is inside the dataset {data.root}; write the export elsewhere"
        if target in root.parents:
            return f"--out {out} contains the dataset {data.root}; write the export elsewhere"
    if out.is_symlink():
        return f"--out {out} is a symbolic link; name the directory itself (the export replaces it whole)"
    if out.exists() and not out.is_dir():
        return f"--out {out} exists and is not a directory; choose a directory for the export"
    if not out.is_dir() or not any(out.iterdir()):
        return None
    if not (out / MARKER).is_file():
        return (
            f"--out {out} is not empty and holds no keme export (no {MARKER}); refusing to replace it "
            "(choose a new or empty directory)"
        )
    if not force:
        return f"--out {out} already holds an export; pass --force to replace it, or choose another --out"
    return None


def _image_paths(data: Dataset) -> list[str]:
    """Every screenshot the tables name."""
    named = {i.path for i in data.images} | {p for s in data.sessions for m in s.messages for p in m.images}
    return sorted(named)


def _image_bytes(data: Dataset, path: str) -> bytes:
    blob = data.blobs.get(path)
    if isinstance(blob, bytes):
        return blob
    problem = "missing" if data.root is None else file_problem(data.root, path)
    if problem is not None:  # the check `keme validate` makes, with --no-verify too
        raise KemeError(
            f"{data.root}: {path} is named by the dataset but {problem}; run `keme validate {data.root}` "
            "and restore it (or re-render the dataset)"
        )
    return read_bytes(inside(data.root, path))


def export_files(data: Dataset) -> tuple[dict[str, bytes], dict[str, int]]:
    """Every file of the export but the screenshots, by path (tables, card, manifest copy, marker), and
    the rows of each table written."""
    written = written_tables(data)
    counts = {w.table.name: w.rows for w in written}
    # the manifest as it is on disk (its hash is the one the dataset was verified against)
    raw = read_bytes(data.root / MANIFEST) if data.root is not None else manifest_bytes(data.manifest)
    hashes = {"manifest_sha256": hashlib.sha256(raw).hexdigest(), "content_sha256": data.content_sha256()}
    marker = {"format": "keme-hf", "dataset": data.manifest.name, "tables": counts, **hashes}
    files = {
        **{w.table.file: w.parquet for w in written},
        "README.md": card(data, written, hashes).encode("utf-8"),
        SOURCE_MANIFEST: raw,
        MARKER: dump_json(marker).encode("utf-8"),
    }
    return files, counts


def export_hf(data: Dataset, out: Path, force: bool = False) -> dict[str, Any]:
    """Write `data` as a Hugging Face dataset directory at `out` (see the module docstring).

    Everything is written to a hidden directory beside `out` and renamed into place, so a killed export
    leaves no half-written `out`. Refused: an `out` inside the dataset or containing it, a file, a
    non-empty directory that is not an earlier export, and an earlier export without `force`.
    Returns the rows of each table written and the number of screenshots copied.
    """
    with target_lock(out, "keme export hf"):
        problem = _refusal(data, out, force)
        if problem is not None:
            raise KemeError(problem)
        refuse_oversized(data)
        files, counts = export_files(data)
        images = _image_paths(data)
        made = Made()
        try:
            staged = made.directory(out.parent, f"{out.name}.partial")
            for name, content in sorted(files.items()):
                atomic_write_bytes(staged / name, content)
            for path in images:
                atomic_write_bytes(inside(staged, path), _image_bytes(data, path))
            made.swap_in(staged, out)
        except PathEscape as exc:
            raise KemeError(f"{data.root}: {exc}; run `keme validate {data.root}`") from exc
        except OSError as exc:
            raise KemeError(
                f"--out {out}: cannot write the export ({exc.strerror or exc}); nothing was changed there "
                "(check the disk and the permissions, then run the command again)"
            ) from exc
        finally:
            made.cleanup()
    return {"tables": counts, "images": len(images)}
