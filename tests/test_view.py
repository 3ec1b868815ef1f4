"""`keme view`: the static site, driven in real headless chromium from file:// (no server, no network).

The site is built from the shipped sample and a run whose system and reader are scripted, so that each
failure category of eval/failures.py happens to exactly the question it was constructed for.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import sample_dataset, sample_phone_update

from eval.contract import Hit, Query, Retrieval, Usage
from eval.failures import LABELS
from eval.run import Settings, run
from eval.view.data import read_run
from eval.view.site import write_site
from keme.dataset.dataset import Dataset
from keme.errors import KemeError
from keme.models import QAItem, Session
from keme.omni.render import CHROMIUM_ARGS, find_chromium

pytestmark = pytest.mark.chromium

# which phone now (the phone after an update): tests/test_failures.py, conftest.sample_phone_update
PHONE = sample_phone_update()
STALE = PHONE.question
OLD_PHONE = PHONE.old_message  # the old value in context, the update not: stale
NOISE = PHONE.noise
K = 3
HOSTILE = '<script>window.pwned = 1</script><img src="x" onerror="window.pwned = 2">'


def constructed(data: Dataset) -> dict[str, str]:
    """question id -> the failure category the scripted run gives it (the other questions are right)."""
    answerable = [  # the noise a scripted miss retrieves holds none of their evidence
        q
        for q in data.qa
        if q.evidence and q.id != STALE and q.format == "open" and not set(q.evidence) & set(NOISE)
    ]
    unanswerable = next(q for q in data.qa if q.spec.kind == "abstain")
    return {
        STALE: "stale",
        answerable[0].id: "not_retrieved",
        answerable[1].id: "ranked_out",
        answerable[2].id: "abstained_answerable",
        answerable[3].id: "answered_wrong",
        unanswerable.id: "answered_unanswerable",
    }


class ScriptedSystem:
    """Retrieves what each question's category needs: the gold first unless told otherwise."""

    name = "scripted"

    def __init__(self, questions: dict[str, QAItem], plan: dict[str, str]):
        self.questions, self.plan = questions, plan

    def config_fingerprint(self) -> str:
        return "scripted-1"

    def reset(self, scope: str) -> None:
        pass

    def ingest(self, scope: str, session: Session) -> Usage:
        return Usage()

    def flush(self, scope: str) -> None:
        pass

    def retrieve(self, scope: str, query: Query, k: int) -> Retrieval:
        item = self.questions[query.question_id]
        gold = list(item.evidence)
        ranked = {
            "stale": [OLD_PHONE] + NOISE,
            "not_retrieved": NOISE,
            "ranked_out": NOISE + gold,
        }.get(self.plan.get(item.id, ""), gold + NOISE)
        hits = [Hit(text=m, score=1.0 / (i + 1), message_ids=[m]) for i, m in enumerate(ranked)]
        return Retrieval(hits=hits)


class ScriptedReader:
    name = "scripted-reader"

    def __init__(self, plan: dict[str, str]):
        self.plan = plan

    def answer(self, question: QAItem, context: str) -> tuple[str, Usage]:
        category = self.plan.get(question.id)
        if category == "abstained_answerable":
            return "I don't know", Usage()
        if category in ("stale", "not_retrieved", "ranked_out", "answered_wrong", "answered_unanswerable"):
            return "a purple umbrella", Usage()
        return question.answer, Usage()


@pytest.fixture(scope="module")
def site(tmp_path_factory, request):
    data = sample_dataset()
    plan = constructed(data)
    questions = {q.id: q for q in data.qa}
    name = "scripted"
    from eval.registry import REGISTRY, SystemSpec

    REGISTRY[name] = SystemSpec(name, lambda: ScriptedSystem(questions, plan), "scripted failures")
    request.addfinalizer(lambda: REGISTRY.pop(name, None))
    base = tmp_path_factory.mktemp("view")
    out = base / "run"
    run(Settings(data=data, out=out, systems=[name, "bm25"], k=K, reader=ScriptedReader(plan)))
    write_site(data, [read_run(out, data)], base / "site")
    return base / "site", data, plan


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Page:
    """A page of the site that records console errors and every request it makes."""

    def __init__(self, browser, root: Path):
        self.root = root
        self.page = browser.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.page.on("console", lambda m: self.errors.append(m.text) if m.type == "error" else None)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))

    def open(self, route: str):
        self.page.goto(f"{self.root.resolve().as_uri()}/index.html#{route}")
        self.page.wait_for_selector("body[data-ready]", timeout=15_000)
        return self.page

    def outside(self) -> list[str]:
        return [u for u in self.requests if not u.startswith(self.root.resolve().as_uri() + "/")]


@pytest.fixture
def page(browser, site):
    opened = Page(browser, site[0])
    yield opened
    opened.page.close()


def test_every_page_type_renders_without_errors_or_requests_outside_the_site(page, site):
    _, data, plan = site
    persona = data.personas[0]
    session = next(s for s in data.sessions if s.persona_id == persona.id)
    routes = {
        "/": "sample",
        "/p/0": "Attributes over time",
        f"/p/0/s/{session.id}": f"Session {session.id}",
        "/questions": "Questions",
        f"/p/0/q/{STALE}": "Evidence in context",
    }
    for route, heading in routes.items():
        shown = page.open(route)
        assert heading in shown.inner_text("main"), route
        assert not shown.query_selector(".error"), (route, shown.inner_text("main")[:300])
    assert page.errors == [] and page.outside() == []


