"""Screenshot throughput, side by side with the naive way of rendering (issue #7).

Both render the same screens (the sample of every template in both languages,
cycled) with the same chromium in the same process run:

- ours: one browser, one reused page, content set directly, screenshot as soon
  as the page has loaded (every picture is an inline data: URI, fonts are local),
  non-data: requests aborted — target >= 10 screenshots/s on 2 cores;
- naive: a new page per shot, the HTML written to a file and loaded over
  file://, wait for network idle, then a fixed 300 ms sleep — target: ours >= 5x.

Also printed: the share of shots whose PNG is byte-identical between the two
(same pixels: the speed does not come from rendering less).

    python bench/render.py [--shots 260] [--naive-shots 52]
"""

from __future__ import annotations

import sys
from pathlib import Path

# bench/eval.py would shadow the `eval` package: keep this folder off the import path
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

import argparse
import tempfile
import time

from keme.models.image import SCREEN_TEMPLATES
from keme.omni.render import CHROMIUM_ARGS, Renderer, find_chromium, html_for
from keme.omni.samples import sample


def screens() -> list[tuple[str, object]]:
    return [(t, sample(t, lang)) for t in SCREEN_TEMPLATES for lang in ("en", "zh")]


def ours(jobs: list[tuple[str, object]], shots: int) -> tuple[float, list[bytes]]:
    with Renderer() as renderer:
        renderer.render(*jobs[0])  # warm-up: first layout loads the fonts
        started = time.perf_counter()
        pngs = [renderer.render(*jobs[i % len(jobs)]).png for i in range(shots)]
        return time.perf_counter() - started, pngs


def naive(jobs: list[tuple[str, object]], shots: int) -> tuple[float, list[bytes]]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p, tempfile.TemporaryDirectory() as tmp:
        browser = p.chromium.launch(executable_path=find_chromium(), args=CHROMIUM_ARGS)
        context = browser.new_context(viewport={"width": 390, "height": 844})
        warm = context.new_page()
        warm.set_content(html_for(*jobs[0]))
        warm.close()
        pngs = []
        started = time.perf_counter()
        for i in range(shots):
            template, screen = jobs[i % len(jobs)]
            path = Path(tmp) / f"shot{i}.html"
            path.write_text(html_for(template, screen), encoding="utf-8")
            page = context.new_page()
            page.goto(path.as_uri(), wait_until="networkidle")
            page.wait_for_timeout(300)
            pngs.append(page.screenshot(type="png"))
            page.close()
        seconds = time.perf_counter() - started
        browser.close()
        return seconds, pngs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shots", type=int, default=260, help="screenshots for our renderer")
    parser.add_argument("--naive-shots", type=int, default=52, help="screenshots for the naive renderer")
    args = parser.parse_args()
    jobs = screens()
    ours_s, ours_png = ours(jobs, args.shots)
    naive_s, naive_png = naive(jobs, args.naive_shots)
    ours_rate, naive_rate = args.shots / ours_s, args.naive_shots / naive_s
    same = sum(a == b for a, b in zip(ours_png, naive_png)) / min(len(ours_png), len(naive_png))
    ratio = ours_rate / naive_rate
    print(
        f"screens: {len(SCREEN_TEMPLATES)} templates x 2 languages, 390x844 CSS px, "
        f"chromium {find_chromium()}"
    )
    print(f"{'renderer':<8} {'shots':>6} {'seconds':>8} {'shots/s':>8} {'ms/shot':>8}")
    print(f"{'ours':<8} {args.shots:>6} {ours_s:>8.2f} {ours_rate:>8.1f} {1000 / ours_rate:>8.1f}")
    print(f"{'naive':<8} {args.naive_shots:>6} {naive_s:>8.2f} {naive_rate:>8.1f} {1000 / naive_rate:>8.1f}")
    print(
        f"speed-up: {ratio:.1f}x (target >= 5x: {'met' if ratio >= 5 else 'NOT met'}); "
        f"ours {ours_rate:.1f} shots/s (target >= 10: {'met' if ours_rate >= 10 else 'NOT met'})"
    )
    print(f"byte-identical PNGs between the two: {same:.0%}")


if __name__ == "__main__":
    main()
