"""The per-data-set "view model": the core's results packed as small, JSON-able dicts.

Computed once per data set (and cached, see :mod:`dashboard.services`), it is all the web layer ever
needs: the figures are drawn from it and the browser's live readouts are computed from its hull
vertices. Raw scores never leave the server.

Everything here is packing: the numbers come from :func:`costdash.analyze` and the core's hull
and envelope functions. The only change of representation is for JSON, which has no NaN or
infinity: a missing threshold is ``None`` and an infinite log slope of a hull edge (a vertical
first edge, a horizontal last one) is ``±1e308``, which compares with any finite log slope exactly
as infinity does.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from costdash.analysis import ClassifierSummary, analyze
from costdash.conditions import default_condition
from costdash.costspace import LowerEnvelope, lower_envelope
from costdash.dataset import Dataset
from costdash.hull import SAME_LOG_SLOPE, RocHull, convex_hull
from costdash.pinned import PinnedThreshold
from costdash.roc import RocCurve, thin_indices

VIEW_VERSION = 2
FIXED_THRESHOLD = 0.5
"""The "default" threshold the dashboard compares every classifier against."""

INF_LOG = 1e308


def _nums(values: Iterable[float]) -> list[float | None]:
    return [v if math.isfinite(v) else None for v in np.asarray(values, dtype=float).tolist()]


def _log_edges(hull: RocHull) -> list[float]:
    """Natural logs of the hull's edge slopes, as :func:`costdash.hull.optimal_vertex` uses them."""
    with np.errstate(divide="ignore"):
        logs = np.log(hull.segment_slopes)
    return np.clip(logs, -INF_LOG, INF_LOG).tolist()


def hull_entry(hull: RocHull, threshold_text: Sequence[str | None] | None = None
               ) -> dict[str, Any]:
    """A hull as JSON; ``threshold_text`` is each vertex's threshold as people read it
    (:func:`costdash.analysis.readable_threshold`, None where there is none)."""
    entry = {"fpr": hull.fpr.tolist(), "tpr": hull.tpr.tolist(),
             "classifier": list(hull.classifier), "threshold": _nums(hull.threshold),
             "log_edges": _log_edges(hull)}
    if threshold_text is not None:
        entry["threshold_text"] = list(threshold_text)
    return entry


def _readable_texts(summary: ClassifierSummary) -> list[str | None]:
    """Each of the classifier's own hull vertices' readable threshold (None: no threshold)."""
    return [None if not math.isfinite(t) else summary.readable_threshold(t)
            for t in summary.hull.threshold.tolist()]


def _overall_texts(hull: RocHull, classifiers: Sequence[dict[str, Any]]) -> list[str | None]:
    """The readable threshold of each vertex of a hull of the classifiers' own hulls: every
    vertex is one of theirs, whose text their entries hold."""
    known: dict[tuple[str, float], str | None] = {}
    for c in classifiers:
        h = c["hull"]
        for t, text in zip(h["threshold"], h.get("threshold_text") or ()):
            if t is not None:
                known[(c["name"], t)] = text
    return [None if not math.isfinite(t) else known.get((name, t))
            for name, t in zip(hull.classifier, hull.threshold.tolist())]


def envelope_entry(envelope: LowerEnvelope) -> dict[str, Any]:
    return {"pc": envelope.pc.tolist(), "cost": envelope.cost.tolist(),
            "vertex": envelope.vertex.tolist()}


def hull_from_entry(entry: dict[str, Any]) -> RocHull:
    """The :class:`~costdash.hull.RocHull` a :func:`hull_entry` was made from (exactly)."""
    return RocHull(fpr=np.asarray(entry["fpr"], dtype=np.float64),
                   tpr=np.asarray(entry["tpr"], dtype=np.float64),
                   classifier=tuple(entry["classifier"]),
                   threshold=np.array([np.nan if t is None else t for t in entry["threshold"]],
                                      dtype=np.float64))


def _hull_counts(summary: ClassifierSummary) -> tuple[list[int], list[int]]:
    """Integer TP/FP counts of a classifier's hull vertices (exact: rates are count / total)."""
    roc = summary.roc
    tp = np.rint(summary.hull.tpr * roc.n_pos).astype(np.int64)
    fp = np.rint(summary.hull.fpr * roc.n_neg).astype(np.int64)
    return tp.tolist(), fp.tolist()


