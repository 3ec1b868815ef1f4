"""No request leaves a rendered page: raw HTML that tries every way out reaches no listener.

Each page gets its own loopback TCP and UDP port; all pages are rendered, then the
listeners are read once the browser has had time to act on what the pages asked for
(prefetches and preconnects run beside the page, after `load`). A control run in an
unprotected chromium shows that the pages really do reach the listeners.
"""

from __future__ import annotations

import selectors
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from probe import record

from keme.errors import KemeError
from keme.omni.render import Renderer, find_chromium

pytestmark = [pytest.mark.fault, pytest.mark.chromium]

SETTLE_S = 1.5  # time for the browser's own work (prefetch, preconnect, STUN) to reach a listener

PAGES: dict[str, str] = {
    "img": '<img src="{http}/img.png">',
    "img_srcset": '<img srcset="{http}/a.png 1x, {http}/b.png 2x">',
    "css_background_url": '<div style="width:9px;height:9px;background:url({http}/bg.png)"></div>',
    "css_import": '<style>@import url("{http}/import.css");</style>',
    "font_face": (
        "<style>@font-face{{font-family:x;src:url({http}/f.woff)}} p{{font-family:x}}</style><p>x</p>"
    ),
    "stylesheet": '<link rel="stylesheet" href="{http}/s.css">',
    "link_prefetch": '<link rel="prefetch" href="{http}/prefetch">',
    "link_preconnect": '<link rel="preconnect" href="{http}">',
    "link_dns_prefetch": '<link rel="dns-prefetch" href="//leak.localhost:{port}">',
    "link_preload": '<link rel="preload" as="image" href="{http}/preload.png">',
    "link_icon": '<link rel="icon" href="{http}/favicon.ico">',
    "speculation_rules_prefetch": '<script type="speculationrules">{{"prefetch": [{{"source": "list", '
    '"urls": ["{http}/spec"]}}]}}</script>',
    "speculation_rules_prerender": '<script type="speculationrules">{{"prerender": [{{"source": "list", '
    '"urls": ["{http}/prerender"]}}]}}</script>',
    "iframe": '<iframe src="{http}/frame"></iframe>',
    "iframe_srcdoc": '<iframe srcdoc="<img src={http}/srcdoc.png>"></iframe>',
    "object": '<object data="{http}/object"></object>',
    "video": '<video src="{http}/v.mp4" autoplay preload="auto"></video>',
    "svg_image": '<svg><image href="{http}/svg.png" width="9" height="9"/></svg>',
    "hostname": '<img src="http://leak.localhost:{port}/name.png">',
    "fetch": '<script>fetch("{http}/fetch")</script>',
    "websocket": '<script>new WebSocket("ws://127.0.0.1:{port}/ws")</script>',
    "webrtc_stun": "<script>const pc = new RTCPeerConnection("
    '{{iceServers: [{{urls: "stun:127.0.0.1:{udp}"}}]}});'
    'pc.createDataChannel("x"); pc.createOffer().then(o => pc.setLocalDescription(o));</script>',
    "form_auto_submit": '<form id="f" action="{http}/form" method="post"></form>'
    '<script>document.getElementById("f").submit()</script>',
    "beacon": '<script>navigator.sendBeacon("{http}/beacon", "x")</script>',
    "meta_refresh": '<meta http-equiv="refresh" content="0;url={http}/refresh">',
    "meta_refresh_later": '<meta http-equiv="refresh" content="1;url={http}/later">',
}


class Listeners:
    """A loopback TCP and UDP port per page; remembers which ports were reached."""

    def __init__(self, names: list[str]) -> None:
        self.selector = selectors.DefaultSelector()
        self.ports: dict[str, tuple[int, int]] = {}
        self.reached: dict[str, list[str]] = {name: [] for name in names}
        for name in names:
            tcp = socket.socket()
            tcp.bind(("127.0.0.1", 0))
            tcp.listen(16)
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            udp.bind(("127.0.0.1", 0))
            self.ports[name] = (tcp.getsockname()[1], udp.getsockname()[1])
            self.selector.register(tcp, selectors.EVENT_READ, (name, "tcp"))
            self.selector.register(udp, selectors.EVENT_READ, (name, "udp"))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            for key, _ in self.selector.select(timeout=0.1):
                name, kind = key.data
                if kind == "tcp":
                    conn, _ = key.fileobj.accept()
                    conn.close()
                    self.reached[name].append("tcp connection")
                else:
                    key.fileobj.recvfrom(4096)
                    self.reached[name].append("udp packet")

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        for key in list(self.selector.get_map().values()):
            key.fileobj.close()
        self.selector.close()


def page_html(name: str, listeners: Listeners) -> str:
    port, udp = listeners.ports[name]
    body = PAGES[name].format(http=f"http://127.0.0.1:{port}", port=port, udp=udp)
    return (
        f"<!doctype html><html><head><meta charset=utf-8></head><body>{body}<p>page {name}</p></body></html>"
    )


@pytest.fixture(scope="module")
def listeners() -> Iterator[Listeners]:
    found = Listeners(list(PAGES))
    yield found
    found.close()


@pytest.fixture(scope="module")
def outcomes(listeners) -> dict[str, tuple[str, list[str]]]:
    """Render every page once in the project's renderer; (how rendering ended, what reached the listener)."""
    ended: dict[str, str] = {}
    with Renderer() as renderer:
        for name in PAGES:
            try:
                renderer.render_html(page_html(name, listeners))
                ended[name] = "rendered"
            except KemeError:
                ended[name] = "refused"
            except Exception as exc:  # noqa: BLE001 - a crash is an outcome of the probe
                ended[name] = f"crash: {type(exc).__name__}: {exc}"
        time.sleep(SETTLE_S)
    return {name: (ended[name], list(listeners.reached[name])) for name in PAGES}


@pytest.mark.parametrize("name", list(PAGES))
def test_a_hostile_page_reaches_no_listener(outcomes, name):
    ended, reached = outcomes[name]
    if ended.startswith("crash"):
        record("crash")
    elif reached:
        record("silent")
    else:
        record("ok")
    assert not ended.startswith("crash"), ended
    assert reached == [], f"{name} left the page: {reached}"


def test_the_pages_do_reach_the_listeners_from_an_unprotected_chromium():
    """The control: without the renderer's protections the same pages get out, so the probes above mean
    something."""
    from playwright.sync_api import sync_playwright

    leaky = ["link_prefetch", "websocket", "webrtc_stun", "iframe"]
    control = Listeners(leaky)
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=find_chromium(), args=["--no-sandbox", "--headless", "--disable-gpu"]
            )
            page = browser.new_page()
            for name in leaky:
                page.set_content(page_html(name, control), wait_until="load")
            time.sleep(SETTLE_S)
            browser.close()
        assert {name: bool(control.reached[name]) for name in leaky} == dict.fromkeys(leaky, True)
    finally:
        control.close()
