"""The one YAML reader: every YAML file keme reads (a synthesis config, `keme eval --config`, `--params`,
`--llm`, the resource files it ships) goes through `load` or `parse`.

A YAML file is input from outside, so reading it is bounded and strict, and every refusal names
`file:line:column` and what to do:

- the file: a regular file (not a directory, FIFO or device such as /dev/zero) of at most `limit`
  bytes, in UTF-8;
- the document: one document, nested at most `MAX_DEPTH` levels, expanding (aliases counted once
  per use) to at most `MAX_NODES` values, so an alias bomb is refused before anything is built;
- the values: JSON's (mappings, lists, text, numbers, true/false, null); duplicate keys are refused
  naming both lines (never the last one silently kept); integers have at most `MAX_INT_DIGITS` digits;
  dates stay text (the schema reading them names a bad one); `!!binary`, `!!set`, `!!timestamp` and
  other tags are refused.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError, SafeConstructor

from keme.errors import KemeError

MAX_BYTES = 1 << 20  # a config, a run's settings, parameters: kilobytes; the shipped resources: < 200 KB
MAX_NODES = 200_000  # values in the document with every alias expanded
MAX_DEPTH = 64  # levels of nested lists and mappings
MAX_INT_DIGITS = 100  # far beyond any count or seed, far below what makes int() slow or refuse

_JSON_TAGS = {
    "tag:yaml.org,2002:" + name for name in ("map", "seq", "str", "int", "float", "bool", "null", "merge")
}


class YamlError(KemeError, ValueError):
    """A YAML file keme cannot use as it is: named with file:line:column, what is wrong and the fix."""


@dataclass(frozen=True)
class Document:
    """A parsed YAML document: its data, where it came from, and its node tree (for line numbers)."""

    data: Any
    source: str
    root: yaml.Node | None = field(default=None, repr=False)

    def line(self, loc: Sequence[Any]) -> int | None:
        """Line (1-based) of the value at `loc` (keys and list indexes), or of its deepest existing parent;
        a missing key's line is that of its mapping."""
        node = self.root
        line = node.start_mark.line + 1 if node is not None else None
        for part in loc:
            if isinstance(node, yaml.MappingNode):
                match = next((v for k, v in node.value if k.value == part), None)
                if match is None:
                    key = next((k for k, _ in node.value if k.value == part), None)
                    return key.start_mark.line + 1 if key is not None else line
                node = match
            elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
                node = node.value[part]
            else:
                break
            line = node.start_mark.line + 1
        return line

    def where(self, loc: Sequence[Any] = ()) -> str:
        """`source:line` of the value at `loc` (just `source` for an empty document)."""
        line = self.line(loc)
        return f"{self.source}:{line}" if line else self.source


def load(
    path: Path | str, source: str | None = None, limit: int = MAX_BYTES, shipped: bool = False
) -> Document:
    """The YAML file at `path`, read and parsed within the bounds above; `source` names it in errors
    (default: the path; e.g. "--params p.yaml"). `shipped`: a file of keme's own, parsed by libyaml
    (ten times faster: the filler banks are megabytes), with every check but the nesting bound's
    RecursionError guard."""
    where = source or str(path)
    return parse(read_text(path, where, limit), where, shipped)


def read_text(path: Path | str, source: str | None = None, limit: int = MAX_BYTES) -> str:
    """A text file's content: a regular file of at most `limit` bytes in UTF-8 (a BOM is dropped), or a
    YamlError saying what it is instead. Never blocks on a FIFO nor reads a device without end."""
    where = source or str(path)
    try:
        info = os.stat(path)
    except OSError as exc:
        raise YamlError(f"{where}: cannot read ({exc.strerror or exc}); check the path") from None
    _check_regular(info, where, limit)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
        with os.fdopen(fd, "rb") as handle:
            _check_regular(os.fstat(handle.fileno()), where, limit)  # the same file as stat'ed
            raw = handle.read(limit + 1)
    except OSError as exc:
        raise YamlError(f"{where}: cannot read ({exc.strerror or exc})") from None
    if len(raw) > limit:
        raise YamlError(f"{where}: larger than {limit} bytes (it grew while read); pass a smaller file")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise YamlError(
            f"{where}:{line}: not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset {exc.start}); "
            "save the file as UTF-8"
        ) from None


def _check_regular(info: os.stat_result, where: str, limit: int) -> None:
    if stat.S_ISDIR(info.st_mode):
        raise YamlError(f"{where}: is a directory; pass a YAML file")
    if not stat.S_ISREG(info.st_mode):
        raise YamlError(f"{where}: not a regular file (a device, FIFO or socket); pass a YAML file")
    if info.st_size > limit:
        raise YamlError(f"{where}: {info.st_size} bytes, more than the {limit} a YAML file here may have")


def parse(text: str, source: str = "<yaml>", shipped: bool = False) -> Document:
    """One YAML document from `text`, checked as the module says; a YamlError names `source:line:column`.
    `shipped`: see `load`."""
    loader: Any = None
    try:
        loader = (_FastLoader if shipped else _Loader)(text)
        root = loader.get_single_node()
        if root is None:
            return Document(None, source)
        _check_shape(root, source)
        return Document(loader.construct_document(root), source, root)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        what = ", ".join(part for part in (exc.context, exc.problem) if part)
        raise YamlError(f"{where}: not valid YAML: {what}") from None
    except yaml.reader.ReaderError as exc:  # a control character, at a position of the text
        line = text.count("\n", 0, exc.position) + 1
        raise YamlError(
            f"{source}:{line}: not valid YAML: character #x{exc.character:04x} is not allowed "
            "(control characters other than tab and line breaks); remove it"
        ) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"{source}: not valid YAML: {exc}") from None
    except RecursionError:
        raise YamlError(
            f"{source}: nested too deeply to read (at most {MAX_DEPTH} levels of lists and mappings)"
        ) from None
    finally:
        if loader is not None:
            loader.dispose()