def _at_fixed_threshold(summary: ClassifierSummary, scored: bool) -> dict[str, Any] | None:
    roc = summary.roc
    if not scored and not np.isfinite(roc.threshold).any():
        return None
    i = roc.point_at_threshold(FIXED_THRESHOLD)
    return {"threshold": FIXED_THRESHOLD, "index": int(i), "fpr": float(roc.fpr[i]),
            "tpr": float(roc.tpr[i])}


def classifier_entry(summary: ClassifierSummary, index: int, *, scored: bool,
                     max_points: int) -> dict[str, Any]:
    roc = summary.roc
    idx = thin_indices(roc.size, max_points)
    tp, fp = _hull_counts(summary)
    return {
        "name": summary.name,
        "index": index,
        "scored": scored,
        "n_pos": roc.n_pos,
        "n_neg": roc.n_neg,
        "auc": float(roc.auc),
        "cost_area": float(summary.cost_area),
        "operating_range": list(summary.operating_range) if summary.operating_range else None,
        "roc_size": roc.size,
        "roc": {"fpr": roc.fpr[idx].tolist(), "tpr": roc.tpr[idx].tolist(),
                "threshold": _nums(roc.threshold[idx])},
        "hull": {**hull_entry(summary.hull, _readable_texts(summary)), "tp": tp, "fp": fp},
        "envelope": envelope_entry(summary.envelope),
        "at_fixed": _at_fixed_threshold(summary, scored),
    }


def _overall(view: dict[str, Any], hull: RocHull, envelope: LowerEnvelope,
             models: Sequence[str]) -> dict[str, Any]:
    on_hull = set(hull.classifier)
    return {**view, "models": list(models),
            "hull": hull_entry(hull, _overall_texts(hull, view["classifiers"])),
            "envelope": envelope_entry(envelope),
            "dominated": [m for m in models if m not in on_hull],
            "potentially_optimal": list(hull.potentially_optimal)}


def build_view_model(dataset: Dataset, *, dataset_id: str = "", name: str | None = None,
                     max_points: int = 400) -> dict[str, Any]:
    """Analyse every classifier of ``dataset`` and pack what the dashboard shows.

    Parameters
    ----------
    dataset : Dataset
    dataset_id, name : str
        The store's id and the uploaded file's name, carried along for display and links.
    max_points : int
        Each ROC curve is thinned to at most this many points for display; hulls and envelopes
        stay exact.

    Returns
    -------
    dict
        ``{"version", "id", "name", "n", "n_pos", "n_neg", "prevalence", "positive_label",
        "layout", "n_folds", "classifiers": [...], "models", "hull", "envelope", "dominated",
        "potentially_optimal"}``; see :func:`classifier_entry` for a classifier's fields.
    """
    analysis = analyze(dataset, threads=2)
    scored_names = {c.name for c in dataset.scored}
    classifiers = [classifier_entry(s, i, scored=s.name in scored_names, max_points=max_points)
                   for i, s in enumerate(analysis.classifiers)]
    view = {
        "version": VIEW_VERSION, "id": dataset_id, "name": name or dataset.source,
        "n": dataset.n, "n_pos": dataset.n_pos, "n_neg": dataset.n_neg,
        "prevalence": dataset.prevalence, "positive_label": dataset.positive_label,
        "layout": dataset.layout, "n_folds": dataset.n_folds, "classifiers": classifiers,
        "fixed_threshold": FIXED_THRESHOLD,
    }
    return _overall(view, analysis.hull, analysis.envelope, [c["name"] for c in classifiers])


def _hull_curve(entry: dict[str, Any]) -> RocCurve:
    """A classifier reduced to its hull vertices, as counts: its hull is itself."""
    h = entry["hull"]
    return RocCurve(name=entry["name"], tp=np.asarray(h["tp"], dtype=np.int64),
                    fp=np.asarray(h["fp"], dtype=np.int64),
                    threshold=np.array([np.nan if t is None else t for t in h["threshold"]],
                                       dtype=np.float64),
                    n_pos=entry["n_pos"], n_neg=entry["n_neg"])


