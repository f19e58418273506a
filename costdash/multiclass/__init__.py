"""Cost-sensitive evaluation of k-class classifiers: BCOST and BDELTACOST.

Implements the two bootstrap procedures of Margineantu & Dietterich, "Bootstrap Methods for the
Cost-Sensitive Evaluation of Classifiers" (ICML 2000):

* :func:`bcost` - a confidence interval for the expected (average, per example) cost of one
  classifier, from its k x k confusion matrix and a k x k cost matrix;
* :func:`bdeltacost` - a confidence interval for the expected difference in cost of two
  classifiers evaluated on the same test set, from their k x k x k joint confusion matrix, and the
  test of "equal expected cost" it implies.

Both separate the estimation of the confusion-matrix cell probabilities (a multinomial, optionally
Laplace-corrected) from the cost: the cell probabilities are resampled parametrically
(``rng.multinomial``), each simulated confusion matrix is priced with the cost matrix, and the
interval is read off the sorted simulated costs with the paper's order statistics.

Orientation
-----------
Everywhere in this module a confusion or cost matrix has **rows = predicted class and columns =
actual (true) class**, as in the paper: ``costs[i, j]`` is the cost of predicting class ``i`` when
the truth is ``j``, and ``confusion[i, j]`` counts the examples predicted ``i`` whose truth is
``j``. (scikit-learn's ``confusion_matrix`` is the transpose: rows actual, columns predicted.) The
file readers accept the other orientation with ``transpose=True``.

Costs are averages per example: a result's ``cost`` is ``sum(confusion * costs) / n``.

Layers
------
The names below are defined in three private submodules, one per layer, and re-exported here:
``costdash.multiclass.bootstrap`` (the bootstrap procedures and their results),
``costdash.multiclass.confusion`` (count matrices from labels, label matching) and
``costdash.multiclass.readers`` (the CSV readers, which take a path or a file object).
"""

from __future__ import annotations

from costdash.multiclass.confusion import (
    confusion3d_from_labels,
    confusion_from_labels,
    match_labels,
)
from costdash.multiclass.readers import (
    LabeledClassifier,
    LabelPredictions,
    load_confusion_matrix,
    load_cost_matrix,
    load_label_predictions,
)
from costdash.multiclass.bootstrap import (
    MAX_REPLICATES,  # noqa: F401 - the bound the CLI states; as before, not in __all__
    BcostBatch,
    BcostResult,
    BdeltacostBatch,
    BdeltacostResult,
    bcost,
    bcost_many,
    bdeltacost,
    bdeltacost_many,
    confidence_ranks,
    delta_costs,
)

__all__ = [
    "BcostResult",
    "BdeltacostResult",
    "BcostBatch",
    "BdeltacostBatch",
    "LabeledClassifier",
    "LabelPredictions",
    "bcost",
    "bdeltacost",
    "bcost_many",
    "bdeltacost_many",
    "confidence_ranks",
    "delta_costs",
    "confusion_from_labels",
    "confusion3d_from_labels",
    "load_cost_matrix",
    "load_confusion_matrix",
    "load_label_predictions",
    "match_labels",
]
