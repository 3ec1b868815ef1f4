"""Screens render in real headless chromium and show exactly the facts their data holds."""

from __future__ import annotations

import struct

import pytest

from keme.errors import KemeError
from keme.models.image import SCREEN_TEMPLATES
from keme.omni import images
from keme.omni.render import Renderer, html_for
from keme.omni.samples import sample
from keme.omni.screens import ChatLine, ChatScreen

pytestmark = pytest.mark.chromium


@pytest.fixture(scope="module")
def renderer():
    with Renderer() as r:
        yield r


def _png_size(png: bytes) -> tuple[int, int]:
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", png[16:24])


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("template", SCREEN_TEMPLATES)
def test_template_shows_every_fact_of_its_data(renderer, template, lang):
    screen = sample(template, lang)
    shot = renderer.render(template, screen)
    assert shot.facts == screen.expected_facts()
    assert _png_size(shot.png) == (390, 844)


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("template", SCREEN_TEMPLATES)
def test_every_fact_is_visible_text_of_the_page(renderer, template, lang):
    shot = renderer.render(template, sample(template, lang))
    missing = {k: v for k, v in shot.facts.items() if v not in shot.text}
    assert not missing


def test_dialogue_with_script_and_tags_renders_as_text(renderer):
    hostile = "<script>document.body.dataset.pwned = 'yes'</script><b>bold</b> & <img src=x onerror=alert(1)>"
    screen = ChatScreen(
        lang="en",
        clock="9:41",
        title="Maya",
        lines=[ChatLine(sender="Maya", avatar=images.avatar("Maya"), text=hostile, time="9:40")],
    )
    shot = renderer.render("chat_x", screen)
    assert shot.facts["line-0"] == hostile
    page = renderer._page
    assert page.evaluate("() => document.body.dataset.pwned") is None
    assert (
        page.evaluate(
            '() => document.querySelectorAll(\'[data-fact="line-0"] b, [data-fact="line-0"] img\').length'
        )
        == 0
    )


def test_templates_escape_html_in_data():
    screen = sample("note", "en").model_copy(update={"title": "<i>x</i>"})
    assert "&lt;i&gt;x&lt;/i&gt;" in html_for("note", screen)


def test_chinese_text_draws_with_a_cjk_font(renderer):
    assert renderer.cjk_fonts_ok()


def test_data_uri_images_load_and_remote_ones_do_not(renderer):
    html = (
        '<body><img id="remote" src="http://example.com/a.png">'
        '<img id="local" src="' + images.avatar("Ann") + '"></body>'
    )
    renderer.render_html(html)
    widths = renderer._page.evaluate(
        "() => [...document.images].map(i => [i.id, i.complete, i.naturalWidth > 0])"
    )
    assert widths == [["remote", True, False], ["local", True, True]]


def test_scripts_in_a_page_do_not_run(renderer):
    """No template has a script, so the renderer turns them off: no fetch, WebSocket or WebRTC can start."""
    assert (
        renderer._page.evaluate(
            "() => { const s = document.createElement('script');"
            " s.textContent = 'window.ran = 1'; document.body.append(s); return window.ran; }"
        )
        is None
    )


def test_a_page_that_navigates_is_an_error_and_the_next_one_renders(renderer):
    with pytest.raises(KemeError, match="self-contained"):
        renderer.render_html('<meta http-equiv="refresh" content="0;url=http://example.com/"><p>gone</p>')
    assert renderer.render("note", sample("note", "en")).facts == sample("note", "en").expected_facts()


def test_rendering_is_byte_identical_for_the_same_data(renderer):
    screen = sample("train_ticket", "zh")
    assert renderer.render("train_ticket", screen).png == renderer.render("train_ticket", screen).png


def test_avatars_are_deterministic_and_differ_by_name():
    assert images.avatar("Maya Patel") == images.avatar("Maya Patel")
    assert images.avatar("Maya Patel") != images.avatar("Jonas Weber")
    assert images.initials("Maya Patel") == "MP"
    assert images.initials("王芳芳") == "芳芳"


def test_pictures_follow_their_seed():
    assert images.picture("a") == images.picture("a") != images.picture("b")
    assert images.identicon("a").startswith("data:image/svg+xml;base64,")
