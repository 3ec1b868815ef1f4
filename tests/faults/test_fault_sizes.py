"""Inputs without limits: archives (members, damage, bombs), large messages, huge counts.

Every input that would grow memory with its size is bounded (keme/dataset/limits.py): past a limit the
command refuses, naming the input, the limit and its environment variable; below it, memory stays flat.
Memory is measured as a child's peak RSS, never time.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from probe import ROOT, raises_clearly, record, refused, refuses
from test_fault_import import SHOT, omni_release

from eval.importers.mobilemem_omni import import_mobilemem_omni
from eval.uncertainty import resamples
from keme.dataset import Dataset
from keme.dataset.limits import LimitExceeded, Limits
from keme.errors import KemeError

pytestmark = pytest.mark.fault

SAMPLE = ROOT / "data/sample"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
FLAT = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
    derandomize=True,
)


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch):
    monkeypatch.delenv("KEME_DEBUG", raising=False)


# ------------------------------------------------------------------------------------------ archives
def _patch(data: bytearray, signature: bytes, offset: int, value: bytes, name: bytes) -> None:
    """Overwrite `value` at `offset` of the header (local or central) of the member called `name`."""
    at = 0
    while (at := data.find(signature, at)) != -1:
        start = at + (30 if signature == b"PK\x03\x04" else 46)
        if data[start : start + len(name)] == name:
            data[at + offset : at + offset + len(value)] = value
        at += 4


def _damage(path: Path, name: str, kind: str) -> None:
    """Damage the member `name` of the zip at `path` the way `kind` says."""
    data, raw = bytearray(path.read_bytes()), name.encode()
    if kind == "crc":
        _patch(data, b"PK\x03\x04", 14, b"\xde\xad\xbe\xef", raw)
        _patch(data, b"PK\x01\x02", 16, b"\xde\xad\xbe\xef", raw)
    elif kind == "corrupt":  # the deflate stream itself
        at = data.find(b"PK\x03\x04" + bytes(26)[:0])
        start = data.index(raw, at) + len(raw)
        data[start : start + 4] = b"\xff\xff\xff\xff"
    elif kind == "encrypted":
        _patch(data, b"PK\x03\x04", 6, b"\x01\x00", raw)
        _patch(data, b"PK\x01\x02", 8, b"\x01\x00", raw)
    elif kind == "method":
        _patch(data, b"PK\x03\x04", 8, b"\x63\x00", raw)
        _patch(data, b"PK\x01\x02", 10, b"\x63\x00", raw)
    path.write_bytes(bytes(data))


def _release_with(tmp: Path, extra: list[tuple[str, bytes]], damage: str) -> tuple[Path, str]:
    """The one-user release with `extra` members beside its screenshot, damaged as `damage` says; the member
    an error must name."""
    root = omni_release(tmp)
    archive, named = root / "image.zip", SHOT
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        out.writestr(SHOT, PNG)
        for name, data in extra:
            out.writestr(name, data)
        if damage == "duplicate":
            with warnings.catch_warnings():  # zipfile warns of the name it is asked to repeat
                warnings.simplefilter("ignore")
                out.writestr(SHOT, PNG)
        elif damage in ("traversal", "absolute"):
            named = "../../outside.png" if damage == "traversal" else "/etc/outside.png"
            out.writestr(zipfile.ZipInfo(named), PNG)
    if damage in ("crc", "corrupt", "encrypted", "method"):
        _damage(archive, SHOT, damage)
    return root, named


DAMAGE = ["crc", "corrupt", "encrypted", "method", "duplicate", "traversal", "absolute"]
MEMBERS = st.lists(
    st.tuples(
        st.from_regex(r"image/uid1/[a-z_]{1,12}/[a-z0-9_]{1,10}\.(png|jpg)", fullmatch=True),
        st.binary(max_size=2048),
    ),
    max_size=6,
    unique_by=lambda member: member[0],
).map(lambda members: [m for m in members if m[0] != SHOT])


@FLAT
@given(members=MEMBERS, damage=st.sampled_from(DAMAGE))
def test_a_damaged_or_unsafe_member_is_refused_naming_it(tmp_path_factory, members, damage):
    tmp = tmp_path_factory.mktemp("zip")
    release, named = _release_with(tmp / "release", members, damage)
    raises_clearly(lambda: import_mobilemem_omni(release, tmp / "out"), KemeError, match=re.escape(named))
    assert not (tmp / "out").exists()


@FLAT
@given(members=MEMBERS)
def test_a_sound_archive_imports_whatever_else_it_holds(tmp_path_factory, members):
    tmp = tmp_path_factory.mktemp("zip")
    release, _ = _release_with(tmp / "release", members, "none")
    stats = import_mobilemem_omni(release, tmp / "out")
    record("ok" if stats["import"]["images_copied"] == 1 else "silent")
    assert stats["import"]["images_copied"] == 1
    assert (tmp / "out" / "images" / "omni-00001.png").read_bytes() == PNG


def _bomb(path: Path, names: list[str], size: int) -> None:
    """Members of `size` zero bytes each, compressed (about a thousandth), written a chunk at a time."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as out:
        for name in names:
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            with out.open(info, "w", force_zip64=True) as member:
                chunk = bytes(2**20)
                for _ in range(size // len(chunk)):
                    member.write(chunk)


def _peak_rss(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    """Run `args` in a fresh child of a fresh interpreter: (the child's peak RSS in bytes, its output)."""
    wrapper = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], capture_output=True, text=True)\n"
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, done.returncode)\n"
        "sys.stdout.write(done.stdout + done.stderr)\n"
    )
    environment = os.environ | {"PYTHONPATH": str(ROOT), "COLUMNS": "500"} | (env or {})
    done = subprocess.run(
        [sys.executable, "-c", wrapper, sys.executable, "-m", "keme.cli", *args],
        capture_output=True,
        text=True,
        env=environment,
        timeout=600,
    )
    head, _, output = done.stdout.partition("\n")
    peak, code = head.split()
    return int(peak) * 1024, f"exit {code}\n{output}{done.stderr}"


