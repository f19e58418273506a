"""The one view schema (``costdash.view``): hand cases, then properties.

Properties: every valid view survives its writers (query string, ``?search`` text, JSON) and the
strict parser unchanged; the lenient parser never raises, whatever text it is given, and returns
one message per bad field naming the field by its label (and its bounds when a number was out of
them or not a number); the strict parser raises the first of those messages.
"""

from __future__ import annotations

import math
import re
import string
from urllib.parse import parse_qs

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from costdash.conditions import default_condition
from costdash.errors import ParameterError
from costdash.view import (VIEW_FIELDS, VIEW_RULES, View, ViewField, _value_of,
                           combination_problems, field_named, view_schema)

NAMES = [f.name for f in VIEW_FIELDS]
PROPERTY = settings(max_examples=50, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


# --- strategies -----------------------------------------------------------------------------------

def _number(f: ViewField, *, integer: bool = False) -> st.SearchStrategy:
    if integer:
        return st.integers(int(f.low), int(f.high))
    return st.floats(min_value=f.low, max_value=f.high,
                     exclude_min=f.low is not None and f.low_open,
                     exclude_max=f.high is not None and f.high_open,
                     allow_nan=False, allow_infinity=False)


# Names as a person types them: printable, no surrounding blanks (the parser strips them), and
# for lists no comma (the query string's separator).
_NAME_TEXT = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")),
                     min_size=1, max_size=24).map(str.strip).filter(bool)


def field_values(f: ViewField) -> st.SearchStrategy:
    """Valid typed values of one field (as :meth:`View.parse` returns them)."""
    if f.kind == "float":
        return _number(f)
    if f.kind == "int":
        return _number(f, integer=True)
    if f.kind == "range":
        return st.tuples(_number(f), _number(f)).map(lambda pair: tuple(sorted(pair)))
    if f.kind == "names":
        return st.lists(_NAME_TEXT.filter(lambda s: "," not in s), min_size=1, max_size=5,
                        unique=True).map(tuple)
    if f.kind == "name":
        return _NAME_TEXT
    if f.kind == "text":
        return st.text(min_size=1, max_size=f.max_length).filter(lambda s: s.strip())
    if f.kind == "flag":
        return st.booleans()
    if f.kind == "pins":
        pin = st.tuples(_NAME_TEXT.filter(lambda s: "," not in s),
                        st.floats(allow_nan=False, allow_infinity=False))
        return st.lists(pin, min_size=1, max_size=f.max_items,
                        unique_by=lambda p: (p[0], p[1] + 0.0)).map(tuple)
    return st.text(alphabet="0123456789abcdef", min_size=32, max_size=32)  # id


@st.composite
def views(draw) -> View:
    """A random valid view: each field unset (its default) or one of its valid values."""
    values = {}
    for f in VIEW_FIELDS:
        if draw(st.booleans()):
            values[f.name] = draw(field_values(f))
    # The rules across fields (a correct decision costs less than its error, and than every
    # value of that error's sensitivity range): the view refuses the pair otherwise.
    for rule in VIEW_RULES:
        if rule.problem(values) is not None:
            values.pop(rule.drops, None)
    return View(**values)


_JUNK_TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["", " ", "nan", "inf", "-inf", "1e999", "0", "1", "-1", "1.5", "0.5",
                     "abc", "1,2", "0.3,0.1", "1,2,3", ",", "true", "yes", "2", "1e-300",
                     "0x10", "1_000", "٣", "Ⅻ", "0" * 40, "a" * 300]),
    st.floats().map(repr),
    st.integers(-10**12, 10**12).map(str),
)


