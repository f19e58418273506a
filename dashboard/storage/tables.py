"""A :class:`~costdash.dataset.Dataset` as Arrow tables and back: the *normalised* data (labels
as booleans, scores as float64, fold codes) that storage keeps as Parquet, with the metadata
to rebuild the data set exactly. Import them from :mod:`dashboard.storage`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa

from costdash.dataset import CountedClassifier, Dataset, ScoredClassifier, Segments

_FORMAT_VERSION = 1



def _shares_rows(scored: tuple[ScoredClassifier, ...]) -> bool:
    first = scored[0]
    return all(c.y_true is first.y_true or (c.y_true.shape == first.y_true.shape
                                             and np.array_equal(c.y_true, first.y_true))
               for c in scored[1:]) and all(
        (c.fold is None) == (first.fold is None)
        and (c.fold is None or c.fold is first.fold or np.array_equal(c.fold, first.fold))
        for c in scored[1:])


def dataset_to_tables(ds: Dataset) -> tuple[dict[str, Any], dict[str, pa.Table]]:
    """The data set as Arrow tables plus a JSON-able description of how to read them back.

    Scored classifiers sharing their rows (the wide layout) become one table with a label column,
    an optional fold column and one score column per classifier (named by position, so any
    classifier name is safe); otherwise one long table with a model code per row. Counted
    classifiers become one table of confusion matrices.
    """
    meta: dict[str, Any] = {
        "format": _FORMAT_VERSION, "source": ds.source, "layout": ds.layout,
        "positive_label": ds.positive_label, "fold_labels": list(ds.fold_labels),
        "scored": [c.name for c in ds.scored], "counted": [c.name for c in ds.counted],
        "scored_shape": None, "counted_thresholds": [c.threshold is not None for c in ds.counted],
    }
    tables: dict[str, pa.Table] = {}
    if ds.scored:
        has_fold = ds.scored[0].fold is not None
        # Score counts are per-classifier cells: never one shared label column.
        if ds.scored[0].count is None and _shares_rows(ds.scored):
            meta["scored_shape"] = "wide"
            cols = {"y_true": pa.array(ds.scored[0].y_true, pa.bool_())}
            if has_fold:
                cols["fold"] = pa.array(ds.scored[0].fold.astype(np.int32))
            for i, c in enumerate(ds.scored):
                cols[f"s{i}"] = pa.array(c.score, pa.float64())
            if ds.segments is not None:  # each row's segment code; the names in the meta
                cols["segment"] = pa.array(ds.segments.codes.astype(np.int32))
                meta["segments"] = {"column": ds.segments.column,
                                    "labels": list(ds.segments.labels)}
        else:
            meta["scored_shape"] = "long"
            sizes = [c.y_true.size for c in ds.scored]
            cols = {
                "model": pa.array(np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)),
                "y_true": pa.array(np.concatenate([c.y_true for c in ds.scored]), pa.bool_()),
                "score": pa.array(np.concatenate([c.score for c in ds.scored]), pa.float64()),
            }
            if has_fold:
                cols["fold"] = pa.array(np.concatenate([c.fold for c in ds.scored])
                                        .astype(np.int32))
            if ds.scored[0].count is not None:  # the score-count layout: entries are cells
                cols["count"] = pa.array(np.concatenate([c.count for c in ds.scored]),
                                         pa.int64())
        tables["scored"] = pa.table(cols)
    if ds.counted:
        sizes = [c.tp.size for c in ds.counted]
        thresholds = [c.threshold if c.threshold is not None else np.full(c.tp.size, np.nan)
                      for c in ds.counted]
        tables["counted"] = pa.table({
            "model": pa.array(np.repeat(np.arange(len(sizes), dtype=np.int32), sizes)),
            **{k: pa.array(np.concatenate([getattr(c, k) for c in ds.counted]).astype(np.int64))
               for k in ("tp", "fp", "fn", "tn")},
            "threshold": pa.array(np.concatenate(thresholds), pa.float64()),
        })
    return meta, tables


def _np(table: pa.Table, name: str) -> np.ndarray:
    return table.column(name).to_numpy()


def dataset_from_tables(meta: dict[str, Any], tables: dict[str, pa.Table]) -> Dataset:
    """Inverse of :func:`dataset_to_tables`."""
    scored: list[ScoredClassifier] = []
    counted: list[CountedClassifier] = []
    if meta["scored"]:
        t = tables["scored"]
        has_fold = "fold" in t.column_names
        if meta["scored_shape"] == "wide":
            y = _np(t, "y_true").astype(bool)
            fold = _np(t, "fold").astype(np.int64) if has_fold else None
            scored = [ScoredClassifier(name, y, np.ascontiguousarray(_np(t, f"s{i}"),
                                                                     dtype=np.float64), fold)
                      for i, name in enumerate(meta["scored"])]
        else:
            model = _np(t, "model")
            y, score = _np(t, "y_true").astype(bool), _np(t, "score").astype(np.float64)
            fold = _np(t, "fold").astype(np.int64) if has_fold else None
            count = _np(t, "count").astype(np.int64) if "count" in t.column_names else None
            bounds = np.searchsorted(model, np.arange(len(meta["scored"]) + 1))
            for i, name in enumerate(meta["scored"]):
                s = slice(bounds[i], bounds[i + 1])
                scored.append(ScoredClassifier(name, y[s].copy(), score[s].copy(),
                                               None if fold is None else fold[s].copy(),
                                               None if count is None else count[s].copy()))
    if meta["counted"]:
        t = tables["counted"]
        model = _np(t, "model")
        bounds = np.searchsorted(model, np.arange(len(meta["counted"]) + 1))
        arrays = {k: _np(t, k).astype(np.int64) for k in ("tp", "fp", "fn", "tn")}
        thr = _np(t, "threshold").astype(np.float64)
        for i, name in enumerate(meta["counted"]):
            s = slice(bounds[i], bounds[i + 1])
            counted.append(CountedClassifier(
                name, *(arrays[k][s].copy() for k in ("tp", "fp", "fn", "tn")),
                threshold=thr[s].copy() if meta["counted_thresholds"][i] else None))
    segments = None
    if meta.get("segments"):  # stored since issue 28; older data sets have none
        segments = Segments(meta["segments"]["column"],
                            _np(tables["scored"], "segment").astype(np.int64),
                            tuple(meta["segments"]["labels"]))
    return Dataset(source=meta["source"], layout=meta["layout"],
                   positive_label=meta["positive_label"], scored=tuple(scored),
                   counted=tuple(counted), fold_labels=tuple(meta["fold_labels"]),
                   segments=segments)
