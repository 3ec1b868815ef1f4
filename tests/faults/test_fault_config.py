"""Bad synthesis configs through `keme synth`: each stops with a message naming file:line, the key and the
fix.

The command runs in process through `keme.cli.main` (the same boundary as the console
script, without a Python start-up per probe); a few run as real subprocesses. The config
from issue 10 that crashed the grounder (25 personas x 24 months, default rates) synthesizes.
"""

from __future__ import annotations

import io
import re
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from unittest import mock

import pytest
from probe import ROOT, record, refuses

from keme import cli

pytestmark = pytest.mark.fault

PERSONA = "  - {language: en, start: 2026-01-01, months: 2}\n"
VALID = "name: t\nseed: 1\npersonas:\n" + PERSONA


def keme(*args: str) -> tuple[int, str]:
    """Run `keme ARGS` in process; (exit code, stdout + stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with mock.patch.object(sys, "argv", ["keme", *args]), redirect_stdout(out), redirect_stderr(err):
        try:
            cli.main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return code, out.getvalue() + err.getvalue()


def synth_refuses(tmp_path: Path, config: str | bytes, match: str, *extra: str) -> str:
    """`keme synth` on this config must refuse with a message matching `match` (whitespace-insensitive)."""
    path = tmp_path / "c.yaml"
    path.write_bytes(config if isinstance(config, bytes) else config.encode())
    code, output = keme("synth", "--config", str(path), "--out", str(tmp_path / "out"), *extra)
    flat = " ".join(output.split())  # rich wraps long messages
    if code == cli.INTERNAL_ERROR or "Traceback" in output or "internal error" in output:
        record("crash")
    else:
        record("clear" if code != 0 else "silent")
    assert code == 2 and flat.startswith("error:"), f"exit {code}:\n{output}"
    assert re.search(match, flat, re.IGNORECASE), f"message does not match {match!r}:\n{output}"
    assert not (tmp_path / "out").exists(), "refused, but the output directory was created"
    return flat


# (config, what the message must say): the bad configs of issue 10 section 7, and the others found
BAD: dict[str, tuple[str | bytes, str]] = {
    "invalid_utf8": (VALID.encode() + b"# caf\xe9\n", r"c\.yaml:5: not valid UTF-8 \(byte 0xe9"),
    "february_30": (
        VALID.replace("2026-01-01", "2026-02-30"),
        r"c\.yaml:4: personas\.0\.start: '2026-02-30' is not a calendar date",
    ),
    "date_with_slashes": (
        VALID.replace("2026-01-01", "2026/01/01"),
        r"c\.yaml:4: personas\.0\.start: expected a date written YYYY-MM-DD",
    ),
    "date_as_number": (
        VALID.replace("2026-01-01", "20260101"),
        r"personas\.0\.start: expected a date written YYYY-MM-DD",
    ),
    "date_with_time": (
        VALID.replace("2026-01-01", "2026-01-01T09:00:00"),
        r"personas\.0\.start: expected a date",
    ),
    "date_out_of_range": (
        VALID.replace("2026-01-01", "1900-01-01"),
        r"personas\.0\.start: 1900-01-01 is outside 2000-01-01\.\.2097-12-31",
    ),
    "country_xx": (
        VALID.replace("months: 2}", "months: 2, country: XX}"),
        r"c\.yaml:4: personas\.0\.country: unknown country 'XX'",
    ),
    "country_lower_case": (VALID.replace("months: 2}", "months: 2, country: us}"), r"did you mean 'US'"),
    "language_fr": (
        VALID.replace("language: en", "language: fr"),
        r"personas\.0\.language: Input should be 'en' or 'zh' \(got 'fr'\)",
    ),
    "months_zero": (
        VALID.replace("months: 2", "months: 0"),
        r"personas\.0\.months: Input should be greater than or equal to 1",
    ),
    "months_negative": (
        VALID.replace("months: 2", "months: -3"),
        r"personas\.0\.months: .*greater than or equal to 1",
    ),
    "months_huge": (
        VALID.replace("months: 2", "months: 1000000000000000000000000"),
        r"personas\.0\.months: .*less than or equal to 24",
    ),
    "months_as_text": (
        VALID.replace("months: 2", "months: three"),
        r"personas\.0\.months: Input should be a valid integer",
    ),
    "months_quoted": (
        VALID.replace("months: 2", "months: '2'"),
        r"personas\.0\.months: .*quoted value is text",
    ),
    "months_boolean": (
        VALID.replace("months: 2", "months: yes"),
        r"personas\.0\.months: Input should be a valid integer \(got True\)",
    ),
    "personas_empty": ("name: t\npersonas: []\n", r"c\.yaml:2: personas: List should have at least 1 item"),
    "personas_not_a_list": (
        "name: t\npersonas: {language: en}\n",
        r"c\.yaml:2: personas: Input should be a valid list",
    ),
    "personas_too_many": (
        "name: t\npersonas:\n" + PERSONA * 100,
        r"personas: List should have at most 99 items",
    ),
    "persona_not_a_mapping": (
        "name: t\npersonas: [en]\n",
        r"personas\.0: Input should be a valid dictionary",
    ),
    "unknown_key": (VALID + "colour: red\n", r"c\.yaml:5: colour: unknown key"),
    "unknown_nested_key": (VALID + "graph:\n  max_dept: 1\n", r"c\.yaml:6: graph\.max_dept: unknown key"),
    "missing_name": (VALID.replace("name: t\n", ""), r"name: required key is missing"),
    "name_empty": (VALID.replace("name: t", "name: ''"), r"name: String should have at least 1 character"),
    "top_level_list": ("- name\n- personas\n", r"c\.yaml:1: expected a mapping of keys .* got a list"),
    "top_level_text": ("just some words\n", r"expected a mapping of keys .* got a str"),
    "yaml_syntax_error": ("name: t\npersonas: [\n", r"c\.yaml:3:1: not valid YAML"),
    "yaml_bad_indentation": ("name: t\n personas:\n- x\n", r"c\.yaml:\d+:\d+: not valid YAML"),
    "duplicate_key": (
        VALID + "seed: 2\n",
        r"c\.yaml:5:1: not valid YAML: duplicate key 'seed' \(first given on line 2\)",
    ),
    "duplicate_key_in_flow": (
        "name: t\npersonas:\n  - {language: en, language: zh, start: 2026-01-01, months: 2}\n",
        r"duplicate key 'language'",
    ),
    "two_documents": (VALID + "---\nname: u\n", r"not valid YAML: expected a single document"),
    "python_tag": (
        VALID + "x: !!python/object/apply:os.system [ls]\n",
        r"the tag !!python/object/apply:os.system is not accepted",
    ),
    "nested_too_deeply": ("name: " + "[" * 20000 + "]" * 20000 + "\n", r"nested too deeply"),
    "empty_file": ("", r"the config is empty"),
    "only_comments": ("# nothing here\n", r"the config is empty"),
    "seed_huge": (
        VALID.replace("seed: 1", "seed: 1000000000000000000000000000"),
        r"c\.yaml:2: seed: .*less than or equal to 9223372036854775807",
    ),
    "seed_thousands_of_digits": (
        VALID.replace("seed: 1", "seed: " + "7" * 5000),
        r"c\.yaml:2:7: not valid YAML: an integer of 5000 digits",
    ),
    "seed_negative": (
        VALID.replace("seed: 1", "seed: -1"),
        r"seed: Input should be greater than or equal to 0",
    ),
    "reveal_weights_negative": (
        VALID + "dialogue:\n  reveal_weights: [-1, 2]\n",
        r"c\.yaml:6: dialogue\.reveal_weights\.0: .*greater than or equal to 0",
    ),
    "reveal_weights_all_zero": (
        VALID + "dialogue:\n  reveal_weights: [0, 0]\n",
        r"dialogue\.reveal_weights: all weights are 0",
    ),
    "reveal_weights_empty": (
        VALID + "dialogue:\n  reveal_weights: []\n",
        r"dialogue\.reveal_weights: List should have at least 1 item",
    ),
    "reveal_weights_too_many": (
        VALID + "dialogue:\n  reveal_weights: [1, 1, 1, 1, 1, 1]\n",
        r"dialogue\.reveal_weights: List should have at most 5 items",
    ),
    "reveal_weights_text": (
        VALID + "dialogue:\n  reveal_weights: often\n",
        r"dialogue\.reveal_weights: Input should be a valid list",
    ),
    "reveal_weights_misspelt": (
        VALID + "dialogue:\n  reveal_weight: [1]\n",
        r"dialogue\.reveal_weight: unknown key",
    ),
    "reveal_weights_infinite": (
        VALID + "dialogue:\n  reveal_weights: [.inf]\n",
        r"dialogue\.reveal_weights\.0: Input should be a finite number",
    ),
    "anchors_too_many_per_month": (
        VALID + "anchors:\n  per_month: {bill: 10, note: 10, todo: 10, screen: 5}\n",
        r"anchors\.per_month: the rates add up to 35 anchors per month; at most 30",
    ),
    "anchors_per_app_above_10": (
        VALID + "anchors:\n  per_month: {bill: 12}\n",
        r"anchors\.per_month\.bill: .*less than or equal to 10",
    ),
    "anchors_negative": (
        VALID + "anchors:\n  per_month: {bill: -1}\n",
        r"anchors\.per_month\.bill: .*greater than or equal to 0",
    ),
    "anchors_nan": (
        VALID + "anchors:\n  per_month: {bill: .nan}\n",
        r"anchors\.per_month\.bill: Input should be a finite number",
    ),
    "anchors_unknown_app": (
        VALID + "anchors:\n  per_month: {bills: 1}\n",
        r"anchors\.per_month\.bills: Input should be 'bill'",
    ),
    "anchors_cannot_fit_in_a_chapter": (
        (
            "name: t\nseed: 1\npersonas:\n  - {language: en, start: 2026-01-01, months: 24}\n"
            "graph:\n  max_depth: 1\n"
        ),
        (
            r"c\.yaml:4: personas\.0: with seed 1 the chapter 20\d\d-\d\d\.\.20\d\d-\d\d "
            r"receives \d+ anchors, "
            r"but at graph\.max_depth 1 .* raise graph\.max_events"
        ),
    ),
    "anchors_cannot_fit_small_graph": (
        (
            "name: t\nseed: 1\npersonas:\n  - {language: en, start: 2026-01-01, months: 24}\n"
            "graph:\n  max_events: 8\nanchors:\n  per_month: {bill: 10, note: 10, todo: 10}\n"
        ),
        r"personas\.0: .* a chapter grounds at most \d+; lower anchors\.per_month",
    ),
    "depth_3": (VALID + "graph:\n  max_depth: 3\n", r"graph\.max_depth: Input should be 1 or 2"),
    "min_events_above_max_events": (
        VALID + "graph:\n  min_events: 20\n  max_events: 10\n",
        r"graph\.min_events: .*less than or equal to 2",
    ),
    "max_events_too_small": (
        VALID + "graph:\n  max_events: 4\n",
        r"graph\.max_events: .*greater than or equal to 8",
    ),
    "max_events_too_large": (
        VALID + "graph:\n  max_events: 100\n",
        r"graph\.max_events: .*less than or equal to 30",
    ),
    "episodes_per_month_zero": (
        VALID + "graph:\n  episodes_per_month: 0\n",
        r"graph\.episodes_per_month: .*greater than 0",
    ),
    "episode_weights_all_zero": (
        VALID
        + "episodes:\n  weights: {"
        + ", ".join(
            f"{k}: 0"
            for k in (
                "trip",
                "work_project",
                "health",
                "fitness",
                "social",
                "shopping",
                "cooking",
                "entertainment",
                "finance",
                "learning",
                "family",
                "weekend",
                "wellbeing",
                "tech",
            )
        )
        + "}\n",
        r"episodes: every episode kind has weight 0",
    ),
    "episode_weight_negative": (
        VALID + "episodes:\n  weights: {trip: -1}\n",
        r"episodes\.weights\.trip: .*greater than or equal to 0",
    ),
    "episode_kind_unknown": (
        VALID + "episodes:\n  weights: {skydiving: 1}\n",
        r"unknown episode kinds \['skydiving'\]",
    ),
    "change_unknown": (VALID + "changes:\n  allowed: [win_lottery]\n", r"unknown changes \['win_lottery'\]"),
    "change_listed_twice": (
        VALID + "changes:\n  allowed: [relocate, relocate]\n",
        r"changes listed twice: \['relocate'\]",
    ),
    "changes_per_month_too_high": (
        VALID + "changes:\n  per_month: 9\n",
        r"changes\.per_month: .*less than or equal to 4",
    ),
    "share_above_1": (
        VALID + "qa:\n  mid_trajectory_share: 1.5\n",
        r"qa\.mid_trajectory_share: .*less than or equal to 1",
    ),
    "share_below_0": (
        VALID + "qa:\n  single_choice_share: -0.1\n",
        r"qa\.single_choice_share: .*greater than or equal to 0",
    ),
    "qa_mix_negative": (
        VALID + "qa:\n  mix: {single_hop: 1.5, multi_hop: -0.5}\n",
        r"qa\.mix\.multi_hop: .*greater than or equal to 0",
    ),
    "qa_mix_not_summing_to_1": (
        VALID + "qa:\n  mix: {single_hop: 0.5}\n",
        r"qa\.mix must sum to 1 \(it sums to 0\.500\)",
    ),
    "qa_per_month_huge": (
        VALID + "qa:\n  per_month: 100000\n",
        r"qa\.per_month: .*less than or equal to 200",
    ),
    "omni_per_month_negative": (
        VALID + "omni:\n  per_month: -1\n",
        r"omni\.per_month: .*greater than or equal to 0",
    ),
    "omni_templates_empty": (
        VALID + "omni:\n  templates: []\n",
        r"omni\.templates: List should have at least 1 item",
    ),
    "omni_template_unknown": (VALID + "omni:\n  templates: [fax]\n", r"unknown templates \['fax'\]"),
}


@pytest.mark.parametrize("name", list(BAD))
def test_a_bad_config_is_refused_naming_the_key(tmp_path, name):
    config, match = BAD[name]
    synth_refuses(tmp_path, config, match)


def test_a_seed_override_out_of_range_is_refused(tmp_path):
    synth_refuses(tmp_path, VALID, r"--seed must be between 0 and 2\^63-1", "--seed", str(2**64))


def test_a_directory_as_config_is_refused(tmp_path):
    code, output = keme("synth", "--config", str(tmp_path), "--out", str(tmp_path / "out"))
    record("clear" if code == 2 else ("silent" if code == 0 else "crash"))
    assert code == 2 and "is a directory; pass a YAML file" in " ".join(output.split())


def test_an_unreadable_config_is_refused(tmp_path):
    link = tmp_path / "gone.yaml"
    link.symlink_to(tmp_path / "nowhere.yaml")
    code, output = keme("synth", "--config", str(link), "--out", str(tmp_path / "out"))
    record("clear" if code == 2 else ("silent" if code == 0 else "crash"))
    assert code == 2 and "cannot read (No such file or directory)" in " ".join(output.split())


def test_an_existing_file_as_out_is_refused(tmp_path):
    (tmp_path / "c.yaml").write_text(VALID)
    (tmp_path / "out").write_text("a user's file\n")
    code, output = keme("synth", "--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out"))
    record("clear" if code == 2 else ("silent" if code == 0 else "crash"))
    assert code == 2 and "is a file; a dataset is a directory" in " ".join(output.split())
    assert (tmp_path / "out").read_text() == "a user's file\n"


def test_the_real_console_script_refuses_invalid_utf8(tmp_path):
    (tmp_path / "c.yaml").write_bytes(b"name: caf\xe9\n")
    refuses(
        ["keme", "synth", "--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out")],
        match=r"c\.yaml:1:\s+not valid UTF-8",
    )


def test_the_real_console_script_refuses_an_existing_file_as_out(tmp_path):
    (tmp_path / "out").write_text("x")
    refuses(
        ["keme", "synth", "--config", str(ROOT / "configs/sample.yaml"), "--out", str(tmp_path / "out")],
        match=r"is a file",
    )


@pytest.mark.parametrize(
    "persona",
    [
        "{language: en, start: 2026-01-31, months: 1}",  # a first chapter of one day
        "{language: zh, start: 2028-02-29, months: 1, country: CN}",  # a leap day, Chinese calendar
        "{language: en, start: 2026-03-30, months: 3, country: DE}",  # short chapters at both ends
    ],
)
def test_an_edge_of_the_calendar_synthesizes(tmp_path, persona):
    (tmp_path / "c.yaml").write_text(f"name: edge\nseed: 4\npersonas:\n  - {persona}\n")
    code, output = keme("synth", "--config", str(tmp_path / "c.yaml"), "--out", str(tmp_path / "out"))
    record("ok" if code == 0 else ("crash" if code == cli.INTERNAL_ERROR else "clear"))
    assert code == 0, output
    code, output = keme("validate", str(tmp_path / "out"))
    assert code == 0, output
