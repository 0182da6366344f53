"""``publish`` refuses a public upload of a card whose licence or gated prompt forbids
redistribution, whatever ``redistributable`` says.

Deleting the ``redistributable: false`` line of a user's JBBQ card used to let it go public
although the same card's gated prompt says its authors prohibit redistribution.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bias_hub.builders import jbbq
from bias_hub.pipelines.cli import main
from bias_hub.pipelines.publish.dataset_repo import check_dataset_folder, plan_dataset
from bias_hub.pipelines.publish.hub_rules import redistribution_refusal


@pytest.fixture(scope="module")
def user_jbbq(tmp_path_factory) -> Path:
    """A JBBQ folder built from a user's copy (the sample templates stand in for it), then the
    ``redistributable: false`` line deleted by hand."""
    root = tmp_path_factory.mktemp("datasets")
    folder = jbbq.build(root, source=jbbq.SAMPLE_DIR)
    card = folder / "README.md"
    lines = card.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith("redistributable:")]
    assert len(kept) == len(lines) - 1
    card.write_text("".join(kept), encoding="utf-8")
    return folder


def test_a_user_jbbq_card_without_its_redistributable_line_is_not_planned_public(
    user_jbbq: Path,
) -> None:
    checked = check_dataset_folder(user_jbbq)
    assert "redistributable" not in checked.yaml_header
    public = plan_dataset(checked, "someone", private=False)
    assert public.problems[0].startswith(
        "refused: jbbq may not be public: the card asks for gated access (extra_gated_prompt (JBBQ's authors "
        "prohibit redistribution."
    )
    assert public.problems[0].endswith("pass --private to upload it as a private, gated repo")
    private = plan_dataset(checked, "someone", private=True)
    assert private.gated and not any(p.startswith("refused") for p in private.problems)


def test_the_command_refuses_it_and_uploads_nothing(
    user_jbbq: Path, tmp_path: Path, capsys
) -> None:
    (tmp_path / "metrics").mkdir()
    code = main(
        [
            "publish",
            "--namespace",
            "someone",
            "--datasets-root",
            str(user_jbbq.parent),
            "--metrics-root",
            str(tmp_path / "metrics"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 2
    assert "dataset  someone/jbbq  [public]  REFUSED" in captured.out
    assert "nothing was uploaded" in captured.err


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        (
            {"license": "mit", "redistributable": False},
            "the card marks it `redistributable: false`",
        ),
        (
            {
                "license": "other",
                "redistributable": True,
                "extra_gated_prompt": "Ask the authors first.",
            },
            "the card asks for gated access (extra_gated_prompt (Ask the authors first.))",
        ),
        (
            {"license": "other", "redistributable": True, "extra_gated_fields": {"Name": "text"}},
            "the card asks for gated access (extra_gated_prompt)",
        ),
        (
            {"license": "unknown", "redistributable": True},
            "its licence is `unknown`: no right to redistribute it is known",
        ),
        (
            {"license": "other", "license_name": "authors-only"},
            "its license_name forbids redistribution (authors-only)",
        ),
        (
            {"license": "other", "license_name": "research use; may not be redistributed"},
            "its license_name forbids redistribution (research use; may not be redistributed)",
        ),
        (
            {"license": "other", "license_name": "研究目的に限る。再配布は禁止"},
            "its license_name forbids redistribution (研究目的に限る。再配布は禁止)",
        ),
    ],
)
def test_what_forbids_a_public_upload(header: dict, reason: str) -> None:
    assert redistribution_refusal(header) == reason


@pytest.mark.parametrize(
    "header",
    [
        {"license": "mit"},
        {"license": "cc-by-4.0", "redistributable": True},
        {"license": "cc-by-sa-4.0"},
        {
            "license": "other",
            "license_name": "bias-hub sample terms",
            "license_link": "https://example.org",
        },
    ],
)
def test_what_may_go_public(header: dict) -> None:
    assert redistribution_refusal(header) is None


def test_the_project_s_own_cards_may_all_go_public() -> None:
    """Every committed card (the generated datasets) is public as before."""
    import yaml

    cards = sorted(Path(__file__).resolve().parents[2].glob("datasets/*/README.md"))
    assert len(cards) >= 7
    for card in cards:
        header = yaml.safe_load(card.read_text(encoding="utf-8").split("---")[1])
        assert redistribution_refusal(header) is None, card
