"""Proofs as a table of typed operations: the schema documents them, loading refuses a mistyped one,
and every operation the demo uses re-derives its items' answers after a trip through qa.jsonl."""

from __future__ import annotations

import json
from datetime import date, datetime
from pathlib import Path

import pytest
from conftest import ROOT
from pydantic import TypeAdapter, ValidationError

from keme.cli import synthesize_dataset
from keme.dataset import Dataset
from keme.dataset.io import read_jsonl
from keme.errors import KemeError
from keme.models import ARGS_OF, OP_NAMES, Proof, QAItem, Quote
from keme.models.proof import CountArgs, SumArgs
from keme.qa import draft
from keme.qa.facts import worlds_of
from keme.qa.ops import OPS, ProofError, op
from keme.qa.verify import Verifier
from keme.synth.limits import load_config

PROOF = TypeAdapter(Proof)


def _item_line(proof: dict) -> str:
    """One qa.jsonl line, valid but for what `proof` says."""
    return json.dumps(
        {
            "id": "p01-q0001",
            "persona_id": "p01",
            "question": "How many days before the question did I pay the gym?",
            "answer": "3",
            "spec": {"kind": "number", "value": "3"},
            "type": "temporal_reasoning",
            "subtype": "temporal.days_before",
            "evidence": ["p01-s0001-m01"],
            "evidence_sessions": ["p01-s0001"],
            "asked_at": "2026-04-07T20:00:00",
            "hops": 1,
            "difficulty": "easy",
            "language": "en",
            "node": "p01-root",
            "proof": proof,
        }
    )


def _load_error(tmp_path: Path, proof: dict) -> str:
    path = tmp_path / "qa.jsonl"
    path.write_text(_item_line(proof) + "\n", encoding="utf-8")
    with pytest.raises(KemeError) as caught:
        read_jsonl(path, QAItem)
    return str(caught.value)


# ---------------------------------------------------------------- the models
def test_an_op_with_mistyped_args_is_refused_naming_the_op(tmp_path):
    message = _load_error(tmp_path, {"op": "sum", "quotes": [], "args": {"n": [2]}})
    assert "qa.jsonl:1" in message and "proof.sum.args.n" in message


def test_an_argument_the_op_does_not_take_is_refused(tmp_path):
    message = _load_error(tmp_path, {"op": "days_before", "quotes": [], "args": {"index": 0}})
    assert "proof.days_before.args.index" in message and "Extra inputs" in message


def test_an_unknown_op_is_refused_naming_the_line_and_the_known_ops(tmp_path):
    message = _load_error(tmp_path, {"op": "median", "quotes": [], "args": {}})
    assert "qa.jsonl:1" in message and "'median'" in message and "'days_between'" in message


def test_args_written_as_text_by_an_older_version_say_to_regenerate(tmp_path):
    message = _load_error(
        tmp_path, {"op": "absent", "quotes": [], "args": {"key": "pets.pet_name", "terms": ""}}
    )
    assert "terms=''" in message and "regenerate it with `keme synth`" in message


def test_numbers_and_dates_load_from_json_as_numbers_and_dates():
    proof = PROOF.validate_json(
        '{"op": "count", "quotes": [], "args": '
        '{"app": "bill", "needle": "Trader Joe", "start": "2026-04-01", "end": "2026-04-30"}}'
    )
    assert proof.args == CountArgs(
        app="bill", needle="Trader Joe", start=date(2026, 4, 1), end=date(2026, 4, 30)
    )


def test_a_relation_needs_exactly_one_of_label_and_label_key():
    with pytest.raises(ValidationError, match="exactly one of label and label_key"):
        PROOF.validate_python({"op": "relation", "quotes": [], "args": {"name_key": "k", "name": "Ana"}})


def test_the_schema_documents_every_op_and_its_arguments():
    schema = QAItem.model_json_schema()
    mapping = schema["properties"]["proof"]["discriminator"]["mapping"]
    assert sorted(mapping) == sorted(OP_NAMES)
    defs = schema["$defs"]
    assert defs["SumArgs"]["properties"]["n"]["anyOf"][0]["type"] == "integer"
    assert defs["AbsentArgs"]["properties"]["terms"]["type"] == "array"
    assert defs["CountArgs"]["properties"]["start"]["format"] == "date"
    assert defs["MajorityArgs"]["properties"]["field"]["enum"] == ["category", "payment_method", "merchant"]


# ---------------------------------------------------------------- the registry and the builder
def test_every_op_has_one_derivation_taking_its_arguments_model():
    assert sorted(OPS) == sorted(OP_NAMES)
    assert all(OPS[name].args is ARGS_OF[name] for name in OP_NAMES)


def test_registering_a_derivation_with_the_wrong_arguments_model_fails():
    with pytest.raises(TypeError, match="'count' takes CountArgs, not SumArgs"):
        op("count", SumArgs)(lambda ctx, item, args: "0")


def test_the_builder_reads_text_arguments_as_their_types():
    quotes = [Quote(message_id="p01-s0001-m01", text="$12.00")]
    assert draft.proof("sum", quotes, n="2").args.n == 2
    assert draft.proof("absent", [], terms="Luis|Aldi").args.terms == ["Luis", "Aldi"]
    assert draft.proof("absent", [], key="pets.pet_name", terms="").args.terms == []
    at = draft.proof("attribute", quotes, key="career.company", at="2026-04-03T09:15:00").args.at
    assert at == datetime(2026, 4, 3, 9, 15)


def test_the_builder_refuses_arguments_naming_the_op():
    with pytest.raises(ValueError, match="proof 'order' does not take these arguments: args.n"):
        draft.proof("order", [], n="2")


# ---------------------------------------------------------------- the demo, through qa.jsonl
@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("demo") / "data"
    synthesize_dataset(load_config(ROOT / "configs/demo.yaml"), out)
    return out


def test_every_op_the_demo_uses_rederives_its_items_after_loading(demo):
    data = Dataset.load(demo)
    verifiers = {w.persona.id: Verifier(w) for w in worlds_of(data)}
    used: dict[str, int] = {}
    wrong = []
    for item in data.qa:
        used[item.proof.op] = used.get(item.proof.op, 0) + 1
        verifier = verifiers[item.persona_id]
        if not verifier.expected_matches(item, verifier.derive(item)):
            wrong.append(item.id)
    assert wrong == []
    # most operations: every family (values, attributes, time, amounts, absence, premises, screenshots)
    assert len(used) >= 15, sorted(used)
    assert {"value", "attribute", "days_between", "majority", "absent", "premise", "image_fact"} <= set(used)


def test_a_demo_proof_round_trips_through_json_unchanged(demo):
    for item in Dataset.load(demo).qa:
        assert PROOF.validate_json(PROOF.dump_json(item.proof)) == item.proof


def test_a_forged_op_is_unsupported_not_a_crash(demo):
    data = Dataset.load(demo)
    world = worlds_of(data)[0]
    item = next(i for i in data.qa if i.persona_id == world.persona.id and i.proof.op == "days_between")
    forged = item.model_copy(update={"proof": item.proof.model_copy(update={"op": "median"})})
    with pytest.raises(ProofError, match="unknown proof operation 'median'"):
        Verifier(world).derive(forged)
