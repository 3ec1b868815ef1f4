"""The id rule, the image-path rule, and the helpers that keep paths built from data inside their root."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from keme.dataset.paths import PathEscape, file_name, inside, scope_path
from keme.models import Message, id_problem, image_path_problem, is_safe_id, safe_id
from keme.models.ids import relative_file_problem

HOSTILE = [
    "../x",
    "/abs",
    "a/b",
    "..",
    ".",
    "",
    "a\x00b",
    "x" * 300,
    "..\\x",
    "соnv-1",
    "conv\u20101",
    "\ud800x",
    ".hidden",
    "-rf",
    "a b",
    "a\nb",
]


@pytest.mark.parametrize(
    "value",
    [
        "p01",
        "p01-s0007-m13",
        "conv-26:D1:3",
        "conv-26:D1:3#4",
        "gpt4_2655b836_abs",
        "q1:answer_1_1",
        "_x",
        "9",
    ],
)
def test_the_ids_keme_and_the_importers_make_are_safe(value):
    assert is_safe_id(value)


@pytest.mark.parametrize("value", HOSTILE)
def test_hostile_ids_are_not_safe(value):
    assert id_problem(value) is not None


def test_an_unsafe_id_is_refused_by_the_model_naming_the_id_and_why():
    with pytest.raises(ValidationError, match=r"id '\.\./x' contains a path separator '/'"):
        Message(id="../x", role="user", content="", timestamp="2024-01-01T09:00:00")


def test_a_lookalike_letter_is_named_with_its_code_point():
    assert "U+0441" in id_problem("сonv")


@pytest.mark.parametrize("value", HOSTILE)
def test_safe_id_maps_any_source_id_to_a_safe_one(value):
    assert is_safe_id(safe_id(value))


def test_safe_id_keeps_safe_ids_and_separates_unsafe_ones():
    assert safe_id("conv-26") == "conv-26"
    assert safe_id("a/b") != safe_id("a_b") and safe_id("a/b") == safe_id("a/b")
    assert safe_id("../x").startswith("x-")


@pytest.mark.parametrize("value", ["images/p01-img003.png", "images/p01/one.png"])
def test_image_paths_under_images_are_accepted(value):
    assert image_path_problem(value) is None


@pytest.mark.parametrize(
    "value",
    [
        "../../../../etc/passwd",
        "/etc/passwd",
        "images/../personas.jsonl",
        "images/",
        "images",
        "images\\..\\x",
        "images/.hidden.png",
        "pics/a.png",
        "images//a.png",
        "images/a\x00.png",
    ],
)
def test_image_paths_outside_images_are_refused(value):
    assert image_path_problem(value) is not None


def test_a_message_sharing_an_image_outside_images_is_refused():
    with pytest.raises(ValidationError, match=r"image path '/etc/passwd' is not under images/"):
        Message(id="m1", role="user", content="", timestamp="2024-01-01T09:00:00", images=["/etc/passwd"])


def test_manifest_file_names_are_relative_paths_inside_the_dataset():
    assert relative_file_problem("images/p01-img001.png") is None
    assert relative_file_problem("../../etc/passwd") is not None


def test_inside_returns_the_path_under_the_root(tmp_path):
    assert inside(tmp_path, "images/a.png") == tmp_path.resolve() / "images" / "a.png"


@pytest.mark.parametrize(
    "relative", ["../x", "/etc/passwd", "a/../../x", ".", "", "a\x00b", "C:\\x", "\\\\host\\share"]
)
def test_inside_refuses_what_leaves_the_root(tmp_path, relative):
    with pytest.raises(PathEscape):
        inside(tmp_path / "root", relative)


def test_inside_refuses_a_symlink_pointing_out(tmp_path):
    (tmp_path / "root").mkdir()
    (tmp_path / "secret").write_text("x")
    (tmp_path / "root" / "link").symlink_to(tmp_path / "secret")
    with pytest.raises(PathEscape, match="outside"):
        inside(tmp_path / "root", "link")


@pytest.mark.parametrize("scope", [*HOSTILE, "C:evil", "conv-26:D1:3#4"])
def test_scope_paths_are_direct_children_of_the_root(tmp_path, scope):
    path = scope_path(tmp_path, scope, ".sqlite")
    assert path.parent == tmp_path.resolve() and path.name.endswith(".sqlite")


def test_file_names_keep_plain_names_and_never_collide():
    assert file_name("p01") == "p01"
    assert len({file_name(s) for s in ["a/b", "a_b", "a:b", "a#b"]}) == 4
