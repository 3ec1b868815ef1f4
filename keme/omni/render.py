"""Rendering screens with Playwright on Debian's chromium: one browser, one reused page, no network.

Content is set directly on the page (no file round trip) and the screenshot is
taken as soon as the page has loaded — no sleeps: every picture is an inline
data: URI and fonts are local, so "loaded" means finished. Facts are read back
from the DOM.

No request leaves the page, whatever HTML it is given, by four independent means
(tests/faults/test_fault_render.py proves each way out closed against a listener):
page scripts are off (no template has one: no fetch, WebSocket or WebRTC), every
request that is not a data: URI is aborted and no navigation is allowed, no host
name or address resolves (`--host-resolver-rules`), and what the browser opens
beside the page (prefetch, speculation rules, preconnect) goes to a proxy that
refuses it.
"""

from __future__ import annotations

import functools
import shutil
import socket
from dataclasses import dataclass
from pathlib import Path

import jinja2

from keme.errors import KemeError
from keme.omni.screens import MODELS

TEMPLATES = Path(__file__).resolve().parent / "templates"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--headless",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
    # no hyperlink pings, no name or address resolves (IP literals included), WebRTC only
    # through the proxy, which goes nowhere (`_no_network_args`)
    "--no-pings",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--webrtc-ip-handling-policy=disable_non_proxied_udp",
]
CJK_FAMILY = "Noto Sans CJK SC"


@functools.cache
def environment() -> jinja2.Environment:
    # autoescaped: dialogue text containing <script> or tags must render as text
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True, undefined=jinja2.StrictUndefined
    )


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
    for candidate in (
        "/usr/bin/chromium",
        shutil.which("chromium") or "",
        shutil.which("chromium-browser") or "",
    ):
        if candidate and Path(candidate).exists():
            return candidate
    raise KemeError(
        "chromium not found: install Debian's chromium (apt-get install -y chromium fonts-noto-cjk); "
        "Playwright's own browser download does not work offline"
    )


def _nowhere() -> socket.socket:
    """A loopback port that is bound but never listens: a connection to it is refused at once."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    return sock


def _no_network_args(nowhere: socket.socket) -> list[str]:
    """Every connection chromium opens goes to a proxy that refuses it, loopback included.

    Request interception (`Renderer._route`) sees ordinary requests only; prefetches, speculation
    rules and speculative preconnects are made by the browser beside it, so they must find no route.
    """
    port = nowhere.getsockname()[1]
    return [f"--proxy-server=http://127.0.0.1:{port}", "--proxy-bypass-list=<-loopback>"]


def _route(route) -> None:
    """Only inline data: resources load, and the page never navigates (a meta refresh, a frame, a form)."""
    request = route.request
    if request.url.startswith("data:") and not request.is_navigation_request():
        route.continue_()
    else:
        route.abort()


class Renderer:
    """One chromium for a whole run. No request leaves the page: scripts are off (no template has one),
    ordinary
    requests are aborted, and the browser's own connections go to a proxy that refuses them."""

    def __init__(
        self, width: int = 390, height: int = 844, scale: float = 1.0, executable: str | None = None
    ):
        self.size = {"width": width, "height": height}
        self.scale = scale
        self.executable = executable or find_chromium()
        self._playwright = self._browser = self._context = self._page = None
        self._nowhere: socket.socket | None = None

    def __enter__(self) -> Renderer:
        try:
            from playwright.sync_api import sync_playwright
        except ImportError as exc:
            raise KemeError("rendering needs Playwright: pip install -e '.[render]'") from exc
        self._nowhere = _nowhere()
        self._playwright = sync_playwright().start()
        self._browser = self._playwright.chromium.launch(
            executable_path=self.executable, args=CHROMIUM_ARGS + _no_network_args(self._nowhere)
        )
        self._context = self._browser.new_context(
            viewport=self.size, device_scale_factor=self.scale, java_script_enabled=False, locale="en-US"
        )
        self._new_page()
        return self

    def _new_page(self) -> None:
        if self._page is not None:
            self._page.close()
        self._page = self._context.new_page()
        self._page.route("**/*", _route)

    def __exit__(self, *exc) -> None:
        if self._browser is not None:
            self._browser.close()
        if self._playwright is not None:
            self._playwright.stop()
        if self._nowhere is not None:
            self._nowhere.close()

    def render_html(self, html: str) -> Rendered:
        from playwright.sync_api import Error

        page = self._page
        try:
            page.set_content(html, wait_until="load")
            facts = dict(
                page.eval_on_selector_all(
                    "[data-fact]", "els => els.map(e => [e.dataset.fact, e.innerText.trim()])"
                )
            )
            text = page.evaluate("() => document.body.innerText")
            png = page.screenshot(type="png")
            # a refresh the page scheduled must not fire during the next one
            page.evaluate("() => window.stop()")
        # the page navigated (a meta refresh): its request was aborted, the document is gone
        except Error as exc:
            self._new_page()
            raise KemeError(
                f"a screen could not be rendered: {exc.message.splitlines()[0]}; a screen must be one "
                "self-contained page (no refresh, no navigation)"
            ) from exc
        if page.url != "about:blank":
            self._new_page()
            raise KemeError(
                f"a screen navigated to {page.url} while it rendered; "
                "a screen must be one self-contained page"
            )
        return Rendered(png, facts, text)

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
            f" c.font = \"16px '{CJK_FAMILY}', sans-serif\"; return c.measureText('中文测试').width; }}"
        )
        return width >= 56
