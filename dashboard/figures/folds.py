"""Several folds (or runs) of one classifier: per-fold curves and their averages.

Both builders take the core's :class:`costdash.folds.FoldAverages` as it is and draw its arrays;
nothing is averaged or priced here. The cost-space vertical average (bold) is the recommended
one: at each PC(+) it is the mean normalized expected cost of the folds, each at its own best
threshold (papers 000 §7, 004 §2.2.3). The ROC averages are drawn beside it for comparison.

Trace uids (stable, never containing a classifier's name):

* cost space: ``all-negative``, ``all-positive`` (trivial classifiers), ``band-high`` and
  ``band-low`` (min and max across folds, filled between), ``fold-<k>`` (fold ``k``'s lower
  envelope), ``average`` (the cost-space vertical average), ``chosen`` (each fold's cost at the
  current PC(+), with a vertical line shape ``pc`` there);
* ROC space: ``chance``, ``roc-fold-<k>``, ``vertical-high``/``vertical-low`` (mean TPR ± one
  standard deviation), ``vertical`` (mean TPR at each FPR), ``threshold`` (mean FPR and TPR at
  common thresholds), ``pooled`` (all folds' scores pooled).
"""

from __future__ import annotations

import numpy as np
import plotly.graph_objects as go

from costdash._wording import counted
from costdash.conditions import OperatingCondition
from costdash.folds import FoldAverages, FoldSpread
from costdash.roc import thin_indices
from dashboard.figures.bands import rgba, trivial_traces
from dashboard.figures.common import axis, base_layout, text_array, threshold_text
from dashboard.figures.palette import HULL_COLOR, TRIVIAL_COLOR, classifier_color

FOLD_OPACITY = 0.45
POOLED_COLOR = "#6e7781"


def _empty_cost_layout(uirevision: str) -> dict:
    return base_layout(
        # Ticks every 0.2, as Explore's: at 390 px wide 0.1's eleven labels touch.
        xaxis=axis("PC(+) (probability × cost)", range=[0, 1], dtick=0.2),
        yaxis=axis("Normalized expected cost", range=[0, 0.55], rangemode="tozero"),
        uirevision=uirevision)


def folds_cost_figure(averages: FoldAverages | None, color_index: int = 0, *,
                      condition: OperatingCondition | None = None,
                      spread: FoldSpread | None = None, uirevision: str = "empty") -> go.Figure:
    """Cost space: each fold's lower envelope, their vertical average and min-max band.

    Parameters
    ----------
    averages : FoldAverages or None
        From :func:`costdash.folds.fold_averages`; None draws the empty axes.
    color_index : int
        The classifier's position in its data set (its colour everywhere in the dashboard).
    condition, spread : optional
        The current operating conditions and :func:`costdash.folds.fold_spread` under them: a
        vertical line at their PC(+) and each fold's cost there.
    """
    fig = go.Figure(data=trivial_traces(), layout=_empty_cost_layout(uirevision))
    if averages is None:
        return fig
    color = classifier_color(color_index)
    name = averages.name
    fig.add_trace(go.Scatter(
        x=averages.cost_pc, y=averages.cost_high, mode="lines", uid="band-high",
        name="max across folds", line={"width": 0, "color": color}, showlegend=False,
        legendgroup="band", hovertemplate="max across folds %{y:.4f}<extra></extra>"))
    fig.add_trace(go.Scatter(
        x=averages.cost_pc, y=averages.cost_low, mode="lines", uid="band-low",
        name="min–max across folds", line={"width": 0, "color": color}, fill="tonexty",
        fillcolor=rgba(color, 0.16), legendgroup="band",
        hovertemplate="min across folds %{y:.4f}<extra></extra>"))
    for k, (label, env) in enumerate(zip(averages.fold_labels, averages.envelopes)):
        fig.add_trace(go.Scatter(
            x=env.pc, y=env.cost, mode="lines", uid=f"fold-{k}", meta=label,
            name="each fold's lower envelope", legendgroup="folds", showlegend=k == 0,
            line={"color": color, "width": 1}, opacity=FOLD_OPACITY,
            hovertemplate=(f"<b>fold {label}</b><br>PC(+) %{{x:.4f}}<br>cost %{{y:.4f}}"
                           "<extra></extra>")))
    fig.add_trace(go.Scatter(
        x=averages.cost_pc, y=averages.cost_mean, mode="lines", uid="average",
        name="cost-space average (recommended)", meta=name,
        line={"color": color, "width": 4},
        hovertemplate=(f"<b>{name}</b>: average over "
                       f"{counted(len(averages.fold_labels), 'fold')}<br>"
                       "PC(+) %{x:.4f}<br>mean normalized expected cost %{y:.4f}"
                       "<extra></extra>")))
    if condition is not None and spread is not None:
        pc = condition.pc
        fig.add_trace(go.Scatter(
            x=np.full(len(spread.normalized_costs), pc),
            y=np.asarray(spread.normalized_costs, dtype=np.float64), mode="markers",
            uid="chosen", name="each fold's cost at your PC(+)",
            marker={"color": "#fff", "size": 8, "line": {"color": HULL_COLOR, "width": 1.5}},
            customdata=text_array([[lab, threshold_text(t)] for lab, t in
                                   zip(averages.fold_labels, spread.thresholds)]),
            hovertemplate=("<b>fold %{customdata[0]}</b><br>threshold %{customdata[1]}"
                           "<br>normalized expected cost %{y:.4f}<extra></extra>")))
        fig.layout.shapes = [{"type": "line", "name": "pc", "xref": "x", "yref": "paper",
                              "x0": pc, "x1": pc, "y0": 0, "y1": 1,
                              "line": {"color": HULL_COLOR, "width": 1, "dash": "dash"}}]
    top = float(np.max(averages.cost_high)) if averages.cost_high.size else 0.5
    fig.layout.yaxis.range = [0, max(0.1, min(1.0, top * 1.1))]
    return fig


