"""``costdash analyze FILE``: ROC hull, lower envelope, operating ranges and the best choice."""

from __future__ import annotations

import argparse
import math
import os
import pickle
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace

from costdash._wording import counted
from costdash.analysis import Analysis, analysis_to_dict, analyze, threshold_text
from costdash.cli import print_json
from costdash.cli.common import (
    add_condition_options,
    add_loader_options,
    keep_freed_memory,
    load_from_args,
    view_from_args,
)
from costdash.conditions import OperatingCondition
from costdash.dataset import Dataset, ScoredClassifier
from costdash.errors import ParameterError

DEFAULT_MAX_POINTS = 1000
"""Points per curve in ``--json`` unless ``--all-points`` or ``--max-points`` says otherwise:
each ROC curve and each threshold-choice curve is thinned to at most this many (evenly spread,
first and last kept); every figure, the hull and the envelope stay exact (issue 23: the full
lists of 20 classifiers x 200,000 scores made 525 MB of JSON)."""

PARENT_HANDICAP = 0.25
"""Share of an equal group's work counted against this process before the groups are made
(it analyses all the classifiers and writes the output besides its own group)."""

PARALLEL_MIN_SCORES = 200_000
"""Scores (all classifiers together) from which the threshold-choice section is computed in
several processes; below, a process costs more than it saves."""

JSON_HELP = """\
JSON fields: dataset {n, n_pos, n_neg, positive_label, n_folds, source, layout}; classifiers
[{name, auc, roc {fpr, tpr, threshold}, operating_range [lo, hi] | null, cost_area, on_hull,
h_measure, h_measure_beta, brier_score (null when the scores are not in [0, 1]),
threshold_choice {score_driven | rate_driven | fixed | optimal: {pc, cost, expected_loss,
cost_proportion_loss} | null}, threshold_choice_gaps {calibration_loss, rate_loss, fixed_loss,
score_driven_refused, beta, calibration, calibrated_brier_score}}]; hull [{fpr, tpr,
classifier, threshold}] from (0,0) to (1,1); envelope {pc, cost}; operating_point {p_pos,
cost_fn, cost_fp, pc, slope, classifier, threshold, fpr, tpr, normalized_cost, expected_cost}.
Each curve's point lists (roc, threshold_choice's pc and cost) hold at most %d points, evenly
spread, first and last kept (--max-points N: at most N; --all-points: every point); the
figures, hull and envelope are exact either way. --no-threshold-choice leaves out the
classifiers' h_measure ... threshold_choice_gaps (docs/threshold-choice.md).""" % DEFAULT_MAX_POINTS


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "analyze", help="ROC convex hull, cost curves and the best classifier for given conditions",
        description="Analyse the classifiers in a predictions file. " + JSON_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("file", help="predictions: CSV/TSV (.gz too), Parquet or JSON lines")
    add_condition_options(parser)
    add_loader_options(parser)
    points = parser.add_mutually_exclusive_group()
    points.add_argument("--max-points", type=int, metavar="N",
                        help=f"--json: thin each ROC and threshold-choice curve to at most N "
                             f"points (default {DEFAULT_MAX_POINTS}; figures, hull and envelope "
                             f"stay exact)")
    points.add_argument("--all-points", action="store_true",
                        help="--json: every point of every curve (before issue 23 the default; "
                             "hundreds of MB for millions of scores)")
    parser.add_argument("--jobs", type=int, metavar="N",
                        help="processes for the threshold-choice section on large inputs "
                             "(default: the idle CPUs, i.e. the CPUs available less the load "
                             "average, at most 4; 1: none)")
    group = parser.add_argument_group(
        "beyond the envelope (docs/threshold-choice.md)")
    group.add_argument("--threshold-choice", action="store_true",
                       help="print the H-measure, Brier score and threshold-choice table in the "
                            "readable output too (the JSON always has them)")
    group.add_argument("--no-threshold-choice", action="store_true",
                       help="leave out each classifier's H-measure, Brier score and "
                            "threshold-choice curves (faster on millions of scores)")
    group.add_argument("--h-severity", type=float, metavar="R",
                       help="H-measure severity ratio C(+|-)/C(-|+) at the Beta's mode "
                            "(default n+/n-, as the hmeasure package)")
    group.add_argument("--h-beta", type=float, nargs=2, metavar=("A", "B"),
                       help="H-measure: a Beta(A, B) over the cost proportion instead")
    group.add_argument("--loss-beta", type=float, nargs=2, metavar=("A", "B"),
                       help="expected losses with PC(+) ~ Beta(A, B) (default uniform)")
    group.add_argument("--calibrate", choices=("platt", "isotonic"),
                       help="score-driven curve of the scores calibrated on folds (the data's "
                            "folds, else 5 stratified ones): each example's score mapped by a "
                            "fit on the other folds")
    group.add_argument("--fixed-threshold", type=float, metavar="T",
                       help="the fixed curve's threshold (default: each classifier's own best "
                            "threshold at the given conditions)")
    parser.add_argument("--json", action="store_true", help="print machine-readable JSON")
    parser.set_defaults(func=run)


