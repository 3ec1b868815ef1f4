"""`keme hardneg`: hard trajectories keep their evidence verbatim, their golds unique, and validate."""

from __future__ import annotations

import json
import random
import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
import realshape
from typer.testing import CliRunner

from keme.cli import app
from keme.dataset import Dataset
from keme.hardneg import HardnegSettings, harden
from keme.hardneg.prove import gold_forms, ledger_problem, states
from keme.hardneg.shapes import like, shape
from keme.hardneg.twins import make_twin
from keme.hardneg.voices import other_ask, other_person, quoted
from keme.models import Claim, Message, Session
from keme.qa.facts import worlds_of
from keme.qa.resolve import Ledger
from keme.text.tokens import count_tokens
from keme.validate import check_uniqueness, validate

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "data" / "sample"
FIXTURES = ROOT / "tests" / "fixtures"


@pytest.fixture(scope="module")
def source() -> Dataset:
    return Dataset.load(SAMPLE)


@pytest.fixture(scope="module")
def hard(source: Dataset, tmp_path_factory) -> Dataset:
    built, _ = harden(source, HardnegSettings(sample=16, seed=3))
    out = tmp_path_factory.mktemp("hard") / "hard"
    built.write(out)
    return Dataset.load(out)


def test_evidence_sessions_are_kept_byte_for_byte_but_for_their_trajectory(source, hard):
    originals = {s.id: s for s in source.sessions}
    items = {q.id: q for q in hard.qa}
    held = {s for q in items.values() for s in q.evidence_sessions}
    kept = [s for s in hard.sessions if s.id in held]
    assert kept and len(kept) == len(held)
    for session in kept:
        assert session.model_dump_json(exclude={"persona_id"}) == originals[session.id].model_dump_json(
            exclude={"persona_id"}
        )


def test_every_item_records_its_source_question_and_distractor_kinds(source, hard):
    asked = {q.id: q for q in source.qa}
    for item in hard.qa:
        original = asked[item.source_question_id]
        assert (item.question, item.answer, item.evidence) == (
            original.question,
            original.answer,
            original.evidence,
        )
        assert item.asked_at == original.asked_at
        assert item.distractor_kinds


def test_a_question_no_distractor_can_be_found_for_is_left_out_and_counted(source, monkeypatch):
    """A "hard" copy with nothing beside its evidence would be the original question, only shorter."""
    from keme.hardneg.build import Builder

    settings = HardnegSettings(sample=4, seed=3)
    starved = harden(source, settings)[0].qa[0].source_question_id
    interleaved = Builder._interleaved

    def nothing_for_one(self, item, trajectory, view, rng):
        return iter(()) if item.id == starved else interleaved(self, item, trajectory, view, rng)

    monkeypatch.setattr(Builder, "_interleaved", nothing_for_one)
    built, stats = harden(source, settings)
    assert starved not in {q.source_question_id for q in built.qa}
    assert stats["hardneg"]["left_out"]["no_distractor"] >= 1
    assert all(q.distractor_kinds for q in built.qa)


def _tokens_before(sessions: list[Session], asked_at: datetime) -> int:
    return sum(count_tokens(m.content) for s in sessions if s.end <= asked_at for m in s.messages)


def test_a_hard_haystack_is_no_longer_than_the_original_one_and_holds_the_evidence(source, hard):
    views = {v.persona.id: v for v in source.views()}
    for view in hard.views():
        for item in view.qa:
            original = views[item.persona_id.split("#")[0]]
            assert _tokens_before(view.sessions, item.asked_at) <= _tokens_before(
                original.sessions, item.asked_at
            )
            held = {s.id: s for s in view.sessions}
            assert all(held[sid].end <= item.asked_at for sid in item.evidence_sessions)


def test_no_distractor_claim_answers_a_kept_question(hard):
    assert check_uniqueness(hard.qa, {w.persona.id: w for w in worlds_of(hard)}) == []


def test_the_hard_dataset_validates(hard):
    assert [str(v) for v in validate(hard.root)] == []


def test_distractors_surround_the_evidence(hard):
    manifest = json.loads((hard.root / "manifest.json").read_text())
    made = manifest["stats"]["hardneg"]["distractors"]
    assert {"other_day", "other_record", "same_topic"} <= set(made)
    assert len(hard.sessions) > sum(len(q.evidence_sessions) for q in hard.qa)


