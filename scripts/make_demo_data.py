"""Build the demo data sets shipped in costdash/data/ (run once; the app does not need scikit-learn).

    .venv/bin/python scripts/make_demo_data.py

breast-cancer: scikit-learn's bundled Wisconsin breast cancer data (569 tumours, malignant = positive),
5-fold stratified cross-validated scores of five models, wide layout with a fold column.
rare-digit: scikit-learn's bundled handwritten digits, "is it a 3?" with the 3s subsampled to about
3% of the examples (heavily imbalanced), 5-fold cross-validated scores of three models.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer, load_digits
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.naive_bayes import GaussianNB
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.tree import DecisionTreeClassifier

OUT = Path(__file__).resolve().parent.parent / "costdash" / "data"
SEED = 20261125


def cross_validated(models: dict, X: np.ndarray, y: np.ndarray) -> pd.DataFrame:
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=SEED)
    table = pd.DataFrame({"y_true": y.astype(int), "fold": 0})
    for name in models:
        table[name] = np.nan
    for k, (train, test) in enumerate(folds.split(X, y), start=1):
        table.loc[test, "fold"] = k
        for name, model in models.items():
            model.fit(X[train], y[train])
            table.loc[test, name] = model.predict_proba(X[test])[:, 1]
    return table.round(6)


def breast_cancer() -> pd.DataFrame:
    data = load_breast_cancer()
    y = (data.target == 0)  # the bundled target is 1 = benign; malignant is what a screen flags
    models = {
        "logreg": make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)),
        "forest": RandomForestClassifier(n_estimators=200, random_state=SEED),
        "gbm": GradientBoostingClassifier(random_state=SEED),
        "naive_bayes": GaussianNB(),
        "stump": DecisionTreeClassifier(max_depth=1, random_state=SEED),
    }
    return cross_validated(models, data.data, y)


def rare_digit() -> pd.DataFrame:
    data = load_digits()
    rng = np.random.default_rng(SEED)
    is_three = data.target == 3
    keep = ~is_three | (rng.random(is_three.size) < 0.25)
    X, y = data.data[keep], is_three[keep]
    models = {
        "logreg": make_pipeline(StandardScaler(), LogisticRegression(max_iter=5000, C=0.1)),
        "forest": RandomForestClassifier(n_estimators=200, random_state=SEED),
        "knn": KNeighborsClassifier(n_neighbors=15),
    }
    return cross_validated(models, X, y)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    for name, build in (("breast-cancer", breast_cancer), ("rare-digit", rare_digit)):
        table = build()
        table.to_csv(OUT / f"{name}.csv", index=False)
        print(f"{name}: {len(table)} rows, {int(table.y_true.sum())} positive")
