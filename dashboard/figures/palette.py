"""Classifier styles: a colour, a dash pattern and a marker symbol per classifier.

Each classifier keeps one style everywhere (every plot, every page, the report, the swatches of
the classifier list), fixed by its position in the data set, so its look never changes when
classifiers are hidden or deselected.

Why colour *and* dash *and* marker: ten colours that stay apart on white (Okabe-Ito's six
strongest, safe for the common colour-vision deficiencies, then four of Paul Tol's) are all a
plot can carry; past ten the colours repeat with the next dash pattern, so the pair (colour,
dash) is unique for the first :data:`UNIQUE_STYLES` = 60 classifiers. The marker symbol follows
the colour, so two colours a reader cannot tell apart still differ in shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from html import escape

OKABE_ITO = {
    "black": "#000000", "orange": "#E69F00", "sky_blue": "#56B4E9", "bluish_green": "#009E73",
    "yellow": "#F0E442", "blue": "#0072B2", "vermillion": "#D55E00", "reddish_purple": "#CC79A7",
}
# Black is kept for the hull and envelope; Okabe-Ito's yellow is left out (faint on white).
CLASSIFIER_COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9",
                     "#882255", "#999933", "#332288", "#8C510A")
DASHES = ("solid", "dash", "dot", "dashdot", "longdash", "longdashdot")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "triangle-down", "x", "cross",
           "star", "pentagon", "hexagon")
UNIQUE_STYLES = len(CLASSIFIER_COLORS) * len(DASHES)
"""Classifiers whose (colour, dash) pairs are all different: positions 0 to 59."""

HULL_COLOR = OKABE_ITO["black"]
TRIVIAL_COLOR = "#8c8c8c"
GRID_COLOR = "#ececec"

# SVG stroke-dasharray of each plotly dash, in units of the line width (plotly.js's own
# proportions), for swatches drawn outside plotly.
_DASHARRAY = {"solid": "", "dash": "9,6", "dot": "3,3", "dashdot": "9,3,3,3",
              "longdash": "15,6", "longdashdot": "15,3,3,3"}


@dataclass(frozen=True)
class ClassifierStyle:
    """How one classifier is drawn: ``color`` (hex), ``dash`` (a plotly dash name) and
    ``symbol`` (a plotly marker symbol)."""

    color: str
    dash: str
    symbol: str

    def as_json(self) -> dict[str, str]:
        return {"color": self.color, "dash": self.dash, "symbol": self.symbol,
                "swatch": swatch_svg(self)}


def classifier_style(index: int) -> ClassifierStyle:
    """The style of the classifier at ``index`` (its position in the data set)."""
    k = len(CLASSIFIER_COLORS)
    return ClassifierStyle(CLASSIFIER_COLORS[index % k], DASHES[(index // k) % len(DASHES)],
                           SYMBOLS[index % len(SYMBOLS)])


def classifier_color(index: int) -> str:
    return classifier_style(index).color


def classifier_dash(index: int) -> str:
    return classifier_style(index).dash


def classifier_colors(names: Sequence[str]) -> dict[str, str]:
    """Colour of each classifier, by its position in the data set."""
    return {name: classifier_color(i) for i, name in enumerate(names)}


def classifier_styles(names: Sequence[str]) -> dict[str, ClassifierStyle]:
    """Style of each classifier, by its position in the data set."""
    return {name: classifier_style(i) for i, name in enumerate(names)}


_MARKER_PATHS = {
    "circle": "M 20 5 m -3.2 0 a 3.2 3.2 0 1 0 6.4 0 a 3.2 3.2 0 1 0 -6.4 0",
    "square": "M 17 2 h 6 v 6 h -6 Z",
    "diamond": "M 20 1 L 24 5 L 20 9 L 16 5 Z",
    "triangle-up": "M 20 1.5 L 23.8 8 L 16.2 8 Z",
    "triangle-down": "M 20 8.5 L 23.8 2 L 16.2 2 Z",
    "x": "M 17 2 L 23 8 M 23 2 L 17 8",
    "cross": "M 20 1.5 V 8.5 M 16.5 5 H 23.5",
    "star": "M 20 1 L 21.2 3.8 L 24 4 L 21.8 5.9 L 22.5 8.8 L 20 7.2 L 17.5 8.8 L 18.2 5.9 "
            "L 16 4 L 18.8 3.8 Z",
    "pentagon": "M 20 1.5 L 23.8 4.3 L 22.4 8.5 L 17.6 8.5 L 16.2 4.3 Z",
    "hexagon": "M 18 1.6 L 22 1.6 L 24 5 L 22 8.4 L 18 8.4 L 16 5 Z",
}


def swatch_svg(style: ClassifierStyle) -> str:
    """A 40 x 10 SVG of the style (dashed line and marker), as the classifier list shows it."""
    dash = _DASHARRAY[style.dash]
    dash_attr = f' stroke-dasharray="{dash}"' if dash else ""
    color = escape(style.color)
    open_marker = style.symbol in ("x", "cross")
    fill = "none" if open_marker else color
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="10" viewBox="0 0 40 10">'
            f'<line x1="0" y1="5" x2="40" y2="5" stroke="{color}" stroke-width="2"{dash_attr}/>'
            f'<path d="{_MARKER_PATHS[style.symbol]}" fill="{fill}" stroke="{color}" '
            'stroke-width="1.4"/></svg>')
