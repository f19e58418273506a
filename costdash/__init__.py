"""costdash: choose and defend a classifier when misclassification costs and priors are uncertain.

The computation core, importable from a notebook::

    import costdash
    data = costdash.load_predictions("predictions.csv")
    result = costdash.analyze(data, costdash.OperatingCondition(p_pos=0.01, cost_fn=50, cost_fp=1))
    result.operating_point.vertex.classifier, result.operating_point.expected_cost

Pure numpy / pandas / scipy: no Dash or Plotly here.
"""

from importlib import import_module
from typing import Any

from costdash.analysis import Analysis, ClassifierSummary, OperatingPoint, analysis_to_dict, analyze, choose
from costdash.conditions import OperatingCondition, pc_from_conditions, pc_from_slope, slope_from_pc
from costdash.costspace import (
    DifferenceCurve,
    LowerEnvelope,
    cost_line,
    envelope_difference,
    lower_envelope,
    operating_range,
    trivial_cost,
)
from costdash.dataset import CountedClassifier, Dataset, ScoredClassifier
from costdash.errors import CostdashError, InputFileError, ParameterError
from costdash.folds import fold_averages, fold_spread
from costdash.hull import (
    ALL_NEGATIVE,
    ALL_POSITIVE,
    RocHull,
    add_to_hull,
    classifier_hull,
    convex_hull,
    optimal_vertex,
)
from costdash.roc import RocCurve, roc_curve, roc_from_counts, roc_from_score_counts, roc_of