def test_a_zip_bomb_is_refused_before_it_is_expanded(tmp_path):
    sound = omni_release(tmp_path / "sound")
    base, output = _peak_rss(["import", "mobilemem-omni", str(sound), "--out", str(tmp_path / "sound-out")])
    assert output.startswith("exit 0"), output
    # eight images of 40 MiB (each under the cap of one image), all shown in a session, in about 320 kB
    names = [f"image/uid1/camera_photos/bomb_{n}.png" for n in range(8)]
    extra = [{"type": "camera_photo", "file": name} for name in names]
    release = omni_release(
        tmp_path / "release", lambda u, q: u[0]["sessions"][1]["image_refs"]["extra_images"].extend(extra)
    )
    _bomb(release / "image.zip", [SHOT, *names], 40 * 2**20)
    assert (release / "image.zip").stat().st_size < 2**20
    args = ["import", "mobilemem-omni", str(release), "--out", str(tmp_path / "out")]
    peak, output = _peak_rss(args)
    code = int(output.split()[1])
    record("clear" if code not in (0, 70) and "Traceback" not in output else "crash")
    assert code == 2, output
    assert "compression_ratio" in output.replace("\n", "").lower() or "KEME_MAX_COMPRESSION_RATIO" in output
    assert peak < base + 32 * 2**20, (
        f"peak RSS {peak / 2**20:.0f} MiB, a sound import's {base / 2**20:.0f} MiB"
    )


def test_images_past_their_total_are_refused_naming_the_limit(tmp_path):
    release = omni_release(tmp_path / "release")
    limits = Limits(images_bytes=4)
    raises_clearly(
        lambda: import_mobilemem_omni(release, tmp_path / "out", limits=limits),
        LimitExceeded,
        match="KEME_MAX_IMAGES_BYTES",
    )


def test_an_archive_with_more_members_than_allowed_is_refused(tmp_path):
    release = omni_release(tmp_path / "release")
    with zipfile.ZipFile(release / "image.zip", "a") as out:
        for n in range(5):
            out.writestr(f"image/uid1/x/{n}.png", PNG)
    limits = Limits(archive_members=3)
    raises_clearly(
        lambda: import_mobilemem_omni(release, tmp_path / "out", limits=limits),
        LimitExceeded,
        match="members: 6 .*KEME_MAX_ARCHIVE_MEMBERS",
    )


# ------------------------------------------------------------------------------------ files and messages
def test_a_source_file_larger_than_allowed_is_refused_before_it_is_read(tmp_path):
    source = tmp_path / "locomo.json"
    source.write_text("[" + " " * 4096 + "]", encoding="utf-8")
    refuses(
        ["keme", "import", "locomo", str(source), "--out", str(tmp_path / "out")],
        r"locomo\.json: bytes: 4,098 is more than the 1,024 .*KEME_MAX_FILE_BYTES",
        code=2,
        env={"KEME_MAX_FILE_BYTES": "1024"},
    )


