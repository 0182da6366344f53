"""Every table and figure of every shipped study shows the paper's printed values even when its
step did not run: the layout given no results (``None``) still lays out each printed value."""

from __future__ import annotations

import importlib

import pytest

from bias_hub.pipelines.reproduce.study import list_studies


def _tables() -> list:
    found = []
    for study in list_studies():
        commands = {step["id"]: step["command"] for step in study.steps}
        for table in study.tables:
            found.append(
                pytest.param(
                    study.name, table, commands[table["step"]], id=f"{study.name}-{table['id']}"
                )
            )
    return found


def _printed(value) -> list:
    """The printed leaves: numbers and sentences (ranks and other integers are left out)."""
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _printed(item)]
    if isinstance(value, list):
        return [leaf for item in value for leaf in _printed(item)]
    return [value] if isinstance(value, (float, str)) else []


def _shown(value, text: str) -> bool:
    if isinstance(value, str):
        return value in text
    return any(
        form in text for form in (f"{value:g}", f"{value:.1f}", f"{value:.3f}", f"{value:.8f}")
    )


@pytest.mark.parametrize("study, table, command", _tables())
def test_a_table_not_run_shows_every_printed_value(study: str, table: dict, command: str) -> None:
    part = command.split()[0]
    layout = importlib.import_module(f"bias_hub.pipelines.{part}.report").PAPER_LAYOUTS[
        table["layout"]
    ]
    text = layout(None, table["printed"])
    assert "not run" in text, (study, table["id"])
    printed = table["printed"]
    # Short model names and column titles are labels, not printed values.
    leaves = [
        leaf
        for key, item in printed.items()
        if key not in {"columns", "model"}
        for leaf in _printed(item)
    ]
    missing = [leaf for leaf in leaves if not _shown(leaf, text)]
    assert not missing, (study, table["id"], missing[:5])