# Modules written alongside the core; imported lazily so ``import costdash`` stays light.
# No submodule may share a name listed here: importing a submodule binds it as the package's
# attribute, which would then shadow the function of that name (``costdash.threshold_choice``
# lives in ``costdash.choice_curves`` for that reason; tests/test_public_names.py checks them).
_LAZY = {
    # issue 13: threshold choice, H-measure, decision curves, robust choices
    "ConditionBox": "costdash.robust",
    "RobustChoice": "costdash.robust",
    "robust_choice": "costdash.robust",
    "robust_choice_pc": "costdash.robust",
    "HMeasure": "costdash.hmeasure",
    "h_measure": "costdash.hmeasure",
    "DecisionCurves": "costdash.dca",
    "decision_curves": "costdash.dca",
    "net_benefit": "costdash.dca",
    "ThresholdChoice": "costdash.choice_curves",
    "ThresholdChoiceCurve": "costdash.choice_curves",
    "threshold_choice": "costdash.choice_curves",
    "brier_score": "costdash.choice_curves",
    "cross_fit": "costdash.calibration",
    "calibrate_classifier": "costdash.calibration",
    "load_predictions": "costdash.io",
    # costdash.criteria imports scipy.special: lazy, so that `costdash --help` stays light.
    "beta_weighted_cost": "costdash.criteria",
    "calibrated_threshold_cost": "costdash.criteria",
    "fixed_threshold_cost": "costdash.criteria",
    "neyman_pearson": "costdash.criteria",
    "sensitivity": "costdash.criteria",
    "workforce": "costdash.criteria",
    "aggregate": "costdash.aggregation",
    "bcost": "costdash.multiclass",
    "bdeltacost": "costdash.multiclass",
    "cost_band": "costdash.bands",
    "difference_band": "costdash.bands",
    "gains_curve": "costdash.curves",
    "pr_curve": "costdash.curves",
    "pr_hull": "costdash.curves",
    "reliability": "costdash.curves",
    "score_histograms": "costdash.curves",
    # issue 25: the prior in production (watch lives in costdash.monitor: a submodule named
    # ``watch`` would shadow the function)
    "PrevalenceEstimate": "costdash.prevalence",
    "estimate_prevalence": "costdash.prevalence",
    "Watch": "costdash.monitor",
    "watch": "costdash.monitor",
    "WatchPeriod": "costdash.monitor",
    "watch_to_dict": "costdash.monitor",
    "ProductionScores": "costdash.production_io",
    "load_production": "costdash.production_io",
    "aggregate_production": "costdash.production_aggregation",
    # the decision to deploy (costdash decide) and where it goes: MLflow (issue 27)
    "Decision": "costdash.decision",
    "decide": "costdash.decision",
    "decision_to_dict": "costdash.decision",
    "LoggedDecision": "costdash.mlflow_decision",
    "log_decision": "costdash.mlflow_decision",
    # issue 28: what a practitioner reaches for
    "CostByThreshold": "costdash.threshold_money",
    "cost_by_threshold": "costdash.threshold_money",
    "TopFractionTable": "costdash.threshold_money",
    "top_fraction_table": "costdash.threshold_money",
    "SegmentChoice": "costdash.segments",
    "SegmentPolicy": "costdash.segments",
    "segment_policy": "costdash.segments",
    "one_vs_rest_frame": "costdash.one_vs_rest",
    "CalibratedChoice": "costdash.calibrated_choice",
    "choose_after_calibration": "costdash.calibrated_choice",
    "cost_interval": "costdash.readout_intervals",
    "regret_interval": "costdash.readout_intervals",
    # issue 27: the Explore page inline in a notebook. The one name the core hands over to the
    # dashboard: named here as a string (no import statement), imported when first looked up, so
    # `import costdash` and the CLI stay free of Dash (tests/test_layers.py reads imports).
    "show": "dashboard.notebook",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'costdash' has no attribute {name!r}")


__all__ = [
    "ConditionBox",
    "RobustChoice",
    "robust_choice",
    "robust_choice_pc",
    "HMeasure",
    "h_measure",
    "DecisionCurves",
    "decision_curves",
    "net_benefit",
    "ThresholdChoice",
    "ThresholdChoiceCurve",
    "threshold_choice",
    "brier_score",
    "cross_fit",
    "calibrate_classifier",
    "PrevalenceEstimate",
    "estimate_prevalence",
    "Watch",
    "WatchPeriod",
    "watch",
    "watch_to_dict",
    "ProductionScores",
    "load_production",
    "aggregate_production",
    "Decision",
    "decide",
    "decision_to_dict",
    "LoggedDecision",
    "log_decision",
    "CostByThreshold",
    "cost_by_threshold",
    "TopFractionTable",
    "top_fraction_table",
    "SegmentChoice",
    "SegmentPolicy",
    "segment_policy",
    "one_vs_rest_frame",
    "CalibratedChoice",
    "choose_after_calibration",
    "cost_interval",
    "regret_interval",
    "show",
    "ALL_NEGATIVE",
    "ALL_POSITIVE",
    "Analysis",
    "ClassifierSummary",
    "CostdashError",
    "CountedClassifier",
    "Dataset",
    "DifferenceCurve",
    "InputFileError",
    "LowerEnvelope",
    "OperatingCondition",
    "OperatingPoint",
    "ParameterError",
    "RocCurve",
    "RocHull",
    "ScoredClassifier",
    "add_to_hull",
    "aggregate",
    "analysis_to_dict",
    "analyze",
    "bcost",
    "bdeltacost",
    "beta_weighted_cost",
    "calibrated_threshold_cost",
    "choose",
    "classifier_hull",
    "convex_hull",
    "cost_band",
    "cost_line",
    "difference_band",
    "envelope_difference",
    "fixed_threshold_cost",
    "fold_averages",
    "fold_spread",
    "gains_curve",
    "load_predictions",
    "lower_envelope",
    "neyman_pearson",
    "operating_range",
    "optimal_vertex",
    "pc_from_conditions",
    "pc_from_slope",
    "pr_curve",
    "pr_hull",
    "reliability",
    "roc_curve",
    "roc_from_counts",
    "roc_from_score_counts",
    "roc_of",
    "score_histograms",
    "sensitivity",
    "slope_from_pc",
    "trivial_cost",
    "workforce",
]

__version__ = "0.1.0"