def test_the_persona_shows_each_attribute_version_with_its_evidence(page, site):
    _, data, _ = site
    persona = data.personas[0]
    changed = next(a for a in persona.attributes() if len(a.versions) > 1 and a.versions[-1].evidence)
    row = page.open("/p/0").locator("table.attributes tr", has_text=changed.key).first
    text = row.inner_text()
    assert all(v.value in text for v in changed.versions) and changed.versions[-1].evidence[0] in text


def test_a_filter_by_type_and_language_lists_exactly_those_questions(page, site):
    _, data, _ = site
    shown = page.open("/questions?type=temporal_reasoning&language=zh")
    expected = {q.id for q in data.qa if q.type == "temporal_reasoning" and q.language == "zh"}
    listed = {row.get_attribute("data-id") for row in shown.query_selector_all("table.questions tbody tr")}
    assert expected and listed == expected


def test_typing_in_search_narrows_the_list_to_the_matching_question(page, site):
    _, data, _ = site
    item = data.qa[7]
    shown = page.open("/questions")
    shown.fill("input[name=text]", item.question)
    listed = {row.get_attribute("data-id") for row in shown.query_selector_all("table.questions tbody tr")}
    assert item.id in listed and len(listed) == sum(
        1 for q in data.qa if item.question.lower() in q.question.lower()
    )
    assert "text=" in shown.evaluate("location.hash")  # the filter is kept in the address


def test_the_failure_categories_of_a_constructed_run_come_out_as_constructed(page, site):
    _, data, plan = site
    for qid, category in plan.items():
        n = next(i for i, p in enumerate(data.personas) if p.id == qid.split("-")[0])
        shown = page.open(f"/p/{n}/q/{qid}?a=scripted&b=bm25")
        row = shown.locator("table.outcomes tr", has_text="scripted").first.inner_text()
        assert LABELS[category] in row, (qid, category, row)
    listed = page.open("/questions?run=0&system=scripted&outcome=wrong")
    wrong = {row.get_attribute("data-id") for row in listed.query_selector_all("table.questions tbody tr")}
    assert wrong == set(plan)


def test_the_question_page_marks_gold_hits_and_the_first_gold_rank(page, site):
    _, data, plan = site
    ranked_out = next(q for q, c in plan.items() if c == "ranked_out")
    shown = page.open(f"/p/0/q/{ranked_out}?a=scripted&b=bm25")
    column = shown.locator(".system-column").first
    assert f"first gold hit at rank {len(NOISE) + 1}" in column.inner_text()
    gold_hit = column.locator(".hit.gold").first
    assert "outside the reader's context" in gold_hit.inner_text()


def test_markup_in_a_message_shows_as_literal_text(browser, tmp_path):
    data = Dataset.load(sample_dataset().root)
    session = next(s for s in data.sessions if len(s.messages) > 1)  # a message after the first
    session.messages[1].content = HOSTILE
    out = tmp_path / "site"
    write_site(data, [], out)
    page = Page(browser, out)
    try:
        shown = page.open(f"/p/0/s/{session.id}")
        assert HOSTILE in shown.inner_text("main")
        assert shown.evaluate("window.pwned") is None and not shown.query_selector("main img[src='x']")
        assert page.outside() == []
    finally:
        page.page.close()


def test_a_run_of_another_dataset_is_refused(site, tmp_path):
    _, data, _ = site
    run_dir = tmp_path / "run"
    shutil.copytree(site[0].parent / "run", run_dir)
    identity = json.loads((run_dir / "run.json").read_text())
    (run_dir / "run.json").write_text(json.dumps(identity | {"dataset_sha256": "0" * 64}))
    with pytest.raises(KemeError, match="scored another dataset"):
        read_run(run_dir, data)


def test_an_existing_site_is_replaced_only_with_force(site):
    root, data, _ = site
    with pytest.raises(KemeError, match="--force"):
        write_site(data, [], root)


def test_the_site_has_a_policy_that_forbids_the_network(site):
    html = (site[0] / "index.html").read_text()
    assert "connect-src 'none'" in html and "default-src 'none'" in html


def test_keme_view_writes_the_site_and_refuses_a_run_directory_that_is_not_one(tmp_path):
    from typer.testing import CliRunner

    from keme.cli import app

    root = sample_dataset().root
    done = CliRunner().invoke(app, ["view", str(root), "--out", str(tmp_path / "site")])
    assert done.exit_code == 0 and f"{len(sample_dataset().qa)} questions" in done.output
    assert (tmp_path / "site" / "index.html").exists() and (tmp_path / "site" / "data" / "index.js").exists()
    arguments = ["view", str(root), "--run", str(tmp_path), "--out", str(tmp_path / "s2")]
    refused = CliRunner().invoke(app, arguments)
    assert refused.exit_code != 0 and "is it a finished `keme eval` run?" in refused.output
    assert not (tmp_path / "s2").exists()
