"""``costdash aggregate`` and the score-count layout: the aggregate of a row-level file gives the
same analysis, folds and bands as the rows, through DuckDB and through Spark's local mode.

The row-level files are random, with heavy ties (scores on a coarse grid), folds and three
classifiers. "The same" is exact: the ``costdash analyze --json`` output compared as parsed JSON
(all but the file's name and its layout, which say which file was read), and band arrays
compared bit for bit for the same seed.
"""

from __future__ import annotations

import json
import math

import duckdb
import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import costdash
from costdash import _grid_counting
from costdash.aggregation import aggregate, max_roc_distance
from costdash.bands import cost_band
from costdash.cli import main
from costdash.errors import InputFileError, ParameterError
from costdash.folds import fold_averages
from costdash.io import load_predictions
from costdash.roc import roc_of
from tests.strategies import labelled_scores

MODELS = ("gbm", "logreg", "tree")


def rows_frame(seed: int, n: int = 1500, folds: int = 4) -> pd.DataFrame:
    """Wide row-level predictions: 3 classifiers with many tied scores, ``folds`` folds."""
    rng = np.random.default_rng(seed)
    y = rng.random(n) < 0.3
    frame = pd.DataFrame({"y_true": y.astype(int), "fold": rng.integers(0, folds, n)})
    frame["gbm"] = np.round(rng.normal(1.2 * y, 1.0), 1)
    frame["logreg"] = np.round(1 / (1 + np.exp(-rng.normal(0.8 * y, 1.0))), 2)
    frame["tree"] = rng.integers(0, 6, n) / 5 + 0.3 * y  # six leaves: ties of both classes
    return frame


def long_frame(wide: pd.DataFrame) -> pd.DataFrame:
    return wide.melt(id_vars=["y_true", "fold"], value_vars=list(MODELS), var_name="model",
                     value_name="score")


def analysis_json(path, capsys, *extra: str) -> dict:
    """``costdash analyze --json`` of the file, minus what names the file."""
    capsys.readouterr()
    assert main(["analyze", str(path), "--json", *extra]) == 0
    out = json.loads(capsys.readouterr().out)
    out["dataset"].pop("source")
    out["dataset"].pop("layout")
    return out


BAND_OPTIONS = ({"replicates": 150}, {"threshold": 0.5},
                {"method": "double-bootstrap", "replicates": 200, "inner_replicates": 10})


def assert_same_bands(rows_path, counts_path, band_options=BAND_OPTIONS) -> None:
    """Same bands (same seed) and fold averages from the rows and from their counts."""
    rows, counts = load_predictions(rows_path), load_predictions(counts_path)
    assert counts.layout == "score_counts"
    for name in MODELS:
        a, b = rows.classifier(name), counts.classifier(name)
        for options in band_options:
            band_a = cost_band(a, rng=20261126, **options)
            band_b = cost_band(b, rng=20261126, **options)
            for field in ("cost", "low", "high", "curves"):
                np.testing.assert_array_equal(getattr(band_a, field), getattr(band_b, field))
            assert (band_a.method, band_a.estimand, band_a.n_pos, band_a.n_neg) == \
                (band_b.method, band_b.estimand, band_b.n_pos, band_b.n_neg)
        fa = fold_averages(a, rows.fold_labels)
        fb = fold_averages(b, counts.fold_labels)
        for field in ("cost_pc", "cost_mean", "roc_tpr_mean", "threshold_values",
                      "threshold_fpr", "threshold_tpr"):
            np.testing.assert_array_equal(getattr(fa, field), getattr(fb, field))


# --- DuckDB --------------------------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("seed, layout, fmt, out", [
    (1, "wide", "csv", "counts.csv"),
    (2, "long", "parquet", "counts.parquet"),
    (3, "wide", "parquet", "counts.csv"),
])
def test_duckdb_aggregate_gives_the_rows_analysis_and_bands(tmp_path, capsys, seed, layout, fmt,
                                                            out):
    wide = rows_frame(seed)
    frame = wide if layout == "wide" else long_frame(wide)
    rows_path = tmp_path / f"rows.{fmt}"
    if fmt == "csv":
        frame.to_csv(rows_path, index=False)
    else:
        frame.to_parquet(rows_path, index=False)
    counts_path = tmp_path / out
    capsys.readouterr()
    assert main(["aggregate", str(rows_path), "-o", str(counts_path)]) == 0
    assert "rows from 4,500 predictions of 3 classifiers" in capsys.readouterr().err

    table = (pd.read_csv(counts_path) if out.endswith(".csv") else pd.read_parquet(counts_path))
    assert list(table.columns) == ["model", "score", "n_pos", "n_neg", "fold"]
    # One row per (classifier, distinct score, fold), far fewer than the rows.
    assert len(table) == long_frame(wide).groupby(["model", "score", "fold"]).ngroups < 4500
    assert table[["n_pos", "n_neg"]].to_numpy().sum() == 4500

    assert analysis_json(counts_path, capsys) == analysis_json(rows_path, capsys)
    conditions = ("--p-pos", "0.05", "--cost-fn", "30", "--cost-fp", "1")
    assert analysis_json(counts_path, capsys, *conditions) == \
        analysis_json(rows_path, capsys, *conditions)
    assert_same_bands(rows_path, counts_path)