def thinned_roc(entry: dict[str, Any]) -> RocCurve:
    """The thinned ROC curve a classifier's entry holds (at most ``max_roc_points`` points: what
    a read link shows), as counts (rates are count / total, so rounding gives them back)."""
    n_pos, n_neg = int(entry["n_pos"]), int(entry["n_neg"])
    roc = entry["roc"]
    return RocCurve(name=entry["name"],
                    tp=np.rint(np.asarray(roc["tpr"], dtype=np.float64) * n_pos).astype(np.int64),
                    fp=np.rint(np.asarray(roc["fpr"], dtype=np.float64) * n_neg).astype(np.int64),
                    threshold=np.array([np.nan if t is None else t for t in roc["threshold"]],
                                       dtype=np.float64),
                    n_pos=n_pos, n_neg=n_neg)


def restrict_view_model(view: dict[str, Any], models: Sequence[str]) -> dict[str, Any]:
    """The view model with the overall hull and envelope of only ``models``.

    The hull of several classifiers is the hull of their own hulls, so it is recomputed (with the
    core's :func:`~costdash.hull.convex_hull`, in exact integer geometry) from the hull vertices
    kept in the view model, without touching the raw scores.
    """
    wanted = set(models)
    chosen = [c for c in view["classifiers"] if c["name"] in wanted]
    unknown = wanted - {c["name"] for c in chosen}
    if unknown:
        raise KeyError(f"no classifier named {', '.join(sorted(unknown))}")
    if not chosen:
        raise ValueError("select at least one classifier")
    hull = convex_hull([_hull_curve(c) for c in chosen])
    return _overall(view, hull, lower_envelope(hull), [c["name"] for c in chosen])


def client_model(view: dict[str, Any], colors: dict[str, str]) -> dict[str, Any]:
    """The part of the view model the browser needs for its live readouts (no curves).

    Hull vertices with their log edge slopes (overall and per selected classifier), each
    classifier's fixed-threshold point, operating range and colour.
    """
    selected = set(view["models"])
    return {
        "id": view["id"], "name": view["name"], "n": view["n"], "prevalence": view["prevalence"],
        # What an unset condition means, by the core's one rule (the browser does not repeat it).
        "default_condition": {k: getattr(default_condition(view["prevalence"]), k)
                              for k in ("p_pos", "cost_fn", "cost_fp")},
        "models": view["models"], "fixed_threshold": view["fixed_threshold"],
        "tie_log_slope": SAME_LOG_SLOPE,
        "hull": view["hull"], "dominated": view["dominated"],
        "classifiers": [{
            "name": c["name"], "color": colors[c["name"]],
            "operating_range": c["operating_range"], "at_fixed": c["at_fixed"],
            "hull": {k: c["hull"][k] for k in ("fpr", "tpr", "threshold", "threshold_text",
                                               "log_edges")},
        } for c in view["classifiers"] if c["name"] in selected],
    }


def pinned_entry(pin: PinnedThreshold) -> dict[str, Any]:
    """A pinned threshold (:func:`costdash.pinned.pin_threshold`) for the browser: its exact ROC
    point, test-set counts and PC(+) intervals (JSON: a missing threshold or interval is None)."""
    return {"model": pin.classifier, "threshold": pin.threshold,
            "point_threshold": pin.point_threshold if math.isfinite(pin.point_threshold)
            else None,
            "fpr": pin.fpr, "tpr": pin.tpr, "tp": pin.tp, "fp": pin.fp, "fn": pin.fn,
            "tn": pin.tn,
            "optimal_pc": list(pin.optimal_pc) if pin.optimal_pc else None,
            "beats_pc": list(pin.beats_trivial_pc) if pin.beats_trivial_pc else None}


def pin_grid(entry: dict[str, Any]) -> dict[str, Any]:
    """The thresholds a classifier's thinned ROC curve holds (:func:`classifier_entry`), lowest
    first, with their ROC points: what the threshold slider of the Explore page steps through."""
    roc = entry["roc"]
    rows = sorted((t, f, tp) for t, f, tp in zip(roc["threshold"], roc["fpr"], roc["tpr"])
                  if t is not None)
    return {"model": entry["name"], "threshold": [r[0] for r in rows],
            "fpr": [r[1] for r in rows], "tpr": [r[2] for r in rows]}
