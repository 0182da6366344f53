"""What text a model's tokenizer expects: raw Japanese, or words segmented by Juman++.

nlp-waseda/roberta-* and ku-nlp/deberta-v2-* were pre-trained on Juman++ words ("segment the
input into words with Juman++ in advance", their model cards); most other Japanese models read
raw text, and JSNLI ships Juman++ words joined by spaces. ``--segmentation`` (``auto``,
``raw``, ``jumanpp``, ``as-is``; docs/nli.md) decides per run; raw text is segmented through
``rhoknp``, which needs the ``jumanpp`` program.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Sequence

__all__ = [
    "CHOICES",
    "JUMANPP_MODELS",
    "describe",
    "join_words",
    "needs_jumanpp",
    "prepare",
    "prepare_texts",
    "resolve",
]

CHOICES = ("auto", "raw", "jumanpp", "as-is")
# Hub id prefixes of models whose tokenizer expects Juman++ words.
JUMANPP_MODELS = ("nlp-waseda/roberta-", "ku-nlp/deberta-v2-", "ku-nlp/roberta-")
# Models whose own tokenizer runs Juman++ (it needs the program, not segmented input).
_SELF_SEGMENTING = ("-with-auto-jumanpp",)
# A space inside segmented text survives joining only between two Latin letters or digits.
_JOINABLE_SPACE = re.compile(r"(?<![A-Za-z0-9]) +| +(?![A-Za-z0-9])")

INSTALL_JUMANPP = (
    "install Juman++ (the `jumanpp` program: https://github.com/ku-nlp/jumanpp, release tarball, "
    "`cmake -B build -DCMAKE_BUILD_TYPE=Release && sudo cmake --build build --target install`) and "
    "`pip install rhoknp`; or give text already segmented by Juman++ (JSNLI is) with --segmentation as-is"
)


def needs_jumanpp(model: str) -> bool:
    """Whether the model (a Hub id) expects Juman++-segmented input."""
    name = str(model)
    return name.startswith(JUMANPP_MODELS) and not any(
        marker in name for marker in _SELF_SEGMENTING
    )


def resolve(choice: str, model: str) -> str:
    """``--segmentation`` for ``model``: ``raw``, ``jumanpp`` or ``as-is``."""
    if choice not in CHOICES:
        raise ValueError(f"--segmentation {choice!r}: expected one of {', '.join(CHOICES)}")
    if choice != "auto":
        return choice
    return "jumanpp" if needs_jumanpp(model) else "raw"


def join_words(text: str) -> str:
    """Segmented text back to a sentence: ``"自転車 で 2 人 の New York"`` -> ``"自転車で2人のNew York"``."""
    return _JOINABLE_SPACE.sub("", text.strip())


def _jumanpp() -> Callable[[str], str]:
    """A function segmenting one sentence with Juman++, or a ValueError saying what to install."""
    missing = []
    try:
        import rhoknp
    except ImportError:
        missing.append("the rhoknp package")
        rhoknp = None
    if shutil.which("jumanpp") is None:
        missing.append("the jumanpp program (not on PATH)")
    if missing:
        raise ValueError(
            f"--segmentation jumanpp: this model reads text segmented by Juman++, and {' and '.join(missing)} "
            f"cannot be found; {INSTALL_JUMANPP}"
        )
    analyser = rhoknp.Jumanpp()

    def segment(text: str) -> str:
        return " ".join(morpheme.text for morpheme in analyser.apply_to_sentence(text).morphemes)

    return segment


def prepare_texts(
    texts: Sequence[str],
    form: str,
    segmented: bool = False,
    segmenter: Callable[[str], str] | None = None,
) -> list[str]:
    """``texts`` as the model reads them (``form`` from ``resolve``); ``segmented``: they are
    Juman++ words joined by spaces (JSNLI). ``segmenter`` replaces Juman++ (tests)."""
    if form == "raw" and segmented:
        return [join_words(t) for t in texts]
    if form in ("as-is", "raw") or segmented:
        return list(texts)
    segment = segmenter or _jumanpp()
    # Premises and hypotheses repeat across pairs: segment each sentence once.
    segmented_texts = {text: segment(text) for text in dict.fromkeys(texts)}
    return [segmented_texts[text] for text in texts]


def prepare(
    pairs, form: str, flag: str = "--dataset", segmenter: Callable[[str], str] | None = None
):
    """A premise/hypothesis table (``TrainingPairs`` or a Dataset of raw text) in the model's form."""
    table, segmented = (
        (pairs.table, pairs.segmented) if hasattr(pairs, "segmented") else (pairs, False)
    )
    if form == "as-is" or (form == "raw" and not segmented) or (form == "jumanpp" and segmented):
        return table
    columns = {
        name: prepare_texts(table[name], form, segmented, segmenter)
        for name in ("premise", "hypothesis")
    }
    for name, values in columns.items():
        table = table.remove_columns(name).add_column(name, values)
    return table.select_columns(
        ["premise", "hypothesis", *[c for c in table.column_names if c not in columns]]
    )


def describe(pairs, form: str) -> str:
    """One phrase for logs and results: what was done with the text."""
    segmented = getattr(pairs, "segmented", False)
    if form == "as-is":
        return "passed unchanged (--segmentation as-is)"
    if form == "raw":
        return "JSNLI's Juman++ segmentation joined back into sentences" if segmented else "raw"
    return "JSNLI's Juman++ segmentation kept" if segmented else "segmented with Juman++"
