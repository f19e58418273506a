"""The MLflow pyfunc model :func:`costdash.mlflow_decision.log_decision` logs: a scikit-learn
model's scores thresholded by a costdash decision.

A module of its own because it subclasses MLflow's ``PythonModel`` and so imports MLflow when
imported; :mod:`costdash.mlflow_decision` imports it only when a model is logged.
"""

from __future__ import annotations

from typing import Any

import mlflow.pyfunc
import numpy as np


class ThresholdedModel(mlflow.pyfunc.PythonModel):
    """Flags a case (1) when the wrapped model's score is >= the decision's threshold.

    Parameters
    ----------
    rule : dict
        ``{"threshold": t}``, or ``{"constant": bool}`` for a trivial decision (flag every case
        or none).
    score_method : {"predict_proba", "decision_function"}
    positive_column : int
        Column of ``predict_proba`` with the positive class's probability.
    """

    def __init__(self, rule: dict[str, Any], score_method: str, positive_column: int):
        self.rule, self.score_method, self.positive_column = rule, score_method, positive_column
        self.scorer: Any = None

    def load_context(self, context: Any) -> None:
        import mlflow.sklearn

        self.scorer = mlflow.sklearn.load_model(context.artifacts["scorer"])

    # No annotations: MLflow reads predict's type hints as an input schema and warns on Any.
    def predict(self, context, model_input, params=None):  # type: ignore[no-untyped-def]
        """0/1 per row of ``model_input`` (what the wrapped model's ``score_method`` takes)."""
        if "constant" in self.rule:
            return np.full(len(model_input), int(self.rule["constant"]), dtype=np.int64)
        scores = getattr(self.scorer, self.score_method)(model_input)
        if self.score_method == "predict_proba":
            scores = np.asarray(scores)[:, self.positive_column]
        # costdash's rule, as scikit-learn's FixedThresholdClassifier: score >= threshold.
        return (np.asarray(scores, dtype=np.float64) >= self.rule["threshold"]).astype(np.int64)
