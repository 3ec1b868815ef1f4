"""Rendering screens with Playwright on Debian's chromium: one browser, one reused page, no network.

Content is set directly on the page (no file round trip) and the screenshot is
taken as soon as the page has loaded — no sleeps: every picture is an inline
data: URI and fonts are local, so "loaded" means finished. Every request that
is not a data: URI is aborted. Facts are read back from the DOM.
"""

from __future__ import annotations

import functools
import shutil
from dataclasses import dataclass
from pathlib import Path

import jinja2

from keme.errors import KemeError
from keme.omni.screens import MODELS

TEMPLATES = Path(__file__).resolve().parent / "templates"
CHROMIUM_ARGS = ["--no-sandbox", "--headless", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic"]
CJK_FAMILY = "Noto Sans CJK SC"


@functools.cache
def environment() -> jinja2.Environment:
    # autoescaped: dialogue text containing <script> or tags must render as text
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                              undefined=jinja2.StrictUndefined)


def html_for(template: str, screen) -> str:
    if template not in MODELS:
        raise KemeError(f"unknown screen template {template!r}; known: {', '.join(MODELS)}")
    return environment().get_template(f"{template}.{screen.lang}.html.j2").render(s=screen)


@dataclass(frozen=True)
class Rendered:
    png: bytes
    facts: dict[str, str]
    text: str


def find_chromium() -> str:
    for candidate in ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or ""):
        if candidate and Path(candidate).exists():
            return candidate
    raise KemeError("chromium not found: install Debian's chromium (apt-get install -y chromium fonts-noto-cjk); "
                    "Playwright's own browser download does not work offline")


class Renderer:
    def __init__(self, width: int = 390, height: int = 844, scale: float = 1.0, executable: str | None = None):
        self.size = {"width": width, "height": height}
        self.scale = scale
        self.executable = executable or find_chromium()
        self._playwright = self._browser = self._page = None

    def __enter__(self) -> Renderer:
        try:
            from playwright.sync_api import sync_playwright
        except ImportError as exc:
            raise KemeError("rendering needs Playwright: pip install -e '.[render]'") from exc
        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(executable_path=self.executable, args=CHROMIUM_ARGS)
        context = self._browser.new_context(viewport=self.size, device_scale_factor=self.scale,
                                            java_script_enabled=True, locale="en-US")
        self._page = context.new_page()
        self._page.route("**/*", lambda route: route.abort() if not route.request.url.startswith("data:")
                         else route.continue_())
        return self

    def __exit__(self, *exc) -> None:
        if self._browser is not None:
            self._browser.close()
        if self._playwright is not None:
            self._playwright.stop()

    def render_html(self, html: str) -> Rendered:
        page = self._page
        page.set_content(html, wait_until="load")
        facts = dict(page.eval_on_selector_all("[data-fact]", "els => els.map(e => [e.dataset.fact, e.innerText.trim()])"))
        text = page.evaluate("() => document.body.innerText")
        return Rendered(page.screenshot(type="png"), facts, text)

    def render(self, template: str, screen) -> Rendered:
        return self.render_html(html_for(template, screen))

    def cjk_fonts_ok(self) -> bool:
        """Chinese text must draw with a real CJK font, not missing-glyph boxes.

        A CJK glyph is one em wide; a missing-glyph box is much narrower. Four
        characters at 16 px measure about 64 px with a CJK font installed.
        """
        self._page.set_content("<canvas></canvas>", wait_until="load")
        width = self._page.evaluate(
            f"() => {{ const c = document.querySelector('canvas').getContext('2d');"
            f" c.font = \"16px '{CJK_FAMILY}', sans-serif\"; return c.measureText('中文测试').width; }}")
        return width >= 56