def _check_shape(root: yaml.Node, source: str) -> None:
    """Refuse before anything is built: nesting beyond MAX_DEPTH, an alias inside the value it names,
    and more than MAX_NODES values once every alias is expanded (the "billion laughs")."""
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()

    def size(node: yaml.Node, depth: int) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        at = f"{source}:{node.start_mark.line + 1}:{node.start_mark.column + 1}"
        if key in open_nodes:
            raise YamlError(f"{at}: not valid YAML: an alias refers to a value that contains it")
        if depth > MAX_DEPTH:
            raise YamlError(f"{at}: nested too deeply (more than {MAX_DEPTH} levels of lists and mappings)")
        if node.tag not in _JSON_TAGS:
            raise YamlError(
                f"{at}: the tag {_short(node.tag)} is not accepted here; values "
                "are text, numbers, true/false, null, lists and mappings"
            )
        total = 1
        if isinstance(node, (yaml.SequenceNode, yaml.MappingNode)):
            open_nodes.add(key)
            pairs = node.value if isinstance(node, yaml.MappingNode) else [(child,) for child in node.value]
            children = [child for pair in pairs for child in pair]
            for child in children:
                total += size(child, depth + 1)
                if total > MAX_NODES:
                    raise YamlError(
                        f"{at}: expands to more than {MAX_NODES} values through its aliases (*name); "
                        "write the values out, or use fewer aliases"
                    )
            open_nodes.discard(key)
        sizes[key] = total
        return total

    size(root, 0)


def _short(tag: str) -> str:
    return tag.replace("tag:yaml.org,2002:", "!!")


class _Strict:
    """What both loaders build differently from PyYAML's safe one: no implicit dates, duplicate keys and
    integers of too many digits refused, surrogate escapes paired, a value that cannot be read named."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue  # `<<: *base` merges; a key written out overrides a merged one (YAML's rule)
            key = self.construct_object(key_node, deep=True)
            try:
                first = seen.get(key)
            except TypeError:  # an unhashable key: the base class says so
                continue
            if first is not None:
                raise ConstructorError(
                    None,
                    None,
                    f"duplicate key {key!r} (first given on line {first}); keep one of them",
                    key_node.start_mark,
                )
            seen[key] = key_node.start_mark.line + 1
        return super().construct_mapping(node, deep=deep)

    def construct_yaml_int(self, node: yaml.ScalarNode) -> int:
        digits = sum(ch.isalnum() for ch in str(node.value))
        if digits > MAX_INT_DIGITS:
            raise ConstructorError(
                None,
                None,
                f"an integer of {digits} digits; at most {MAX_INT_DIGITS} are read (quote it if it is text)",
                node.start_mark,
            )
        return SafeConstructor.construct_yaml_int(self, node)  # type: ignore[arg-type]

    def construct_yaml_str(self, node: yaml.ScalarNode) -> str:
        value = self.construct_scalar(node)  # type: ignore[attr-defined]
        if not any("\ud800" <= ch <= "\udfff" for ch in value):
            return value
        try:  # "\ud83d\ude00", as JSON writes an emoji: one character
            return value.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            raise ConstructorError(
                None,
                None,
                "a \\uD800-\\uDFFF escape without its pair is not a character; write the character itself",
                node.start_mark,
            ) from None

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, KeyError, OverflowError) as exc:  # `!!float abc`, `!!bool maybe`
            raise ConstructorError(
                None,
                None,
                f"{str(node.value)[:40]!r} cannot be read as {_short(node.tag)} ({exc})",
                node.start_mark,
            ) from None


class _Loader(_Strict, yaml.SafeLoader):
    """Pure Python, refusing a node nested beyond MAX_DEPTH as soon as it starts (the scanner's cost grows
    with the square of the depth, and the composer recurses)."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: object) -> yaml.Node | None:
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH + 1:  # the root is at depth 0
                raise ComposerError(
                    None,
                    None,
                    f"nested too deeply (more than {MAX_DEPTH} levels of lists and mappings)",
                    self.peek_event().start_mark,
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _FastLoader(_Strict, getattr(yaml, "CSafeLoader", yaml.SafeLoader)):
    """libyaml's parser, for the large files keme ships (its composer recurses in C: not for input)."""


_TEXT_TAGS = {"tag:yaml.org,2002:timestamp", "tag:yaml.org,2002:value"}  # `2026-01-01` and `=` stay text
for _cls in (_Loader, _FastLoader):
    _cls.add_constructor("tag:yaml.org,2002:int", _Strict.construct_yaml_int)
    _cls.add_constructor("tag:yaml.org,2002:str", _Strict.construct_yaml_str)
    _cls.yaml_implicit_resolvers = {
        first: [(tag, pattern) for tag, pattern in resolvers if tag not in _TEXT_TAGS]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
