"""scripts/llama_portable.py: which llama-cpp-python build counts as portable, and the cache it comes from."""

from __future__ import annotations

import importlib.util
import json
import re

import pytest
from conftest import ROOT

spec = importlib.util.spec_from_file_location("llama_portable", ROOT / "scripts/llama_portable.py")
portable = importlib.util.module_from_spec(spec)
spec.loader.exec_module(portable)

NATIVE_INFO = (
    "CPU : SSE3 = 1 | AVX = 1 | AVX2 = 1 | AVX512 = 1 | AVX512_VNNI = 1 | AMX_INT8 = 1 | OPENMP = 1 |"
)
PORTABLE_INFO = (
    "CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | OPENMP = 1 |"
)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("KEME_WHEEL_CACHE", str(tmp_path / "wheels"))
    return tmp_path


def a_wheel(folder, version=portable.VERSION):
    path = folder / f"llama_cpp_python-{version}-py3-none-linux_x86_64.whl"
    path.write_bytes(b"not really a wheel")
    return path


def test_the_pinned_version_is_the_one_the_script_builds():
    pin = re.search(r'"llama-cpp-python\[server\]==([\d.]+)"', (ROOT / "pyproject.toml").read_text()).group(1)
    assert pin == portable.VERSION


def test_the_cache_is_keyed_by_version_and_flags(cache):
    assert portable.build_key() != portable.build_key(cmake_args=portable.CMAKE_ARGS + " -DGGML_NATIVE=ON")
    assert portable.build_key() != portable.build_key(version="0.3.35")
    assert portable.cache_dir().name == portable.build_key()


def test_a_seeded_wheel_is_served_from_the_cache_until_it_is_tampered_with(cache):
    stored = portable.store(a_wheel(cache), origin="test")
    assert portable.cached_wheel() == stored
    record = json.loads((stored.parent / "build.json").read_text())
    assert record["cmake_args"] == portable.CMAKE_ARGS and record["version"] == portable.VERSION
    stored.write_bytes(b"changed")
    assert portable.cached_wheel() is None


def test_a_wheel_of_another_version_is_not_accepted(cache):
    with pytest.raises(portable.SetupError, match="not a llama-cpp-python"):
        portable.store(a_wheel(cache, version="0.3.2"), origin="test")


def test_a_native_build_is_told_apart_by_its_compiled_cpu_features(cache, monkeypatch):
    wheel = portable.store(a_wheel(cache), origin="test")
    monkeypatch.setattr(
        portable,
        "installed",
        lambda: {"version": portable.VERSION, "url": wheel.as_uri(), "sha256": portable.sha256(wheel)},
    )
    monkeypatch.setattr(portable, "system_info", lambda: PORTABLE_INFO)
    assert portable.problems() == []
    monkeypatch.setattr(portable, "system_info", lambda: NATIVE_INFO)
    assert portable.problems() == ["it was compiled with AMX_INT8, AVX512, AVX512_VNNI (a native build)"]


def test_a_build_from_elsewhere_is_replaced_from_the_cache_without_rebuilding(cache, monkeypatch):
    wheel = portable.store(a_wheel(cache), origin="test")
    state = {"sha256": "0" * 64}
    monkeypatch.setattr(
        portable,
        "installed",
        lambda: {"version": portable.VERSION, "url": "pip's cache", "sha256": state["sha256"]},
    )
    monkeypatch.setattr(portable, "system_info", lambda: PORTABLE_INFO)
    monkeypatch.setattr(portable, "build", lambda: pytest.fail("the cached wheel must be used"))
    monkeypatch.setattr(portable, "install", lambda path: state.update(sha256=portable.sha256(path)))
    portable.ensure()
    assert state["sha256"] == portable.sha256(wheel)


@pytest.mark.parametrize("code, words", [(-4, "SIGILL"), (132, "SIGILL"), (1, "exit code 1")])
def test_exit_statuses_are_named(code, words):
    assert words in portable.describe_exit(code)


def test_the_installed_build_is_the_portable_one():
    pytest.importorskip("llama_cpp")
    assert portable.problems() == [], "run scripts/setup.sh"