def _wants_extras(args: argparse.Namespace) -> bool:
    """The H-measure, Brier score and threshold-choice curves are part of the default JSON
    output (the issue's interface); ``--no-threshold-choice`` leaves them out. The readable
    output adds their table when asked (``--threshold-choice`` or one of its options)."""
    if getattr(args, "no_threshold_choice", False):
        return False
    if getattr(args, "json", False):
        return True
    return bool(getattr(args, "threshold_choice", False) or any(
        getattr(args, name, None) is not None
        for name in ("h_severity", "h_beta", "loss_beta", "fixed_threshold", "calibrate")))


def classifier_extras(result: Analysis, *, h_severity: float | None = None,
                      h_beta: tuple[float, float] | None = None,
                      loss_beta: tuple[float, float] | None = None,
                      fixed_threshold: float | None = None,
                      fixed_thresholds: dict[str, float] | None = None,
                      calibrate: str | None = None,
                      max_points: int | None = None, jobs: int = 1) -> list[dict]:
    """Per classifier (in ``result``'s order): h_measure, brier_score, threshold_choice and
    threshold_choice_gaps, as added to ``analyze --json`` (the dashboard's Threshold choice
    page and its API state the same, :mod:`costdash.choice_summary`).

    ``jobs`` > 1 computes groups of classifiers in forked processes (Linux), each returning
    its (thinned) dictionaries: the same functions on the same arrays, so the same numbers.
    """
    kwargs = dict(h_severity=h_severity, h_beta=h_beta, beta=loss_beta,
                  fixed_threshold=fixed_threshold, fixed_thresholds=fixed_thresholds,
                  calibrate=calibrate)
    job = _start_extras(result.dataset, result.operating_point.condition, kwargs, max_points,
                        jobs)
    return _finish_extras(job, result)


@dataclass(frozen=True)
class _ExtrasJob:
    """The threshold-choice section under way: the classifiers' groups (names), the first
    computed here, the others each by a forked process (pid, pipe) started before
    :func:`costdash.analyze`, which it repeats for its own classifiers only."""

    groups: list[list[str]]
    children: list[tuple[int, int]]
    kwargs: dict
    max_points: int | None


def _start_extras(dataset: Dataset, condition: OperatingCondition, kwargs: dict,
                  max_points: int | None, jobs: int) -> _ExtrasJob:
    groups = _groups(dataset, jobs)
    children = []
    if len(groups) > 1:
        import costdash.choice_summary  # noqa: F401 - imported once, before the fork: shared
        for names in groups[1:]:
            # The child analyses its own classifiers (each one's ROC curve, hull and envelope
            # are its own: the same as in the whole analysis) while this process analyses all.
            children.append(_fork(lambda names=names: _extras_of(
                analyze(dataset, condition, models=names), kwargs, max_points)))
    return _ExtrasJob(groups, children, kwargs, max_points)


def _finish_extras(job: _ExtrasJob, result: Analysis) -> list[dict]:
    """The section in ``result``'s classifier order: the first group computed here on
    ``result``, the others collected from their processes (every one waited for)."""
    if not job.children:
        return _extras_of(result, job.kwargs, job.max_points)
    first_names = set(job.groups[0])
    here = replace(result, classifiers=tuple(c for c in result.classifiers
                                             if c.name in first_names))
    answers: list = []
    try:
        answers.append(_extras_of(here, job.kwargs, job.max_points))
    finally:
        for child in job.children:
            try:
                answers.append(_collect(child))
            except BaseException as exc:  # noqa: BLE001 - raised below, once all have ended
                answers.append(exc)
    for answer in answers:
        if isinstance(answer, BaseException):
            raise answer
    by_name = {name: extra for names, extras in zip(
        [[c.name for c in here.classifiers], *job.groups[1:]], answers)
        for name, extra in zip(names, extras)}
    return [by_name[c.name] for c in result.classifiers]


def _extras_of(result: Analysis, kwargs: dict, max_points: int | None) -> list[dict]:
    # Imported when used: scipy (the H-measure, the rate-driven quadrature) is no part of
    # `costdash --help`'s start-up (issue 23).
    from costdash.choice_summary import classifier_choice_to_dict, classifier_choices

    # One classifier at a time (each one's curves depend on it alone), each turned into its
    # (thinned) dictionary before the next: the full curves of all of them (7 MB a classifier
    # of 200,000 scores) are never held at once, and their memory is reused instead of faulted
    # in afresh (issue 23: 60,000 fewer page faults on 20 x 200,000).
    return [classifier_choice_to_dict(item, max_points=max_points)
            for c in result.classifiers
            for item in classifier_choices(replace(result, classifiers=(c,)), **kwargs)]


