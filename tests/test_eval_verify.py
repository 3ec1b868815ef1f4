"""What eval checks before it scores: the dataset, the options, the systems' parameters, a resumed run's
identity."""

from __future__ import annotations

import json
import shutil

import pytest
from conftest import ROOT, sample_dataset

from baselines.bm25 import FlatBM25
from eval.registry import REGISTRY, check_params, parameters
from eval.replay import NO_VERIFY, replay_of
from eval.run import Settings, run
from keme.dataset import Dataset, DatasetError
from keme.errors import KemeError
from keme.validate import check_dataset, check_scoring, validate, verified_dataset

SAMPLE = ROOT / "data/sample"


@pytest.fixture
def sample(tmp_path):
    root = tmp_path / "d"
    shutil.copytree(SAMPLE, root)
    return root


def _rewrite(root, name, change):
    lines = [json.loads(line) for line in (root / name).read_text(encoding="utf-8").splitlines()]
    change(lines)
    (root / name).write_text(
        "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in lines), encoding="utf-8"
    )


# ---------------------------------------------------------------- the dataset
def test_the_sample_and_imported_datasets_pass_the_scoring_checks(tmp_path):
    from eval.importers.locomo import import_locomo
    from eval.importers.longmemeval import import_longmemeval

    import_locomo(ROOT / "tests/fixtures/locomo_mini.json", tmp_path / "locomo")
    import_longmemeval(ROOT / "tests/fixtures/longmemeval_mini.json", tmp_path / "lme")
    for root in (SAMPLE, tmp_path / "locomo", tmp_path / "lme"):
        assert check_scoring(Dataset.load(root)) == [], root


def test_an_edited_file_is_refused_before_anything_is_ingested(sample, tmp_path):
    _rewrite(sample, "qa.jsonl", lambda items: items[0]["evidence"].append("ghost"))
    with pytest.raises(
        DatasetError, match=r"(?s)SHA-256 differs.*ghost.*do not exist.*--no-verify"
    ) as caught:
        run(Settings(data=verified_dataset(sample, hint=NO_VERIFY), out=tmp_path / "run", systems=["bm25"]))
    assert {v.check for v in caught.value.violations} == {"manifest", "qa"}
    assert not (tmp_path / "run").exists()


def test_no_verify_scores_and_says_so(sample, tmp_path):
    _rewrite(sample, "qa.jsonl", lambda items: items[0].update(question="Edited?"))
    summary = run(Settings(data=Dataset.load(sample), out=tmp_path / "run", systems=["bm25"], limit=2))
    assert summary["verified"] is False and summary["note"].startswith("NOT VERIFIED")
    assert replay_of(Dataset.load(sample)).verified is False


def test_a_run_is_verified_only_when_the_harness_checked_the_dataset_it_scores(sample):
    checked = verified_dataset(sample)
    assert replay_of(checked).verified is True
    assert replay_of(Dataset.load(sample)).verified is False  # a library caller's dataset, never checked
    checked.qa = checked.qa[:3]  # a part replaced after the check
    assert replay_of(checked).verified is False


def test_a_dataset_validated_whole_is_verified_for_the_run_that_follows(sample):
    """keme demo validates (check_dataset) then evaluates the same object: its run is a verified one."""
    scan = Dataset.scan(sample)
    assert check_dataset(scan) == []
    assert replay_of(scan.dataset).verified is True


def test_a_dataset_with_a_violation_is_not_marked_checked(sample):
    _rewrite(sample, "qa.jsonl", lambda items: items[0].update(question="Edited?"))
    scan = Dataset.scan(sample)
    assert check_dataset(scan) != []
    assert replay_of(scan.dataset).verified is False


def test_a_question_edited_in_place_after_the_check_is_not_verified(sample):
    checked = verified_dataset(sample)
    checked.qa[0].answer = "something else"  # pydantic records can be changed in place
    assert replay_of(checked).verified is False


def test_the_content_hash_follows_the_content_not_the_path(sample):
    before = Dataset.load(sample).content_sha256()
    assert Dataset.load(SAMPLE).content_sha256() == before
    _rewrite(sample, "sessions.jsonl", lambda sessions: sessions[0]["messages"][0].update(content="changed"))
    assert Dataset.load(sample).content_sha256() != before


def test_validate_lists_every_bad_line_then_the_checks_that_still_apply(sample):
    lines = (sample / "qa.jsonl").read_bytes().splitlines(keepends=True)
    lines[0], lines[5] = b"{oops\n", b"\xff\n"
    (sample / "qa.jsonl").write_bytes(b"".join(lines))
    messages = [str(v) for v in validate(sample)]
    assert any("qa.jsonl:1: not valid JSON" in m for m in messages)
    assert any("qa.jsonl:6: not valid UTF-8" in m for m in messages)
    assert any("qa.jsonl: SHA-256 differs" in m for m in messages)
    assert messages[-1].endswith("checks that need qa.jsonl were skipped; they run once every line loads")


def test_load_dataset_names_every_bad_line(sample):
    (sample / "personas.jsonl").write_bytes(b"[]\n{}\n")
    with pytest.raises(
        DatasetError, match=r"(?s)2 problems:.*personas.jsonl:1: expected a JSON object.*personas.jsonl:2"
    ):
        Dataset.load(sample)


