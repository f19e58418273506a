"""Demo data sets shipped with the package (built by ``scripts/make_demo_data.py`` from data that
scikit-learn bundles; reading them needs only pandas)."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path

from costdash.dataset import Dataset
from costdash.errors import ParameterError


@dataclass(frozen=True)
class Demo:
    name: str
    title: str
    description: str

    @property
    def path(self) -> Path:
        return Path(str(files("costdash") / "data" / f"{self.name}.csv"))


DEMOS: dict[str, Demo] = {d.name: d for d in (
    Demo("breast-cancer", "Breast cancer screening",
         "Wisconsin breast cancer data (569 tumours, 37% malignant): 5-fold cross-validated scores "
         "of logistic regression, random forest, gradient boosting, naive Bayes and a decision stump."),
    Demo("rare-digit", "Rare event: the digit 3",
         "Handwritten digits, 'is it a 3?' with the 3s subsampled to about 3% of examples: "
         "5-fold cross-validated scores of logistic regression, random forest and k-NN."),
)}


def load_demo(name: str) -> Dataset:
    """Load a demo data set by name (see :data:`DEMOS`)."""
    from costdash.io import load_predictions

    try:
        demo = DEMOS[name]
    except KeyError:
        raise ParameterError(f"unknown demo {name!r}; available: {', '.join(DEMOS)}") from None
    return load_predictions(demo.path)
