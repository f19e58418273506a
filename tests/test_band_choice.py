"""The band a page, a link or a report asks for (costdash.band_choice): one request, one band."""

from __future__ import annotations

import numpy as np
import pytest

from costdash.band_choice import CHOICES, band_choice, default_method, method_options
from costdash.bands import cost_band, difference_band
from costdash.demo import load_demo


@pytest.fixture(scope="module")
def demo():
    return load_demo("breast-cancer")


def test_defaults_are_the_calibrated_choices():
    assert default_method(fixed=False) == "split"
    assert default_method(fixed=True) == "clopper-pearson-mover"
    assert default_method(fixed=False, difference=True) == "split"
    assert default_method(fixed=True, difference=True) == "discordant-mover"
    for (difference, fixed), options in CHOICES.items():
        assert [v for v, _ in method_options(fixed=fixed, difference=difference)] == \
            list(options)
        choice = band_choice(None, fixed=fixed, difference=difference)
        assert choice.closed_form and not choice.asked


def test_a_method_that_does_not_fit_the_question_is_its_default():
    assert band_choice("double-bootstrap", fixed=True).method == "clopper-pearson-mover"
    assert band_choice("split", fixed=True).method == "clopper-pearson-mover"
    assert band_choice("wilson-mover").method == "split"
    assert band_choice("double-bootstrap", difference=True).method == "split"
    assert band_choice("nonsense").method == "split" and not band_choice("nonsense").asked
    assert band_choice(42).method == "split"
    # The core's names and a few spellings are understood.
    assert band_choice("newcombe-mover", fixed=True).method == "wilson-mover"
    assert band_choice("wilson-mover", fixed=True, difference=True).method == "newcombe-mover"
    assert band_choice("discordant-mover", fixed=True).method == "clopper-pearson-mover"
    assert band_choice("clopper-pearson-mover", fixed=True,
                       difference=True).method == "discordant-mover"
    choice = band_choice("clopper-pearson", fixed=True)
    assert (choice.method, choice.simultaneous) == ("clopper-pearson-mover", True)
    # The old default stays selectable by name (links that carry it keep their band).
    old = band_choice("wilson-mover", fixed=True)
    assert old.asked and old.method == "wilson-mover"
    assert old.arguments()["method"] == "wilson-mover"
    assert band_choice(" Percentile ").method == "percentile"


def test_whole_curve_only_for_closed_form_bands():
    assert band_choice(None, ["on"]).simultaneous is True        # a checklist's value
    assert band_choice(None, []).simultaneous is False
    assert band_choice(None, "1").simultaneous is True            # a query string's
    assert band_choice("percentile", True).simultaneous is False  # none to ask for
    assert band_choice("double-bootstrap", True).simultaneous is False


def test_labels_estimands_and_replicates():
    split = band_choice()
    assert split.label == "Thresholds picked on a held-out half (calibrated)"
    assert split.estimand.startswith("The population cost, on new data, of the thresholds")
    assert split.min_replicates == 1 and split.closed_form
    double = band_choice("double-bootstrap")
    assert double.min_replicates == 200 and not double.closed_form
    assert band_choice("percentile").estimand.startswith("None: the resampling spread")
    assert "percentile bootstrap" in band_choice("percentile", fixed=True).estimand
    assert band_choice("percentile", difference=True).estimand.startswith("None:")


@pytest.mark.parametrize("method, simultaneous, threshold", [
    (None, False, None), (None, True, None), ("percentile", False, None),
    ("double-bootstrap", False, None), (None, False, 0.5), (None, True, 0.5),
    ("percentile", False, 0.5), ("wilson-mover", False, 0.5), ("wilson-mover", True, 0.5)])
def test_arguments_give_the_core_band_of_the_choice(demo, method, simultaneous, threshold):
    choice = band_choice(method, simultaneous, fixed=threshold is not None)
    extra = {"replicates": 200, "inner_replicates": 10} if method == "double-bootstrap" else \
        {"replicates": 200}
    band = cost_band(demo.classifier("gbm"), threshold=threshold, rng=0, **extra,
                     **choice.arguments())
    expected = {"split": "selected", "clopper-pearson-mover": "line", "wilson-mover": "line",
                "percentile": "line" if threshold is not None else "curve",
                "double-bootstrap": "curve"}
    assert band.kind == expected[choice.method]
    if choice.method == "wilson-mover":       # the old closed form, not the default's
        assert band.method == ("clopper-pearson" if simultaneous else "wilson-mover")
    assert band.simultaneous == choice.simultaneous
    # The percentile spread and the old Wilson–MOVER line (its level not earned) carry none.
    assert band.calibrated == (choice.method not in ("percentile", "wilson-mover")
                               or band.method == "clopper-pearson")
    assert (band.replicates == 0) == choice.closed_form
    assert band.estimand.startswith(choice.estimand)


@pytest.mark.parametrize("method, simultaneous", [(None, False), (None, True),
                                                  ("percentile", False)])
def test_difference_arguments(demo, method, simultaneous):
    choice = band_choice(method, simultaneous, difference=True)
    band = difference_band(demo.classifier("gbm"), demo.classifier("forest"), rng=0,
                           replicates=200, **choice.arguments())
    assert band.calibrated == choice.closed_form
    assert band.simultaneous == choice.simultaneous
    assert band.estimand.startswith(choice.estimand)
    if not band.calibrated:
        assert band.significant == () and band.significance_note
    assert np.all(band.low <= band.high)
