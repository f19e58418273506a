"""The view: every control a user can set, as one typed object with one parser and one writer.

A view is what a person builds on the dashboard -- the data set, the ticked classifiers, the
operating conditions, the volume and unit, the sensitivity ranges, the constraints, the band
settings -- and what every link, page, shared analysis, report, export, API answer and CLI call
carries. It lives here, in the core, so that the command line and the web layer share one
definition; nothing in this module knows about Dash or HTTP.

Each field of :data:`VIEW_FIELDS` has a query-string name, a kind, bounds, a default and a label
in the user's terms. From that one table come:

* :meth:`View.parse` -- strict (the API, the CLI, saved analyses): the first bad value raises a
  :class:`~costdash.errors.ParameterError` naming the field and its bounds;
* :meth:`View.parse_lenient` -- for pages: bad values are left at their defaults and returned as
  messages to show, so a mistyped link still opens;
* :meth:`View.to_query` / :meth:`View.to_search` and :meth:`View.to_json` -- the writers;
* :func:`view_schema` -- the same table as JSON, from which the browser's one URL writer and
  validator (``assets/viewstate.js``) and the OpenAPI document are built.

The one default rule for the conditions is :func:`costdash.conditions.default_condition`: p(+)
absent means the data's prevalence, costs absent mean 1.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal
from urllib.parse import parse_qs, urlencode

# From costdash._resampling, not costdash.bands: the view is imported by `import costdash`
# and the CLI, and costdash.bands brings scipy.special (issue 23, --help <= 0.3 s).
from costdash._resampling import BAND_MAX_REPLICATES as MAX_REPLICATES
from costdash.conditions import DEFAULT_COST, OperatingCondition, default_condition
from costdash.errors import ParameterError

__all__ = ["MAX_PINS", "VIEW_FIELDS", "VIEW_RULES", "View", "ViewField", "ViewRule",
           "combination_problems", "field_named", "number_text", "view_schema"]

Kind = Literal["id", "names", "name", "float", "int", "text", "flag", "range", "pins"]

MAX_NAME_LENGTH = 200
MAX_NAMES = 1000
MAX_PINS = 4
"""Most pinned thresholds a view holds (the Explore page draws each in a fixed slot)."""


@dataclass(frozen=True)
class ViewField:
    """One control of the view.

    Attributes
    ----------
    name : str
        The query-string parameter and JSON key (also the :class:`View` attribute).
    kind : str
        ``"float"``, ``"int"``, ``"text"``, ``"flag"``, ``"range"`` (two floats, low and high,
        each within the bounds), ``"names"`` (a comma-separated list), ``"name"``, ``"id"`` or
        ``"pins"`` (classifier:threshold pairs, ``gbm:0.5,logreg:0.42``; typed as a tuple of
        ``(name, threshold)``, as JSON a list of ``{"model", "threshold"}``).
    label : str
        What the user calls it, for messages ("p(+)", "Replicates (B)").
    default : Any
        The value when absent; ``None`` means "unset" (for ``p_pos``: the data's prevalence).
    low, high : float or None
        Bounds; ``low_open`` / ``high_open`` make them strict.
    max_length : int
        Longest text accepted (``text``, ``name``); longer text is cut (``unit``) or refused.
    always : bool
        Written to the query string even at its default (the conditions travel with every link).
    max_items : int or None
        Most items of a list (``pins``).
    """

    name: str
    kind: Kind
    label: str
    default: Any = None
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False
    max_length: int = MAX_NAME_LENGTH
    always: bool = False
    doc: str = ""
    max_items: int | None = None

    # --- bounds, in words and as a test -------------------------------------------------------

    def bounds_text(self) -> str:
        """The bounds in words ("strictly between 0 and 1", "from 1 to 10,000", "above 0")."""
        def num(x: float) -> str:
            return f"{x:,.0f}" if float(x).is_integer() else f"{x:g}"

        lo, hi = self.low, self.high
        if lo is not None and hi is not None:
            if self.low_open and self.high_open:
                return f"strictly between {num(lo)} and {num(hi)}"
            if not self.low_open and not self.high_open:
                return f"from {num(lo)} to {num(hi)}"
            return (f"above {num(lo)} and at most {num(hi)}" if self.low_open
                    else f"at least {num(lo)} and below {num(hi)}")
        if lo is not None:
            return f"above {num(lo)}" if self.low_open else f"at least {num(lo)}"
        if hi is not None:
            return f"below {num(hi)}" if self.high_open else f"at most {num(hi)}"
        return ""

    def requirement(self) -> str:
        """The rule in words, e.g. "p(+) must be a number strictly between 0 and 1"."""
        what = {"int": "a whole number", "float": "a number",
                "range": "two numbers (from, to)"}.get(self.kind)
        if what is None:
            return {"names": f"{self.label} must be a list of names",
                    "pins": f"{self.label} must be at most {self.max_items} classifier:threshold "
                            "pairs (a name without commas, a finite number)",
                    "flag": f"{self.label} must be 1 or 0",
                    "id": f"{self.label} must be a data set id"}.get(
                self.kind, f"{self.label} must be text of at most {self.max_length} characters")
        bounds = self.bounds_text()
        return f"{self.label} must be {what}" + (f" {bounds}" if bounds else "")

    def in_bounds(self, x: float) -> bool:
        if not math.isfinite(x):
            return False
        if self.low is not None and (x <= self.low if self.low_open else x < self.low):
            return False
        if self.high is not None and (x >= self.high if self.high_open else x > self.high):
            return False
        return True

    # --- one value ----------------------------------------------------------------------------

    def _problem(self, raw: Any) -> ParameterError:
        def text(x: Any) -> str:
            if isinstance(x, dict):     # a pin as JSON, shown as the query writes it
                return f"{text(x.get('model'))}:{text(x.get('threshold'))}"
            if isinstance(x, int) and not isinstance(x, bool):
                return number_text(x) if abs(x) < 2**1023 else "a number beyond float range"
            return number_text(x) if isinstance(x, float) and math.isfinite(x) else str(x)

        shown = ",".join(map(text, raw)) if isinstance(raw, (list, tuple)) else text(raw)
        shown = shown if len(shown) <= 40 else shown[:40] + "…"
        return ParameterError(f"{self.requirement()}; got '{shown}'.")

    def _number(self, raw: Any) -> float:
        if isinstance(raw, bool) or not isinstance(raw, (int, float, str)):
            raise self._problem(raw)
        try:
            x = float(raw.strip()) if isinstance(raw, str) else float(raw)
        except (ValueError, OverflowError):
            raise self._problem(raw) from None
        if not self.in_bounds(x):
            raise self._problem(raw)
        return x

    def parse(self, raw: Any) -> Any:
        """The typed value of ``raw`` (query text or JSON value); ``None`` when blank.

        Raises
        ------
        ParameterError
            Naming the field by its label and stating its bounds.
        """
        if raw is None or (isinstance(raw, str) and not raw.strip()) or raw == []:
            return None
        if self.kind == "float":
            return self._number(raw)
        if self.kind == "int":
            x = self._number(raw)
            if not x.is_integer():
                raise self._problem(raw)
            return int(x)
        if self.kind == "flag":
            if raw in (True, 1, "1", "true", "on", "yes"):
                return True
            if raw in (False, 0, "0", "false", "off", "no"):
                return False
            raise ParameterError(f"{self.label} must be 1 or 0; got '{str(raw)[:40]}'.")
        if self.kind == "range":
            parts = raw.split(",") if isinstance(raw, str) else list(raw) \
                if isinstance(raw, (list, tuple)) else [raw]
            if len(parts) != 2:
                raise self._problem(raw)
            try:
                lo, hi = (self._number(p) for p in parts)
            except ParameterError:
                raise self._problem(raw) from None
            if lo > hi:
                raise ParameterError(f"{self.label}: the low end ({lo:g}) is above the high end "
                                     f"({hi:g}).")
            return (lo, hi)
        if self.kind == "names":
            items = raw.split(",") if isinstance(raw, str) else raw
            if not isinstance(items, (list, tuple)):
                raise ParameterError(f"{self.label} must be a list of names.")
            names = tuple(str(m).strip() for m in items if str(m).strip())
            if len(names) > MAX_NAMES or any(len(m) > self.max_length for m in names):
                raise ParameterError(f"{self.label}: at most {MAX_NAMES} names of at most "
                                     f"{self.max_length} characters each.")
            return tuple(dict.fromkeys(names)) or None
        if self.kind == "pins":
            return self._pins(raw)
        text = str(raw).strip() if self.kind != "text" else str(raw)
        if self.kind == "id":
            if not _ID_PATTERN.match(text):
                raise ParameterError(f"{self.label} '{text[:40]}' is not a data set id.")
            return text
        if len(text) > self.max_length:
            if self.kind == "text":
                return text[: self.max_length]
            raise ParameterError(f"{self.label} is longer than {self.max_length} characters.")
        return text

    def _pins(self, raw: Any) -> tuple[tuple[str, float], ...] | None:
        """``gbm:0.5,logreg:0.42`` (or a list of such items, ``{"model", "threshold"}`` objects
        or ``[name, threshold]`` pairs) as ``(name, threshold)`` pairs, duplicates dropped."""
        if isinstance(raw, str):
            items: list[Any] = raw.split(",")
        elif isinstance(raw, (list, tuple)):
            items = []
            for item in raw:
                items.extend(item.split(",") if isinstance(item, str) else [item])
        else:
            items = [raw]
        pins: list[tuple[str, float]] = []
        for item in items:
            if isinstance(item, str):
                if not item.strip():
                    continue
                name, colon, number = item.rpartition(":")
            elif isinstance(item, dict):
                name, colon, number = item.get("model"), ":", item.get("threshold")
            elif isinstance(item, (list, tuple)) and len(item) == 2:
                name, colon, number = item[0], ":", item[1]
            else:
                raise self._problem(raw)
            if not colon or not isinstance(name, str) or isinstance(number, bool) \
                    or not isinstance(number, (int, float, str)):
                raise self._problem(raw)
            name = name.strip()
            try:
                threshold = float(number.strip()) if isinstance(number, str) else float(number)
            except (ValueError, OverflowError):
                raise self._problem(raw) from None
            if not name or "," in name or len(name) > self.max_length \
                    or not math.isfinite(threshold):
                raise self._problem(raw)
            pins.append((name, threshold))
        pins = list(dict.fromkeys(pins))
        if self.max_items is not None and len(pins) > self.max_items:
            raise self._problem(raw)
        return tuple(pins) or None

    def format(self, value: Any) -> str:
        """``value`` as query-string text (numbers round-trip exactly)."""
        if self.kind == "names":
            return ",".join(value)
        if self.kind == "pins":
            return ",".join(f"{name}:{number_text(t)}" for name, t in value)
        if self.kind == "range":
            return f"{number_text(value[0])},{number_text(value[1])}"
        if self.kind == "flag":
            return "1" if value else "0"
        if self.kind in ("float", "int"):
            return number_text(value)
        return str(value)

    def to_json_value(self, value: Any) -> Any:
        if self.kind == "pins":
            return [{"model": name, "threshold": t} for name, t in value]
        if self.kind in ("names", "range"):
            return list(value)
        return value


def number_text(x: float | int) -> str:
    """The shortest text that reads back as the same number, written as JavaScript's
    ``Number.prototype.toString`` writes it (so the browser's writer, assets/viewstate.js, and
    this one give the same address): plain digits for 1e-7 < |x| < 1e21, else an exponent."""
    x = float(x)
    if x == 0:
        return "0"
    sign, digits, exponent = Decimal(repr(abs(x))).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    exponent += len(digits) - len(text)             # trailing zeros moved into the exponent
    k, n = len(text), len(text) + exponent          # x = 0.<text> * 10**n
    if k <= n <= 21:
        out = text + "0" * (n - k)
    elif 0 < n <= 21:
        out = text[:n] + "." + text[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * -n + text
    else:
        e = n - 1
        out = text[0] + ("." + text[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") \
            + str(abs(e))
    return ("-" if x < 0 else "") + out


_ID_PATTERN = re.compile(r"^[0-9a-f]{32}$")

DEFAULT_VOLUME = 1000.0
DEFAULT_UNIT = "€"
DEFAULT_LEVEL = 0.9
DEFAULT_REPLICATES = 1000
DEFAULT_SEED = 0

_POSITIVE = {"low": 0.0, "low_open": True}

VIEW_FIELDS: tuple[ViewField, ...] = (
    ViewField("data", "id", "Data set", doc="Id of the stored data set."),
    ViewField("models", "names", "Classifiers",
              doc="Ticked classifiers (comma-separated); absent: all of them."),
    ViewField("p_pos", "float", "p(+)", None, 0.0, 1.0, True, True, always=True,
              doc="Probability that a case is positive; absent: the data's prevalence."),
    ViewField("cost_fn", "float", "C(−|+)", DEFAULT_COST, **_POSITIVE, always=True,
              doc="Cost of a false negative (a missed positive)."),
    ViewField("cost_fp", "float", "C(+|−)", DEFAULT_COST, **_POSITIVE, always=True,
              doc="Cost of a false positive (a false alarm)."),
    ViewField("cost_tp", "float", "C(+|+)", 0.0,
              doc="Cost of a true positive (a detected positive); a benefit is a negative cost. "
                  "Must be below C(−|+)."),
    ViewField("cost_tn", "float", "C(−|−)", 0.0,
              doc="Cost of a true negative (a correct rejection); a benefit is a negative cost. "
                  "Must be below C(+|−)."),
    ViewField("volume", "float", "Volume", DEFAULT_VOLUME, 0.0, always=True,
              doc="Cases per period, for the money figures and the capacity constraint."),
    ViewField("unit", "text", "Unit", DEFAULT_UNIT, max_length=12, always=True,
              doc="Currency or unit of the costs (at most 12 characters)."),
    ViewField("lines", "flag", "Every cost line", False,
              doc="Show every cost line, not just the envelopes."),
    ViewField("hull_only", "flag", "Hull classifiers only", False,
              doc="Explore: draw only the classifiers on the ROC convex hull (the dominated ones "
                  "stay ticked, out of sight)."),
    ViewField("filter", "text", "Classifier filter", None, max_length=100,
              doc="Explore: the classifier list shows only the names containing this text "
                  "(case-insensitive)."),
    ViewField("log_fpr", "flag", "Log FPR axis", False,
              doc="ROC space with a log false positive rate axis (rare events)."),
    ViewField("log_pc", "flag", "Log-odds PC(+) axis", False,
              doc="Cost space with a log-odds PC(+) axis (rare events)."),
    ViewField("zoom", "flag", "Zoom to the choice", False,
              doc="Explore: both plots zoomed to the region around the current choice."),
    ViewField("sens_p", "range", "Sensitivity range of p(+)", None, 0.0, 1.0, True, True,
              doc="p(+) from,to: highlight what is optimal over the range."),
    ViewField("sens_fn", "range", "Sensitivity range of C(−|+)", None, **_POSITIVE,
              doc="C(−|+) from,to."),
    ViewField("sens_fp", "range", "Sensitivity range of C(+|−)", None, **_POSITIVE,
              doc="C(+|−) from,to."),
    ViewField("max_fpr", "float", "Neyman–Pearson FPR limit", None, 0.0, 1.0,
              doc="False positive rate at most this (Neyman–Pearson constraint)."),
    ViewField("capacity", "float", "Capacity", None, 0.0,
              doc="Flag at most this many cases per period."),
    ViewField("pins", "pins", "Pinned thresholds", max_items=MAX_PINS,
              doc="Explore: thresholds in use to price at the conditions, as classifier:threshold "
                  "pairs (score >= threshold is flagged), e.g. gbm:0.5,logreg:0.42."),
    ViewField("model", "name", "Classifier",
              doc="The classifier of the Confidence and Folds pages."),
    ViewField("threshold", "float", "Fixed threshold",
              doc="Confidence: the band of the cost line at this threshold."),
    ViewField("pc", "float", "PC(+) to read the band at", None, 0.0, 1.0,
              doc="Confidence: read the band here; absent: the PC(+) of the conditions."),
    ViewField("a", "name", "Classifier A", doc="Compare: the first classifier."),
    ViewField("b", "name", "Classifier B", doc="Compare: the second classifier."),
    ViewField("method", "name", "Band method",
              doc="Confidence and Compare: which band. split: thresholds picked per PC(+) on a "
                  "stratified half, their cost banded on the other half (calibrated; the default "
                  "without a threshold); clopper-pearson-mover: closed form, calibrated (the "
                  "default with a threshold; wilson-mover, the old default, on request); "
                  "percentile: a bootstrap shown without a level (the re-tuned "
                  "envelope's resampling spread, or the paper's band of a fixed threshold); "
                  "double-bootstrap: the envelope's approximate calibrated band. A value that "
                  "does not fit the question means its default."),
    ViewField("simultaneous", "flag", "Whole curve", False,
              doc="Confidence and Compare: a band that holds at every PC(+) at once "
                  "(closed-form bands only)."),
    ViewField("level", "float", "Confidence level", DEFAULT_LEVEL, 0.0, 1.0, True, True,
              doc="Level of the bootstrap bands."),
    ViewField("replicates", "int", "Replicates (B)", DEFAULT_REPLICATES, 1, MAX_REPLICATES,
              doc="Bootstrap replicates."),
    ViewField("seed", "int", "Seed", DEFAULT_SEED, 0, 2**32 - 1,
              doc="Seed of the bootstrap's random numbers."),
    ViewField("calibration", "name", "Calibration",
              doc="Threshold choice: the score-driven and decision curves of the scores "
                  "calibrated on folds, platt or isotonic (each fold mapped by a fit on the "
                  "others); absent: the scores as they are."),
    ViewField("beta_a", "float", "Beta a of PC(+)", None, **_POSITIVE,
              doc="Threshold choice: expected losses with PC(+) ~ Beta(a, b); absent (with "
                  "beta_b): 1, so both absent is PC(+) uniform."),
    ViewField("beta_b", "float", "Beta b of PC(+)", None, **_POSITIVE,
              doc="Threshold choice: the b of the Beta over PC(+); absent: 1."),
    ViewField("quantile_bins", "flag", "Quantile bins", False,
              doc="Curves: reliability bins holding about as many examples each (scikit-learn's "
                  "strategy='quantile'); absent or 0: equal-width bins on [0, 1]."),
)
"""Every field of the view, in the order the query string lists them."""

_BY_NAME = {f.name: f for f in VIEW_FIELDS}



@dataclass(frozen=True)
class ViewRule:
    """Two fields each valid alone but not together: ``low`` must lie below ``high`` (below
    every value of a range, i.e. its low end).

    Attributes
    ----------
    low, high : str
        The fields (``low`` a number, ``high`` a number or a range).
    reason : str
        Why, in the user's terms.
    drops : str
        The field a lenient reading (a page opened from a link) leaves at its default when the
        rule fails, and the one the message leads with.
    """

    low: str
    high: str
    reason: str
    drops: str

    def problem(self, values: Mapping[str, Any]) -> ParameterError | None:
        """The message when typed ``values`` (a field absent: its default) break the rule."""
        def value(name: str) -> Any:
            return values[name] if values.get(name) is not None else _BY_NAME[name].default

        x, y = value(self.low), value(self.high)
        if x is None or y is None:
            return None
        low, high = _BY_NAME[self.low], _BY_NAME[self.high]
        if high.kind == "range":
            if y[0] - x > 0.0:
                return None
            return ParameterError(
                f"{high.label} must lie above {low.label} ({self.reason}); got {high.label} = "
                f"{number_text(y[0])} to {number_text(y[1])}, {low.label} = {number_text(x)}.")
        if y - x > 0.0:
            return None
        return ParameterError(
            f"{low.label} must be below {high.label} ({self.reason}); got {low.label} = "
            f"{number_text(x)}, {high.label} = {number_text(y)}.")

    def to_json(self) -> dict[str, str]:
        return {"low": self.low, "high": self.high, "reason": self.reason, "drops": self.drops}


_ERROR_ABOVE_RIGHT = ("an error must cost more than the correct decision, or every case would "
                      "best be decided wrongly")

VIEW_RULES: tuple[ViewRule, ...] = (
    ViewRule("cost_tp", "cost_fn", _ERROR_ABOVE_RIGHT, drops="cost_tp"),
    ViewRule("cost_tp", "sens_fn", _ERROR_ABOVE_RIGHT, drops="sens_fn"),
    ViewRule("cost_tn", "cost_fp", _ERROR_ABOVE_RIGHT, drops="cost_tn"),
    ViewRule("cost_tn", "sens_fp", _ERROR_ABOVE_RIGHT, drops="sens_fp"),
)
"""The view's rules across fields (the browser's validator reads them from
:func:`view_schema`, each under its ``low`` field, in this order): each cost of a correct
decision stays below its error's cost, and below every value of that cost's sensitivity range.
A rule that drops a field comes before the rules that field is the ``low`` of, so a lenient
reading judges them on what is left."""


def combination_problems(values: Mapping[str, Any]) -> list[tuple[ViewRule, ParameterError]]:
    """The rules across fields that typed ``values`` break (absent fields: their defaults).

    Parameters
    ----------
    values : mapping
        ``{field name: typed value}``, each already valid on its own (:meth:`ViewField.parse`).

    Returns
    -------
    list of (ViewRule, ParameterError)
        In :data:`VIEW_RULES` order; empty when the values are valid together.
    """
    out = []
    for rule in VIEW_RULES:
        problem = rule.problem(values)
        if problem is not None:
            out.append((rule, problem))
    return out

CONDITION_FIELDS = ("p_pos", "cost_fn", "cost_fp", "cost_tp", "cost_tn")
"""The fields that make the operating conditions (:meth:`View.condition`)."""


def field_named(name: str) -> ViewField:
    return _BY_NAME[name]


def _value_of(source: Mapping[str, Any], name: str) -> Any:
    """A field's raw value from a mapping whose values may be ``parse_qs`` lists."""
    value = source.get(name)
    if not isinstance(value, list) or not value:
        return value
    if _BY_NAME[name].kind not in ("names", "range", "pins") or isinstance(value[0], str) and \
            len(value) == 1:
        return value[0]
    return value


