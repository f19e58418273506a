"""The report's Curves section: the Curves page for one view (precision-recall with the hull in
PR space and iso-F1 lines, gains and lift with the capacity, one classifier's score
distributions, the reliability diagram), with the chosen and pinned thresholds and their
readouts (core: :mod:`costdash.curves`).

A part of :func:`dashboard.report.build_report`.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any

from costdash.analysis import Analysis
from costdash.curves import (capacity_on_gains, curve_point, gains_curve, iso_f1, pr_curve, pr_hull,
                             reliability, score_histograms)
from costdash.dataset import CountedClassifier, Dataset
from costdash.errors import CostdashError
from costdash.pinned import pin_threshold
from costdash.roc import RocCurve, thin_indices
from costdash.view import View
from dashboard.figures.curves import (Mark, gains_dict, histogram_figure, pr_dict,
                                      reliability_dict)
from dashboard.report.blas import one_blas_thread
from dashboard.report.format import (REPORT_MAX_POINTS, _e, _figure_html, _table,
                                     _threshold, _vertex_name, friendly, percent, plain_figure,
                                     readout, sized)

CURVES_HIST_BINS = 40
CURVES_REL_BINS = 10


def _thinned(roc: RocCurve, max_points: int | None = None) -> RocCurve:
    idx = thin_indices(roc.size, min(REPORT_MAX_POINTS, max_points or REPORT_MAX_POINTS))
    return RocCurve(name=roc.name, tp=roc.tp[idx], fp=roc.fp[idx], threshold=roc.threshold[idx],
                    n_pos=roc.n_pos, n_neg=roc.n_neg)


def _curves_section(dataset: Dataset, analysis: Analysis, view: View,
                    max_points: int | None = None,
                    calibrated: Callable[[str, str], Any] | None = None) -> str:
    """The Curves page for this view: precision–recall (with the hull mapped into PR space and
    iso-F1 lines), gains and lift with the capacity, the score distributions of one classifier
    and the reliability diagram, with the chosen and pinned thresholds and their readouts
    (core: :mod:`costdash.curves`)."""
    op = analysis.operating_point
    cond, v = op.condition, op.vertex
    selected = [c.name for c in analysis.classifiers]
    index = {n: i for i, n in enumerate(dataset.names)}
    # At the data's prevalence precision is the test set's own TP / (TP + FP), as on the page.
    prior_arg = None if view.p_pos in (None, dataset.prevalence) else cond.p_pos
    rocs = [_thinned(c.roc, max_points) for c in analysis.classifiers]
    prs = [pr_curve(r, p_pos=prior_arg) for r in rocs]
    prior = prs[0].prior
    marks = [Mark("current choice", v.classifier, v.threshold, v.fpr, v.tpr)]
    for k, (name, threshold) in enumerate(view.pins or ()):
        try:
            pin = pin_threshold(analysis.classifier(name).roc, threshold)
        except (KeyError, CostdashError):
            continue                      # said in the pinned-thresholds section
        marks.append(Mark(f"pin {k + 1}", name, threshold, pin.fpr, pin.tpr, slot=k))
    capacity_share = capacity_point = None
    if view.capacity is not None and view.volume > 0:
        try:
            on_gains = capacity_on_gains(analysis.hull, p_pos=cond.p_pos, volume=view.volume,
                                         capacity=view.capacity)
            capacity_share, capacity_point = on_gains.share, (on_gains.flagged, on_gains.caught)
        except CostdashError:
            pass                          # said in the constraints section
    # A plain dict (no per-property validation: issue 23).
    hull = pr_hull(analysis.hull, n_pos=dataset.n_pos, n_neg=dataset.n_neg, p_pos=prior_arg,
                   per_edge=32)
    pr = plain_figure(pr_dict(prs, index, hull=hull, iso=iso_f1(), marks=marks))
    gains = plain_figure(gains_dict([gains_curve(r, p_pos=prior_arg) for r in rocs], index,
                                    capacity_share=capacity_share,
                                    capacity_point=capacity_point, marks=marks))
    shown = shown_classifier(analysis, view)
    scored = {c.name: c for c in dataset.scored}
    if shown in scored:
        c = scored[shown]
        hist = histogram_figure(score_histograms(c.y_true, c.score, bins=CURVES_HIST_BINS,
                                                 weight=c.count, name=shown), marks=marks)
    else:
        hist = histogram_figure(None, message=f"{shown} was given as confusion matrices: no "
                                              "scores to show.")
    rels, refused = [], {}
    for name in selected:
        c = dataset.classifier(name)
        if isinstance(c, CountedClassifier):
            refused[name] = "given as confusion matrices"
            continue
        try:
            rels.append(reliability(c.y_true, c.score, bins=CURVES_REL_BINS, weight=c.count,
                                    name=name, strategy="quantile" if view.quantile_bins
                                    else "uniform"))
        except CostdashError as exc:
            refused[name] = str(exc)
    rel = plain_figure(reliability_dict(rels, index, refused=refused,
                                        counts=next((r for r in rels if r.name == shown),
                                                    None)))
    for fig in (pr, gains, hist, rel):
        sized(fig)
    at = ("on the test set's counts" if prior_arg is None
          else f"at p(+) = {readout(prior)}")
    volume = view.volume if view.volume > 0 else 0.0
    rows = []
    for m in marks:
        p = curve_point(m.fpr, m.tpr, prior=prior)
        rows.append([_e(m.label), _e(_vertex_name(m.classifier)), _e(_threshold(
            None if math.isnan(m.threshold) else m.threshold))]
            + [readout(x) if math.isfinite(x) else "–" for x in (p.recall, p.precision, p.f1)]
            + [percent(p.flagged), friendly(p.flagged * volume),
               readout(p.lift) if math.isfinite(p.lift) else "–"])
    brier = [[_e(r.name), readout(r.brier)] for r in rels] + \
        [[_e(n), _e(why)] for n, why in refused.items()]
    capacity = ("" if capacity_point is None else
                f"<p>Within the capacity ({percent(capacity_share)} of cases) the hull catches "
                f"at most {percent(capacity_point[1])} of positives.</p>")
    return ('<section id="curves"><h2>Precision–recall, gains, scores and calibration</h2>'
            f"<p>Where the chosen and pinned thresholds land on the curves people expect. "
            f"Precision is {_e(at)}; between two ROC hull vertices the dashed curve mixes the "
            "two (true and false positives move together linearly, so precision is not a "
            "straight line in PR space). The score distributions are "
            f"{_e(shown)}'s.</p>"
            + _table(["", "classifier", "threshold (score ≥)", "recall", "precision", "F1",
                      "flagged", "flagged per period", "lift"], rows, name_cols=3,
                     css_class="curves")
            + capacity
            + _table(["classifier", "Brier score"], brier, css_class="brier")
            + _calibrate_html(dataset, analysis, view, shown, max_points, calibrated)
            + '<div class="figs">'
            + "".join(f'<div class="fig">{_figure_html(fig, False, f"curves-{key}-figure")}'
                      "</div>" for key, fig in (("pr", pr), ("gains", gains), ("hist", hist),
                                                ("rel", rel)))
            + "</div></section>")


def shown_classifier(analysis: Analysis, view: View) -> str:
    """The classifier whose scores the Curves section shows and calibrates: the view's
    ``model`` when ticked, else the chosen one, else the first ticked."""
    selected = [c.name for c in analysis.classifiers]
    chosen = analysis.operating_point.vertex.classifier
    return (view.model if view.model in selected
            else chosen if chosen in selected else selected[0])


def calibrations_started(dataset: Dataset, analysis: Analysis, view: View,
                         max_points: int | None,
                         known: Callable[[str, str], Any] | None = None,
                         fitted_out: dict | None = None) -> Callable[[str, str], Any] | None:
    """Start making the shown classifier's calibrated curves (:func:`shown_classifier`, those
    ``known`` does not have) in a thread, and return the lookup :func:`_calibrate_html` reads
    them through (it waits for them).

    Cross-fitting Platt and isotonic calibrations on folds is a large part of a cold report's
    work (issue 23: ~0.45 CPU s at 200,000 scores); its numpy work releases the GIL, so on a
    second core it runs while the other sections and the figures are built. When ``known``
    gives a cross-fit's maps (``{"maps": ...}``, kept from an earlier report) the curve is made
    from them instead, without fitting: the same curve to the bit. The same curves, fitted the
    same way: the report shows the same numbers.

    ``fitted_out``: filled (once they are read) with what was fitted here, ``{(classifier,
    method): {"maps": the fitted maps} or the refusal's text}``, for the caller to keep (they
    do not depend on the view: :func:`dashboard.results.calibrated_entry_texts`).
    """
    from costdash.calibration import CALIBRATIONS, calibrate_classifier

    name = shown_classifier(analysis, view)
    c = dataset.classifier(name)
    given = {m: None if known is None else known(name, m) for m in CALIBRATIONS}
    missing = [m for m in CALIBRATIONS if given[m] is None or isinstance(given[m], dict)]
    if isinstance(c, CountedClassifier):
        return known
    if not missing:
        # Read once: a kept curve of 200,000 points is ~0.1 s of JSON to decode.
        return lambda classifier, method: (given[method] if classifier == name
                                           else None if known is None
                                           else known(classifier, method))
    fitted: dict[str, Any] = {}

    def fit() -> None:
        # OpenBLAS's spinning threads would take the core the other sections are built on
        # and triple the fit's CPU time (dashboard.report.blas).
        with one_blas_thread():
            for method in missing:
                maps = given[method]["maps"] if isinstance(given[method], dict) else None
                made: list = []
                try:
                    roc = calibrate_classifier(c, method, maps=maps,
                                               maps_out=None if maps is not None else made)
                    fitted[method] = roc if max_points is None else _thinned(roc, max_points)
                    if fitted_out is not None and maps is None:
                        fitted_out[name, method] = {"maps": made}
                except CostdashError as exc:
                    fitted[method] = str(exc)
                    if fitted_out is not None:
                        fitted_out[name, method] = str(exc)
                except BaseException as exc:  # noqa: BLE001 - raised again where it is read
                    fitted[method] = exc

    worker = threading.Thread(target=fit, name="costdash-report-calibration", daemon=True)
    worker.start()

    def lookup(classifier: str, method: str) -> Any:
        if classifier != name:
            return None if known is None else known(classifier, method)
        if method not in missing:
            return given[method]
        worker.join()
        found = fitted[method]
        if isinstance(found, BaseException):
            raise found
        return found

    return lookup


def _calibrate_html(dataset: Dataset, analysis: Analysis, view: View, name: str,
                    max_points: int | None,
                    known: Callable[[str, str], Any] | None = None) -> str:
    """The Curves page's "calibrate, then choose" table for ``name`` (issue 28, item 6; core:
    :func:`costdash.calibrated_choice.choose_after_calibration`): flagging from the conditions'
    threshold probability before and after Platt and isotonic calibration on folds, beside the
    best threshold. ``max_points``: a read-only link's scope, every curve thinned to it.
    ``known(name, method)``: a calibrated curve (or refusal) already computed, or None (the
    cross-fitting is most of a cold report's time)."""
    from costdash.calibrated_choice import choose_after_calibration
    from costdash.calibration import CALIBRATIONS, calibrate_classifier

    c = dataset.classifier(name)
    if isinstance(c, CountedClassifier):
        return ""
    calibrated: dict[str, RocCurve | str] = {}
    for method in CALIBRATIONS:
        found = None if known is None else known(name, method)
        if found is not None:
            calibrated[method] = found
            continue
        try:
            roc = calibrate_classifier(c, method)
            calibrated[method] = roc if max_points is None else _thinned(roc, max_points)
        except CostdashError as exc:
            calibrated[method] = str(exc)
    scores = analysis.classifier(name).roc
    if max_points is not None:
        scores = _thinned(scores, max_points)
    try:
        out = choose_after_calibration(scores, calibrated, analysis.operating_point.condition)
    except CostdashError:
        return ""
    volume = view.volume if view.volume > 0 else 0.0
    unit = view.unit
    labels = {"scores": "scores as they are", "platt": "Platt (logistic) on folds",
              "isotonic": "isotonic on folds", "best": "best threshold (hindsight)"}

    def money(x: float) -> str:
        return "–" if not math.isfinite(x) else _e(f"{friendly(x * (volume or 1.0))} {unit}")

    rows = []
    for r in out.rows:
        flag = ("–" if r.refused else "flag nothing" if r.threshold is None else
                f"{'score' if r.method in ('scores', 'best') else 'calibrated p'} ≥ "
                f"{readout(r.threshold)}")
        rows.append([_e(labels.get(r.method, r.method)), money(r.expected_cost),
                     money(out.regret(r.method)), _e(flag), _e(r.refused or "")])
    per = "per period" if volume else "per case"
    return (f"<h3>Calibrate, then choose the threshold: {_e(name)}</h3>"
            f"<p>At these conditions a probability is worth flagging from pₜ = "
            f"{readout(out.tau)} (the cost ratio at the data's prevalence "
            f"{readout(out.prevalence)}).</p>"
            + _table(["", f"expected cost {per}", "more than the best", "flag", "why not"], rows,
                     css_class="calibrate"))