def test_the_same_seed_builds_the_same_bytes_and_another_seed_does_not(source, tmp_path):
    runs = []
    for seed in (5, 5, 6):
        built, _ = harden(source, HardnegSettings(sample=6, seed=seed))
        out = tmp_path / f"run{len(runs)}"
        built.write(out)
        runs.append((out / "sessions.jsonl").read_bytes())
    assert runs[0] == runs[1]
    assert runs[0] != runs[2]


def _bill_session() -> tuple[Session, dict[str, list[Claim]]]:
    at = datetime(2026, 5, 10, 15, 38)
    texts = [
        ("system", "Payment of $103 to Walgreens · Health · Capital One debit card"),
        ("user", "Walgreens charged me $103 this afternoon. That goes in Health, right?"),
        ("assistant", "Yep, Health. Logged it."),
    ]
    messages = [
        Message(
            id=f"p01-s0061-m0{i}",
            role=role,
            app="Wallet" if role == "system" else None,
            content=text,
            timestamp=at + timedelta(seconds=30 * i),
        )
        for i, (role, text) in enumerate(texts, start=1)
    ]
    facts = {
        "p01-s0061-m01": [("amount", "103"), ("merchant", "Walgreens"), ("date", "2026-05-10")],
        "p01-s0061-m02": [("merchant", "Walgreens"), ("amount", "103")],
    }
    claims = {
        mid: [
            Claim(
                id=f"{mid}-c{k}",
                persona_id="p01",
                message_id=mid,
                speaker="app" if mid.endswith("1") else "user",
                subject="anchor:p01-a025",
                predicate=p,
                value=v,
                valid_from=at,
                said=messages[0].content,
            )
            for k, (p, v) in enumerate(pairs, start=1)
        ]
        for mid, pairs in facts.items()
    }
    session = Session(
        id="p01-s0061",
        persona_id="p01",
        event_id="p01-e1",
        language="en",
        pattern="share",
        start=messages[0].timestamp,
        end=messages[-1].timestamp,
        messages=messages,
    )
    return session, claims


def test_a_twin_on_another_day_says_another_amount_everywhere_and_records_it():
    session, claims = _bill_session()
    pool = {"amount": ["103", "47.48"], "merchant": ["Walgreens", "Rite Aid"]}
    twin = make_twin(
        session, claims, {"amount"}, pool, timedelta(days=-6), "#t1", "p01#h1", "other_day", random.Random(1)
    )
    assert twin is not None and twin.swapped == {"103": "47.48"}
    texts = [m.content for m in twin.session.messages]
    assert texts[0] == "Payment of $47.48 to Walgreens · Health · Capital One debit card"
    assert "103" not in " ".join(texts)
    record = {(c.predicate, c.value) for c in twin.claims if c.message_id == "p01-s0061-m01#t1"}
    assert record == {("amount", "47.48"), ("merchant", "Walgreens"), ("date", "2026-05-04")}
    assert {c.subject for c in twin.claims} == {"anchor:p01-a025#t1"}


def test_a_twin_leaves_out_a_chat_line_that_words_its_date():
    session, claims = _bill_session()
    worded = session.messages[2].model_copy(update={"content": "Logged: May 10 at Walgreens, $103."})
    claims[worded.id] = [
        Claim(
            id=f"{worded.id}-c1",
            persona_id="p01",
            message_id=worded.id,
            speaker="assistant",
            subject="anchor:p01-a025",
            predicate="date",
            value="2026-05-10",
            valid_from=worded.timestamp,
            said=worded.content,
        )
    ]
    session = session.model_copy(update={"messages": [*session.messages[:2], worded]})
    twin = make_twin(
        session,
        claims,
        {"amount"},
        {"amount": ["47.48"]},
        timedelta(days=3),
        "#t1",
        "p01#h1",
        "other_day",
        random.Random(1),
    )
    assert twin is not None
    assert [m.id for m in twin.session.messages] == ["p01-s0061-m01#t1", "p01-s0061-m02#t1"]


