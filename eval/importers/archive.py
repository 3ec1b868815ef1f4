"""An image archive (zip) read within limits: every member checked before any byte is expanded.

A release's `image.zip` is untrusted input. Its central directory is checked when it is opened (member
count, names that leave the archive or repeat, encryption, compression methods, declared sizes and
compression ratios), so a zip bomb is refused before it is expanded; a member is then read in chunks, at
most its declared size, and any damage (bad CRC, corrupt or truncated data) is an error naming it.
"""

from __future__ import annotations

import lzma
import re
import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from keme.dataset.limits import Limits, check, exceeded
from keme.errors import KemeError

METHODS = {zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED, zipfile.ZIP_BZIP2, zipfile.ZIP_LZMA}
RATIO_FLOOR = 2**20  # members smaller than this expand to little whatever their ratio
CHUNK = 2**20
_DRIVE = re.compile(r"^[A-Za-z]:")
# what a damaged member raises while it is read: zipfile's own errors, the codecs', a short read
DAMAGE = (zipfile.BadZipFile, zlib.error, lzma.LZMAError, EOFError, OSError, ValueError, struct.error)


class ArchiveError(KemeError):
    """An archive, or one of its members, is damaged or unsafe: names the member and what to do."""


def _unsafe(name: str) -> str | None:
    """Why a member name is not a plain relative path inside the archive, or None."""
    path = name.replace("\\", "/")
    if path.startswith("/") or _DRIVE.match(path):
        return "an absolute path"
    if ".." in PurePosixPath(path).parts:
        return "a path that climbs out with '..'"
    if "\x00" in name:
        return "a NUL character"
    return None


def open_archive(path: Path, limits: Limits) -> zipfile.ZipFile:
    """The archive at `path`, its members all checked (see the module); ArchiveError or LimitExceeded."""
    try:
        archive = zipfile.ZipFile(path)
    except (*DAMAGE, NotImplementedError, RuntimeError) as exc:
        raise ArchiveError(f"{path}: not a zip archive ({exc}); download it again") from exc
    try:
        check_members(archive, path, limits)
    except BaseException:
        archive.close()
        raise
    return archive


def check_members(archive: zipfile.ZipFile, path: Path, limits: Limits) -> None:
    """Refuse an archive whose directory is unsafe or damaged, before anything is expanded."""
    members = archive.infolist()
    check(f"{path}: members", len(members), "archive_members", limits)
    seen: set[str] = set()
    for info in members:
        where = f"{path}: member {info.filename!r}"
        if info.filename in seen:
            raise ArchiveError(f"{where} appears twice; repack the archive with each file once")
        seen.add(info.filename)
        if why := _unsafe(info.filename):
            raise ArchiveError(f"{where} is {why}; an image archive holds relative paths only")
        if info.is_dir():
            continue
        if info.flag_bits & 0x1:
            raise ArchiveError(f"{where} is encrypted; repack the archive without a password")
        if info.compress_type not in METHODS:
            raise ArchiveError(
                f"{where} uses compression method {info.compress_type}, which keme cannot read (stored, "
                "deflate, bzip2 and lzma are read); repack the archive with deflate"
            )
        if info.file_size > RATIO_FLOOR and info.file_size > limits.compression_ratio * max(
            info.compress_size, 1
        ):
            ratio = info.file_size // max(info.compress_size, 1)
            raise exceeded(f"{where} expands {ratio}-fold (a zip bomb?)", ratio, "compression_ratio", limits)


def _chunks(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> Iterator[bytes]:
    with archive.open(info) as member:
        while chunk := member.read(CHUNK):
            yield chunk


def read_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: Path, cap: int) -> bytes:
    """A member's bytes, at most `cap` of them (its declared size is checked by the caller); a damaged
    member is an ArchiveError naming it."""
    where = f"{path}: member {info.filename!r}"
    data = bytearray()
    try:
        for chunk in _chunks(archive, info):
            data += chunk
            if len(data) > cap:
                raise ArchiveError(
                    f"{where} holds more than the {cap:,} bytes it declares; download it again"
                )
    except (*DAMAGE, NotImplementedError, RuntimeError) as exc:
        raise ArchiveError(f"{where} is damaged ({exc}); download the archive again") from exc
    if len(data) != info.file_size:
        raise ArchiveError(f"{where} holds {len(data):,} bytes, not the {info.file_size:,} it declares")
    return bytes(data)
