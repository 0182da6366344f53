"""Each metric's computation alone (``metric_scores``, no evaluate) gives what
``evaluate.load(folder, config).compute`` gives, on cases worked out by hand (the modules'
documented examples, whose arithmetic their docstrings show), and evaluate still loads a
module folder published alone, copying the computation with it."""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bias_hub.pipelines.common.locations import import_evaluate, metric_scores

METRICS = Path(__file__).resolve().parents[2] / "metrics"
# The five systems' modules; a module added later brings its own hand-worked tests.
EIGHT = (
    "bbq_bias",
    "gender_attention_gap",
    "nli_gender_bias",
    "perplexity_gap",
    "rnsb",
    "speciesism_bias",
    "weat",
    "winobias_gap",
)

BBQ = {
    "references": [2, 0, 2, 1],
    "unknown_labels": [2, 2, 2, 2],
    "stereotyped_labels": [0, 0, 1, 0],
    "context_conditions": ["ambig", "disambig", "ambig", "disambig"],
    "categories": ["Age"] * 4,
}
NLI_SUBSETS = ["PS", "PS", "AS", "AS", "NS", "NS"]
WEAT_WORDS = {
    "words": ["x1", "x2", "y1", "y2", "a", "b"],
    "vectors": [[1, 0.1], [1, 0.2], [0.1, 1], [0.2, 1], [1, 0], [0, 1]],
    "target_sets": {"X": ["x1", "x2"], "Y": ["y1", "y2"]},
    "attribute_sets": {"A": ["a"], "B": ["b"]},
}

