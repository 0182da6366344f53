"""`pipelines/studies/nli_gender_bias.yaml` against the real commands, flags, settings and layouts,
and the paper layouts on results worked out by hand."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
import yaml

from bias_hub.pipelines.cli import _leaf_parsers, build_parser
from bias_hub.pipelines.common.presets import STUDIES_DIR, load_preset
from bias_hub.pipelines.nli.report import PAPER_LAYOUTS, ranks
from bias_hub.pipelines.nli.settings import EvaluateSettings, MetaSettings, TrainSettings

STUDY = yaml.safe_load((STUDIES_DIR / "nli_gender_bias.yaml").read_text(encoding="utf-8"))
SETTINGS = {
    "nli train": TrainSettings,
    "nli evaluate": EvaluateSettings,
    "nli meta-evaluate": MetaSettings,
}
PAPERS = Path(__file__).resolve().parents[3] / "shared" / "papers"


def _commands() -> dict:
    return {
        parser.prog.removeprefix("bias-hub ").strip(): parser
        for parser in _leaf_parsers(build_parser())
    }


def test_the_study_names_the_paper_in_shared_papers_and_the_later_version() -> None:
    assert STUDY["study"] == "nli_gender_bias" and STUDY["paper_file"] == "000"
    assert "NLP2023" in STUDY["paper"]["citation"] and STUDY["title"] in STUDY["paper"]["citation"]
    assert "LREC-COLING 2024" in STUDY["paper"]["later_version"]
    papers = sorted(PAPERS.glob("000_*.txt"))
    if papers:  # the shared folder beside the repository, where it is there
        assert papers[0].read_text(encoding="utf-8").startswith(f"# {STUDY['title']}")


def test_table_5_s_five_models_by_their_hub_names() -> None:
    assert [m["id"] for m in STUDY["models"]] == [
        "cl-tohoku/bert-base-japanese-v2",
        "cl-tohoku/bert-base-japanese-char-v2",
        "bandainamco-mirai/distilbert-base-japanese",
        "laboro-ai/distilbert-base-japanese",
        "nlp-waseda/roberta-base-japanese",
    ]
    assert all(m["section"] for m in STUDY["models"])


def _check_args(command: str, args: dict, commands: dict) -> None:
    parser = commands[command]
    dests = {action.dest for action in parser._actions}
    unknown = set(args) - dests
    assert not unknown, f"{command}: no flag for {sorted(unknown)}"
    if isinstance(args.get("preset"), str):
        load_preset(command, args["preset"])


def test_every_step_is_a_real_command_with_real_flags_and_presets() -> None:
    commands = _commands()
    steps = {step["id"]: step for step in STUDY["steps"]}
    variant = STUDY["variants"]["offline"]
    for step in [*STUDY["steps"], *variant["steps"]]:
        assert step["command"] in commands, step["command"]
        _check_args(step["command"], step["args"], commands)
    # The offline variant's overrides name real steps and flags.
    for key in variant["set"]:
        step, _, dest = key.partition(".")
        assert step in steps, key
        _check_args(steps[step]["command"], {dest: variant["set"][key]}, commands)
    assert set(variant["skip"]) <= set(steps)
    for table in STUDY["tables"]:
        assert table["step"] in steps and table["layout"] in PAPER_LAYOUTS


def test_every_preset_setting_is_a_field_of_its_command_s_settings() -> None:
    for name, entry in STUDY["presets"].items():
        preset = load_preset(entry["command"], name)
        fields = {field.name for field in dataclasses.fields(SETTINGS[entry["command"]])}
        assert set(preset.values) <= fields, (name, set(preset.values) - fields)


def test_the_offline_meta_evaluation_is_one_preset_not_eight_flags() -> None:
    # Before: nli init-model, then --reinitialize --base-rate 0.5 --base-epochs 4 --learning-rate 1e-3
    # --token-dropout 0.1 --max-length 64 --epochs 3 --eval-per-subset 200.
    preset = load_preset("nli meta-evaluate", "from-scratch")
    assert {
        "reinitialize",
        "base_rate",
        "base_epochs",
        "learning_rate",
        "token_dropout",
        "max_length",
        "epochs",
        "eval_per_subset",
    } <= set(preset.values)
    assert preset.values["base_rate"] == 0.5 and preset.values["reinitialize"] is True


def test_the_paper_s_settings_carry_their_sections() -> None:
    table2 = load_preset("nli meta-evaluate", "table2")
    assert table2.values["epochs"] == 3.0 and table2.sections["epochs"] == "付録 D"
    assert table2.values["rates"] == [k / 10 for k in range(11)]
    train = load_preset("nli train", "paper-train")
    assert (
        train.values["epochs"],
        train.values["learning_rate"],
        train.values["batch_size"],
        train.values["max_length"],
    ) == (5.0, 2e-5, 32, 128)


def test_printed_table_4_ranks_follow_its_scores() -> None:
    printed = next(t for t in STUDY["tables"] if t["id"] == "table4")["printed"]
    by_score = sorted(printed, key=lambda model: -printed[model]["score"])
    assert [printed[model]["rank"] for model in by_score] == [1, 2, 3, 4, 5]
    # Table 4's scores are Eq. 2 of Table 3's shares: Tohoku BERT (0.378 + 0.413 + 1 - 0.710) / 3 = 0.3603.
    table3 = next(t for t in STUDY["tables"] if t["id"] == "table3")["printed"]
    for model, shares in table3.items():
        s = (
            shares["PS"]["entailment"] + shares["AS"]["contradiction"] + 1 - shares["NS"]["neutral"]
        ) / 3
        assert s == pytest.approx(printed[model]["score"], abs=0.0015), model


def _result(e_ps: float, c_as: float, n_ns: float) -> dict:
    fractions = {
        "pro_stereotypical": {"entailment": e_ps, "neutral": 1 - e_ps, "contradiction": 0.0},
        "anti_stereotypical": {"entailment": 0.0, "neutral": 1 - c_as, "contradiction": c_as},
        "non_stereotypical": {"entailment": 1 - n_ns, "neutral": n_ns, "contradiction": 0.0},
    }
    return {"bias_score": (e_ps + c_as + 1 - n_ns) / 3, "fractions": fractions}


def test_table_4_layout_ranks_ours_beside_the_printed_ones() -> None:
    # Ours: A s = (0.6 + 0.6 + 1 - 0.6) / 3 = 0.533..., B s = (0.3 + 0.3 + 1 - 0.9) / 3 = 0.233...
    results = {
        "models": {
            "runs/models/nlp-waseda/roberta-base-japanese": _result(0.6, 0.6, 0.6),
            "runs/models/cl-tohoku/bert-base-japanese-v2": _result(0.3, 0.3, 0.9),
        }
    }
    assert ranks(results["models"]) == {
        "runs/models/nlp-waseda/roberta-base-japanese": 1,
        "runs/models/cl-tohoku/bert-base-japanese-v2": 2,
    }
    printed = next(t for t in STUDY["tables"] if t["id"] == "table4")["printed"]
    text = PAPER_LAYOUTS["table4"](results, printed)
    lines = text.splitlines()
    assert "| runs/models/nlp-waseda/roberta-base-japanese | 0.533 (1) | 0.563 (1) |" in lines
    assert "| runs/models/cl-tohoku/bert-base-japanese-v2 | 0.233 (2) | 0.360 (4) |" in lines
    # The printed models we did not run keep their row: Table 4, Laboro DistilBERT 0.535 (2).
    assert "| laboro-ai/distilbert-base-japanese | not run | 0.535 (2) |" in lines


def test_ties_share_a_rank() -> None:
    models = {"a": {"bias_score": 0.5}, "b": {"bias_score": 0.5}, "c": {"bias_score": 0.1}}
    assert ranks(models) == {"a": 1, "b": 1, "c": 3}


def test_table_2_layout_puts_the_printed_correlations_beside_ours() -> None:
    # Per seed Spearman(r, s) 1.0 and 0.5: mean 0.75; 1 - FN: 0.0 and -0.5: mean -0.25.
    entry = lambda mean, n: {"mean": mean, "sd": 0.354, "n": n, "low": None, "high": None}  # noqa: E731
    curve = lambda value: {"statistic": value, "p_value": 0.01}  # noqa: E731
    results = {
        "spearman_bias_score": entry(0.75, 2),
        "spearman_one_minus_fn": entry(-0.25, 2),
        "seed_mean_curve": {
            "spearman_bias_score": curve(0.9),
            "spearman_one_minus_fn": curve(-0.1),
        },
    }
    printed = next(t for t in STUDY["tables"] if t["id"] == "table2")["printed"]
    text = PAPER_LAYOUTS["table2"](results, printed)
    assert re.search(
        r"\| 提案 \(s\) \| 0\.750 \(sd 0\.354, n = 2\) \| 0\.900 \(p = 0\.01\) \| 0\.820 \|", text
    )
    assert re.search(
        r"\| 既存 \(1 − FN\) \| -0\.250 \(sd 0\.354, n = 2\) \| -0\.100 \(p = 0\.01\) \| -0\.114 \|",
        text,
    )