def test_another_persons_words_are_claims_about_that_person_with_a_value_never_held():
    at = datetime(2026, 4, 1, 20, 0)
    line = Message(
        id="p01-s0009-m03", role="user", content="since I'm vegan I'm bringing my own stuff lol", timestamp=at
    )
    claim = Claim(
        id="p01-s0009-m03-c1",
        persona_id="p01",
        message_id=line.id,
        speaker="user",
        subject="persona",
        predicate="diet.diet_type",
        value="vegan",
        valid_from=at,
        said=line.content,
    )
    pool = {"diet.diet_type": ["vegan", "gluten-free", "pescatarian"]}
    held = {"diet.diet_type": {"vegan", "gluten-free"}}
    made = other_person(line, [claim], ["Noah"], pool, held, "p01-v1-1", "p01#h1", "en", at, random.Random(2))
    assert made is not None
    session, claims = made
    assert "pescatarian" in session.messages[0].content and "vegan" not in session.messages[0].content
    assert [(c.subject, c.predicate, c.value) for c in claims] == [
        ("person:Noah", "diet.diet_type", "pescatarian")
    ]


def test_another_person_asking_the_same_question_is_a_claim_about_them_said_as_an_amount():
    at = datetime(2026, 5, 20, 9, 0)
    question = "How much did I pay at Fandango on April 14?"
    session, claims = other_ask(
        question, "Andre", ("amount", "272.45", "$272.45"), "p01-a1-1", "p01#h1", "en", at, random.Random(0)
    )
    first = session.messages[0]
    assert question in first.content and "Andre" in first.content and "$272.45" in first.content
    assert [(c.subject, c.predicate, c.value, c.message_id) for c in claims] == [
        ("person:Andre", "amount", "272.45", first.id)
    ]
    assert session.messages[1].smalltalk and not session.messages[1].claims


@pytest.mark.parametrize(
    "gold,shaped",
    [
        ("$103", "en:money$"),
        ("¥623", "en:money¥"),
        ("Keisha", "en:person"),
        ("余娜", "zh:person"),
        ("Vancouver", "en:name"),
        ("7 May 2023", "en:date"),
        ("C. trail running", "en:phrase"),
        ("You never worked at Lanternfish Games; you work at Bellweather Retail.", None),
    ],
)
def test_a_free_text_answer_has_a_shape_by_script_and_form(gold, shaped):
    assert shape(gold) == shaped


def test_only_a_value_of_the_golds_shape_stands_in_for_it():
    golds = ["$118.65", "¥338.00", "A. aisle seat", "Sweetgreen", "堂弟", "Tamara", "$5,000"]
    assert like("$103", golds, random.Random(0))[:2] == ["$118.65", "$5,000"]
    assert all(v.startswith("$") for v in like("$103", golds, random.Random(0)))
    assert like("Keisha", golds, random.Random(0)) == ["Tamara"]
    assert like("trail running", golds, random.Random(0)) == ["aisle seat"]


def test_a_friends_quote_swaps_every_gold_and_names_the_day_the_question_asks_about_as_theirs():
    line = Message(
        id="c1:D32:1",
        role="user",
        speaker="Ann",
        content="Payment of $55.15 to Best Buy · Shopping",
        timestamp=datetime(2026, 4, 7, 10, 0),
    )
    session, claims = quoted(
        line,
        [(["$55.15"], ["$119.82"]), (["Shopping"], ["Health"])],
        ["April 7"],
        "assistant",
        "c1-v1-1",
        "c1#h1",
        "en",
        datetime(2026, 4, 20, 9, 0),
        random.Random(0),
    )
    said = session.messages[0]
    assert "$119.82" in said.content and "$55.15" not in said.content
    assert "Health" in said.content and "Shopping" not in said.content  # another question's gold
    assert "April 7" in said.content and "theirs" in said.content.lower()
    assert said.speaker == "Ann" and claims == []


