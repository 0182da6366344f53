"""The one results.json shape for intervals (tests/results_contract.py), which tests/conftest.py
applies to every results.json the suite's runs write: here, that the check holds the shape every
part writes through ``IntervalSettings.interval_record`` and refuses the shapes parts wrote before
(spread at the top level, "uncertainty" with its own keys, hand-written keys)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from results_contract import check_results

from bias_hub.pipelines.common.settings import IntervalSettings, RunSettings


@dataclass(kw_only=True)
class _Settings(IntervalSettings, RunSettings):
    BOOTSTRAP_UNITS = ("items", "templates")


def test_the_shared_record_is_the_shape() -> None:
    on = _Settings(confidence_level=0.9, n_resamples=500, bootstrap_unit="templates", seed=3)
    assert on.interval_record() == {
        "confidence_level": 0.9,
        "n_resamples": 500,
        "bootstrap_unit": "templates",
        "seed": 3,
    }
    check_results({"part": "p", "step": "s", "intervals": on.interval_record()})
    off = _Settings(confidence_level=None)
    assert off.interval_record() == {
        "confidence_level": None,
        "n_resamples": None,
        "bootstrap_unit": None,
        "seed": None,
    }
    check_results({"part": "p", "step": "s", "intervals": off.interval_record()})
    # A unit the data decides (bias-hub score: templates where the metric takes them).
    assert on.interval_record("items")["bootstrap_unit"] == "items"


def test_a_unit_the_part_does_not_offer_is_refused_naming_the_flag() -> None:
    with pytest.raises(ValueError, match="--bootstrap-unit 'questions': expected one of items$"):
        IntervalSettings(bootstrap_unit="questions")


@pytest.mark.parametrize(
    ("results", "message"),
    [
        # nli evaluate's before: the settings spread at the top level.
        (
            {"part": "nli", "step": "evaluate", "confidence_level": 0.95, "n_resamples": 2000},
            "outside 'intervals'",
        ),
        # jbbq's before: "uncertainty" with a unit of its own.
        (
            {
                "part": "jbbq",
                "step": "evaluate",
                "uncertainty": {"confidence_level": 0.95, "n_resamples": 2000, "unit": "templates"},
            },
            "outside 'intervals'",
        ),
        # The settings alone, without the unit and the seed.
        (
            {
                "part": "stereoset",
                "step": "attention",
                "intervals": {"confidence_level": 0.95, "n_resamples": 2000},
            },
            "must hold exactly",
        ),
        # A unit outside the one vocabulary.
        (
            {
                "part": "jbbq",
                "step": "evaluate",
                "intervals": {
                    "confidence_level": 0.95,
                    "n_resamples": 2000,
                    "bootstrap_unit": "questions",
                    "seed": 0,
                },
            },
            "is not one of",
        ),
        ({"step": "run", "intervals": None}, "needs a top-level 'part'"),
    ],
)
def test_the_shapes_before_are_refused(results: dict, message: str) -> None:
    with pytest.raises(AssertionError, match=message):
        check_results(results)
