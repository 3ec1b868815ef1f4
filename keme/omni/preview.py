"""Look at screens: render one template's sample, or lay out a dataset's screenshots on one sheet.

python -m keme.omni.preview bill zh /tmp/bill-zh.png      # prints the facts read back from the page
python -m keme.omni.preview --sheet out/demo en sheet.png  # one screenshot per template, half size
"""

from __future__ import annotations

import sys
from pathlib import Path

from keme.dataset import Dataset
from keme.dataset.paths import inside
from keme.omni.render import Renderer
from keme.omni.samples import sample


def render_sample(template: str, lang: str, out: Path) -> dict[str, str]:
    with Renderer() as renderer:
        shot = renderer.render(template, sample(template, lang))
    out.write_bytes(shot.png)
    return shot.facts


def contact_sheet(dataset: Path, lang: str, out: Path, columns: int = 7, scale: float = 0.5) -> int:
    """The first screenshot of every template in `lang`, side by side (for the README)."""
    from PIL import Image

    first: dict[str, Path] = {}
    for record in Dataset.load(dataset).images:
        if record.language == lang:
            first.setdefault(record.template, inside(dataset, record.path))
    shots = [Image.open(first[t]).convert("RGB") for t in sorted(first)]
    if not shots:
        return 0
    width, height = int(shots[0].width * scale), int(shots[0].height * scale)
    gap, rows = 10, -(-len(shots) // columns)
    sheet = Image.new("RGB", (columns * (width + gap) - gap, rows * (height + gap) - gap), "white")
    for i, shot in enumerate(shots):
        sheet.paste(
            shot.resize((width, height)), ((i % columns) * (width + gap), (i // columns) * (height + gap))
        )
    sheet.save(out, optimize=True)
    return len(shots)


def main(argv: list[str]) -> None:
    if argv and argv[0] == "--sheet":
        dataset, lang, out = argv[1:]
        print(f"{contact_sheet(Path(dataset), lang, Path(out))} screenshots -> {out}")
        return
    template, lang, out = argv
    for name, value in render_sample(template, lang, Path(out)).items():
        print(f"{name}: {value}")


if __name__ == "__main__":
    main(sys.argv[1:])