def test_imported_asks_answer_with_a_value_of_the_golds_shape_and_language(source, tmp_path):
    from eval.importers.locomo import export_locomo, import_locomo

    # the sample as LoCoMo has it (free text only), in both languages
    export_locomo(source, tmp_path / "locomo.json")
    import_locomo(tmp_path / "locomo.json", tmp_path / "imported")
    imported = Dataset.load(tmp_path / "imported")
    golds = {q.id: q.answer for q in imported.qa}
    languages = {p.id: p.language for p in imported.personas}
    answered: list[tuple] = []
    for seed in range(4):  # which asks carry a friend's answer is drawn: a few seeds see both languages
        built, _ = harden(imported, HardnegSettings(sample=len(imported.qa), seed=seed))
        asks = [
            (q, m.content)
            for q in built.qa
            for s in built.sessions
            if s.persona_id == q.persona_id
            for m in s.messages[:1]
            if q.question in m.content and "-a" in s.id.split(":")[-1]
        ]
        answered += [(q, said) for q, text in asks if len(said := text.rsplit(q.question, 1)[1]) > 3]
    assert len(answered) >= 5
    # the sample's zh questions this turn are phrases and names with no like question to stand in (their
    # asks go unanswered): the language rule below is checked on every answer there is
    assert "en" in {languages[q.source_question_id.split(":")[0]] for q, _ in answered}
    for item, said in answered:
        gold = golds[item.source_question_id]  # as a whole value: "April 12" does not say "April 1"
        assert re.search(r"(?<![\w])" + re.escape(gold) + r"(?![\w])", said) is None, (gold, said)
        chinese = any("\u4e00" <= c <= "\u9fff" for c in said)
        assert chinese == (languages[item.source_question_id.split(":")[0]] == "zh"), said
        if item.answer.startswith("$"):
            assert "$" in said


def test_a_question_asked_by_others_comes_after_everything_it_asks_about(hard):
    for view in hard.views():
        for item in view.qa:
            evidence_end = max(s.end for s in view.sessions if s.id in item.evidence_sessions)
            asks = [
                s
                for s in view.sessions
                if s.messages[0].role == "user" and f'"{item.question}"' in s.messages[0].content
            ]
            assert all(evidence_end < s.start < item.asked_at for s in asks), item.id


def test_a_mined_copy_of_the_evidence_counts_as_the_evidence(source, hard):
    copies = {m.id for s in hard.sessions if "#h" in s.id and s.id.endswith("m") for m in s.messages}
    originals = {q.id: q for q in source.qa}
    for item in hard.qa:
        for message_id, alternatives in item.also_supported_by.items():
            assert message_id in item.evidence
            held = {m.id for s in hard.sessions if s.persona_id == item.persona_id for m in s.messages}
            assert set(alternatives) <= held
            for copy in set(alternatives) & copies:
                origin = copy.split("#h")[0]
                assert origin == message_id or origin in originals[
                    item.source_question_id
                ].also_supported_by.get(message_id, [])


def test_the_ledger_proof_refuses_a_distractor_that_gives_the_gold_subject_another_value(source):
    views = {v.persona.id: v for v in source.views()}
    amounts = {c.id for v in views.values() for c in v.claims if c.predicate == "amount"}
    # a question whose answer rests on a payment's amount (the sample's mix decides which kinds it has)
    item = next(q for q in source.qa if q.queries and q.type != "adversarial" and amounts & set(q.claims))
    view = views[item.persona_id]
    ledger = Ledger(list(view.claims), view.messages, [s.start for s in view.sessions])
    assert ledger_problem(item, ledger) is None
    stated = next(c for c in view.claims if c.id in item.claims and c.predicate == "amount")
    other = stated.model_copy(update={"id": f"{stated.id}x", "value": "999.99"})
    assert ledger_problem(item, Ledger([*view.claims, other], view.messages)) is not None


def test_the_rule_check_finds_the_gold_as_a_whole_phrase_only():
    from keme.models import AnswerSpec, QAItem

    item = QAItem.model_construct(
        answer="Harbor Oyster Bar", spec=AnswerSpec(kind="entity", value="Harbor Oyster Bar"), options=[]
    )
    forms = gold_forms(item)
    assert states("We met at harbor oyster bar, as usual.", forms) == "harbor oyster bar"
    assert states("We met at Harbor Oyster Barn.", forms) is None


@pytest.mark.parametrize(
    "fixture,importer", [("locomo_published.json", "locomo"), ("longmemeval_published.json", "longmemeval")]
)
def test_a_haystack_with_no_room_beside_its_evidence_is_refused_with_the_reason(fixture, importer, tmp_path):
    runner = CliRunner()
    imported = tmp_path / "imported"
    assert (
        runner.invoke(app, ["import", importer, str(FIXTURES / fixture), "--out", str(imported)]).exit_code
        == 0
    )
    result = runner.invoke(app, ["hardneg", str(imported), "--out", str(tmp_path / "hard")])
    assert result.exit_code == 2 and "no distractor fits" in result.output, result.output
    assert not (tmp_path / "hard").exists()


