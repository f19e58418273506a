"""Helpers shared by the web tests."""

from __future__ import annotations

import numpy as np
import pandas as pd

from costdash.conditions import default_condition


def make_predictions(n: int = 3000, seed: int = 7, prevalence: float = 0.2) -> pd.DataFrame:
    """A wide predictions table with three classifiers of different quality, with ties."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < prevalence
    table = {"y_true": y.astype(int)}
    for name, shift, noise in (("alpha", 1.6, 1.0), ("beta", 1.1, 0.8), ("gamma", 0.5, 1.0)):
        table[name] = np.round(rng.normal(size=n) * noise + y * shift, 3)
    return pd.DataFrame(table)


def find(component, id_):
    """The component with this id in a layout tree, or None."""
    if getattr(component, "id", None) == id_:
        return component
    children = getattr(component, "children", None)
    if children is None:
        return None
    for child in children if isinstance(children, (list, tuple)) else [children]:
        hit = find(child, id_)
        if hit is not None:
            return hit
    return None


# Whether the Explore page has drawn a data set it switched to: a new data set's first drawing
# (the `explore` callback's reply to its view) writes the readouts and sets the p(+) box to the
# data set's own p(+) (the core's default rule: its prevalence). The readouts alone cannot say
# so, since the previous data set's are still on screen until then.
DATA_DRAWN = """([p]) => {
    const box = document.getElementById('p-pos-input');
    const chosen = document.getElementById('chosen-classifier');
    return box !== null && chosen !== null && chosen.textContent !== '–'
        && Math.abs(parseFloat(box.value) - p) <= 1e-12 * p;
}"""


def wait_data_drawn(page, dataset, timeout: float = 30_000) -> None:
    """Wait until the Explore page has drawn ``dataset`` after switching to it (a demo clicked,
    a file uploaded over another): its readouts are on screen and its p(+) box holds the data
    set's p(+), so conditions typed from now on are not replaced by that first drawing."""
    page.wait_for_function(DATA_DRAWN, arg=[default_condition(dataset.prevalence).p_pos],
                           timeout=timeout)


def shown_chosen_threshold(html: str, analysis) -> str:
    """The chosen threshold a report or page shows, checked against the core: the readable
    text (:func:`costdash.analysis.readable_threshold`, the shortest decimal that flags the same
    cases) with the exact value in its title. Returns the shown text."""
    import re

    from costdash.analysis import threshold_text

    v = analysis.operating_point.vertex
    found = re.search(r'<b(?: title="exactly ([^"]*)")? class="chosen-threshold">(.*?)</b>', html)
    assert found, "no chosen-threshold element"
    exact, shown = found.group(1), found.group(2)
    assert shown == analysis.classifier(v.classifier).readable_threshold(v.threshold)
    assert exact == threshold_text(v.threshold) and float(exact) == v.threshold
    return shown