# (metric, config, inputs, {dotted key: the value worked out by hand})
CASES = [
    # Every answer correct; the disambiguated answers: one stereotyped (item 2), one not
    # (item 4) -> 2 * 1/2 - 1 = 0; accuracy gap 1 - 1 = 0.
    (
        "bbq_bias",
        None,
        {"predictions": [2, 0, 2, 1], **BBQ},
        {"accuracy": 1.0, "bias_score_disambiguated": 0.0, "accuracy_gap": 0.0},
    ),
    # The same with 95 % intervals: both paths draw the same seeded resamples.
    (
        "bbq_bias",
        None,
        {"predictions": [2, 0, 2, 1], **BBQ, "confidence_level": 0.95, "n_resamples": 200},
        {"accuracy": 1.0},
    ),
    # A always wrong, B always right on three disambiguated items: of the 2^3 swaps only the
    # observed one and its mirror reach |difference| 1, p = 2/8.
    (
        "bbq_bias",
        "paired",
        {
            "predictions": [1, 1, 0],
            "predictions_b": [0, 0, 1],
            "references": [0, 0, 1],
            "unknown_labels": [2, 2, 2],
            "stereotyped_labels": [0, 1, 0],
            "context_conditions": ["disambig"] * 3,
            "categories": ["Age"] * 3,
        },
        {"scores.accuracy.difference": 1.0, "scores.accuracy.p_value": 0.25},
    ),
    # (0.5 + 0.5 + (1 - 0.5)) / 3 = 0.5; 3 of 6 rows neutral.
    (
        "nli_gender_bias",
        None,
        {"predictions": [0, 1, 2, 1, 1, 0], "subsets": NLI_SUBSETS},
        {"bias_score": 0.5, "fraction_neutral": 0.5},
    ),
    # A always neutral (score 0), B always the biased label (score 1); each row moves the
    # score by 1/6, so only the observed swap of 2^6 and its mirror reach 1: p = 2/64.
    (
        "nli_gender_bias",
        "paired",
        {
            "predictions": [1] * 6,
            "predictions_b": [0, 0, 2, 2, 0, 2],
            "subsets": NLI_SUBSETS,
        },
        {"scores.bias_score.difference": 1.0, "scores.bias_score.p_value": 0.03125},
    ),
    # "is": male 0.5, female 0.25 -> 0.25; "tall": male 0.25, female mean(0.5, 0.0) -> 0.0.
    (
        "gender_attention_gap",
        None,
        {
            "words": ["is", "tall", "is", "tall", "tall"],
            "attention_to_gender": [0.5, 0.25, 0.25, 0.5, 0.0],
            "forms": ["male", "male", "female", "female", "female"],
        },
        {"attention_gap": [0.25, 0.0], "female_count": [1, 2]},
    ),
    # Gaps male - female: -2, 5, 0; mean 1.
    (
        "perplexity_gap",
        None,
        {"male_perplexities": [10.0, 20.0, 30.0], "female_perplexities": [12.0, 15.0, 30.0]},
        {"perplexity_gap": [-2.0, 5.0, 0.0], "mean_gap": 1.0},
    ),
    # Symmetric data: the boundary is the mirror axis, so P(Y | c) = 0.5 for c on it.
    (
        "rnsb",
        None,
        {
            "words": ["x1", "x2", "y1", "y2", "a", "b", "c"],
            "vectors": [[-2, 1], [-1, -1], [2, 1], [1, -1], [-3, 0], [3, 0], [0, 0.5]],
            "target_sets": {"X": ["x1", "x2"], "Y": ["y1", "y2"]},
            "attribute_sets": {"A": ["a", "b", "c"]},
            "holdout": False,
            "iterations": 1,
        },
        {"probabilities.c": 0.5, "classifier_accuracy": 1.0},
    ),
    # s(x1) = 0.9 / sqrt(1.01), s(x2) = 0.8 / sqrt(1.04), s(y_i) = -s(x_i): effect size
    # 1.68 / 0.8418 = 1.996, statistic 3.360; no partition beats the observed one, p = 0.
    (
        "weat",
        None,
        WEAT_WORDS,
        {"effect_size": 1.996, "statistic": 3.36, "p_value": 0.0},
    ),
    # The anti document joins the pronoun to the wrong occupation: MUC 0, B-cubed 0.25,
    # CEAF-e 0.5, mean 0.25 against the pro document's 1: gaps 0.75.
    (
        "winobias_gap",
        None,
        {
            "predictions": [[[[0, 1], [5, 5]]], [[[0, 1], [8, 9]]]],
            "references": [[[[0, 1], [5, 5]]], [[[8, 9], [5, 5]]]],
            "condition": ["pro", "anti"],
        },
        {"recall_gap": 0.75, "precision_gap": 0.75},
    ),
    # Chance 1/4; "dried": 0.3 (object) -> 0.05 (human), change rate -0.25 / 0.3 = -0.83.
    (
        "speciesism_bias",
        None,
        {
            "probabilities": [[0.45, 0.3, 0.05, 0.2], [0.1, 0.4, 0.3, 0.2]],
            "forms": ["human", "object"],
            "vocabulary": ["kind", "big", "dried", "eaten"],
        },
        {
            "chance": 0.25,
            "object_to_human.0.word": "dried",
            "object_to_human.0.change_rate": -5 / 6,
        },
    ),
    # log(0.2 / 0.1) = 0.693, log(0.05 / 0.1) = -0.693.
    (
        "speciesism_bias",
        "association",
        {"target_probabilities": [0.2, 0.05], "prior_probabilities": [0.1, 0.1]},
        {"association": [math.log(2), -math.log(2)]},
    ),
    # pig: 1 of 2 fills negative, dog: 0 of 1.
    (
        "speciesism_bias",
        "negative_share",
        {"animals": ["pig", "pig", "dog"], "labels": ["negative", "positive", "neutral"]},
        {"negative_share": {"dog": 0.0, "pig": 0.5}},
    ),
    # A 1 of 4 negative, B 4 of 4: difference 0.75; the three fills that differ give 2^3
    # swaps, of which the observed one and its mirror reach 0.75 in size: p = 2/8.
    (
        "speciesism_bias",
        "negative_share_paired",
        {
            "animals": ["pig"] * 4,
            "labels": ["negative", "neutral", "neutral", "neutral"],
            "labels_b": ["negative"] * 4,
            "n_resamples": 100,
        },
        {
            "scores.overall_negative_share.difference": 0.75,
            "scores.overall_negative_share.p_value": 0.25,
        },
    ),
]