@pytest.mark.parametrize("importer", ["locomo", "longmemeval"])
def test_imported_datasets_get_hard_sets_that_validate(importer, tmp_path):
    """On a haystack of a real release's size (the published-shape fixture, everyday sessions around it)."""
    runner = CliRunner()
    imported, out = tmp_path / "imported", tmp_path / "hard"
    source = getattr(realshape, importer)(tmp_path / f"{importer}.json")
    assert runner.invoke(app, ["import", importer, str(source), "--out", str(imported)]).exit_code == 0
    result = runner.invoke(app, ["hardneg", str(imported), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert validate(out) == []
    hard = Dataset.load(out)
    assert hard.qa and all(item.distractor_kinds for item in hard.qa)
    texts = {s.id: "\n".join(m.content for m in s.messages) for s in hard.sessions}
    for item in hard.qa:
        assert item.source_question_id
        for sid, text in texts.items():
            if sid not in item.evidence_sessions:
                assert states(text, gold_forms(item)) is None


def test_the_cli_writes_a_hard_set_that_exports_to_locomo(tmp_path):
    runner = CliRunner()
    out = tmp_path / "hard"
    result = runner.invoke(app, ["hardneg", str(SAMPLE), "--out", str(out), "--sample", "5", "--seed", "1"])
    assert result.exit_code == 0, result.output
    assert "5 of 5 questions kept" in " ".join(result.output.split())
    exported = tmp_path / "hard.json"
    result = runner.invoke(app, ["export", "locomo", str(out), "--out", str(exported)])
    assert result.exit_code == 0, result.output
    samples = json.loads(exported.read_text())
    assert sum(len(s["qa"]) for s in samples) == len(Dataset.load(out).qa)


def test_an_unknown_question_id_is_a_clear_error(tmp_path):
    result = CliRunner().invoke(
        app, ["hardneg", str(SAMPLE), "--out", str(tmp_path / "h"), "--questions", "p09-q1"]
    )
    assert result.exit_code != 0
    assert "p09-q1 not in the dataset" in " ".join(result.output.split())
    assert not (tmp_path / "h").exists()


def _scripted(tmp_path):
    from llm_doubles import ScriptedProvider

    from keme.llm import LLMClient, LLMConfig

    return LLMClient(LLMConfig(cache_dir=str(tmp_path / "cache")), provider=ScriptedProvider())


@pytest.mark.parametrize("brain", ["llm", "hybrid"])
def test_the_llm_brain_writes_distractors_that_carry_no_claims_and_state_no_gold(brain, source, tmp_path):
    built, stats = harden(source, HardnegSettings(sample=6, seed=1, brain=brain), _scripted(tmp_path))
    kinds = {k for q in built.qa for k in q.distractor_kinds}
    assert "written" in kinds
    if brain == "llm":
        assert kinds <= {"written", "asked_before", "other_ask", "like_question"}
    else:
        assert kinds & {"other_day", "other_subject", "other_record", "same_topic", "other_person"}
    written = [s for s in built.sessions if "-w" in s.id]
    assert written and all(not m.claims for s in written for m in s.messages)
    for item in built.qa:
        for session in written:
            if session.persona_id == item.persona_id:
                assert states("\n".join(m.content for m in session.messages), gold_forms(item)) is None
    assert stats["hardneg"]["brain"] == brain
    assert stats["hardneg"]["llm"]["stages"]["hardneg.writer"]["calls"] >= len(written)
    built.write(tmp_path / "hard")
    assert validate(tmp_path / "hard") == []


def test_a_written_chat_that_answers_names_or_numbers_is_refused(source):
    from keme.hardneg.written import Written, problems

    shop = "netflix"
    item = next(q for q in source.qa if q.language == "en").model_copy(
        update={"question": "How much did I pay at Netflix on March 3?", "answer": "$15.49"}
    )

    def chat(*lines: str) -> Written:
        return Written.model_validate(
            {
                "exchanges": [
                    {"user_message": u, "assistant_reply": a} for u, a in zip(lines[::2], lines[1::2])
                ]
            }
        )

    calm = chat(
        f"my friend asked what a {shop} payment usually comes to", "that depends on the plan they chose"
    )
    assert problems(calm, item, [], frozenset(), "en") == []
    answer = chat(
        f"my friend says the {shop} payment came to {item.answer} again", "that sounds like the usual plan"
    )
    assert any("states the answer" in p for p in problems(answer, item, [], frozenset(), "en"))
    number = chat(f"my friend paid {shop} twice, 12 times a year", "that depends on the plan they chose")
    assert any("number" in p for p in problems(number, item, [], frozenset(), "en"))
    named = chat(f"my friend asked what a {shop} payment usually comes to", "ask Ethan, he knows the plans")
    assert any("Ethan" in p for p in problems(named, item, [], frozenset({"Ethan"}), "en"))
    chinese = chat(f"我朋友问 {shop} 的付款一般是多少钱呀", "that depends on the plan they chose")
    assert any("not written in English" in p for p in problems(chinese, item, [], frozenset(), "en"))


def test_the_llm_brain_against_a_dead_endpoint_is_a_clear_error_and_writes_nothing(tmp_path):
    from keme.llm.server import free_port

    settings = tmp_path / "llm.yaml"
    settings.write_text(
        json.dumps(
            {
                "provider": "openai",
                "base_url": f"http://127.0.0.1:{free_port()}/v1",
                "model": "probe-model",
                "api_key_env": None,
                "cache_dir": str(tmp_path / "cache"),
                "timeout_s": 1,
                "connect_timeout_s": 1,
                "retry_budget_s": 1,
                "max_retries": 1,
            }
        )
    )
    out = tmp_path / "h"
    result = CliRunner().invoke(
        app,
        [
            "hardneg",
            str(SAMPLE),
            "--out",
            str(out),
            "--sample",
            "3",  # the third question of the shipped sample is the first that asks the writer
            "--brain",
            "llm",
            "--llm",
            str(settings),
        ],
    )
    assert result.exit_code != 0
    assert "cannot connect" in " ".join(result.output.split())
    assert not out.exists()


def test_a_kind_left_out_is_not_made_and_an_unknown_kind_is_a_clear_error(tmp_path):
    runner = CliRunner()
    out = tmp_path / "h"
    args = ["hardneg", str(SAMPLE), "--out", str(out), "--sample", "4"]
    result = runner.invoke(app, [*args, "--without", "other_ask,asked_before"])
    assert result.exit_code == 0, result.output
    kinds = {k for q in Dataset.load(out).qa for k in q.distractor_kinds}
    assert kinds and not kinds & {"other_ask", "asked_before"}
    result = runner.invoke(app, [*args, "--force", "--without", "other_asks"])
    assert result.exit_code != 0
    assert "unknown distractor kind other_asks" in " ".join(result.output.split())


@pytest.fixture(scope="module")
def hard_all(source: Dataset) -> Dataset:
    """Built around every question of the sample: a like question is found for some, not for any 16."""
    return harden(source, HardnegSettings(seed=3))[0]


def test_a_like_question_is_another_question_of_the_dataset_asked_before_and_stating_nothing(
    source, hard_all
):
    hard = hard_all
    questions = {q.question for q in source.qa}
    likes = [s for s in hard.sessions if re.search(r"-l\d+-\d+$", s.id)]
    assert likes
    for session in likes:
        own = {q.question for q in hard.qa if q.persona_id == session.persona_id}
        asked = session.messages[0].content
        assert any(q in asked for q in questions - own), asked
        assert all(not m.claims and m.smalltalk for m in session.messages)


LIKENESS = """
from keme.dataset import Dataset
from keme.hardneg.build import Builder, HardnegSettings, Report
data = Dataset.load("data/sample")
builder = Builder(data, HardnegSettings(), Report())
for a in data.qa:
    print(" ".join(repr(builder._likeness(a, b)) for b in data.qa))
"""


def test_how_alike_two_questions_are_does_not_depend_on_the_process():
    """Which like question comes first must not change with Python's hash seed (it did: a float sum over
    a set), or the same seed would build another hard set in another process."""
    import os
    import subprocess
    import sys

    runs = [
        subprocess.run(
            [sys.executable, "-c", LIKENESS],
            check=True,
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=os.environ | {"PYTHONHASHSEED": hash_seed},
        ).stdout
        for hash_seed in ("1", "2", "3")
    ]
    assert runs[0] and runs[0] == runs[1] == runs[2]