def test_a_dataset_without_questions_can_still_be_described(sample):
    (sample / "qa.jsonl").unlink()
    manifest = json.loads((sample / "manifest.json").read_text())
    del manifest["files"]["qa.jsonl"]
    (sample / "manifest.json").write_text(json.dumps(manifest))
    assert verified_dataset(sample, questions=None).qa == []
    with pytest.raises(DatasetError, match="no questions"):
        verified_dataset(sample)


def test_roles_that_leave_nothing_to_replay_are_refused(tmp_path):
    from eval.importers.longmemeval import import_longmemeval

    import_longmemeval(ROOT / "tests/fixtures/longmemeval_mini.json", tmp_path / "lme")
    with pytest.raises(KemeError, match=r"nothing to replay with only system messages kept"):
        replay_of(Dataset.load(tmp_path / "lme"), roles=("system",))


# ---------------------------------------------------------------- options and parameters
@pytest.mark.parametrize(
    "bad",
    [{"k": 0}, {"depth": -1}, {"limit": 0}, {"mode": "later"}, {"roles": ("robot",)}, {"images": "pixels"}],
)
def test_settings_refuse_bad_values_through_the_api_too(tmp_path, bad):
    with pytest.raises(KemeError, match="--" + next(iter(bad))):
        Settings(data=sample_dataset(), out=tmp_path, systems=["bm25"], **bad)


def test_declared_parameters_come_from_the_constructor():
    assert list(parameters(REGISTRY["memory_bank"])) == ["root", "semantic_limit", "episodic_limit"]
    assert list(parameters(REGISTRY["bm25"])) == ["k1", "b"]  # granularity is fixed by the registry entry
    assert "embedder" not in parameters(REGISTRY["dense"])  # an object, not something a file can hold


def test_params_are_converted_to_the_declared_types():
    assert check_params("bm25", {"k1": 1}) == {"k1": 1.0}
    with pytest.raises(
        KemeError, match=r"memory_bank has no parameter 'limt' \(parameters: root, semantic_limit"
    ):
        check_params("memory_bank", {"limt": 1})
    with pytest.raises(KemeError, match=r"recency.sessions: Input should be a valid integer \(got True\)"):
        check_params("recency", {"sessions": True})


# ---------------------------------------------------------------- resuming
class Tunable(FlatBM25):
    """BM25 whose fingerprint a test can change, as a code change to a system would."""

    version = "1"

    def config_fingerprint(self) -> str:
        return f"tunable-{Tunable.version}"


def test_a_system_configured_otherwise_is_not_resumed(tmp_path, temporary_system):
    name = temporary_system("tunable", lambda: Tunable())
    run(Settings(data=sample_dataset(), out=tmp_path, systems=[name, "recency"], limit=2))
    Tunable.version = "2"
    try:
        with pytest.raises(
            KemeError, match=r"tunable configured otherwise \(fingerprint tunable-1, now tunable-2\)"
        ):
            run(Settings(data=sample_dataset(), out=tmp_path, systems=[name, "recency"], limit=2))
        recency_log = (tmp_path / "recency/retrieve.jsonl").read_text()
        summary = run(
            Settings(data=sample_dataset(), out=tmp_path, systems=[name, "recency"], limit=2, force=True)
        )
    finally:
        Tunable.version = "1"
    assert summary["systems"][name]["fingerprint"] == "tunable-2"
    # the unchanged system was resumed
    assert (tmp_path / "recency/retrieve.jsonl").read_text() == recency_log


def test_the_same_run_resumes(tmp_path):
    first = run(Settings(data=sample_dataset(), out=tmp_path, systems=["bm25"], limit=2))
    again = run(Settings(data=sample_dataset(), out=tmp_path, systems=["bm25"], limit=2))
    assert again["systems"]["bm25"]["recall_any@5"] == first["systems"]["bm25"]["recall_any@5"]
    assert json.loads((tmp_path / "run.json").read_text())["fingerprints"].keys() == {"bm25"}


# ---------------------------------------------------------------- reports
HOSTILE = (
    "evil|name <script>alert(1)<img src=x onerror=alert(2)> `code` [link](javascript:alert)\nsecond line"
)


def test_leaderboard_markdown_escapes_system_names(tmp_path, temporary_system):
    name = temporary_system(HOSTILE, lambda: FlatBM25())
    run(Settings(data=sample_dataset(), out=tmp_path, systems=[name, "recency"], limit=2))
    lines = (tmp_path / "leaderboard.md").read_text().splitlines()
    tables = [block.splitlines() for block in "\n".join(lines).split("\n\n") if block.startswith("|")]
    assert len(tables[0]) == 4  # the leaderboard: header, rule, two systems
    for table in tables:  # the leaderboard and the failure analysis
        widths = {len(line.replace("\\|", "").split("|")) for line in table}
        assert len(widths) == 1  # no cell breaks out of its column
    text = "\n".join(lines)
    assert (
        "<script>" not in text
        and "<img" not in text
        and "&lt;script&gt;" in text
        and "\\`code\\`" in text
        and "\\[link\\]" in text
    )


def test_the_printed_leaderboard_shows_names_as_written(capsys):
    from keme.cli import print_leaderboard

    summary = {
        "note": "reader: [bold]x[/bold]",
        "verified": False,
        "systems": {"[red]styled[/red]": {"recall_any@5": 0.5, "publishable": True}},
    }
    print_leaderboard(summary, "data/[sample]")
    out = capsys.readouterr().out
    assert "[red]styled[/red]" in out and "[bold]x[/bold]" in out and "data/[sample]" in out
    assert "NOT VERIFIED" in out