@pytest.mark.slow
def test_aggregate_reads_globs_and_duckdb_relations(tmp_path):
    wide = rows_frame(4)
    for i, start in enumerate(range(0, len(wide), 500)):
        wide.iloc[start:start + 500].to_parquet(tmp_path / f"part-{i}.parquet", index=False)
    wide.to_csv(tmp_path / "all.csv", index=False)
    from_glob = aggregate(str(tmp_path / "part-*.parquet"))
    from_csv = aggregate([tmp_path / "all.csv"])
    con = duckdb.connect()
    relation = con.sql(f"SELECT * FROM read_csv('{tmp_path / 'all.csv'}')")
    from_relation = costdash.aggregate(relation)
    for result in (from_glob, from_relation):
        pd.testing.assert_frame_equal(result.table, from_csv.table)
    assert from_glob.stats.input_rows == 4500 and from_glob.stats.engine == "duckdb"
    assert from_glob.stats.classifiers == MODELS
    assert from_relation.stats.positive_label == "1"


def test_models_option_and_labels_that_need_positive(tmp_path):
    wide = rows_frame(5, folds=1).drop(columns="fold")
    wide["y_true"] = np.where(wide["y_true"] == 1, "fraud", "ok")
    path = tmp_path / "rows.csv"
    wide.to_csv(path, index=False)
    with pytest.raises(InputFileError, match="say which is positive with --positive"):
        aggregate(path)
    result = aggregate(path, positive="fraud", models=["tree", "gbm"])
    assert result.stats.classifiers == ("tree", "gbm")
    assert list(result.table.columns) == ["model", "score", "n_pos", "n_neg"]
    assert result.table["model"].unique().tolist() == ["tree", "gbm"]
    assert result.table["n_pos"].sum() == 2 * (wide["y_true"] == "fraud").sum()
    out = tmp_path / "counts.parquet"
    result.write(out)
    data = load_predictions(out, positive="fraud")
    rows = load_predictions(path, positive="fraud", models=["tree", "gbm"])
    for name in ("tree", "gbm"):
        a, b = roc_of(rows.classifier(name)), roc_of(data.classifier(name))
        np.testing.assert_array_equal(a.tp, b.tp)
        np.testing.assert_array_equal(a.fp, b.fp)
        np.testing.assert_array_equal(a.threshold, b.threshold)
    assert data.positive_label == rows.positive_label == "fraud"


def test_round_reports_a_bound_that_holds(tmp_path):
    rng = np.random.default_rng(6)
    y = rng.random(3000) < 0.4
    frame = pd.DataFrame({"y_true": y.astype(int), "a": rng.normal(y * 1.0, 1.0)})
    path = tmp_path / "rows.parquet"
    frame.to_parquet(path, index=False)
    rounded = aggregate(path, round_digits=1)
    stats = rounded.stats
    assert stats.round_digits == 1 and stats.output_rows < 100 and stats.merged_bins > 0
    # Brute force: the distance of every exact ROC point to the rounded polyline.
    exact = roc_of(load_predictions(path).classifier("a"))
    table = rounded.table
    coarse = costdash.roc_from_score_counts(table["score"], table["n_pos"], table["n_neg"])
    worst = 0.0
    for x, t in zip(exact.fpr, exact.tpr):
        k = np.clip(np.searchsorted(coarse.fpr, x, side="right") - 1, 0, coarse.size - 2)
        for j in range(max(k - 1, 0), min(k + 2, coarse.size - 1)):
            (x0, y0), (x1, y1) = (coarse.fpr[j], coarse.tpr[j]), (coarse.fpr[j + 1],
                                                                   coarse.tpr[j + 1])
            if x0 <= x <= x1 and y0 <= t <= y1:
                length = math.hypot(x1 - x0, y1 - y0)
                worst = max(worst, abs((x1 - x0) * (t - y0) - (y1 - y0) * (x - x0)) / length)
    assert 0 < worst <= stats.max_roc_distance + 1e-12
    assert stats.max_roc_distance < 0.1
    # Rounding that merges nothing changes nothing and says so.
    frame["a"] = np.round(frame["a"], 2)
    frame.to_parquet(path, index=False)
    same = aggregate(path, round_digits=6)
    assert same.stats.merged_bins == 0 and same.stats.max_roc_distance == 0.0
    pd.testing.assert_frame_equal(same.table, aggregate(path).table)


