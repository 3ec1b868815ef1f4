"""`keme view`: a static site of a dataset and its runs that opens from file:// with no server and no network.

Data files are scripts (`KEME.put(name, {...})`) because a page opened from file:// may not fetch() a JSON
file; the site loads each one when a page needs it. Every file is written by us under names we choose
(positions, not ids); screenshots are copied from inside the dataset only, and renamed.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any

from eval.view.data import Run, build
from keme.dataset.dataset import Dataset
from keme.dataset.lock import target_lock
from keme.dataset.paths import file_problem, inside
from keme.dataset.staging import Made
from keme.errors import KemeError

STATIC = ("index.html", "app.js", "style.css")


@dataclass(frozen=True)
class SiteStats:
    personas: int
    questions: int
    runs: int
    files: int
    bytes: int
    images: int


def script(name: str, data: Any) -> str:
    """A data file: JSON inside a call. `<`, `>`, `&` and the line separators are escaped in the JSON, so the
    text can hold `</script>` or `<!--` and still be only data."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    for raw, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(raw, escaped)
    return f"KEME.put({json.dumps(name)},{text});\n"


def _copy_images(dataset: Dataset, out: Path) -> dict[str, str]:
    """Screenshots copied to images/<n>.png; dataset path -> site path. A path that leaves the dataset, a
    file that is missing or not a regular file is refused (keme.dataset.paths.file_problem, the check
    `keme validate` makes), with --no-verify too."""
    mapping: dict[str, str] = {}
    if not dataset.images:
        return mapping
    (out / "images").mkdir()
    for n, record in enumerate(dataset.images):
        if record.path in mapping:
            continue
        problem = file_problem(dataset.root, record.path)
        if problem is not None:
            raise KemeError(f"image {record.id}: {record.path} {problem}: run keme validate")
        source = inside(dataset.root, record.path)
        suffix = source.suffix.lower()
        target = f"images/{n}{suffix if suffix in ('.png', '.jpg', '.jpeg', '.webp') else '.png'}"
        shutil.copyfile(source, out / target)
        mapping[record.path] = target
    return mapping


def write_site(dataset: Dataset, runs: list[Run], out: Path, force: bool = False) -> SiteStats:
    """Write the site to `out`: staged in a fresh hidden directory beside it and swapped in whole, under
    `out`'s lock (a second run into the same `out` is refused). Only directories this call made are ever
    removed (keme.dataset.staging)."""
    with target_lock(out, "keme view"):
        _check_out(out, force)
        made = Made()
        try:
            staging = made.directory(out.parent, f"{out.name}.site")
            stats = _write(dataset, runs, staging)
            made.swap_in(staging, out)
        finally:
            made.cleanup()
    return stats


def _check_out(out: Path, force: bool) -> None:
    """`out` may receive a site: new, empty, or (with --force) an earlier keme site."""
    if out.is_symlink() or (out.exists() and not out.is_dir()):
        raise KemeError(f"--out {out}: exists and is not a directory: choose another directory")
    if not out.exists() or not any(out.iterdir()):
        return
    if not (out / "index.html").exists() or not (out / "data" / "index.js").exists():
        raise KemeError(f"--out {out}: exists and is not a keme site: choose another directory")
    if not force:
        raise KemeError(f"--out {out}: a site is already there: pass --force to replace it")


def _write(dataset: Dataset, runs: list[Run], out: Path) -> SiteStats:
    static = files("eval.view") / "static"
    for name in STATIC:
        (out / name).write_bytes((static / name).read_bytes())
    images = _copy_images(dataset, out)
    index, bundles = build(dataset, runs)
    data = out / "data"
    data.mkdir()
    written: list[Path] = []

    def put(filename: str, name: str, payload: Any) -> None:
        path = data / filename
        path.write_text(script(name, payload), encoding="utf-8")
        written.append(path)

    put("index.js", "index", index)
    for n, bundle in enumerate(bundles):
        put(f"p{n}.js", f"p{n}", bundle["year"])
        for page, sessions in enumerate(bundle["pages"]):
            for session in sessions:
                for message in session["messages"]:
                    message["images"] = [images[p] for p in message["images"] if p in images]
            put(f"p{n}-s{page}.js", f"p{n}-s{page}", sessions)
        put(f"p{n}-q.js", f"p{n}-q", bundle["questions"])
        for r, records in enumerate(bundle["runs"]):
            put(f"p{n}-r{r}.js", f"p{n}-r{r}", records)
    total = sum(p.stat().st_size for p in written)
    return SiteStats(
        personas=len(bundles),
        questions=len(index["questions"]),
        runs=len(runs),
        files=len(written),
        bytes=total,
        images=len(images),
    )
