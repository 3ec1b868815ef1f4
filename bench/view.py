"""`keme view` at the size the issue names: a persona-year with a run of 11 systems, in headless chromium.

Prints: site build seconds and size; per page, the seconds from navigation until it is drawn (the overview,
the persona, the question list, a question with every system's hits) and the question filters' times.
The run is real for bm25 (the year replayed and scored) and copied under 10 more names, so the site holds
the data of 11 systems (what the viewer loads is the same size whichever system made it).

    python bench/view.py [--config configs/year.yaml]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

from eval.run import Settings, run  # noqa: E402
from eval.view.data import read_run  # noqa: E402
from eval.view.site import write_site  # noqa: E402
from keme.cli import synthesize_dataset  # noqa: E402
from keme.omni.render import CHROMIUM_ARGS, find_chromium  # noqa: E402
from keme.synth.limits import load_config  # noqa: E402
from keme.validate import verified_dataset  # noqa: E402

SYSTEMS = 11


def widen(out: Path, copies: int) -> None:
    """The bm25 run copied under `copies` more names: its folder, its summary row, its results rows."""
    summary = json.loads((out / "summary.json").read_text())
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().split("\n") if line.strip()]
    for i in range(copies):
        name = f"bm25_copy{i + 1}"
        shutil.copytree(out / "bm25", out / name)
        summary["systems"][name] = summary["systems"]["bm25"]
        rows += [r | {"system": name} for r in rows if r["system"] == "bm25"]
    (out / "summary.json").write_text(json.dumps(summary))
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="configs/year.yaml")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        synthesize_dataset(load_config(Path(args.config)), base / "data")
        data = verified_dataset(base / "data")
        run(Settings(data=data, out=base / "run", systems=["bm25"]))
        widen(base / "run", SYSTEMS - 1)
        started = time.perf_counter()
        stats = write_site(data, [read_run(base / "run", data)], base / "site")
        build = time.perf_counter() - started
        messages = sum(len(s.messages) for s in data.sessions)
        print(
            f"dataset: {len(data.personas)} persona(s), {len(data.sessions)} sessions, {messages} messages, "
            f"{len(data.qa)} questions; run: {SYSTEMS} systems"
        )
        print(f"site: built in {build:.2f} s, {stats.files} data files, {stats.bytes / 2**20:.1f} MiB")
        question = data.qa[len(data.qa) // 2].id
        uri = (base / "site").resolve().as_uri() + "/index.html#"
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
            for route in ("/", "/p/0", "/questions", f"/p/0/q/{question}"):
                best = float("inf")
                for _ in range(3):  # a fresh page each time: nothing cached in the page
                    page = browser.new_page()
                    started = time.perf_counter()
                    page.goto(uri + route)
                    page.wait_for_selector("body[data-ready]", timeout=30_000)
                    best = min(best, time.perf_counter() - started)
                    page.close()
                print(f"open {route:<24} {best * 1000:7.0f} ms (best of 3; target < 2000 ms)")
            page = browser.new_page()
            page.goto(uri + "/questions")
            page.wait_for_selector("body[data-ready]")
            filters = {
                "type": ("select[name=type]", "temporal_reasoning"),
                "system + outcome": ("select[name=run]", "0"),
                "text": ("input[name=text]", "when"),
            }
            for label, (selector, value) in filters.items():
                started = time.perf_counter()
                if selector.startswith("input"):
                    page.fill(selector, value)
                else:
                    page.select_option(selector, value)
                page.evaluate("() => new Promise(r => requestAnimationFrame(() => r()))")
                took = (time.perf_counter() - started) * 1000
                print(f"filter {label:<18} {took:7.0f} ms ({page.inner_text('p.count')}; target < 200 ms)")
            browser.close()


if __name__ == "__main__":
    main()