def test_max_roc_distance_of_one_bin():
    # A bin of half the positives and half the negatives: its corner is sqrt(2)/4 away.
    assert max_roc_distance(np.array([5]), np.array([10]), 10, 20) == pytest.approx(
        math.sqrt(2) / 4)
    assert max_roc_distance(np.array([5, 0]), np.array([0, 3]), 10, 20) == 0.0


@pytest.mark.parametrize("frame, match", [
    (pd.DataFrame({"model": ["a"], "score": [0.1]}), "no label column"),
    (pd.DataFrame({"y_true": [1, 0, None], "a": [0.1, 0.2, 0.3]}),
     r"column 'y_true' has 1 row with a missing value"),
    (pd.DataFrame({"y_true": [1, 0, 1], "a": [0.1, None, np.nan]}),
     r"column 'a' has 2 rows with missing values; scores must be finite"),
    (pd.DataFrame({"y_true": [1, 0, 1], "a": [0.1, np.inf, 0.3]}),
     r"column 'a' has 1 row with an infinite value; scores must be finite"),
    (pd.DataFrame({"y_true": [1, 0, 2], "a": [0.1, 0.2, 0.3]}), "has 3 labels"),
    (pd.DataFrame({"model": ["a", "a", "b"], "y_true": [1, 0, 1], "score": [0.1, 0.2, 0.3]}),
     "classifier 'b' has no negative examples"),
    (pd.DataFrame({"model": ["a"], "score": [0.1], "n_pos": [1], "n_neg": [0]}),
     "is already counts"),
])
def test_bad_input_is_refused_naming_file_and_column(tmp_path, frame, match):
    path = tmp_path / "bad.parquet"
    frame.to_parquet(path, index=False)
    with pytest.raises(InputFileError, match=match) as caught:
        aggregate(path)
    assert str(caught.value).startswith("bad.parquet: ")


def test_bad_options_and_missing_files(tmp_path, capsys):
    with pytest.raises(InputFileError, match="nothing-.*: no such file"):
        aggregate(str(tmp_path / "nothing-*.parquet"))
    rows_frame(7).to_csv(tmp_path / "rows.csv", index=False)
    with pytest.raises(ParameterError, match="round_digits must be a whole number from 0 to 15"):
        aggregate(tmp_path / "rows.csv", round_digits=16)
    with pytest.raises(ParameterError, match="no classifier named 'svm'"):
        aggregate(tmp_path / "rows.csv", models=["svm"])
    with pytest.raises(ParameterError, match="unknown engine"):
        aggregate(tmp_path / "rows.csv", engine="polars")
    assert main(["aggregate", str(tmp_path / "missing.csv"), "-o", str(tmp_path / "o.csv")]) == 2
    assert capsys.readouterr().err == \
        f"costdash: error: missing.csv: no such file ({tmp_path / 'missing.csv'})\n"