def test_a_bad_limit_in_the_environment_is_refused_by_name(tmp_path):
    refuses(
        [
            "keme",
            "import",
            "locomo",
            str(ROOT / "tests/fixtures/locomo_mini.json"),
            "--out",
            str(tmp_path / "o"),
        ],
        r"KEME_MAX_FILE_BYTES='lots': a limit must be a whole number",
        env={"KEME_MAX_FILE_BYTES": "lots"},
    )


def _with_message(tmp_path: Path, size: int) -> tuple[Path, str]:
    """The sample dataset with its first message `size` characters long (written as keme writes it)."""
    data = Dataset.load(SAMPLE)
    message = data.sessions[0].messages[0]
    message.content = ("a long message, " * (size // 16 + 1))[:size]
    out = tmp_path / "big"
    data.write(out)
    return out, message.id


@pytest.mark.parametrize("kind", ["longmemeval", "locomo", "mobilemem", "hf"])
def test_a_message_over_the_limit_stops_the_export_naming_it(tmp_path, kind):
    dataset, mid = _with_message(tmp_path, 5000)
    refuses(
        ["keme", "export", kind, str(dataset), "--out", str(tmp_path / "x.json"), "--no-verify"],
        rf"message {mid}: characters: 5,000 is more than the 4,096 .*KEME_MAX_MESSAGE_CHARS",
        code=2,
        env={"KEME_MAX_MESSAGE_CHARS": "4096"},
    )
    assert not (tmp_path / "x.json").exists()


def test_exporting_a_large_message_takes_memory_of_a_few_copies_not_one_per_question(tmp_path):
    size = 10 * 2**20
    dataset, _ = _with_message(tmp_path, size)
    base, output = _peak_rss(["export", "longmemeval", str(SAMPLE), "--out", str(tmp_path / "small.json")])
    assert output.startswith("exit 0"), output
    peak, output = _peak_rss(
        ["export", "longmemeval", str(dataset), "--out", str(tmp_path / "big.json"), "--no-verify"]
    )
    record("ok" if output.startswith("exit 0") else "crash")
    assert output.startswith("exit 0"), output
    assert (tmp_path / "big.json").stat().st_size > 8 * size  # the message is in many haystacks ...
    said = f"peak {peak / 2**20:.0f} MiB, baseline {base / 2**20:.0f} MiB, message {size / 2**20:.0f} MiB"
    assert peak < base + 8 * size, said  # ... but not in memory all at once


# -------------------------------------------------------------------------------------------- counts
def _evaluate(tmp_path: Path, *extra: str) -> list[str]:
    return ["eval", "--data", str(SAMPLE), "--systems", "bm25", "--out", str(tmp_path / "run"), *extra]


OVER = {
    "--bootstrap": st.integers(100_001, 10**15),
    "--k": st.integers(1_000_001, 10**15),
    "--depth": st.integers(1_000_001, 10**15),
    "--limit": st.integers(1_000_001, 10**15),
    "--judge-runs": st.integers(101, 10**15),
}


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_count_past_its_limit_is_refused_by_flag_before_anything_runs(tmp_path_factory, data):
    tmp = tmp_path_factory.mktemp("eval")
    flag = data.draw(st.sampled_from(sorted(OVER)))
    value = data.draw(OVER[flag])
    refused(_evaluate(tmp, flag, str(value)), match=rf"{flag}: .*is more than .*KEME_MAX_", code=2)
    assert not (tmp / "run").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["eval", "--data", str(SAMPLE), "--systems", "bm25", "--workers", "100000000"],
        ["hardneg", str(SAMPLE), "--out", "x", "--asks", "1000000000"],
        ["hardneg", str(SAMPLE), "--out", "x", "--sample", "10000000000"],
    ],
    ids=["workers", "asks", "sample"],
)
def test_other_counts_are_capped(args):
    refused(args, match=r"not in the range|less than or equal", code=2)


def test_bootstrap_replicates_times_questions_are_bounded():
    ids = [f"q{n}" for n in range(50)]
    raises_clearly(
        lambda: resamples(ids, ["p"] * 50, b=1000, limits=Limits(bootstrap_cells=10_000)),
        LimitExceeded,
        match="bootstrap replicates x 50 questions: 50,000",
    )