def junk_sources() -> st.SearchStrategy:
    """Mappings of view names (and others) to junk text, lists of it, or JSON-ish values."""
    value = st.one_of(_JUNK_TEXT, st.lists(_JUNK_TEXT, max_size=3), st.none(), st.booleans(),
                      st.floats(), st.integers(), st.lists(st.floats(), max_size=3),
                      st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
    key = st.one_of(st.sampled_from(NAMES), st.text(max_size=8))
    return st.dictionaries(key, value, max_size=12)


# --- hand cases -----------------------------------------------------------------------------------

def test_parse_types_every_kind_from_a_query_string():
    view = View.parse("?data=" + "ab" * 16 + "&models=gbm,logreg,gbm&p_pos=0.01&cost_fn=50"
                      "&volume=250&unit=%24&lines=1&sens_p=0.001,0.1&max_fpr=0.05&capacity=40"
                      "&model=gbm&threshold=0.499996&replicates=200&seed=7&level=0.8"
                      "&colour=blue")
    assert view == View(data="ab" * 16, models=("gbm", "logreg"), p_pos=0.01, cost_fn=50.0,
                        volume=250.0, unit="$", lines=True, sens_p=(0.001, 0.1), max_fpr=0.05,
                        capacity=40.0, model="gbm", threshold=0.499996, replicates=200, seed=7,
                        level=0.8)
    assert isinstance(view.replicates, int) and isinstance(view.cost_fn, float)


def test_the_same_view_from_parse_qs_form_fields_and_json():
    text = "p_pos=0.2&models=a,b&sens_fn=1,10&lines=0"
    expected = View(p_pos=0.2, models=("a", "b"), sens_fn=(1.0, 10.0))
    assert View.parse(text) == View.parse(parse_qs(text)) == expected
    assert View.parse({"p_pos": "0.2", "models": ["a", "b"], "sens_fn": [1, 10],
                       "lines": False}) == expected
    assert View.parse(expected.to_json()) == expected
    # Repeated list fields (parse_qs of models=a&models=b) are a list of names.
    assert View.parse("models=a&models=b").models == ("a", "b")


def test_absent_and_blank_values_are_the_defaults():
    assert View.parse("") == View.parse(None) == View.parse({}) == View()
    assert View.parse("p_pos=&cost_fn=%20&models=&unit=") == View()
    assert View().cost_fn == View().cost_fp == 1.0 and View().p_pos is None


@pytest.mark.parametrize("query, message", [
    ("p_pos=1.5", "p(+) must be a number strictly between 0 and 1; got '1.5'."),
    ("p_pos=0", "p(+) must be a number strictly between 0 and 1; got '0'."),
    ("p_pos=nan", "p(+) must be a number strictly between 0 and 1; got 'nan'."),
    ("cost_fn=-2", "C(−|+) must be a number above 0; got '-2'."),
    ("cost_fp=abc", "C(+|−) must be a number above 0; got 'abc'."),
    ("volume=-1", "Volume must be a number at least 0; got '-1'."),
    ("max_fpr=1.01", "Neyman–Pearson FPR limit must be a number from 0 to 1; got '1.01'."),
    ("replicates=2.5", "Replicates (B) must be a whole number from 1 to 10,000; got '2.5'."),
    ("replicates=0", "Replicates (B) must be a whole number from 1 to 10,000; got '0'."),
    ("level=1", "Confidence level must be a number strictly between 0 and 1; got '1'."),
    ("sens_p=0.1", ("Sensitivity range of p(+) must be two numbers (from, to) strictly between "
                    "0 and 1; got '0.1'.")),
    ("sens_p=0.3,0.1", ("Sensitivity range of p(+): the low end (0.3) is above the high end "
                        "(0.1).")),
    ("lines=maybe", "Every cost line must be 1 or 0; got 'maybe'."),
    ("data=../etc", "Data set '../etc' is not a data set id."),
])
def test_strict_parse_names_the_field_and_its_bounds(query, message):
    with pytest.raises(ParameterError) as error:
        View.parse(query)
    assert str(error.value) == message
    view, problems = View.parse_lenient(query)
    assert problems == (message,) and view == View()


def test_lenient_keeps_the_good_values_and_reports_each_bad_one():
    view, problems = View.parse_lenient("p_pos=2&cost_fn=5&volume=x&unit=kr")
    assert view == View(cost_fn=5.0, unit="kr")
    assert [p.split(" must")[0] for p in problems] == ["p(+)", "Volume"]


def test_strict_parse_raises_the_first_bad_field_in_schema_order():
    with pytest.raises(ParameterError, match=r"^p\(\+\)"):
        View.parse({"seed": "-1", "p_pos": "7"})


def test_only_reads_the_fields_asked_for():
    view = View.parse("p_pos=0.3&data=not-an-id&level=5", only=("p_pos", "cost_fn"))
    assert view == View(p_pos=0.3)


def test_text_is_cut_and_names_are_checked():
    assert View.parse({"unit": "x" * 20}).unit == "x" * 12
    with pytest.raises(ParameterError, match="Classifier is longer than 200"):
        View.parse({"model": "m" * 201})
    with pytest.raises(ParameterError, match="Classifiers: at most"):
        View.parse({"models": ["m" * 201]})


def test_writers_leave_out_what_is_unset_but_always_write_the_conditions():
    assert View().to_query() == {"cost_fn": "1", "cost_fp": "1", "volume": "1000", "unit": "€"}
    assert View().to_json() == {"cost_fn": 1.0, "cost_fp": 1.0, "volume": 1000.0, "unit": "€"}
    view = View(p_pos=0.1, models=("a", "b"), sens_p=(0.01, 0.2), level=0.9, lines=True)
    assert view.to_search() == ("?models=a,b&p_pos=0.1&cost_fn=1&cost_fp=1&volume=1000"
                                "&unit=%E2%82%AC&lines=1&sens_p=0.01,0.2")
    assert view.to_json()["sens_p"] == [0.01, 0.2] and view.to_json()["models"] == ["a", "b"]
    # Numbers read back exactly: a threshold of 0.499996 is not 0.5.
    assert View(threshold=0.4999996).to_query()["threshold"] == "0.4999996"


def test_condition_is_the_one_default_rule():
    assert View().condition(0.3) == default_condition(0.3)
    assert View().condition(0.3).p_pos == 0.3 and View().condition(0.3).cost_fn == 1.0
    view = View(p_pos=0.01, cost_fn=50.0)
    assert view.condition(0.3) == default_condition(0.3, 0.01, 50.0, 1.0)
    assert View().effective(0.25) == View(p_pos=0.25)
    assert view.effective(0.25) == view


def test_selected_keeps_the_data_order():
    names = ["logreg", "forest", "gbm"]
    assert View().selected(names) == names
    assert View(models=("gbm", "logreg", "nope")).selected(names) == ["logreg", "gbm"]


def test_with_values_checks_and_without_resets():
    view = View().with_values(p_pos="0.2", models="a,b", volume=None)
    assert view == View(p_pos=0.2, models=("a", "b"))
    with pytest.raises(ParameterError, match="p\\(\\+\\)"):
        view.with_values(p_pos=2)
    assert view.without("p_pos", "models") == View()


def test_schema_is_the_table():
    schema = view_schema()
    assert [f["name"] for f in schema] == NAMES
    p_pos = schema[NAMES.index("p_pos")]
    assert (p_pos["low"], p_pos["high"], p_pos["low_open"], p_pos["high_open"]) == \
        (0.0, 1.0, True, True)
    assert p_pos["requirement"] == "p(+) must be a number strictly between 0 and 1"
    assert field_named("replicates").requirement() == \
        "Replicates (B) must be a whole number from 1 to 10,000"


# --- properties -----------------------------------------------------------------------------------

@pytest.mark.slow
@PROPERTY
@given(views())
def test_round_trip_through_the_query_string(view):
    assert View.parse(view.to_query()) == view
    assert View.parse(view.to_search()) == view


@pytest.mark.slow
@PROPERTY
@given(views())
def test_round_trip_through_json(view):
    assert View.parse(view.to_json()) == view


@pytest.mark.slow
@PROPERTY
@given(views(), st.floats(0.0, 1.0, exclude_min=True, exclude_max=True))
def test_condition_and_effective_follow_the_default_rule(view, prevalence):
    cond = view.condition(prevalence)
    assert cond == default_condition(prevalence, view.p_pos, view.cost_fn, view.cost_fp,
                                     view.cost_tp, view.cost_tn)
    effective = view.effective(prevalence)
    assert effective.p_pos == cond.p_pos and effective.condition(0.5) == cond


def _bad_fields(source) -> list[ViewField]:
    """The fields the lenient parser leaves out of ``source``, in the order of its messages:
    those whose value the strict parser refuses on its own, in field order, then those a rule
    across fields drops (judged on the fields that read, in rule order, each dropped field at
    its default for the rules after it)."""
    if isinstance(source, str):
        source = parse_qs(source.lstrip("?"), keep_blank_values=True)
    bad, values = [], {}
    for f in VIEW_FIELDS:
        try:
            values[f.name] = f.parse(_value_of(source or {}, f.name))
        except ParameterError:
            bad.append(f)
    for rule in VIEW_RULES:
        if rule.problem(values) is not None:
            bad.append(field_named(rule.drops))
            values[rule.drops] = None
    return bad


def _check_messages(source) -> None:
    view, problems = View.parse_lenient(source)
    assert isinstance(view, View)
    bad = _bad_fields(source)
    assert len(problems) == len(bad)
    for f, message in zip(bad, problems):
        assert message.startswith(f.label), (f.name, message)
        across = " must lie above " in message or " must be below " in message   # a rule's
        if f.kind in ("float", "int", "range") and "low end" not in message and not across:
            assert f.bounds_text() in message, (f.name, message)
    # Strict: the first of the same messages, or the same view.
    if problems:
        with pytest.raises(ParameterError) as error:
            View.parse(source)
        assert str(error.value) == problems[0]
    else:
        assert View.parse(source) == view
    # What the lenient parser kept is exactly what the good fields say.
    good = tuple(f.name for f in VIEW_FIELDS if f not in bad)
    assert View.parse(source, only=good) == view


@PROPERTY
@given(st.text(max_size=200))
def test_lenient_never_raises_on_any_query_text(text):
    _check_messages(text)


@pytest.mark.slow
@PROPERTY
@given(st.lists(st.tuples(st.sampled_from(NAMES), _JUNK_TEXT), max_size=10))
def test_lenient_on_junk_values_of_real_fields(pairs):
    text = "&".join(f"{k}={v}" for k, v in pairs)
    _check_messages(text)
    _check_messages(dict(pairs))


@pytest.mark.slow
@PROPERTY
@given(junk_sources())
def test_lenient_on_junk_json(source):
    _check_messages(source)


def test_non_finite_numbers_are_refused_everywhere():
    for f in VIEW_FIELDS:
        if f.kind not in ("float", "int"):
            continue
        for raw in (math.nan, math.inf, -math.inf, "nan", "inf"):
            with pytest.raises(ParameterError, match="^" + re.escape(f.requirement())):
                View.parse({f.name: raw})


def test_printable_junk_in_names_is_kept_as_text():
    weird = "".join(ch for ch in string.punctuation if ch != ",")
    view = View.parse({"models": f"{weird},<script>"})
    assert view.models == (weird, "<script>")
    assert View.parse(view.to_search()) == view


# --- pinned thresholds ----------------------------------------------------------------------------

def test_pins_read_from_the_address_json_and_pairs():
    pins = (("gbm", 0.5), ("logreg", 0.42))
    assert View.parse("pins=gbm:0.5,logreg:0.42").pins == pins
    assert View.parse("pins=gbm:0.5&pins=logreg:0.42").pins == pins       # repeated
    assert View.parse({"pins": [{"model": "gbm", "threshold": 0.5},
                                {"model": "logreg", "threshold": "0.42"}]}).pins == pins
    assert View.parse({"pins": [["gbm", 0.5], ["logreg", 0.42]]}).pins == pins
    # A name may hold a colon (the threshold is after the last one); duplicates go.
    assert View.parse("pins=a:b:-1.5e-3,gbm:0.5,gbm:0.50").pins == (("a:b", -1.5e-3),
                                                                      ("gbm", 0.5))
    view = View(pins=pins)
    assert view.to_search().endswith("&pins=gbm:0.5,logreg:0.42")
    assert view.to_json()["pins"] == [{"model": "gbm", "threshold": 0.5},
                                      {"model": "logreg", "threshold": 0.42}]
    # A threshold reads back exactly: 0.4999996 is not 0.5.
    assert View(pins=(("m", 0.4999996),)).to_query()["pins"] == "m:0.4999996"


@pytest.mark.parametrize("raw", ["gbm", "gbm:", ":0.5", "gbm:x", "gbm:nan", "gbm:inf",
                                 "a:1,b:2,c:3,d:4,e:5", [{"model": "a"}], [{"model": 3,
                                                                             "threshold": 1}],
                                 [[1, 2, 3]], [True], {"model": "a,b", "threshold": 1}])
def test_bad_pins_are_refused_in_the_fields_words(raw):
    with pytest.raises(ParameterError) as error:
        View.parse({"pins": raw})
    assert str(error.value).startswith(
        "Pinned thresholds must be at most 4 classifier:threshold pairs")
    view, problems = View.parse_lenient({"pins": raw, "cost_fn": "3"})
    assert view == View(cost_fn=3.0) and len(problems) == 1


@pytest.mark.parametrize("query", ["cost_fn=3&cost_tp=5", "cost_fp=1&cost_tn=1", "cost_tp=2"])
def test_a_correct_decision_priced_at_its_error_is_refused(query):
    with pytest.raises(ParameterError, match=r"must be below C\((−\|\+|\+\|−)\)"):
        View.parse(query)
    view, problems = View.parse_lenient(query)
    assert (view.cost_tp, view.cost_tn) == (0.0, 0.0) and len(problems) == 1


def test_a_sensitivity_range_of_an_error_must_lie_above_its_correct_decision():
    # Issue 24: values each valid alone, invalid together, never reach a view.
    query = "cost_fn=40&cost_tp=5&sens_fn=2,60"
    with pytest.raises(ParameterError) as error:
        View.parse(query)
    assert str(error.value) == (
        "Sensitivity range of C(−|+) must lie above C(+|+) (an error must cost more than the "
        "correct decision, or every case would best be decided wrongly); got Sensitivity range "
        "of C(−|+) = 2 to 60, C(+|+) = 5.")
    view, problems = View.parse_lenient(query)
    # Leniently the range goes (the conditions stay): the page opens with the money right.
    assert (view.cost_tp, view.sens_fn, len(problems)) == (5.0, None, 1)
    assert View.parse("cost_fn=40&cost_tp=5&sens_fn=6,60").sens_fn == (6.0, 60.0)
    with pytest.raises(ParameterError, match="Sensitivity range of C\\(\\+\\|−\\) must lie"):
        View(cost_tn=1.0, cost_fp=2.0).with_values(sens_fp="0.5,3")


def test_rules_in_the_schema_are_the_rules():
    rules = [r for f in view_schema() for r in f["below"]]
    assert rules == [r.to_json() for r in VIEW_RULES]
    assert {r["low"] for r in rules} == {"cost_tp", "cost_tn"}


def test_a_combination_names_the_field_it_drops_first():
    problems = dict((rule.drops, str(p)) for rule, p in combination_problems(
        {"cost_fn": 40.0, "cost_tp": 50.0, "cost_fp": 1.0, "cost_tn": 0.0}))
    assert list(problems) == ["cost_tp"]
    assert problems["cost_tp"].startswith("C(+|+) must be below C(−|+) ")
    assert problems["cost_tp"].endswith("got C(+|+) = 50, C(−|+) = 40.")
