"""Log a decision to MLflow: the decision and policy as artifacts, the conditions as params,
its costs as metrics, and optionally a model that applies the chosen threshold.

The decision costdash makes (which classifier, which threshold, at which costs, valid over which
PC(+)) belongs beside the model in the registry the team deploys from, not in a JSON file carried
by hand. MLflow is configured as MLflow always is (``MLFLOW_TRACKING_URI``, e.g. a local
``file://`` store, or ``mlflow.set_tracking_uri``); nothing here reads its own settings.

MLflow is optional (``pip install mlflow-skinny``): it is imported when :func:`log_decision` runs.
"""

from __future__ import annotations

import csv
import io
import json
import math
from dataclasses import dataclass
from typing import Any

from costdash.decision import Decision, decision_to_dict
from costdash.errors import ParameterError
from costdash.hull import ALL_POSITIVE

__all__ = ["DECISION_ARTIFACT", "POLICY_ARTIFACT", "LoggedDecision", "log_decision"]

DECISION_ARTIFACT = "costdash_decision.json"
"""The decision's JSON (that of ``costdash decide --json``) in the run's artifacts."""

POLICY_ARTIFACT = "costdash_policy_table.csv"
"""The policy table (PC(+) range, classifier, threshold) in the run's artifacts."""

SCORE_METHODS = ("predict_proba", "decision_function")


@dataclass(frozen=True)
class LoggedDecision:
    """Where :func:`log_decision` put things.

    Attributes
    ----------
    run_id : str
    experiment_id : str
    model_uri : str or None
        ``runs:/<run>/<name>`` of the thresholded model, when one was logged.
    registered_version : str or None
        Its version in the model registry, when it was registered.
    """

    run_id: str
    experiment_id: str
    model_uri: str | None = None
    registered_version: str | None = None


def _mlflow() -> Any:
    try:
        import mlflow
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ParameterError("logging to MLflow needs MLflow: pip install mlflow-skinny "
                             "(or mlflow)") from exc
    return mlflow


def _policy_csv(decision: Decision) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["pc_lo", "pc_hi", "classifier", "threshold", "fpr", "tpr"])
    for p in decision.policy:
        writer.writerow([repr(p.pc_lo), repr(p.pc_hi), p.classifier,
                         "" if p.threshold is None else repr(p.threshold), repr(p.fpr),
                         repr(p.tpr)])
    return out.getvalue()


def _params(decision: Decision) -> dict[str, str]:
    c = decision.condition
    # Params are text in MLflow; repr keeps every digit so the run reproduces the decision.
    return {"costdash.p_pos": repr(c.p_pos), "costdash.cost_fn": repr(c.cost_fn),
            "costdash.cost_fp": repr(c.cost_fp), "costdash.cost_tp": repr(c.cost_tp),
            "costdash.cost_tn": repr(c.cost_tn), "costdash.classifier": decision.classifier,
            "costdash.threshold": "none" if decision.threshold is None
            else repr(decision.threshold)}


def _metrics(decision: Decision) -> dict[str, float]:
    values = {"costdash.expected_cost": decision.expected_cost,
              "costdash.normalized_cost": decision.normalized_cost,
              "costdash.pc": decision.pc,
              "costdash.valid_pc_low": decision.valid_pc[0],
              "costdash.valid_pc_high": decision.valid_pc[1],
              "costdash.valid_p_pos_low": decision.valid_p_pos[0],
              "costdash.valid_p_pos_high": decision.valid_p_pos[1]}
    return {k: float(v) for k, v in values.items() if math.isfinite(float(v))}


def _requirements() -> list[str]:
    """What serving the thresholded model needs: costdash (its class), numpy, scikit-learn."""
    from importlib.metadata import PackageNotFoundError, version

    wanted = []
    for name in ("costdash", "numpy", "scikit-learn", "cloudpickle"):
        try:
            wanted.append(f"{name}=={version(name)}")
        except PackageNotFoundError:
            wanted.append(name)
    return wanted


def log_decision(decision: Decision, *, run_id: str | None = None,
                 experiment: str | None = None, model_uri: str | None = None,
                 score_method: str = "predict_proba", positive_column: int = 1,
                 registered_model_name: str | None = None,
                 model_name: str = "costdash_thresholded_model") -> LoggedDecision:
    """Log ``decision`` to MLflow.

    Parameters
    ----------
    decision : Decision
        From :func:`costdash.decide`.
    run_id : str, optional
        Log into this existing run; otherwise into the active run, or a new run (in
        ``experiment`` when given).
    experiment : str, optional
        The experiment of a new run (created when missing).
    model_uri : str, optional
        A logged scikit-learn model whose scores the decision's threshold applies to (e.g.
        ``runs:/<run>/model``): a pyfunc model is logged that flags ``score >= threshold``, the
        score being ``score_method``'s output (column ``positive_column`` of ``predict_proba``).
        It must be the model named by the decision's classifier, scored the way the predictions
        file was.
    score_method : {"predict_proba", "decision_function"}
    positive_column : int
        Column of ``predict_proba`` holding the positive class's probability.
    registered_model_name : str, optional
        Register the thresholded model under this name (needs ``model_uri``).
    model_name : str
        The thresholded model's name in the run.

    Returns
    -------
    LoggedDecision

    Raises
    ------
    ParameterError
        MLflow is not installed, ``score_method`` is unknown, or a model is to be registered
        without ``model_uri``.
    """
    if score_method not in SCORE_METHODS:
        raise ParameterError(f"score_method must be one of {', '.join(SCORE_METHODS)}, "
                             f"not {score_method!r}")
    if registered_model_name and not model_uri:
        raise ParameterError("registering a model needs model_uri: the scikit-learn model whose "
                             "scores the threshold applies to")
    mlflow = _mlflow()
    active = mlflow.active_run()
    owns_run = not (active is not None and run_id in (None, active.info.run_id))
    experiment_id = None
    if owns_run and run_id is None and experiment:
        # Not mlflow.set_experiment: that would change the caller's active experiment too.
        found = mlflow.get_experiment_by_name(experiment)
        experiment_id = (found.experiment_id if found is not None
                         else mlflow.create_experiment(experiment))
    run = (mlflow.start_run(run_id=run_id, experiment_id=experiment_id) if owns_run
           else active)
    try:
        mlflow.log_params(_params(decision))
        mlflow.log_metrics(_metrics(decision))
        mlflow.log_text(json.dumps(decision_to_dict(decision), indent=2, allow_nan=False),
                        DECISION_ARTIFACT)
        mlflow.log_text(_policy_csv(decision), POLICY_ARTIFACT)
        logged_uri = version = None
        if model_uri:
            from costdash._mlflow_model import ThresholdedModel

            if decision.threshold is None:
                rule = {"constant": decision.classifier == ALL_POSITIVE}
            else:
                rule = {"threshold": decision.threshold}
            info = mlflow.pyfunc.log_model(
                name=model_name,
                python_model=ThresholdedModel(rule=rule, score_method=score_method,
                                              positive_column=positive_column),
                artifacts={"scorer": model_uri},
                # Named, not inferred: inference loads the model in a fresh interpreter (tens
                # of seconds) and cannot see that costdash itself is needed to unpickle it.
                pip_requirements=_requirements(),
                registered_model_name=registered_model_name)
            logged_uri = info.model_uri
            version = (str(info.registered_model_version)
                       if getattr(info, "registered_model_version", None) is not None else None)
        return LoggedDecision(run_id=run.info.run_id, experiment_id=run.info.experiment_id,
                              model_uri=logged_uri, registered_version=version)
    finally:
        if owns_run:
            mlflow.end_run()