def _groups(dataset: Dataset, jobs: int) -> list[list[str]]:
    """The classifiers' names in at most ``jobs`` groups of about equal scores (the work grows
    with them; the first, this process's, a little less: :data:`PARENT_HANDICAP`), largest
    first into the lightest group, each group in the data set's order; one group when a
    process is not worth it."""
    classifiers = (*dataset.scored, *dataset.counted)
    sizes = {c.name: (c.score.size if isinstance(c, ScoredClassifier) else 1)
             for c in classifiers}
    jobs = min(jobs, len(classifiers))
    if jobs <= 1 or sum(sizes.values()) < PARALLEL_MIN_SCORES or not _can_fork():
        return [[c.name for c in classifiers]]
    members: list[set[str]] = [set() for _ in range(jobs)]
    # The first group is this process's, which also analyses every classifier and writes the
    # JSON: it starts with a handicap, so it gets a little less of the section.
    loads = [PARENT_HANDICAP * sum(sizes.values()) / jobs] + [0.0] * (jobs - 1)
    for name in sorted(sizes, key=lambda n: -sizes[n]):
        k = loads.index(min(loads))
        members[k].add(name)
        loads[k] += sizes[name]
    return [[c.name for c in classifiers if c.name in m] for m in members if m]


def _can_fork() -> bool:
    # fork shares the loaded arrays at no cost; elsewhere (macOS, Windows) one process does it.
    return hasattr(os, "fork") and sys.platform.startswith("linux")


def default_jobs() -> int:
    """The CPUs this process may use that are idle, at most 4, at least 1: its CPUs less the
    load average of the last minute (rounded).

    Another process pays only on an idle CPU: it repeats the analysis of its classifiers and
    copies the pages it writes, about a sixth more work in all (issue 23: on 2 CPUs busy with
    other work, ``analyze --json`` of 20 x 200,000 took as long with two processes as with one,
    and 10% more CPU time).
    """
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    try:
        busy = os.getloadavg()[0]
    except (AttributeError, OSError):
        busy = 0.0
    return max(1, min(n - int(busy + 0.5), 4))


def _fork(compute: Callable[[], list[dict]]) -> tuple[int, int]:
    """Start a child process computing ``compute()``; its pid and the pipe it answers on."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: compute, send (value or exception), exit without cleanup
        os.close(read_end)
        status = 0
        try:
            try:
                payload = pickle.dumps((True, compute()))
            except BaseException as exc:  # noqa: BLE001 - handed to the parent as it is
                status = 1
                try:
                    payload = pickle.dumps((False, exc))
                    pickle.loads(payload)  # an exception that cannot travel goes as text
                except Exception:  # noqa: BLE001
                    payload = pickle.dumps((False, RuntimeError(f"{type(exc).__name__}: {exc}")))
            with os.fdopen(write_end, "wb") as out:
                out.write(payload)
        finally:
            # os._exit: no atexit handlers, no flush of the parent's copied stdout buffer.
            os._exit(status)
    os.close(write_end)
    return pid, read_end


def _collect(child: tuple[int, int]) -> list[dict]:
    """The child's answer (its exception raised here), once it has exited."""
    pid, read_end = child
    with os.fdopen(read_end, "rb") as fh:
        data = fh.read()
    os.waitpid(pid, 0)
    if not data:
        raise RuntimeError("a worker process computing the threshold-choice section died")
    ok, value = pickle.loads(data)
    if not ok:
        raise value
    return value


def run(args: argparse.Namespace) -> int:
    view = view_from_args(args)  # a bad condition is refused before the file is read
    if args.max_points is not None and args.max_points < 2:
        raise ParameterError(f"--max-points: max_points must be at least 2, got "
                             f"{args.max_points}")
    if args.jobs is not None and args.jobs < 1:
        raise ParameterError(f"--jobs must be at least 1, got {args.jobs}")
    max_points = (None if args.all_points
                  else args.max_points if args.max_points is not None
                  else DEFAULT_MAX_POINTS if args.json else None)
    keep_freed_memory(args)
    dataset = load_from_args(args)
    condition = view.condition(dataset.prevalence)
    job = None
    if _wants_extras(args):
        # Started before the analysis: the other processes' groups run alongside it.
        job = _start_extras(
            dataset, condition,
            dict(h_severity=args.h_severity, h_beta=args.h_beta, beta=args.loss_beta,
                 fixed_threshold=args.fixed_threshold, fixed_thresholds=None,
                 calibrate=args.calibrate),
            # The readable table shows the losses only: no long lists.
            max_points if args.json else 2,
            default_jobs() if args.jobs is None else args.jobs)
    try:
        result = analyze(dataset, condition)
    except BaseException:
        for child in job.children if job else ():  # no process left behind
            try:
                _collect(child)
            except BaseException:  # noqa: BLE001, S110 - the analysis's error is the one to say
                pass
        raise
    extras = None if job is None else _finish_extras(job, result)
    if args.json:
        payload = analysis_to_dict(result, max_points=max_points)
        for entry, extra in zip(payload["classifiers"], extras or ()):
            entry.update(extra)
        print_json(payload)
    else:
        print(format_summary(result))
        if extras is not None:
            print()
            print(format_extras(result, extras))
    return 0


