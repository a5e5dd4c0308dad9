"""WCAG 2.1 AA contrast of the app's colours (issue #41 point 5), by the formula of WCAG 2.1.

Contrast ratio (L1 + 0.05) / (L2 + 0.05) of the lighter and darker relative luminance, each
L = 0.2126 R + 0.7152 G + 0.0722 B of the linearised sRGB channels (c / 12.92 up to 0.04045, else
((c + 0.055) / 1.055) ^ 2.4).  Text needs 4.5:1.  Checked here: LF0's and LF1's colours (the
readings are written in them on the Presentation) on the page and on the sidebar, and the theme
of ``.streamlit/config.toml``, whose text Streamlit also draws at 60 % opacity (captions, help,
code inside a caption).
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from amp.reporting.style import LF0_COLOR, LF1_COLOR

REPO = Path(__file__).resolve().parents[2]
THEME = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text(encoding="utf-8"))["theme"]
#: WCAG 2.1 AA, 1.4.3: normal text.
AA_TEXT = 4.5
#: How opaque Streamlit draws faded text (its ``fadedText60``: a caption, a widget's help).
FADED = 0.6


def _rgb(hex_color: str) -> tuple[int, int, int]:
    h = hex_color.lstrip("#")
    assert len(h) == 6, hex_color
    return int(h[0:2], 16), int(h[2:4], 16), int(h[4:6], 16)


def _linear(channel: int) -> float:
    c = channel / 255
    return c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4


def luminance(hex_color: str) -> float:
    r, g, b = (_linear(c) for c in _rgb(hex_color))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def over(fg: str, bg: str, alpha: float) -> str:
    """``fg`` drawn at opacity ``alpha`` on ``bg``, as the colour seen."""
    return "#" + "".join(f"{round(alpha * f + (1 - alpha) * b):02x}" for f, b in zip(_rgb(fg), _rgb(bg), strict=True))


def test_the_formula_gives_the_known_ratios() -> None:
    assert contrast("#000000", "#ffffff") == pytest.approx(21.0)
    assert contrast("#ffffff", "#ffffff") == pytest.approx(1.0)
    assert contrast("#767676", "#ffffff") == pytest.approx(4.54, abs=0.01)  # the classic lightest AA grey
    assert contrast("#D55E00", "#ffffff") == pytest.approx(3.86, abs=0.01)  # the vermillion the audit flagged
    assert contrast("#797c83", "#ffffff") == pytest.approx(4.18, abs=0.01)  # the old caption grey
    assert over("#000000", "#ffffff", 0.6) == "#666666"


BACKGROUNDS = {"page": THEME["backgroundColor"], "sidebar": THEME["secondaryBackgroundColor"]}


@pytest.mark.parametrize("where", sorted(BACKGROUNDS))
@pytest.mark.parametrize(("name", "color"), [("LF0", LF0_COLOR), ("LF1", LF1_COLOR)])
def test_each_reading_colour_is_readable_text(name: str, color: str, where: str) -> None:
    ratio = contrast(color, BACKGROUNDS[where])
    assert ratio >= AA_TEXT, f"{name} {color} on the {where} ({BACKGROUNDS[where]}): {ratio:.2f}:1 < {AA_TEXT}:1"


def test_the_reading_colours_stay_a_colour_blind_safe_pair() -> None:
    """Blue against orange (the pair every colour vision tells apart): LF0's blue channel leads,
    LF1's red channel leads, and they are not the same colour darkened."""
    r0, g0, b0 = _rgb(LF0_COLOR)
    r1, g1, b1 = _rgb(LF1_COLOR)
    assert b0 > g0 > r0 and r1 > g1 > b1


@pytest.mark.parametrize("where", sorted(BACKGROUNDS))
@pytest.mark.parametrize("key", ["textColor", "codeTextColor"])
def test_theme_text_is_readable_also_faded(key: str, where: str) -> None:
    text, bg = THEME[key], BACKGROUNDS[where]
    assert contrast(text, bg) >= AA_TEXT
    faded = over(text, bg, FADED)
    ratio = contrast(faded, bg)
    assert ratio >= AA_TEXT, f"{key} {text} at {FADED:.0%} on the {where}: {faded}, {ratio:.2f}:1 < {AA_TEXT}:1"


def test_the_attribution_map_keeps_its_text_readable_at_full_strength() -> None:
    """The prompt map draws the page's text on LF0/LF1 backgrounds up to 0.75 opaque: the strongest
    token still reads at 4.5:1 (on the full colours the theme's text would be 3.4–3.6:1)."""
    from amp.reporting.attribution_plots import MAX_TOKEN_OPACITY

    assert MAX_TOKEN_OPACITY == 0.75
    text = THEME["textColor"]
    for colour in (LF0_COLOR, LF1_COLOR):
        assert contrast(text, colour) < AA_TEXT  # why the cap is there
        assert contrast(text, over(colour, THEME["backgroundColor"], 0.75)) >= AA_TEXT, colour
        assert contrast("#ffffff", colour) >= AA_TEXT  # the legend's white words on the full colours