@dataclass(frozen=True)
class View:
    """Everything a user has set, typed; a field at ``None`` is unset (see :data:`VIEW_FIELDS`).

    Build one with :meth:`parse` (strict) or :meth:`parse_lenient` (pages), never by hand from
    strings; change one with :meth:`with_values`, which checks the new values the same way.
    """

    data: str | None = None
    models: tuple[str, ...] | None = None
    p_pos: float | None = None
    cost_fn: float = DEFAULT_COST
    cost_fp: float = DEFAULT_COST
    cost_tp: float = 0.0
    cost_tn: float = 0.0
    volume: float = DEFAULT_VOLUME
    unit: str = DEFAULT_UNIT
    lines: bool = False
    hull_only: bool = False
    filter: str | None = None
    log_fpr: bool = False
    log_pc: bool = False
    zoom: bool = False
    sens_p: tuple[float, float] | None = None
    sens_fn: tuple[float, float] | None = None
    sens_fp: tuple[float, float] | None = None
    max_fpr: float | None = None
    capacity: float | None = None
    pins: tuple[tuple[str, float], ...] | None = None
    model: str | None = None
    threshold: float | None = None
    pc: float | None = None
    a: str | None = None
    b: str | None = None
    method: str | None = None
    simultaneous: bool = False
    level: float = DEFAULT_LEVEL
    replicates: int = DEFAULT_REPLICATES
    seed: int = DEFAULT_SEED
    calibration: str | None = None
    beta_a: float | None = None
    beta_b: float | None = None
    quantile_bins: bool = False

    # --- reading ------------------------------------------------------------------------------

    @classmethod
    def parse(cls, source: Mapping[str, Any] | str | None, *,
              only: tuple[str, ...] | None = None) -> View:
        """The view in ``source``: a query string, ``parse_qs`` output, form fields or JSON.

        Parameters
        ----------
        source : mapping or str
            Unknown keys are ignored (links carry others).
        only : tuple of str, optional
            Read only these fields (the rest keep their defaults).

        Raises
        ------
        ParameterError
            At the first bad value, naming the field and its bounds.
        """
        view, problems = cls._read(source, only)
        if problems:
            raise problems[0]
        return view

    @classmethod
    def parse_lenient(cls, source: Mapping[str, Any] | str | None, *,
                      only: tuple[str, ...] | None = None) -> tuple[View, tuple[str, ...]]:
        """Like :meth:`parse`, but a bad value leaves its field at the default and becomes one
        of the returned messages (for a page to show; a mistyped link still opens)."""
        view, problems = cls._read(source, only)
        return view, tuple(str(p) for p in problems)

    @classmethod
    def _read(cls, source: Mapping[str, Any] | str | None,
              only: tuple[str, ...] | None) -> tuple[View, list[ParameterError]]:
        if isinstance(source, str):
            source = parse_qs(source.lstrip("?"), keep_blank_values=True)
        source = source or {}
        values: dict[str, Any] = {}
        problems: list[ParameterError] = []
        for f in VIEW_FIELDS:
            if only is not None and f.name not in only:
                continue
            try:
                value = f.parse(_value_of(source, f.name))
            except ParameterError as exc:
                problems.append(exc)
                continue
            if value is not None:
                values[f.name] = value
        # The rules across fields, once every field is read; leniently, a rule that fails
        # leaves its ``drops`` field at the default (which the next rules then see).
        for rule in VIEW_RULES:
            problem = rule.problem(values)
            if problem is not None:
                problems.append(problem)
                values.pop(rule.drops, None)
        return cls(**values), problems

    def with_values(self, **changes: Any) -> View:
        """A copy with ``changes`` (raw or typed values, checked; ``None`` unsets a field)."""
        typed = {}
        for name, raw in changes.items():
            f = _BY_NAME[name]
            value = f.parse(raw)
            typed[name] = f.default if value is None else value
        changed = replace(self, **typed)
        problems = combination_problems({f.name: getattr(changed, f.name) for f in VIEW_FIELDS})
        if problems:
            raise problems[0][1]
        return changed

    # --- writing ------------------------------------------------------------------------------

    def _set_fields(self) -> list[tuple[ViewField, Any]]:
        out = []
        for f in VIEW_FIELDS:
            value = getattr(self, f.name)
            if value is None or (value == f.default and not f.always):
                continue
            out.append((f, value))
        return out

    def to_query(self) -> dict[str, str]:
        """The view as query parameters, in :data:`VIEW_FIELDS` order; unset fields and
        defaults are left out, except the conditions, volume and unit, which always travel."""
        return {f.name: f.format(v) for f, v in self._set_fields()}

    def to_search(self) -> str:
        """``?`` and the query string (commas in lists and ranges and colons in pins left
        readable: ``pins=gbm:0.5,logreg:0.42``)."""
        text = urlencode(self.to_query()).replace("%2C", ",").replace("%3A", ":")
        return "?" + text if text else ""

    def to_json(self) -> dict[str, Any]:
        """The view as JSON (numbers as numbers, lists as lists); unset fields left out."""
        return {f.name: f.to_json_value(v) for f, v in self._set_fields()}

    def without(self, *names: str) -> View:
        """A copy with ``names`` back at their defaults."""
        return replace(self, **{n: _BY_NAME[n].default for n in names})

    # --- meaning ------------------------------------------------------------------------------

    def condition(self, prevalence: float) -> OperatingCondition:
        """The operating conditions this view means for data of this ``prevalence``."""
        return default_condition(prevalence, self.p_pos, self.cost_fn, self.cost_fp,
                                 self.cost_tp, self.cost_tn)

    def effective(self, prevalence: float) -> View:
        """The view with p(+) filled in (the data's prevalence when unset)."""
        return replace(self, p_pos=self.condition(prevalence).p_pos)

    def selected(self, names: list[str] | tuple[str, ...]) -> list[str]:
        """The ticked classifiers among ``names``, in their order (all when none are ticked)."""
        if not self.models:
            return list(names)
        wanted = set(self.models)
        return [n for n in names if n in wanted]


def view_schema() -> list[dict[str, Any]]:
    """:data:`VIEW_FIELDS` as JSON, for the browser's writer and validator and for OpenAPI."""
    out = []
    for f in VIEW_FIELDS:
        out.append({"name": f.name, "kind": f.kind, "label": f.label, "default": f.default,
                    "low": f.low, "high": f.high, "low_open": f.low_open,
                    "high_open": f.high_open, "max_length": f.max_length, "always": f.always,
                    "max_items": f.max_items,
                    "requirement": f.requirement(), "doc": f.doc,
                    # The rules across fields this one must stay below (VIEW_RULES).
                    "below": [r.to_json() for r in VIEW_RULES if r.low == f.name]})
    return out
