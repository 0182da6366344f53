"""The columns of ``datasets/stereoset_gender_swap`` (every config shares them)."""

from __future__ import annotations

import datasets

__all__ = ["FEATURES", "POPULATION_FEATURES"]

FEATURES = datasets.Features(
    {
        "id": datasets.Value("string"),
        "source_id": datasets.Value("string"),
        "bias_type": datasets.Value("string"),
        "target": datasets.Value("string"),
        "label": datasets.Value("string"),
        "original_gender": datasets.ClassLabel(names=["male", "female"]),
        "male_sentence": datasets.Value("string"),
        "female_sentence": datasets.Value("string"),
        "gender_words": datasets.List(
            {
                "word_index": datasets.Value("int32"),
                "male_word": datasets.Value("string"),
                "female_word": datasets.Value("string"),
                "male_start": datasets.Value("int32"),
                "male_end": datasets.Value("int32"),
                "female_start": datasets.Value("int32"),
                "female_end": datasets.Value("int32"),
            }
        ),
        "swap_method": datasets.Value("string"),
    }
)

# The paper population (``population.py``) also holds identical pairs ("none"), and names on every
# row the first-name list the build used.
POPULATION_FEATURES = datasets.Features(
    {
        **FEATURES,
        "original_gender": datasets.ClassLabel(names=["male", "female", "none"]),
        "name_list": datasets.Value("string"),
    }
)
