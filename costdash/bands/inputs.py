"""The arguments of :mod:`costdash.bands`' functions: the checks they share (:func:`band_iv`),
the methods and their limits, and the inputs turned into arrays (scores, confusion matrices,
selection rows, paired tables).
Private: a part of :mod:`costdash.bands`, whose ``__init__`` holds the public names.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from costdash._resampling import (
    BAND_MAX_REPLICATES,
    MIN_CALIBRATED_REPLICATES,
    RngLike,
    as_generator,
    check_level,
    check_replicates,
)
from costdash._selection import (
    paired_tables,
    select_thresholds,
    stratified_half,
    stratified_half_counts,
    thresholds_of_roc,
)
from costdash.dataset import CountedClassifier, ScoredClassifier
from costdash.errors import ParameterError
from costdash.roc import roc_from_score_counts

MAX_REPLICATES = BAND_MAX_REPLICATES
"""Largest number of bootstrap replicates accepted."""



METHODS = ("clopper-pearson-mover", "wilson-mover", "clopper-pearson", "discordant-mover",
           "newcombe-mover", "percentile", "double-bootstrap")
"""Band methods, as named in results (``CostBand.method``, ``DifferenceBand.method``) and the CLI.
The closed forms of a cost line are ``clopper-pearson-mover`` (the default since issue 24),
``wilson-mover`` (the old default, kept by name) and the simultaneous ``clopper-pearson``
rectangle; a difference's are their paired counterparts ``discordant-mover`` and
``newcombe-mover``."""

# A difference's method names the same family as a line's (the core resolves a request to the
# line's name; difference_band names its result with the paired one).
_METHOD_ALIASES = {
    "clopper-pearson-mover": "clopper-pearson-mover", "cp-mover": "clopper-pearson-mover",
    "discordant-mover": "clopper-pearson-mover",
    "wilson-mover": "wilson-mover", "wilson": "wilson-mover", "mover": "wilson-mover",
    "newcombe-mover": "wilson-mover", "newcombe": "wilson-mover",
    "clopper-pearson": "clopper-pearson", "exact": "clopper-pearson",
    "percentile": "percentile", "double-bootstrap": "double-bootstrap",
}
UNEARNED_METHODS = ("wilson-mover", "newcombe-mover")
"""Closed forms kept by name whose level the exact scan does not earn (studies/
fixed_threshold_coverage.py: minimum pointwise coverage 0.80 / 0.85 at nominal 0.90 when a class
expects a fraction of an error), so their bands carry no percentage: ``calibrated`` is False."""

UNEARNED_REASON = ("{name}'s exact coverage falls to {low} at nominal 0.90 when a "
                   "class expects a fraction of an error (docs/bands.md); the default "
                   "{default} earns its level in every regime scanned")
"""Why a band of an :data:`UNEARNED_METHODS` method has no level or significance, in words (after
"no level: " or "no significant ranges: ")."""

LINE_CLOSED_FORMS = ("clopper-pearson-mover", "wilson-mover", "clopper-pearson")
"""The closed-form methods of a cost line (their edges are recomputed from the error counts)."""


DEFAULT_INNER_REPLICATES = 100
"""Inner replicates per outer replicate of the double bootstrap."""



def _make_grid(grid: int | ArrayLike) -> NDArray[np.float64]:
    if isinstance(grid, (int, np.integer)) and not isinstance(grid, bool):
        g = int(grid)
        if not 2 <= g <= 100_001:
            raise ParameterError(f"grid must have between 2 and 100,001 points; got {g}")
        pc = np.linspace(0.0, 1.0, g)
        pc[0], pc[-1] = 0.0, 1.0
        return pc
    if isinstance(grid, bool):
        raise ParameterError(f"grid must be a number of points or an array of PC(+) values; got {grid!r}")
    try:
        pc = np.asarray(grid, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError("grid must be a number of points or an array of PC(+) values") from None
    if pc.ndim != 1 or pc.size < 1:
        raise ParameterError("a grid of PC(+) values must be a non-empty 1-D array")
    if not np.all(np.isfinite(pc)) or pc.min() < 0.0 or pc.max() > 1.0:
        raise ParameterError("grid PC(+) values must lie in [0, 1]")
    if np.any(np.diff(pc) <= 0):
        raise ParameterError("grid PC(+) values must be strictly increasing")
    return pc.copy()


# Largest replicates x grid points kept (the stored replicate curves, 8 bytes each).
_MAX_CURVE_ELEMENTS = 25_000_000


def _check_size(replicates: int, pc: NDArray[np.float64]) -> None:
    if replicates * pc.size > _MAX_CURVE_ELEMENTS:
        raise ParameterError(f"{replicates} replicates x {pc.size} grid points is too many to keep "
                             f"(at most {_MAX_CURVE_ELEMENTS:,}); use fewer of either")


def _check_batch(max_batch_elements: object) -> int:
    if isinstance(max_batch_elements, bool) or not isinstance(max_batch_elements, (int, np.integer)):
        raise ParameterError(f"max_batch_elements must be an integer; got {max_batch_elements!r}")
    value = int(max_batch_elements)
    if value < 1024:
        raise ParameterError(f"max_batch_elements must be at least 1024; got {value}")
    return value


def _check_replicates(replicates: object) -> int:
    return check_replicates(replicates, MAX_REPLICATES)


def _check_threshold(threshold: object) -> float | None:
    if threshold is None:
        return None
    if isinstance(threshold, bool) or not isinstance(threshold, (int, float, np.integer, np.floating)):
        raise ParameterError(f"threshold must be a number; got {threshold!r}")
    value = float(threshold)
    if not math.isfinite(value):
        raise ParameterError(f"threshold must be finite; got {value}")
    return value




def _check_method(method: object, simultaneous: object) -> tuple[str | None, bool]:
    if not isinstance(simultaneous, (bool, np.bool_)):
        raise ParameterError(f"simultaneous must be True or False; got {simultaneous!r}")
    simultaneous = bool(simultaneous)
    if method is None:
        return None, simultaneous
    if not isinstance(method, str) or method.lower() not in _METHOD_ALIASES:
        raise ParameterError(f"method must be one of {', '.join(METHODS)} (or None for the "
                             f"default); got {method!r}")
    canonical = _METHOD_ALIASES[method.lower()]
    if canonical == "clopper-pearson":
        simultaneous = True
    return canonical, simultaneous


def _closed_form_method(method: str | None, simultaneous: bool, where: str) -> str:
    """The method of a fixed or selected threshold: closed form unless percentile is asked for."""
    if method is None or method in LINE_CLOSED_FORMS:
        if simultaneous:
            return "clopper-pearson"
        return "wilson-mover" if method == "wilson-mover" else "clopper-pearson-mover"
    if method == "double-bootstrap":
        raise ParameterError(f"method='double-bootstrap' is for a whole envelope (no threshold, "
                             f"select=None); {where} uses 'clopper-pearson-mover' (the default), "
                             "'wilson-mover', 'clopper-pearson' (simultaneous) or 'percentile'")
    if simultaneous:
        raise ParameterError("simultaneous=True needs the closed-form method (the default); the "
                             "percentile bootstrap band is pointwise")
    return method


def _selected_method(method: str | None, simultaneous: bool) -> str:
    chosen = _closed_form_method(method, simultaneous, "select=")
    if chosen == "percentile":
        raise ParameterError("method='percentile' is not available with select=: the held-out "
                             "cost of selected thresholds is banded in closed form "
                             "('clopper-pearson-mover' or 'wilson-mover', or 'clopper-pearson' "
                             "for the whole curve)")
    return chosen


def _check_envelope_method(method: str | None, simultaneous: bool, *, pair: bool) -> None:
    """Refuse what a re-tuned envelope (or the difference of two) cannot give."""
    if pair:
        if method not in (None, "percentile") or simultaneous:
            raise ParameterError(
                "the difference of two re-tuned envelopes has only the (uncalibrated) percentile "
                "spread; for a calibrated band and significant ranges give fixed thresholds "
                "(threshold=) or select thresholds on other rows (select='split' or validation "
                "rows)")
    elif method in LINE_CLOSED_FORMS or simultaneous:
        raise ParameterError(
            "a closed-form or simultaneous band needs a fixed threshold (threshold=) or thresholds "
            "selected on other rows (select='split' or validation rows); the whole envelope "
            "offers 'percentile' (an uncalibrated spread) or 'double-bootstrap'")


def _check_inner(inner_replicates: object) -> int:
    if inner_replicates is None:
        return DEFAULT_INNER_REPLICATES
    inner = check_replicates(inner_replicates, 2000)
    if inner < 10:
        raise ParameterError(f"inner_replicates must be between 10 and 2000; got {inner}")
    return inner


def _calibrated_replicates(replicates: int, method: str) -> None:
    if replicates < MIN_CALIBRATED_REPLICATES:
        raise ParameterError(
            f"method={method!r} gives a band with a confidence level, which needs at least "
            f"{MIN_CALIBRATED_REPLICATES} bootstrap replicates (fewer put the band's edges at a "
            f"handful of extreme replicates); got replicates={replicates}")




def _scores(y_true: ArrayLike, score: ArrayLike, what: str
            ) -> tuple[NDArray[np.bool_], NDArray[np.float64]]:
    y = np.asarray(y_true)
    if y.dtype != bool:
        if y.size and not np.all((y == 0) | (y == 1)):
            raise ParameterError(f"{what}: y_true must be boolean or 0/1")
        y = y.astype(bool)
    try:
        s = np.asarray(score, dtype=np.float64)
    except (TypeError, ValueError):
        raise ParameterError(f"{what}: scores must be numbers") from None
    if y.ndim != 1 or s.ndim != 1 or y.size != s.size:
        raise ParameterError(f"{what}: y_true and score must be 1-D of one length, got shapes "
                             f"{y.shape} and {s.shape}")
    if not np.all(np.isfinite(s)):
        raise ParameterError(f"{what}: scores must be finite")
    n_pos = int(np.count_nonzero(y))
    if n_pos == 0 or n_pos == y.size:
        raise ParameterError(f"{what}: a band needs examples of both classes")
    return y, s


def _single_matrix(tp: object, fp: object, fn: object, tn: object) -> tuple[int, int, int, int]:
    values = []
    for label, v in (("tp", tp), ("fp", fp), ("fn", fn), ("tn", tn)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer, float, np.floating)) \
                or not float(v).is_integer() or float(v) < 0:
            raise ParameterError(f"{label} must be a non-negative whole number; got {v!r}")
        values.append(int(v))
    tp_, fp_, fn_, tn_ = values
    if tp_ + fn_ == 0 or fp_ + tn_ == 0:
        raise ParameterError("a confusion matrix needs at least one positive and one negative "
                             f"example (tp + fn = {tp_ + fn_}, fp + tn = {fp_ + tn_})")
    return tp_, fp_, fn_, tn_


def _pick_counted_row(c: CountedClassifier, threshold: float | None) -> int:
    m = int(np.asarray(c.tp).size)
    if threshold is None:
        if m == 1:
            return 0
        raise ParameterError(
            f"classifier {c.name!r} has {m} confusion matrices; a band is for one of them: give "
            "threshold= (the CLI's --threshold) to pick the one with that threshold")
    if c.threshold is None:
        raise ParameterError(f"classifier {c.name!r} has no thresholds to pick a matrix by")
    thr = np.asarray(c.threshold, dtype=np.float64)
    match = np.flatnonzero(thr == threshold)
    if match.size == 0:
        match = np.flatnonzero(np.isclose(thr, threshold, rtol=1e-9, atol=0.0))
    if match.size == 0:
        shown = ", ".join(f"{t:g}" for t in thr[np.isfinite(thr)][:10])
        raise ParameterError(f"classifier {c.name!r} has no confusion matrix at threshold "
                             f"{threshold:g} (its thresholds: {shown or 'none'})")
    if match.size > 1:
        raise ParameterError(f"classifier {c.name!r} has {match.size} confusion matrices at "
                             f"threshold {threshold:g}")
    return int(match[0])


def _has_folds(c: object) -> bool:
    fold = getattr(c, "fold", None)
    return fold is not None and np.unique(np.asarray(fold)).size > 1


def _selection_rows(select: object, y: NDArray[np.bool_], columns: int, rng: np.random.Generator,
                    what: str) -> tuple[str, NDArray[np.bool_] | None, tuple[NDArray, ...] | None]:
    """``("split", mask, None)`` or ``("validation", None, (y_sel, score_sel, ...))``."""
    if isinstance(select, str):
        if select != "split":
            raise ParameterError(f"select must be 'split', a tuple of validation arrays or None; "
                                 f"got {select!r}")
        return "split", stratified_half(y, rng, what), None
    if isinstance(select, (tuple, list)) and len(select) == columns + 1:
        y_sel, first = _scores(select[0], select[1], f"{what}: validation rows")
        rest = [first]
        for extra in select[2:]:
            _, s = _scores(select[0], extra, f"{what}: validation rows")
            rest.append(s)
        return "validation", None, (y_sel, *rest)
    shape = "(y_select, score_select)" if columns == 1 else "(y_select, score_a, score_b)"
    raise ParameterError(f"select must be 'split', a validation tuple {shape} or None; "
                         f"got {type(select).__name__}")


def _selected_thresholds(select: object, y: NDArray[np.bool_], scores: tuple[NDArray, ...],
                         rng: np.random.Generator, what: str, pc: NDArray[np.float64]
                         ) -> tuple[str, tuple[NDArray, ...], NDArray[np.bool_], tuple[NDArray, ...]]:
    """Each classifier's optimal threshold per PC(+) chosen on the selection rows, and the rows
    to band them on: ``(how, thresholds, y_banded, scores_banded)``."""
    how, mask, validation = _selection_rows(select, y, len(scores), rng, what)
    if how == "split":
        assert mask is not None
        thresholds = tuple(select_thresholds(y[mask], s[mask], pc) for s in scores)
        return how, thresholds, y[~mask], tuple(s[~mask] for s in scores)
    assert validation is not None
    thresholds = tuple(select_thresholds(validation[0], v, pc) for v in validation[1:])
    return how, thresholds, y, scores


def _selected_counts(select: object, y: NDArray[np.bool_], s: NDArray[np.float64],
                     count: NDArray[np.int64], rng: np.random.Generator, what: str,
                     pc: NDArray[np.float64]
                     ) -> tuple[str, NDArray[np.float64], NDArray[np.int64]]:
    """:func:`_selected_thresholds` of a classifier known by counts per (score, label) cell:
    ``(how, thresholds, held-out counts)``; the split's half is drawn from the counts."""
    if isinstance(select, str) and select == "split":
        chosen = stratified_half_counts(y, count, rng, what)
        thresholds = thresholds_of_roc(roc_from_score_counts(
            s, np.where(y, chosen, 0), np.where(y, 0, chosen)), pc)
        return "split", thresholds, count - chosen
    _, _, validation = _selection_rows(select, y, 1, rng, what)
    assert validation is not None
    return "validation", select_thresholds(validation[0], validation[1], pc), count


