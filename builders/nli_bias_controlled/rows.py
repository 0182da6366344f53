"""Bias-controlled NLI training sets: the labels of stereotyped occupations follow a bias rate r.

The construction follows the authors' released sets (Anantaprayoon et al., ja_v1.1):

- a down-sampled set of occupations, by default 10 female-stereotyped, 10 male-stereotyped
  and 10 non-stereotyped;
- every occupation appears in the same sentence pairs at every r: premise = a training
  template filled with the occupation, hypothesis = the same template filled with 女性 or
  男性, so only the labels change with r;
- a share r of the stereotyped occupations is labelled *pro*: hypothesis gender congruent
  with the stereotype -> entailment, opposite -> contradiction; the rest is labelled *anti*
  (congruent -> contradiction, opposite -> entailment). Biased and non-biased wrong
  examples therefore sit on separate occupations;
- non-stereotyped occupations are always neutral, so the three labels are balanced
  (1,000 each with the defaults).

As in the authors' release, female-stereotyped occupations turn pro first: at r = K/10,
2K of the 20 stereotyped occupations are pro, the female ones (most stereotyped first)
before the male ones. The training templates live in ``templates.tsv`` beside this file
and are checked to share no sentence with the evaluation templates, so a meta-evaluation
measures generalisation to new contexts, not recall of training sentences.
"""

from __future__ import annotations

import csv
import random
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any, Protocol

from bias_hub.builders.nli_gender_bias.lexicon import GENDER_WORDS, SLOT, Template
from bias_hub.builders.shared.files import open_text

__all__ = [
    "FEATURE_NAMES",
    "GENDER_WORDS",
    "LABELS",
    "RATES",
    "STEREOTYPED_TYPES",
    "TrainingTemplate",
    "build_rows",
    "check_disjoint_templates",
    "config_name",
    "features",
    "load_training_templates",
    "pro_occupations",
    "select_occupations",
]

LABELS = ("entailment", "neutral", "contradiction")
RATES = tuple(k / 10 for k in range(11))
STEREOTYPED_TYPES = {"female_stereotyped": "female", "male_stereotyped": "male"}
NON_STEREOTYPED = "non_stereotyped"
TEMPLATES_PATH = Path(__file__).with_name("templates.tsv")


class OccupationLike(Protocol):
    """What this module needs of ``bias_hub.builders.nli_gender_bias.lexicon.Occupation``."""

    en: str
    ja: str
    type: str
    stereotypical: float


# Training templates have the evaluation templates' shape: one ``{subject}`` slot.
TrainingTemplate = Template

FEATURE_NAMES = tuple(
    """
    id premise hypothesis label occupation occupation_en occupation_type hypothesis_gender
    template_id labelling bias_rate
    """.split()
)


def features():
    """The ``datasets.Features`` of every config: strings, a ClassLabel ``label``, a float32 ``bias_rate``."""
    import datasets

    string = datasets.Value("string")
    spec = {name: string for name in FEATURE_NAMES}
    spec["label"] = datasets.ClassLabel(names=list(LABELS))
    spec["bias_rate"] = datasets.Value("float32")
    return datasets.Features(spec)


def load_training_templates(path: str | Path | None = None) -> list[TrainingTemplate]:
    """Read the training premise templates (TSV with ``template_id`` and ``text``)."""
    path = Path(path) if path is not None else TEMPLATES_PATH
    templates: list[TrainingTemplate] = []
    seen: set[str] = set()
    with open_text(path, newline="") as handle:
        lines = [line for line in handle if line.strip() and not line.startswith("#")]
        reader = csv.DictReader(lines, delimiter="\t")
        missing = {"template_id", "text"} - set(reader.fieldnames or [])
        if missing:
            raise ValueError(
                f"{path}: missing column(s) {sorted(missing)}; expected template_id, text"
            )
        for line, row in enumerate(reader, start=2):  # line numbers count non-comment lines
            text, template_id = (row["text"] or "").strip(), (row["template_id"] or "").strip()
            if text.count(SLOT) != 1:
                raise ValueError(
                    f"{path}, line {line}: template must contain {SLOT} exactly once: {text!r}"
                )
            if not template_id or template_id in seen:
                raise ValueError(
                    f"{path}, line {line}: template_id {template_id!r} is empty or repeated"
                )
            seen.add(template_id)
            templates.append(TrainingTemplate(template_id, text))
    if not templates:
        raise ValueError(f"{path}: no templates")
    return templates


def _skeleton(text: str) -> str:
    """A template without its slot and punctuation, for comparing training and evaluation text."""
    return re.sub(r"[\s。、．，.,!?！？]", "", text.replace(SLOT, "|"))


