"""Helpers shared by the web tests."""

from __future__ import annotations

import numpy as np
import pandas as pd


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
