"""Logging a decision to MLflow (issue 27): a local file store, a real scikit-learn model, and
the logged thresholded model against the decision's rule on 10^5 rows."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

mlflow = pytest.importorskip("mlflow")  # in requirements-test.txt: present wherever tests run

from sklearn.linear_model import LogisticRegression  # noqa: E402

from costdash import analyze  # noqa: E402
from costdash.conditions import OperatingCondition  # noqa: E402
from costdash.dataset import Dataset, ScoredClassifier  # noqa: E402
from costdash.decision import decide, decision_to_dict  # noqa: E402
from costdash.errors import ParameterError  # noqa: E402
from costdash.mlflow_decision import DECISION_ARTIFACT, POLICY_ARTIFACT, log_decision  # noqa


@pytest.fixture
def tracking(tmp_path, monkeypatch):
    uri = (tmp_path / "mlruns").as_uri()
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    # MLflow 3 keeps the file store in maintenance mode; it is what a bare machine has.
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    mlflow.set_tracking_uri(uri)
    yield uri
    while mlflow.active_run() is not None:
        mlflow.end_run()


def _fitted(seed: int = 0, n: int = 4000):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    y = (x @ np.array([1.2, -0.7, 0.4]) + rng.normal(size=n)) > 1.0
    return LogisticRegression().fit(x, y), x, y


def test_decision_params_metrics_and_artifacts(tracking):
    model, x, y = _fitted()
    score = model.predict_proba(x)[:, 1]
    data = Dataset(source="t", layout="wide", positive_label="1",
                   scored=(ScoredClassifier("logreg", y, score),))
    decision = decide(analyze(data, OperatingCondition(p_pos=0.1, cost_fn=20, cost_fp=1)))
    logged = log_decision(decision, experiment="credit")
    client = mlflow.tracking.MlflowClient()
    run = client.get_run(logged.run_id)
    assert client.get_experiment(logged.experiment_id).name == "credit"
    assert run.data.params["costdash.cost_fn"] == "20"
    assert float(run.data.params["costdash.threshold"]) == decision.threshold
    assert run.data.metrics["costdash.expected_cost"] == pytest.approx(decision.expected_cost)
    names = {a.path for a in client.list_artifacts(logged.run_id)}
    assert {DECISION_ARTIFACT, POLICY_ARTIFACT} <= names
    assert "decision" in DECISION_ARTIFACT
    text = mlflow.artifacts.load_text(f"runs:/{logged.run_id}/{DECISION_ARTIFACT}")
    assert json.loads(text) == json.loads(json.dumps(decision_to_dict(decision)))
    policy = mlflow.artifacts.load_text(f"runs:/{logged.run_id}/{POLICY_ARTIFACT}")
    assert len(policy.strip().splitlines()) == len(decision.policy) + 1


def test_the_thresholded_model_follows_the_decision_on_every_row(tracking):
    model, x, y = _fitted(1)
    with mlflow.start_run() as run:
        mlflow.sklearn.log_model(model, name="model", serialization_format="cloudpickle",
                                 pip_requirements=["scikit-learn"])
        model_uri = f"runs:/{run.info.run_id}/model"
        score = model.predict_proba(x)[:, 1]
        data = Dataset(source="t", layout="wide", positive_label="1",
                       scored=(ScoredClassifier("logreg", y, score),))
        decision = decide(analyze(data, OperatingCondition(p_pos=0.2, cost_fn=5, cost_fp=1)))
        logged = log_decision(decision, model_uri=model_uri,
                              registered_model_name="costdash-logreg")
        assert logged.run_id == run.info.run_id        # logged into the active run
    assert logged.registered_version == "1"
    served = mlflow.pyfunc.load_model(logged.model_uri)
    rows = np.random.default_rng(2).normal(size=(100_000, 3))
    predicted = np.asarray(served.predict(pd.DataFrame(rows)))
    expected = model.predict_proba(rows)[:, 1] >= decision.threshold
    assert int(np.sum(predicted.astype(bool) != expected)) == 0
    assert 0 < expected.sum() < expected.size


def test_bad_arguments_are_named(tracking):
    model, x, y = _fitted(3, n=300)
    data = Dataset(source="t", layout="wide", positive_label="1",
                   scored=(ScoredClassifier("m", y, model.predict_proba(x)[:, 1]),))
    decision = decide(analyze(data))
    with pytest.raises(ParameterError, match="score_method must be one of"):
        log_decision(decision, score_method="predict")
    with pytest.raises(ParameterError, match="registering a model needs model_uri"):
        log_decision(decision, registered_model_name="x")


def test_decide_mlflow_logs_what_decide_json_prints(tracking, tmp_path, capsys):
    from costdash.cli import main

    model, x, y = _fitted(4, n=2000)
    path = tmp_path / "p.csv"
    pd.DataFrame({"y_true": y.astype(int), "logreg": model.predict_proba(x)[:, 1]}).to_csv(
        path, index=False)
    assert main(["decide", str(path), "--p-pos", "0.1", "--cost-fn", "20", "--cost-fp", "1",
                 "--mlflow", "--experiment", "cli", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    run_id = out["mlflow"]["run_id"]
    text = mlflow.artifacts.load_text(f"runs:/{run_id}/{DECISION_ARTIFACT}")
    assert json.loads(text) == {k: out[k] for k in ("decision", "policy")}
    assert main(["decide", str(path), "--run-id", "x"]) == 2
    assert "only apply with --mlflow" in capsys.readouterr().err
