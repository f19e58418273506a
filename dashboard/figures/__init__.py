"""Pure figure builders: view model (core results) -> ``plotly.graph_objects.Figure``.

No Dash here, and no cost arithmetic: the numbers come from :mod:`dashboard.viewmodel`.
"""

from dashboard.figures.cost import cost_figure
from dashboard.figures.palette import classifier_color, classifier_colors
from dashboard.figures.roc import roc_figure

__all__ = ["classifier_color", "classifier_colors", "cost_figure", "roc_figure"]