def _paired_input(c: object, default: str, what: str
                  ) -> tuple[str, NDArray[np.bool_], NDArray[np.float64]]:
    if isinstance(c, ScoredClassifier) and c.count is not None:
        raise ParameterError(
            f"classifier {c.name!r} is known by counts per score (the score-count layout); a "
            "difference band needs both classifiers' scores on the same examples, which the "
            "counts of each classifier alone do not pair")
    if isinstance(c, ScoredClassifier):
        y, s = _scores(c.y_true, c.score, f"classifier {c.name!r}")
        return c.name, y, s
    if isinstance(c, (tuple, list)) and len(c) == 2:
        y, s = _scores(c[0], c[1], what)
        return default, y, s
    if isinstance(c, CountedClassifier):
        raise ParameterError(
            f"classifier {c.name!r} is known only by confusion matrices; a difference band needs "
            "both classifiers' scores on the same examples (resampled jointly)")
    raise ParameterError(f"{what} must be a ScoredClassifier or a (y_true, score) pair; "
                         f"got {type(c).__name__}")


def _same_rows(name_a: str, y_a: NDArray[np.bool_], name_b: str, y_b: NDArray[np.bool_]) -> None:
    """Refuse two classifiers of a difference band that are not scored on the same examples."""
    if y_a.size != y_b.size:
        raise ParameterError(f"{name_a!r} and {name_b!r} are not scored on the same examples: "
                             f"{y_a.size} and {y_b.size} rows")
    if not np.array_equal(y_a, y_b):
        bad = np.flatnonzero(y_a != y_b)
        raise ParameterError(f"{name_a!r} and {name_b!r} are not scored on the same examples: "
                             f"their true labels differ at {bad.size} rows (first: row "
                             f"{int(bad[0])})")


