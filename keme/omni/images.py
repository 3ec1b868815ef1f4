"""Avatars and pictures made locally and deterministically: initials on a colour, and geometric compositions.

No network and no image model: every picture is an SVG data: URI derived from a
name or a seed, so the same input always draws the same image.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape

PALETTE = (
    "#e76f51",
    "#2a9d8f",
    "#264653",
    "#e9c46a",
    "#f4a261",
    "#6d597a",
    "#457b9d",
    "#b5838d",
    "#588157",
    "#bc4749",
)


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode()).digest()


def _uri(svg: str) -> str:
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode()).decode()


def initials(name: str) -> str:
    parts = name.split()
    if len(parts) >= 2 and parts[0].isascii():
        return (parts[0][0] + parts[-1][0]).upper()
    return name[-2:] if not name.isascii() else name[:2].upper()


def avatar(name: str, size: int = 80) -> str:
    """A round badge with the person's initials (or the last two characters of a Chinese name)."""
    colour = PALETTE[_digest(name)[0] % len(PALETTE)]
    text = escape(initials(name))
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 80 80">'
        f'<rect width="80" height="80" rx="16" fill="{colour}"/>'
        f'<text x="40" y="52" font-size="30" text-anchor="middle" fill="#fff" '
        f'font-family="Noto Sans CJK SC, sans-serif" font-weight="700">{text}</text></svg>'
    )
    return _uri(svg)


def picture(seed: str, width: int = 320, height: int = 200) -> str:
    """An abstract picture (a sky, a sun, hills) whose colours and shapes follow the seed."""
    d = _digest(seed)
    sky, hill, hill2, sun = (PALETTE[d[i] % len(PALETTE)] for i in range(4))
    cx, cy, r = 40 + d[4] % (width - 80), 30 + d[5] % 60, 14 + d[6] % 20
    h1, h2 = height - 40 - d[7] % 50, height - 20 - d[8] % 40
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}">'
        f'<rect width="{width}" height="{height}" fill="{sky}" opacity="0.55"/>'
        f'<circle cx="{cx}" cy="{cy}" r="{r}" fill="{sun}"/>'
        f'<path d="M0 {h1} Q {width // 3} {h1 - 60} {width // 2} {h1} T {width} {h1 - 20} '
        f'V {height} H 0 Z" fill="{hill}"/>'
        f'<path d="M0 {h2} Q {width // 2} {h2 - 40} {width} {h2} V {height} H 0 Z" fill="{hill2}"/></svg>'
    )
    return _uri(svg)


def identicon(seed: str, size: int = 96) -> str:
    """A symmetric 5×5 identicon (product shots, album covers)."""
    d = _digest(seed)
    colour = PALETTE[d[0] % len(PALETTE)]
    cells = []
    for row in range(5):
        for col in range(3):
            if d[1 + row * 3 + col] % 2:
                for c in {col, 4 - col}:
                    cells.append(
                        f'<rect x="{8 + c * 16}" y="{8 + row * 16}" width="16" height="16" fill="{colour}"/>'
                    )
    svg = (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{size}" height="{size}" viewBox="0 0 96 96">'
        f'<rect width="96" height="96" fill="#f1f1f1"/>{"".join(cells)}</svg>'
    )
    return _uri(svg)