def format_extras(result: Analysis, extras: list[dict]) -> str:
    """The readable table of H-measure, Brier score and threshold-choice expected losses."""
    header = (f"{'classifier':<24} {'H':>7} {'Brier':>7} {'optimal':>8} {'score-dr.':>9} "
              f"{'rate-dr.':>8} {'fixed':>7} {'calib. loss':>11}")
    lines = ["Threshold choice: expected normalized cost, PC(+) "
             + ("uniform" if extras and extras[0]["threshold_choice_gaps"]["beta"] == [1.0, 1.0]
                else "~ Beta{}".format(tuple(extras[0]["threshold_choice_gaps"]["beta"])
                                       if extras else "")),
             header, "-" * len(header)]
    if extras and extras[0]["threshold_choice_gaps"]["calibration"]:
        lines.insert(1, "(score-driven: scores calibrated by "
                     f"{extras[0]['threshold_choice_gaps']['calibration']} on folds, each "
                     "fold mapped by a fit on the others)")
    notes = []
    for c, e in zip(result.classifiers, extras):
        tc = e["threshold_choice"]

        def loss(m: str) -> str:
            return "-" if tc[m] is None else f"{tc[m]['expected_loss']:.4f}"

        lines.append(f"{c.name:<24} {e['h_measure']:>7.4f} {_fmt(e['brier_score']):>7} "
                     f"{loss('optimal'):>8} {loss('score_driven'):>9} {loss('rate_driven'):>8} "
                     f"{loss('fixed'):>7} {_fmt(e['threshold_choice_gaps']['calibration_loss']):>11}")
        if e["threshold_choice_gaps"]["score_driven_refused"]:
            notes.append(f"{c.name}: {e['threshold_choice_gaps']['score_driven_refused']}")
    return "\n".join(lines + notes)


def _fmt(value: float | None, digits: int = 4) -> str:
    if value is None or value != value:
        return "-"
    return f"{value:.{digits}g}"


def _threshold(value: float | None) -> str:
    # The trivial classifiers' thresholds are NaN in the hull: "-" as in the other columns.
    return "-" if value is None or math.isnan(value) else threshold_text(value)


def format_summary(result: Analysis) -> str:
    ds = result.dataset
    op = result.operating_point
    cond = op.condition
    lines = [f"{ds.source}: {counted(ds.n, 'example', spec='')}, {ds.n_pos} positive "
             f"({ds.positive_label!r}), {ds.n_neg} negative"
             + (f", {counted(ds.n_folds, 'fold', spec='')}" if ds.n_folds else ""), ""]
    header = f"{'classifier':<24} {'AUC':>7} {'cost area':>10} {'operating range (PC(+))':>26}  on hull"
    lines += [header, "-" * len(header)]
    for c in result.classifiers:
        rng = ("none" if c.operating_range is None
               else f"[{c.operating_range[0]:.4f}, {c.operating_range[1]:.4f}]")
        lines.append(f"{c.name:<24} {c.roc.auc:>7.4f} {c.cost_area:>10.4f} {rng:>26}  "
                     f"{'yes' if c.name in result.hull.classifier else 'no'}")
    lines += ["", "ROC convex hull (all classifiers):",
              f"{'FPR':>8} {'TPR':>8}  {'classifier':<24} threshold"]
    for f, t, name, thr in zip(result.hull.fpr, result.hull.tpr, result.hull.classifier,
                               result.hull.threshold):
        lines.append(f"{f:>8.4f} {t:>8.4f}  {name:<24} {_threshold(thr)}")
    lines += ["", f"Operating conditions: p(+) = {_fmt(cond.p_pos)}, C(-|+) = {_fmt(cond.cost_fn)}, "
              f"C(+|-) = {_fmt(cond.cost_fp)}  ->  PC(+) = {_fmt(cond.pc)}, slope = {_fmt(cond.slope)}",
              f"Best: {op.vertex.classifier} at threshold {_threshold(op.vertex.threshold)} "
              f"(FPR {op.vertex.fpr:.4f}, TPR {op.vertex.tpr:.4f}); normalized expected cost "
              f"{op.normalized_cost:.4g}, expected cost per example {op.expected_cost:.4g}"]
    return "\n".join(lines)