def _runs(text: str, n: int) -> set[str]:
    return {
        part[i : i + n] for part in _skeleton(text).split("|") for i in range(len(part) - n + 1)
    }


def check_disjoint_templates(
    training: Iterable[Any], evaluation: Iterable[Any], run: int = 6
) -> None:
    """Raise if a training template shares a sentence, or any ``run``-character stretch, with an
    evaluation template: the meta-evaluation must test new contexts, not near-copies."""
    evaluation = list(evaluation)
    shared = []
    for t in training:
        for e in evaluation:
            common = _runs(t.text, run) & _runs(e.text, run)
            if common or _skeleton(t.text) == _skeleton(e.text):
                shared.append(
                    f"{t.template_id} ~ evaluation {e.template_id} ({sorted(common)[:1]})"
                )
    if shared:
        raise ValueError(
            "training templates must never occur in the evaluation sets; overlapping: "
            + ", ".join(shared)
        )


def config_name(rate: float) -> str:
    """``0.3`` -> ``"r0.3"``: one dataset config per bias rate."""
    return f"r{rate:.1f}"


def select_occupations(
    occupations: Sequence[OccupationLike], per_type: int = 10
) -> dict[str, list[OccupationLike]]:
    """The down-sampled occupations: the most stereotyped per gender and the least stereotyped.

    Female-stereotyped occupations are ranked by their stereotype score (most negative =
    most female first), male-stereotyped ones the other way round, non-stereotyped ones by
    the smallest absolute score. Ties keep lexicon order, so the choice is deterministic.
    """
    if isinstance(per_type, bool) or not isinstance(per_type, int) or per_type < 1:
        raise ValueError(
            f"--occupations-per-type {per_type!r}: expected a whole number of at least 1 (default 10)"
        )
    keys = {
        "female_stereotyped": lambda o: o.stereotypical,
        "male_stereotyped": lambda o: -o.stereotypical,
        NON_STEREOTYPED: lambda o: abs(o.stereotypical),
    }
    chosen: dict[str, list[OccupationLike]] = {}
    for kind, key in keys.items():
        pool = [o for o in occupations if o.type == kind]
        if len(pool) < per_type:
            raise ValueError(
                f"the lexicon has {len(pool)} {kind} occupation(s); {per_type} are needed "
                "(lower --occupations-per-type)"
            )
        chosen[kind] = sorted(pool, key=key)[:per_type]
    return chosen


def pro_occupations(selected: dict[str, list[OccupationLike]], rate: float) -> set[str]:
    """Japanese names of the stereotyped occupations labelled *pro* at bias rate ``rate``."""
    if not 0.0 <= rate <= 1.0:
        raise ValueError(f"bias rate must lie in [0, 1], got {rate}")
    ordered = selected["female_stereotyped"] + selected["male_stereotyped"]
    return {o.ja for o in ordered[: round(rate * len(ordered))]}


def build_rows(
    selected: dict[str, list[OccupationLike]],
    templates: Sequence[TrainingTemplate],
    rate: float,
    templates_per_occupation: int = 50,
    seed: int = 0,
) -> list[dict]:
    """All training pairs for one bias rate.

    Each occupation gets ``templates_per_occupation`` templates (a seeded sample that does not
    depend on ``rate``), each with a female and a male hypothesis.
    """
    if not 1 <= templates_per_occupation <= len(templates):
        raise ValueError(
            f"--templates-per-occupation {templates_per_occupation!r}: expected a whole number in "
            f"[1, {len(templates)}] (the number of training templates; default 50)"
        )
    pro = pro_occupations(selected, rate)
    rows = []
    for kind, occupations in selected.items():
        for occupation in occupations:
            # A string seed is hashed stably by random.Random (unlike hash() of a str).
            sampler = random.Random(f"{seed}:{occupation.en}")
            chosen = sorted(sampler.sample(range(len(templates)), templates_per_occupation))
            for index in chosen:
                template = templates[index]
                for gender, word in GENDER_WORDS.items():
                    if kind == NON_STEREOTYPED:
                        labelling, label = "neutral", "neutral"
                    else:
                        congruent = STEREOTYPED_TYPES[kind] == gender
                        labelling = "pro" if occupation.ja in pro else "anti"
                        label = (
                            "entailment" if congruent == (labelling == "pro") else "contradiction"
                        )
                    rows.append(
                        {
                            "id": f"{occupation.en}-{template.template_id}-{gender}",
                            "premise": template.fill(occupation.ja),
                            "hypothesis": template.fill(word),
                            "label": label,
                            "occupation": occupation.ja,
                            "occupation_en": occupation.en,
                            "occupation_type": kind,
                            "hypothesis_gender": gender,
                            "template_id": template.template_id,
                            "labelling": labelling,
                            "bias_rate": float(rate),
                        }
                    )
    return rows
