"""Every study value says what it rests on, and every section it cites is one the paper has.

A setting the paper states carries its ``section``; one it does not state carries ``assumed``
(our reading of what the paper did) or ``ours`` (this project's choice), each with its reason.
The outlines below are the papers' sections, tables, figures, footnotes and appendices, typed
by hand from the papers' text; a citation to anything else is a citation the paper cannot back.
"""

from __future__ import annotations

import re

import pytest
import yaml

from bias_hub.pipelines.common.presets import (
    STUDIES_DIR,
    _preset_from,
    basis_markdown,
    basis_record,
    load_preset,
)


def _numbered(kind: str, last: int) -> set[str]:
    return {f"{kind} {i}" for i in range(1, last + 1)}


def _sections(*names: str) -> set[str]:
    return {f"§{name}" for name in names}


# paper_file -> what the paper has.
OUTLINES = {
    # Anantaprayoon, Kaneko and Okazaki (2023): §1-§5, 付録 A-E, Tables 1-6, Figures 1-2, 3 footnotes.
    "000": _sections("1", "2", "3", "3.1", "3.2", "4", "4.1", "4.2", "5")
    | {f"付録 {letter}" for letter in "ABCDE"}
    | _numbered("Table", 6)
    | _numbered("Figure", 2)
    | _numbered("footnote", 3),
    # Ueno (BERT attention): §1-§5 with §4.2's tasks (1)-(3), Appendix A (the gender words),
    # Figures 1-2, 3 footnotes, no table.
    "001": _sections("1", "2", "3", "3.1", "3.2", "4", "4.1", "4.2", "4.3", "4.4", "5")
    | {"§4.2 (1)", "§4.2 (2)", "§4.2 (3)", "Appendix A"}
    | _numbered("Figure", 2)
    | _numbered("footnote", 3),
    # Yanaka et al. (2024): §1-§6, the appendix (A, with A.1 the prompts), Tables 1-4, Figure 1,
    # 5 footnotes.
    "002": _sections(
        "1", "2", "3", "3.1", "3.2", "3.3", "3.4", "4", "4.1", "4.2", "5", "5.1", "5.2", "6"
    )
    | {"Appendix", "Appendix A", "Appendix A.1"}
    | _numbered("Table", 4)
    | _numbered("Figure", 1)
    | _numbered("footnote", 5),
    # Kato and Miyao: §1-§5 (§2.1.1-§2.1.3 the three metrics), Tables 1-3; no figure, footnote
    # or appendix.
    "003": _sections("1", "2", "2.1", "2.1.1", "2.1.2", "2.1.3", "2.2", "3", "4", "5")
    | _numbered("Table", 3),
    # Takeshita, Rzepka and Araki: §1-§6, Appendix A (Tables 3-4), Tables 1-4, Figure 1, 6 footnotes.
    "004": _sections("1", "1.1", "2", "2.1", "2.2", "2.3", "3", "3.1", "3.2", "4", "4.1", "4.2")
    | _sections("5", "6")
    | {"Appendix A"}
    | _numbered("Table", 4)
    | _numbered("Figure", 1)
    | _numbered("footnote", 6),
}

_REFERENCE = re.compile(
    r"§(?P<section>\d+(?:\.\d+)*)(?: \((?P<item>\d)\))?"
    r"|Tables? (?P<table>\d+)(?:-(?P<table_end>\d+))?"
    r"|Figures? (?P<figure>\d+)"
    r"|footnotes? (?P<footnote>\d+)"
    r"|付録 ?(?P<furoku>[A-Z])"
    r"|[Aa]ppendix(?: (?P<appendix>[A-Z](?:\.\d+)?))?"
)


def references(text: str) -> list[str]:
    """The outline entries a citation names: ``"§4.2 (1), footnote 2"`` -> ``["§4.2 (1)", "footnote 2"]``."""
    found = []
    for match in _REFERENCE.finditer(text):
        groups = match.groupdict()
        if groups["section"]:
            item = f" ({groups['item']})" if groups["item"] else ""
            found.append(f"§{groups['section']}{item}")
        elif groups["table"]:
            end = int(groups["table_end"] or groups["table"])
            found += [f"Table {i}" for i in range(int(groups["table"]), end + 1)]
        elif groups["figure"]:
            found.append(f"Figure {groups['figure']}")
        elif groups["footnote"]:
            found.append(f"footnote {groups['footnote']}")
        elif groups["furoku"]:
            found.append(f"付録 {groups['furoku']}")
        else:
            found.append("Appendix" + (f" {groups['appendix']}" if groups["appendix"] else ""))
    return found


def test_references_are_read_as_written() -> None:
    assert references("§4.2 (1), footnote 2") == ["§4.2 (1)", "footnote 2"]
    assert references("§4.2, 付録 B Table 6 (1000 / 1000 / 3420 pairs)") == [
        "§4.2",
        "付録 B",
        "Table 6",
    ]
    assert references("Tables 1-4 (15 words each)") == [f"Table {i}" for i in range(1, 5)]
    assert references("Appendix, Table 4 (footnote 5)") == ["Appendix", "Table 4", "footnote 5"]
    assert references("§5.1, appendix A.1") == ["§5.1", "Appendix A.1"]
    assert references("ours, no section") == []


def _studies() -> list[dict]:
    return [
        yaml.safe_load(path.read_text(encoding="utf-8"))
        for path in sorted(STUDIES_DIR.glob("*.yaml"))
    ]


