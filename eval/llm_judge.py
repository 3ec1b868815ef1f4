"""LLM judges: three prompt sets, each run k times (default 3) so accuracy comes with a spread.

- `mobilemem`: strict — CORRECT only if every key element of the gold answer is
  present and nothing contradicts it; other date formats are fine.
- `longmemeval`: per question type, in the spirit of LongMemEval's judge: an
  off-by-one tolerance for counts of days in temporal questions, the updated
  answer for knowledge updates, recognising unanswerable questions for
  abstention.
- `locomo`: lenient — the same thing, however worded.

Runs differ by sampling seed (temperature 0.7): a judge that flips between runs
shows up as a large standard deviation rather than a hidden coin toss.

A run without a verdict — the call failed, or the reply is unreadable — is a
failure, counted against `llm.max_failure_fraction`, never a silent WRONG: the
verdict stands on the runs that gave one, and with none the judge raises
CallFailed (the question stays unjudged, and a rerun judges it).
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel

from eval.judge import Verdict
from eval.prompts import render
from keme.llm import CallFailed, LLMClient, StructuredOutputError
from keme.llm.client import parse_structured
from keme.models import QAItem

PROMPT_SETS = ("mobilemem", "longmemeval", "locomo")


class Label(BaseModel):
    label: Literal["CORRECT", "WRONG", "yes", "no"]


class LLMJudge:
    name = "llm"

    def __init__(
        self, client: LLMClient, prompts: str = "mobilemem", runs: int = 3, temperature: float = 0.7
    ):
        if prompts not in PROMPT_SETS:
            raise ValueError(f"judge prompts must be one of {PROMPT_SETS}, not {prompts!r}")
        self.client, self.prompts, self.runs, self.temperature = client, prompts, runs, temperature

    def _prompt(self, item: QAItem, prediction: str) -> str:
        gold = item.answer if not item.options else f"{item.answer} (options: {'; '.join(item.options)})"
        return render(
            f"judge_{self.prompts}", question=item.question, gold=gold, answer=prediction, kind=item.type
        )

    def judge(self, item: QAItem, prediction: str) -> Verdict:
        prompt = self._prompt(item, prediction)
        runs: list[bool] = []
        problems: list[str] = []
        for run in range(self.runs):
            try:
                raw = self.client.chat(
                    [{"role": "user", "content": prompt}],
                    stage="eval.judge",
                    schema=Label.model_json_schema(),
                    max_tokens=16,
                    temperature=self.temperature,
                    seed=run,
                ).content
            except CallFailed as exc:  # counted by the client
                problems.append(str(exc))
                continue
            try:
                runs.append(parse_structured(raw, Label).label in ("CORRECT", "yes"))
            except StructuredOutputError as exc:
                self.client.unusable("eval.judge")
                problems.append(f"unreadable verdict: {exc}")
        if not runs:
            raise CallFailed(
                f"the LLM judge gave no verdict for {item.id} in {self.runs} runs: {problems[-1]}"
            )
        correct = sum(runs) * 2 > len(runs)
        missing = f"; {len(problems)} run(s) without a verdict" if problems else ""
        return Verdict(
            correct=correct,
            label="CORRECT" if correct else "WRONG",
            runs=runs,
            rationale=f"{self.prompts} prompts, {sum(runs)}/{len(runs)} runs CORRECT{missing}",
        )


def calibrate(judge, items: list[QAItem], probes: int = 8) -> dict[str, float | int]:
    """Ask the judge about answers whose verdict is known: the gold answer itself, and another question's
    gold.

    A judge that accepts most known-wrong answers (small models tend to say
    CORRECT to everything) makes its accuracy meaningless; the report says so.
    """
    answerable = sorted((i for i in items if i.spec.kind not in ("abstain",)), key=lambda i: i.id)
    step = max(1, len(answerable) // probes)
    chosen = answerable[::step][:probes]
    right: list[bool] = []
    wrong_accepted: list[bool] = []
    failed = 0
    for index, item in enumerate(chosen):
        wrong = next(
            (
                o.answer
                for o in answerable[index + 1 :] + answerable[:index]
                if o.answer.strip().lower() != item.answer.strip().lower()
            ),
            None,
        )
        for answer, into in ((item.answer, right), (wrong, wrong_accepted)):
            if answer is None:
                continue
            try:
                into.append(judge.judge(item, answer).correct)
            except CallFailed:  # counted by the client; a probe without a verdict proves nothing either way
                failed += 1
    client = getattr(judge, "client", None)
    if client is not None:
        client.check_failures("the judge's calibration")
    rate = lambda xs: round(sum(xs) / len(xs), 3) if xs else None  # noqa: E731
    return {
        "probes": len(chosen),
        "true_accept": rate(right),
        "false_accept": rate(wrong_accepted),
        "failed": failed,
    }