def test_difference_band_refuses_counts_and_split_band_has_the_rows_distribution(tmp_path):
    rows_path, counts_path = tmp_path / "rows.csv", tmp_path / "counts.csv"
    rows_frame(8, n=4000).to_csv(rows_path, index=False)
    aggregate(rows_path).write(counts_path)
    rows, counts = load_predictions(rows_path), load_predictions(counts_path)
    with pytest.raises(ParameterError, match="score-count layout"):
        costdash.difference_band(counts.classifier("gbm"), counts.classifier("logreg"))
    # A held-out split draws other examples than the row split for one seed, from the same
    # distribution: the mean held-out cost over many seeds agrees.
    costs = [[cost_band(d.classifier("gbm"), select="split", rng=seed).cost.mean()
              for seed in range(40)] for d in (rows, counts)]
    standard_error = math.sqrt(np.var(costs[0]) / 40 + np.var(costs[1]) / 40)
    assert abs(np.mean(costs[0]) - np.mean(costs[1])) < 4 * standard_error
    band = cost_band(counts.classifier("gbm"), select="split", rng=1)
    assert band.kind == "selected" and band.calibrated and band.selection == "split"
    # The held-out part is the larger half of each class, as in the row split.
    assert (band.n_pos, band.n_neg) == (rows.n_pos - rows.n_pos // 2,
                                        rows.n_neg - rows.n_neg // 2)
    assert band.error_counts.max() <= max(band.n_pos, band.n_neg)


# --- Spark (local mode, one session for the module) ---------------------------------------------

@pytest.fixture(scope="module")
def spark():
    """One local Spark session (one JVM) for the module's Spark tests, which sit together here
    so that a parallel run's scheduler tends to give them to one worker (one JVM start)."""
    from pyspark.sql import SparkSession

    session = (SparkSession.builder.master("local[2]").appName("costdash-tests")
               .config("spark.sql.shuffle.partitions", "2")
               .config("spark.ui.enabled", "false")
               .config("spark.ui.showConsoleProgress", "false")
               # The JVM's flags only: a short run on small data spends half its CPU in the
               # optimising JIT (C2) and G1's threads; the client JIT and the serial collector
               # halve the JVM's CPU (22 s -> 11 s for this module) and change no result.
               .config("spark.driver.extraJavaOptions",
                       "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
               .getOrCreate())
    session.sparkContext.setLogLevel("ERROR")
    yield session
    session.stop()


@pytest.mark.slow
def test_spark_aggregate_of_files_matches_duckdb_and_the_rows(spark, tmp_path, capsys):
    wide = rows_frame(9)
    rows_path = tmp_path / "rows.parquet"
    long_frame(wide).to_parquet(rows_path, index=False)
    by_spark = aggregate(rows_path, engine="spark")
    by_duckdb = aggregate(rows_path)
    assert by_spark.stats.engine == "spark"
    pd.testing.assert_frame_equal(by_spark.table, by_duckdb.table)
    counts_path = tmp_path / "counts.csv"
    assert main(["aggregate", str(rows_path), "-o", str(counts_path), "--engine", "spark"]) == 0
    assert analysis_json(counts_path, capsys) == analysis_json(rows_path, capsys)
    assert_same_bands(rows_path, counts_path, BAND_OPTIONS[:1])


@pytest.mark.slow
def test_spark_dataframe_with_rounding_matches_duckdb(spark, tmp_path):
    wide = rows_frame(10)
    wide["gbm"] = wide["gbm"] + np.random.default_rng(10).normal(0, 0.01, len(wide))
    path = tmp_path / "rows.csv"
    wide.to_csv(path, index=False)
    frame = spark.read.csv(str(path), header=True, inferSchema=True)
    by_spark = costdash.aggregate(frame, round_digits=2)
    by_duckdb = aggregate(path, round_digits=2)
    assert by_spark.stats.engine == "spark"
    pd.testing.assert_frame_equal(by_spark.table, by_duckdb.table)
    assert by_spark.stats.max_roc_distance == by_duckdb.stats.max_roc_distance > 0
    assert by_spark.stats.merged_bins == by_duckdb.stats.merged_bins > 0


@pytest.mark.slow
def test_spark_refuses_text_in_a_score_column_with_analyzes_message(spark, tmp_path, capsys):
    path = tmp_path / "rows.csv"
    text_frame().to_csv(path, index=False)
    capsys.readouterr()
    assert main(["analyze", str(path)]) == 2
    with pytest.raises(InputFileError) as caught:
        aggregate(path, engine="spark")
    assert capsys.readouterr().err == f"costdash: error: {caught.value}\n"
    assert "column 'svm' has 4 non-numeric values (first: 'high') in rows 6, 51, 101" in \
        str(caught.value)


# --- the core on counts, property-based ----------------------------------------------------------

@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(labelled_scores(max_n=80), st.integers(1, 4))
def test_roc_of_score_counts_is_roc_of_rows(data, folds):
    y, score = data
    fold = np.arange(y.size) % folds
    frame = pd.DataFrame({"score": score, "y": y, "fold": fold})
    cells = frame.groupby(["score", "y", "fold"]).size().reset_index(name="count")
    rows = costdash.ScoredClassifier("m", y, score, fold)
    counted = costdash.ScoredClassifier(
        "m", cells["y"].to_numpy(bool), cells["score"].to_numpy(np.float64),
        cells["fold"].to_numpy(np.int64), cells["count"].to_numpy(np.int64))
    a, b = roc_of(rows), roc_of(counted)
    assert a.tp.dtype == b.tp.dtype
    np.testing.assert_array_equal(a.tp, b.tp)
    np.testing.assert_array_equal(a.fp, b.fp)
    np.testing.assert_array_equal(a.threshold, b.threshold)
    assert counted.n_examples == y.size and counted.n_pos == int(y.sum())


def test_spark_paths_pass_uris_through_and_expand_local_files(tmp_path):
    from costdash.aggregation import _spark_paths

    assert _spark_paths(["hdfs:///eval/day=*/"]) == (["hdfs:///eval/day=*/"], "parquet",
                                                     "hdfs:///eval/day=*/")
    assert _spark_paths(["s3a://b/x.csv.gz", "s3a://b/y.csv"])[1:] == (
        "csv", "s3a://b/x.csv.gz and 1 more")
    (tmp_path / "a.csv").write_text("y_true,a\n1,0.5\n")
    assert _spark_paths(str(tmp_path / "*.csv")) == ([str(tmp_path / "a.csv")], "csv", "a.csv")
    with pytest.raises(ParameterError, match="either local paths or URIs"):
        _spark_paths([tmp_path / "a.csv", "hdfs:///x"])


@pytest.mark.slow
@settings(max_examples=15, deadline=None)
@given(labelled_scores(max_n=60, kinds=("ties", "two", "integer")), st.booleans())
def test_duckdb_counts_give_the_rows_roc(tmp_path_factory, data, as_csv):
    y, score = data
    path = tmp_path_factory.mktemp("rows") / ("rows.csv" if as_csv else "rows.parquet")
    frame = pd.DataFrame({"label": np.where(y, "yes", "no"), "m": score})
    frame.to_csv(path, index=False) if as_csv else frame.to_parquet(path, index=False)
    table = aggregate(path).table
    assert table["score"].is_monotonic_decreasing and table["score"].is_unique
    expected = costdash.roc_curve(y, score)
    got = costdash.roc_from_score_counts(table["score"], table["n_pos"], table["n_neg"])
    np.testing.assert_array_equal(expected.tp, got.tp)
    np.testing.assert_array_equal(expected.fp, got.fp)
    np.testing.assert_array_equal(expected.threshold, got.threshold)


def test_band_command_on_counts_matches_rows_and_refuses_counts_as_validation(tmp_path, capsys):
    rows_path, counts_path = tmp_path / "rows.csv", tmp_path / "counts.parquet"
    rows_frame(11).to_csv(rows_path, index=False)
    aggregate(rows_path).write(counts_path)
    outputs = []
    for path in (rows_path, counts_path):
        capsys.readouterr()
        assert main(["band", str(path), "--model", "gbm", "--method", "percentile",
                     "--replicates", "200", "--seed", "5", "--json"]) == 0
        outputs.append(json.loads(capsys.readouterr().out))
    assert outputs[0] == outputs[1]
    assert main(["band", str(rows_path), "--model", "gbm", "--select", str(counts_path)]) == 2
    assert "is in the score-count layout; --select needs the validation rows" in \
        capsys.readouterr().err


# --- the integer-grid route for decimal scores in Parquet ----------------------------------------

@pytest.fixture(params=["compiled", "duckdb"])
def grid_route(request, monkeypatch):
    """Each test of the grid route runs with numba's loop and with DuckDB's array (no numba)."""
    if request.param == "duckdb":
        monkeypatch.setattr(_grid_counting, "available", lambda: False)
    return request.param


def grid_frame(n: int = 60_000, seed: int = 7) -> pd.DataFrame:
    """Scores on decimal grids wide enough for DuckDB's array (over 2**17 keys), with ties."""
    rng = np.random.default_rng(seed)
    y = (rng.random(n) < 0.25).astype(np.int8)
    return pd.DataFrame({
        "y_true": y,
        "six": np.round(rng.random(n) * 0.7 + 0.3 * y, 6),          # ~1e6 keys, few ties
        "neg": rng.integers(-400_000, 400_000, n) + 90_000 * y.astype(np.int64),  # below zero
        "coarse": np.round(rng.random(n) + 0.2 * y, 2),               # 121 keys
        "wide": rng.random(n) + 0.1 * y,                              # 17 digits: generic route
    })


def grid_routes_taken(path, columns) -> list[bool]:
    """Which columns the grid route counts (all asked in one call, as ``aggregate`` does)."""
    from costdash.aggregation import _DuckDBReader
    reader = _DuckDBReader(str(path), "1GB", None, None)
    try:
        _, rest = reader.count_on_grid(list(columns), "y_true", [1])
        return [c not in rest for c in columns]
    finally:
        reader.close()


@pytest.mark.slow
def test_grid_route_counts_exactly_what_the_generic_query_counts(tmp_path, capsys, grid_route):
    frame = grid_frame()
    frame.loc[frame.index[::7], "six"] = frame["six"].iloc[3]          # heavy ties on one score
    parquet, csv = tmp_path / "rows.parquet", tmp_path / "rows.csv"
    frame.to_parquet(parquet, index=False)
    frame.to_csv(csv, index=False, float_format=None)   # CSV always takes the generic query
    # The compiled loop takes small grids too; DuckDB's array pays only from 2**17 keys.
    assert grid_routes_taken(parquet, ("six", "neg", "coarse", "wide")) == \
        [True, True, grid_route == "compiled", False]
    on_grid, generic = aggregate(parquet), aggregate(csv)
    pd.testing.assert_frame_equal(on_grid.table, generic.table)
    assert on_grid.stats.counted_by_key == (("six", "neg", "coarse") if grid_route == "compiled"
                                            else ("six", "neg"))
    assert generic.stats.counted_by_key == ()
    # ... and they are the rows' own distinct scores, bit for bit.
    for column in ("six", "neg", "coarse"):
        mine = on_grid.table[on_grid.table["model"] == column]
        np.testing.assert_array_equal(np.sort(mine["score"].to_numpy()),
                                      np.unique(frame[column].to_numpy(np.float64)))
    counts = tmp_path / "counts.parquet"
    on_grid.write(counts)
    assert analysis_json(counts, capsys) == analysis_json(csv, capsys)


@pytest.mark.slow
def test_grid_route_falls_back_when_later_rows_leave_the_grid(tmp_path, grid_route):
    frame = grid_frame()
    # The first rows (the sample) have 6 decimals; a later row has more: keys would merge it
    # with a neighbour, so the pass finds it and the generic query counts the column instead.
    frame.loc[50_000, "six"] = frame.loc[50_001, "six"] + 1e-9
    frame.to_parquet(tmp_path / "rows.parquet", index=False)
    frame.to_csv(tmp_path / "rows.csv", index=False, float_format=None)
    assert grid_routes_taken(tmp_path / "rows.parquet", ("six", "neg")) == [False, True]
    result = aggregate(tmp_path / "rows.parquet")
    pd.testing.assert_frame_equal(result.table, aggregate(tmp_path / "rows.csv").table)
    assert (result.table["score"] == frame.loc[50_000, "six"]).sum() == 1


@pytest.mark.parametrize("bad, kind", [(np.nan, "missing"), (np.inf, "infinite")])
def test_grid_route_refuses_non_finite_scores_like_the_generic_query(tmp_path, bad, kind,
                                                                    grid_route):
    frame = grid_frame()
    frame.loc[55_555, "six"] = bad
    frame.to_parquet(tmp_path / "rows.parquet", index=False)
    with pytest.raises(InputFileError, match=f"column 'six' has 1 row with an? {kind} value"):
        aggregate(tmp_path / "rows.parquet")


def test_grid_route_refuses_a_null_score_like_the_generic_query(tmp_path, grid_route):
    frame = grid_frame()
    frame["six"] = frame["six"].astype("Float64")
    frame.loc[44_444, "six"] = pd.NA
    frame.to_parquet(tmp_path / "rows.parquet", index=False)
    assert grid_routes_taken(tmp_path / "rows.parquet", ("six", "neg")) == [False, True]
    with pytest.raises(InputFileError, match="column 'six' has 1 row with a missing value"):
        aggregate(tmp_path / "rows.parquet")


def test_grid_columns_split_into_passes_that_bound_memory_count_the_same(tmp_path, monkeypatch):
    from costdash import aggregation
    frame = grid_frame()
    frame.to_parquet(tmp_path / "rows.parquet", index=False)
    together = aggregate(tmp_path / "rows.parquet")
    monkeypatch.setattr(aggregation, "_GRID_PASS_BYTES", 1)      # one column per pass
    assert [len(g) for g in aggregation._passes([_grid_counting.GridColumn("a", 1.0, 0, 9)] * 3,
                                                workers=2)] == [1, 1, 1]
    pd.testing.assert_frame_equal(aggregate(tmp_path / "rows.parquet").table, together.table)


@pytest.mark.slow
@pytest.mark.parametrize("labels, positive", [(("no", "yes"), "yes"), ((False, True), None),
                                              ((1, 2), "2"), ((0, 1), "0")])
def test_grid_route_reads_labels_of_any_kind_like_the_generic_query(tmp_path, labels, positive,
                                                                     grid_route):
    frame = grid_frame(n=20_000)
    frame["y_true"] = np.where(frame["y_true"] == 1, labels[1], labels[0])
    if isinstance(labels[0], (bool, np.bool_)):
        frame["y_true"] = frame["y_true"].astype(bool)
    frame.to_parquet(tmp_path / "rows.parquet", index=False)
    frame.to_csv(tmp_path / "rows.csv", index=False, float_format=None)
    on_grid = aggregate(tmp_path / "rows.parquet", positive=positive)
    generic = aggregate(tmp_path / "rows.csv", positive=positive)
    pd.testing.assert_frame_equal(on_grid.table, generic.table)
    assert on_grid.table["n_pos"].sum() == (frame["y_true"] == (
        labels[0] if positive == str(labels[0]) else labels[1])).sum() * 4


def test_grid_route_leaves_decimal_columns_to_duckdbs_cast(tmp_path, monkeypatch):
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    from costdash.aggregation import _DuckDBReader
    frame = grid_frame(n=5_000)
    table = pa.table({"y_true": frame["y_true"].to_numpy(),
                      "six": pa.array([decimal.Decimal(f"{v:.6f}") for v in frame["six"]],
                                      pa.decimal128(9, 6)),
                      "neg": frame["neg"].to_numpy()})
    pq.write_table(table, tmp_path / "rows.parquet")
    compiled = []
    count_compiled = _DuckDBReader._count_grids_compiled
    monkeypatch.setattr(_DuckDBReader, "_count_grids_compiled", lambda self, grids, *rest: (
        compiled.extend(g.name for g in grids), count_compiled(self, grids, *rest))[1])
    result = aggregate(tmp_path / "rows.parquet")
    # Arrow reads the integers as DuckDB does; the decimals go to DuckDB's array, by key still.
    assert compiled == ["neg"] and result.stats.counted_by_key == ("six", "neg")
    frame[["y_true", "six", "neg"]].to_csv(tmp_path / "rows.csv", index=False)
    pd.testing.assert_frame_equal(result.table, aggregate(tmp_path / "rows.csv").table)


# --- text in a score column: refused as analyze refuses it (issue 24) ---------------------------

def both_commands(path, tmp_path, capsys, *extra: str) -> tuple[str, str]:
    """The error lines of ``costdash analyze`` and ``costdash aggregate`` on one file."""
    capsys.readouterr()
    assert main(["analyze", str(path), *extra]) == 2
    analyzed = capsys.readouterr().err
    assert main(["aggregate", str(path), "-o", str(tmp_path / "counts.csv"), *extra]) == 2
    return analyzed, capsys.readouterr().err


def text_frame(n: int = 200, at=(5, 50, 100, 150), seed: int = 0) -> pd.DataFrame:
    """Wide rows whose 'svm' column has the word 'high' in the rows ``at`` (0-based)."""
    rng = np.random.default_rng(seed)
    svm = np.round(rng.random(n), 6).astype(object)
    svm[list(at)] = "high"
    return pd.DataFrame({"y_true": rng.integers(0, 2, n), "svm": svm,
                         "logreg": np.round(rng.random(n), 3)})


@pytest.mark.parametrize("layout", ["wide", "long"])
@pytest.mark.parametrize("at", [(5, 50, 100, 150), (30_000, 30_500)], ids=["early", "late"])
def test_text_in_a_csv_score_column_is_refused_with_analyzes_message(tmp_path, capsys, layout,
                                                                      at):
    # "late": past the rows DuckDB's CSV sniffer types the columns from, so the column is read
    # as numbers until the text, and the conversion fails in the counting pass.
    frame = text_frame(n=40_000 if at[0] > 1000 else 200, at=at)
    if layout == "long":
        frame = frame.melt(id_vars=["y_true"], var_name="model", value_name="score")
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    analyzed, aggregated = both_commands(path, tmp_path, capsys)
    rows = [i + 1 for i in at]   # data rows, 1-based; in the long layout svm's rows come first
    column = "svm" if layout == "wide" else "score"
    assert analyzed == (f"costdash: error: rows.csv: column '{column}' has {len(at)} non-numeric "
                        f"values (first: 'high') in rows {', '.join(map(str, rows))}; scores "
                        f"must be numbers\n")
    assert aggregated == analyzed
    assert not (tmp_path / "counts.csv").exists()


def test_text_in_a_parquet_score_column_is_refused_on_the_grid_route_too(tmp_path, capsys,
                                                                        grid_route):
    frame = grid_frame()
    text = frame["coarse"].map(repr).astype(object)
    text[[7, 9, 20_000]] = ["oops", "n/a?", "0,5"]
    frame["text"] = text
    path = tmp_path / "rows.parquet"
    frame.to_parquet(path, index=False)
    assert grid_routes_taken(path, ("six", "neg")) == [True, True]   # the others' route
    analyzed, aggregated = both_commands(path, tmp_path, capsys)
    assert aggregated == analyzed == (
        "costdash: error: rows.parquet: column 'text' has 3 non-numeric values (first: 'oops') "
        "in rows 8, 10, 20001; scores must be numbers\n")


def test_text_only_in_a_model_left_out_is_not_refused_and_in_a_model_chosen_is(tmp_path,
                                                                               capsys):
    frame = text_frame().melt(id_vars=["y_true"], var_name="model", value_name="score")
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    assert aggregate(path, models=["logreg"]).stats.classifiers == ("logreg",)
    analyzed, aggregated = both_commands(path, tmp_path, capsys, "--models", "svm")
    assert aggregated == analyzed
    assert "column 'score' has 4 non-numeric values (first: 'high') in rows 6, 51" in analyzed


def test_glob_names_the_file_with_text_and_counts_its_own_rows(tmp_path, capsys):
    text_frame(at=()).to_csv(tmp_path / "a.csv", index=False)
    text_frame(at=(3, 4, 5, 6, 7, 8, 9), seed=1).to_csv(tmp_path / "b.csv", index=False)
    with pytest.raises(InputFileError) as caught:
        aggregate(str(tmp_path / "*.csv"))
    capsys.readouterr()
    assert main(["analyze", str(tmp_path / "b.csv")]) == 2
    assert f"costdash: error: {caught.value}\n" == capsys.readouterr().err
    assert str(caught.value) == ("b.csv: column 'svm' has 7 non-numeric values (first: 'high') "
                                 "in rows 4, 5, 6, 7, 8 and 2 more; scores must be numbers")
    assert caught.value.source == "b.csv" and caught.value.column == "svm"


def test_text_that_analyze_reads_as_missing_is_missing_and_numbers_as_text_count(tmp_path,
                                                                                 capsys):
    # 'NA' and 'null' are missing values to analyze (pandas' CSV reader), not text.
    frame = text_frame(at=(5, 50))
    frame.loc[[60, 61], "svm"] = ["NA", "null"]
    path = tmp_path / "rows.csv"
    frame.to_csv(path, index=False)
    analyzed, aggregated = both_commands(path, tmp_path, capsys)
    assert aggregated == analyzed
    assert "column 'svm' has 2 non-numeric values (first: 'high') in rows 6, 51;" in analyzed
    frame.loc[[5, 50], "svm"] = [0.25, 0.5]   # only the missing ones left
    frame.to_csv(path, index=False)
    with pytest.raises(InputFileError, match="column 'svm' has 2 rows with missing values"):
        aggregate(path)
    # Numbers DuckDB's sniffer leaves as text (whole numbers first, a decimal past its sample)
    # are read as the numbers they are, as analyze reads them.
    rng = np.random.default_rng(4)
    y = rng.integers(0, 2, 30_000)
    whole = rng.integers(0, 10, 30_000).astype(object)
    whole[-3] = "0.5"
    pd.DataFrame({"y_true": y, "svm": whole}).to_csv(path, index=False)
    counts = tmp_path / "counts.csv"
    aggregate(path).write(counts)
    assert analysis_json(counts, capsys) == analysis_json(path, capsys)


def test_a_duckdb_relation_with_text_scores_is_refused_by_name():
    con = duckdb.connect()
    relation = con.sql("SELECT * FROM (VALUES (1, '0.9'), (0, '0.2'), (1, 'oops'), (0, '0.4')) "
                       "AS t(y_true, svm)")
    with pytest.raises(InputFileError, match=r"^DuckDB relation: column 'svm' has 1 non-numeric "
                                             r"value \(first: 'oops'\) in row 3; scores must"):
        aggregate(relation)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_column_of_booleans_is_a_classifier_as_analyze_takes_it(tmp_path, capsys, fmt):
    frame = text_frame(at=())
    frame["flag"] = frame["svm"].astype(float) > 0.5
    path = tmp_path / f"rows.{fmt}"
    frame.to_csv(path, index=False) if fmt == "csv" else frame.to_parquet(path, index=False)
    result = aggregate(path)
    assert result.stats.classifiers == ("svm", "logreg", "flag")
    counts = tmp_path / "counts.csv"
    result.write(counts)
    assert analysis_json(counts, capsys) == analysis_json(path, capsys)