def _thinned(x: np.ndarray, y: np.ndarray, max_points: int) -> tuple[np.ndarray, np.ndarray]:
    idx = thin_indices(x.size, max_points)
    return x[idx], y[idx]


def folds_roc_figure(averages: FoldAverages | None, color_index: int = 0, *,
                     max_points: int = 400, uirevision: str = "empty") -> go.Figure:
    """ROC space: per-fold ROC curves, vertical average ± std, threshold average, pooled ROC.

    Per-fold and pooled curves are thinned to ``max_points`` points for display (first and last
    kept); the averages are drawn exactly.
    """
    layout = base_layout(
        xaxis=axis("False positive rate (FPR)", range=[-0.01, 1.01], constrain="domain",
                   dtick=0.2),
        yaxis=axis("True positive rate (TPR)", range=[-0.01, 1.01], constrain="domain",
                   scaleanchor="x", scaleratio=1, dtick=0.2),
        uirevision=uirevision)
    fig = go.Figure(layout=layout)
    fig.add_trace(go.Scatter(x=np.array([0.0, 1.0]), y=np.array([0.0, 1.0]), mode="lines",
                             line={"color": TRIVIAL_COLOR, "dash": "dot", "width": 1},
                             name="chance", uid="chance", hoverinfo="skip", showlegend=False))
    if averages is None:
        return fig
    color = classifier_color(color_index)
    for k, (label, roc) in enumerate(zip(averages.fold_labels, averages.rocs)):
        x, y = _thinned(roc.fpr, roc.tpr, max_points)
        fig.add_trace(go.Scatter(
            x=x, y=y, mode="lines", uid=f"roc-fold-{k}", meta=label, name="each fold's ROC",
            legendgroup="folds", showlegend=k == 0, line={"color": color, "width": 1},
            opacity=FOLD_OPACITY,
            hovertemplate=(f"<b>fold {label}</b><br>FPR %{{x:.4f}}<br>TPR %{{y:.4f}}"
                           "<extra></extra>")))
    mean, std = averages.roc_tpr_mean, averages.roc_tpr_std
    fig.add_trace(go.Scatter(
        x=averages.roc_fpr, y=np.minimum(mean + std, 1.0), mode="lines", uid="vertical-high",
        name="+1 sd", line={"width": 0, "color": color}, showlegend=False,
        legendgroup="vertical", hoverinfo="skip"))
    fig.add_trace(go.Scatter(
        x=averages.roc_fpr, y=np.maximum(mean - std, 0.0), mode="lines", uid="vertical-low",
        name="vertical average ± 1 sd", line={"width": 0, "color": color}, fill="tonexty",
        fillcolor=rgba(color, 0.16), legendgroup="vertical", hoverinfo="skip"))
    fig.add_trace(go.Scatter(
        x=averages.roc_fpr, y=mean, mode="lines", uid="vertical",
        name="ROC vertical average (mean TPR at each FPR)", legendgroup="vertical",
        line={"color": color, "width": 2.5}, customdata=std,
        hovertemplate=("<b>vertical average</b><br>FPR %{x:.4f}<br>mean TPR %{y:.4f} "
                       "± %{customdata:.4f}<extra></extra>")))
    fig.add_trace(go.Scatter(
        x=averages.threshold_fpr, y=averages.threshold_tpr, mode="lines+markers",
        uid="threshold", name="threshold average (mean FPR, TPR per threshold)",
        line={"color": HULL_COLOR, "width": 1.5, "dash": "dot"}, marker={"size": 3.5},
        customdata=text_array(threshold_text(t) for t in averages.threshold_values),
        hovertemplate=("<b>threshold average</b><br>threshold %{customdata}<br>mean FPR %{x:.4f}"
                       "<br>mean TPR %{y:.4f}<extra></extra>")))
    x, y = _thinned(averages.pooled.fpr, averages.pooled.tpr, max_points)
    fig.add_trace(go.Scatter(
        x=x, y=y, mode="lines", uid="pooled", name="pooled ROC (all folds' scores together)",
        line={"color": POOLED_COLOR, "width": 1.5, "dash": "dash"},
        hovertemplate="<b>pooled</b><br>FPR %{x:.4f}<br>TPR %{y:.4f}<extra></extra>"))
    return fig