def _citations(study: dict) -> list[tuple[str, str, str]]:
    """``(where, basis, text)`` for every model, table and preset setting of a study."""
    found = [(f"models[{m['id']}]", "section", m.get("section") or "") for m in study["models"]]
    found += [(f"tables[{t['id']}]", "section", t.get("section") or "") for t in study["tables"]]
    for name, entry in (study.get("presets") or {}).items():
        preset = _preset_from(entry, name, study["study"])
        for key in preset.values:
            kind, text = preset.basis.get(key) or ("none", "")
            found.append((f"presets.{name}.{key}", kind, text))
    return found


@pytest.mark.parametrize("study", _studies(), ids=lambda study: study["study"])
def test_every_value_has_a_section_the_paper_has_or_a_reason(study: dict) -> None:
    if "paper_file" not in study:
        # A study without a paper (CONTRIBUTING's toy) can cite no section: each of its preset
        # settings is ours or assumed, with its reason.
        for where, kind, text in _citations(study):
            if where.startswith("presets."):
                assert kind in {"assumed", "ours"} and text, (study["study"], where, kind)
        return
    outline = OUTLINES[study["paper_file"]]
    for where, kind, text in _citations(study):
        assert kind in {"section", "assumed", "ours"}, (
            f"{study['study']}: {where} carries neither a section nor an assumed/ours reason"
        )
        cited = references(text)
        if kind == "section":
            assert cited, f"{study['study']}: {where}: section {text!r} names no part of the paper"
        # Sections named in a reason must exist too; every '§' must be one we could read.
        assert text.count("§") == sum(c.startswith("§") for c in cited), (where, text)
        unknown = [c for c in cited if c not in outline]
        assert not unknown, f"{study['study']}: {where} cites {unknown}, not in the paper"


# Settings the papers do not state, each checked in the paper's text: they must not be cited to
# a section (the paper's sentence in the comment).
NOT_STATED = {
    # 付録 D: "再学習するときは, エポック数を 3 とする" - only the epochs for re-training.
    ("nli meta-evaluate", "table2"): {"learning_rate", "batch_size", "max_length"},
    # 付録 D gives max_length for the fine-tuning only; §4.2 says nothing of the evaluation's.
    ("nli evaluate", "table4"): {"max_length"},
    # §4.2 (1): "最終層の値を用いた", "出現回数で平均" - no head combination, no minimum count;
    # §4.2 (2): "差が大きい単語から順に" - no sign; 単語 (words), while Appendix A lists ##pieces.
    ("stereoset attention", "paper"): {"heads", "level", "min_count", "order"},
    # §5.1: "公開されている LLM の評価ツール³⁾に JBBQ を適用して行われた" - the harness's URL only;
    # no chat template, no question split, no reply length, no version, layout or reading.
    ("jbbq evaluate", "paper"): {"chat", "split", "max_new_tokens", "layout", "answer_reader"},
    ("jbbq evaluate", "table4"): {"chat", "split", "max_new_tokens", "layout", "answer_reader"},
    # Tables 1-4 show raw vocabulary items without the text saying so.
    ("speciesism", "paper"): {"tokens"},
}


@pytest.mark.parametrize("command, name", sorted(NOT_STATED))
def test_what_the_paper_does_not_state_is_marked_assumed_or_ours(command: str, name: str) -> None:
    preset = load_preset(command, name)
    for key in NOT_STATED[command, name]:
        kind, reason = preset.basis[key]
        assert kind in {"assumed", "ours"} and len(reason) > 20, (command, name, key)
        assert preset.sections[key] is None


def test_the_offline_substitute_is_ours_throughout_but_its_rates_are_section_4_1s() -> None:
    preset = load_preset("nli meta-evaluate", "from-scratch")
    assert preset.basis["rates"] == ("section", "§4.1")
    assert all(preset.basis[key][0] == "ours" for key in preset.values if key != "rates")


def test_a_basis_is_one_of_three_and_never_empty() -> None:
    entry = {"command": "nli evaluate", "settings": {"max_length": {"value": 1, "sectoin": "§1"}}}
    with pytest.raises(ValueError, match=r"setting 'max_length': unknown keys \['sectoin'\]"):
        _preset_from(entry, "p", "my.yaml")
    entry["settings"]["max_length"] = {"value": 1, "section": "§1", "ours": "why"}
    with pytest.raises(ValueError, match="give one of section, assumed, ours"):
        _preset_from(entry, "p", "my.yaml")
    entry["settings"]["max_length"] = {"value": 1, "assumed": " "}
    with pytest.raises(ValueError, match="'assumed' needs its text"):
        _preset_from(entry, "p", "my.yaml")


def test_the_report_separates_what_the_paper_states_from_our_reading() -> None:
    entry = {
        "command": "nli meta-evaluate",
        "settings": {
            "epochs": {"value": 3.0, "section": "付録 D"},
            "learning_rate": {"value": 2e-5, "assumed": "the fine-tuning's rate"},
            "seeds": [0],
        },
    }
    lines = basis_markdown([basis_record(_preset_from(entry, "table2", "study"))])
    assert lines == [
        "The paper states:",
        "",
        "- `table2`: `epochs` = 3.0 (付録 D)",
        "",
        "Our reading (the paper does not state these):",
        "",
        "- `table2`: `learning_rate` = 2e-05 — assumed: the fine-tuning's rate",
        "- `table2`: `seeds` = [0] — no basis given",
        "",
    ]