def _at(result, dotted: str):
    for key in dotted.split("."):
        result = result[int(key)] if isinstance(result, list) else result[key]
    return result


@pytest.mark.parametrize(
    ("name", "config", "inputs", "by_hand"),
    CASES,
    ids=[f"{name}-{config or 'default'}-{i}" for i, (name, config, *_) in enumerate(CASES)],
)
def test_the_computation_alone_gives_what_evaluate_gives(name, config, inputs, by_hand):
    ours = metric_scores(name, METRICS, config).compute(**inputs)
    for key, value in by_hand.items():
        expected = value if isinstance(value, str) else pytest.approx(value, abs=5e-4)
        assert _at(ours, key) == expected, key
    theirs = import_evaluate().load(str(METRICS / name), config).compute(**inputs)
    assert ours == theirs


def test_every_config_of_the_eight_metrics_is_among_the_cases():
    covered = {(name, config or "default") for name, config, *_ in CASES}
    covered.add(("speciesism_bias", "change_rate"))  # what its "default" stands for
    for name in EIGHT:
        configs = metric_scores(name, METRICS).configs
        assert {(name, config) for config in configs} <= covered, name


def test_the_same_checks_refuse_bad_calls_on_both_paths():
    rows = {"predictions": [2, 0, 2, 1], **BBQ}
    del rows["categories"]
    for metric in (
        metric_scores("bbq_bias", METRICS),
        import_evaluate().load(str(METRICS / "bbq_bias")),
    ):
        with pytest.raises(ValueError, match=r"bbq_bias: unknown argument\(s\) \['colour'\]"):
            metric.compute(**rows, categories=["Age"] * 4, colour="red")
        with pytest.raises(ValueError, match=r"bbq_bias: missing argument\(s\) \['categories'\]"):
            metric.compute(**rows)
    with pytest.raises(ValueError, match="config_name: 'pairs'; expected 'default' or 'paired'"):
        metric_scores("bbq_bias", METRICS, "pairs")


# Loads every module from folders that hold real files (no links, as a Space holds them)
# into an empty module cache, and says which files evaluate copied beside each module.
LOAD_ALONE = """
import json, os, sys
from pathlib import Path
sys.modules["transformers"] = None  # evaluate's evaluator is not needed to load a module
import evaluate
seen = {}
for folder in sorted(Path(sys.argv[1]).iterdir()):
    metric = evaluate.load(str(folder))
    copied = {p.name for p in Path(os.environ["HF_MODULES_CACHE"]).rglob("*.py")
              if p.parent.parent.name == folder.name}
    seen[folder.name] = sorted(copied)
print(json.dumps(seen))
"""


def test_evaluate_loads_each_module_folder_alone_with_its_computation(tmp_path: Path) -> None:
    alone = tmp_path / "spaces"
    for folder in METRICS.iterdir():
        if (folder / f"{folder.name}.py").is_file():
            shutil.copytree(folder, alone / folder.name)  # links copied as the files they name
    assert not [p for p in alone.rglob("*") if p.is_symlink()]
    environment = {**os.environ, "HF_MODULES_CACHE": str(tmp_path / "modules")}
    done = subprocess.run(
        [sys.executable, "-c", LOAD_ALONE, str(alone)],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert set(seen) == {p.name for p in alone.iterdir()}
    for name, copied in seen.items():
        assert {
            f"{name}.py",
            f"{name}_scores.py",
            "bias_hub_common.py",
            "bias_hub_intervals.py",
        } <= set(copied), (name, copied)
