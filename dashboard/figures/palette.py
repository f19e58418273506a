"""Colours: the Okabe-Ito palette (safe for the common colour-vision deficiencies).

Each classifier keeps one colour everywhere (every plot, every page), fixed by its position in
the data set, so the colour never changes when classifiers are hidden or deselected. Past seven
classifiers the colours repeat with a different dash pattern.
"""

from __future__ import annotations

from collections.abc import Sequence

OKABE_ITO = {
    "black": "#000000", "orange": "#E69F00", "sky_blue": "#56B4E9", "bluish_green": "#009E73",
    "yellow": "#F0E442", "blue": "#0072B2", "vermillion": "#D55E00", "reddish_purple": "#CC79A7",
}
# Black is kept for the hull and envelope; yellow last because it is faint on white.
CLASSIFIER_COLORS = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442")
DASHES = ("solid", "dash", "dot", "dashdot")
HULL_COLOR = OKABE_ITO["black"]
TRIVIAL_COLOR = "#8c8c8c"
GRID_COLOR = "#ececec"


def classifier_color(index: int) -> str:
    return CLASSIFIER_COLORS[index % len(CLASSIFIER_COLORS)]


def classifier_dash(index: int) -> str:
    return DASHES[(index // len(CLASSIFIER_COLORS)) % len(DASHES)]


def classifier_colors(names: Sequence[str]) -> dict[str, str]:
    """Colour of each classifier, by its position in the data set."""
    return {name: classifier_color(i) for i, name in enumerate(names)}