def _pair_thresholds(threshold: object) -> tuple[float, float] | None:
    if threshold is None:
        return None
    if isinstance(threshold, (tuple, list)):
        if len(threshold) != 2:
            raise ParameterError("threshold must be one number (for both classifiers) or a pair "
                                 f"(threshold_a, threshold_b); got {len(threshold)} values")
        ta, tb = (_check_threshold(t) for t in threshold)
        if ta is None or tb is None:
            raise ParameterError("threshold pair: both thresholds are needed")
        return ta, tb
    t = _check_threshold(threshold)
    assert t is not None
    return t, t


def _tables(y: NDArray[np.bool_], sa: NDArray[np.float64], sb: NDArray[np.float64],
            ta: NDArray[np.float64], tb: NDArray[np.float64]) -> NDArray[np.int64]:
    return np.stack((paired_tables(sa[y], sb[y], ta, tb), paired_tables(sa[~y], sb[~y], ta, tb)))


class BandArgs(NamedTuple):
    """The options common to :func:`~costdash.bands.cost_band` and
    :func:`~costdash.bands.difference_band`, checked."""

    level: float
    replicates: int
    pc: NDArray[np.float64]
    rng: np.random.Generator
    threshold: float | tuple[float, float] | None
    max_batch_elements: int
    method: str | None
    simultaneous: bool


def band_iv(*, level: object, replicates: object, grid: object, rng: RngLike, threshold: object,
            max_batch_elements: object, method: object, simultaneous: object, progress: object,
            select: object, pair: bool) -> BandArgs:
    """The argument checks of the band functions, in one place (as scipy's ``_bootstrap_iv``).

    ``pair``: the threshold is one number or a pair (a difference band), else one number.
    """
    level = check_level(level)
    replicates = _check_replicates(replicates)
    pc = _make_grid(grid)  # type: ignore[arg-type]
    generator = as_generator(rng)
    fixed = _pair_thresholds(threshold) if pair else _check_threshold(threshold)
    batch = _check_batch(max_batch_elements)
    method, simultaneous = _check_method(method, simultaneous)
    if progress is not None and not callable(progress):
        raise ParameterError("progress must be a callable progress(done, total)")
    if select is not None and fixed is not None:
        what = "thresholds fixed beforehand" if pair else "a threshold fixed beforehand"
        raise ParameterError(f"give either threshold= ({what}) or select= "
                             "(thresholds selected from data), not both")
    return BandArgs(level, replicates, pc, generator, fixed, batch, method, simultaneous)
