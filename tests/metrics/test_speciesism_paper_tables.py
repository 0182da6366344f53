"""speciesism_bias reproduces Takeshita, Rzepka and Araki's Tables 1-4 from their printed numbers.

Each table lists, for a change from form A to form B, the 15 words above chance (1/|V|)
in A whose probability drops, most negative change rate (B - A) / A first. The tables
print each word's mean probability in the object form and in the human form (8 decimals);
those are the module's inputs here: one object-form row and one human-form row as wide
as the model's vocabulary (RoBERTa-large 50,265 items, BERT-large-uncased 30,522), every
word of both tables of a model in it, plus distractors the tables must leave out.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bias_hub.pipelines.common.locations import import_evaluate

METRIC = str(Path(__file__).resolve().parents[2] / "metrics" / "speciesism_bias")

# (word, probability in the object form, probability in the human form), in the paper's order.
ROBERTA_TABLE_1 = [  # object form -> human form
    ("dried", 0.00020683, 0.00000050),
    ("foundational", 0.00002748, 0.00000008),
    ("processed", 0.00124327, 0.00000440),
    ("cumulative", 0.00007307, 0.00000026),
    ("measurable", 0.00011091, 0.00000041),
    ("achievable", 0.00015888, 0.00000076),
    ("peeled", 0.00002877, 0.00000014),
    ("irreversible", 0.00022316, 0.00000122),
    ("harvested", 0.00183672, 0.00001193),
    ("ground", 0.00043840, 0.00000301),
    ("definite", 0.00004245, 0.00000030),
    ("warranted", 0.00006662, 0.00000049),
    ("packaged", 0.00019813, 0.00000154),
    ("slaughtered", 0.01129572, 0.00008791),
    ("undeniable", 0.00017082, 0.00000139),
]
ROBERTA_TABLE_2 = [  # human form -> object form
    ("Married", 0.00000066, 0.00010675),
    ("musician", 0.00000026, 0.00004013),
    ("Lesbian", 0.00000019, 0.00002547),
    ("writer", 0.00000019, 0.00002058),
    ("divorced", 0.00002481, 0.00259995),
    ("singer", 0.00000033, 0.00003390),
    ("Transgender", 0.00000057, 0.00005398),
    ("lawyer", 0.00000052, 0.00004815),
    ("journalist", 0.00000028, 0.00002416),
    ("lesbian", 0.00000436, 0.00036320),
    ("atheist", 0.00000296, 0.00022795),
    ("Single", 0.00000048, 0.00003385),
    ("married", 0.00015990, 0.00937410),
    ("Nobody", 0.00000046, 0.00002419),
    ("seventeen", 0.00000296, 0.00015601),
]
BERT_TABLE_3 = [  # object form -> human form
    ("b", 0.00814565, 0.00000257),
    ("fact", 0.00164178, 0.00000100),
    ("possibility", 0.00025377, 0.00000027),
    ("effect", 0.00004545, 0.00000007),
    ("rule", 0.00044405, 0.00000072),
    ("event", 0.00007639, 0.00000014),
    ("c", 0.00089074, 0.00000172),
    ("d", 0.00066149, 0.00000129),
    ("decision", 0.00003972, 0.00000011),
    ("e", 0.00046910, 0.00000162),
    ("valid", 0.00020881, 0.00000074),
    ("m", 0.00023925, 0.00000089),
    ("solution", 0.00005280, 0.00000022),
    ("true", 0.00912534, 0.00003891),
    ("statement", 0.00009215, 0.00000043),
]
BERT_TABLE_4 = [  # human form -> object form
    ("who", 0.00005076, 0.10738710),
    ("whom", 0.00000144, 0.00019057),
    ("she", 0.00005209, 0.00548633),
    ("clumsy", 0.00015624, 0.00772255),
    ("what", 0.00056023, 0.02359570),
    ("goofy", 0.00000525, 0.00021536),
    ("sarcastic", 0.00001720, 0.00065798),
    ("deaf", 0.00025530, 0.00945593),
    ("cree", 0.00000416, 0.00015070),
    ("blonde", 0.00003074, 0.00104855),
    ("brunette", 0.00000376, 0.00011984),
    ("optimistic", 0.00001570, 0.00046133),
    ("where", 0.00010082, 0.00279400),
    ("playboy", 0.00000130, 0.00003412),
    ("he", 0.00012765, 0.00314866),
]

# Words the tables must leave out, with chance 1/50,265 = 1.99e-5 (RoBERTa) or
# 1/30,522 = 3.28e-5 (BERT) in mind:
DISTRACTORS = [
    # below chance in the object form, though it all but vanishes in the human form (-0.9999)
    ("rare_object_word", 0.0000150, 0.0000000015),
    # below chance in the human form, though it all but vanishes in the object form
    ("rare_human_word", 0.0000000015, 0.0000150),
    # above chance in both forms and unchanged: neither a drop nor a gain
    ("steady", 0.0003, 0.0003),
    # above chance in both forms, halved one way (-0.5) and doubled the other (+1.0)
    ("half_object", 0.001, 0.0005),
    ("half_human", 0.0005, 0.001),
]


def _inputs(tables, size):
    rows = [entry for table in tables for entry in table] + DISTRACTORS
    vocabulary = [f"<item{i}>" for i in range(size)]
    object_row, human_row = np.zeros(size), np.zeros(size)
    # Spread the words over the vocabulary so that the order cannot come from the index.
    positions = np.random.default_rng(7).choice(size, len(rows), replace=False)
    for (word, p_object, p_human), position in zip(rows, positions, strict=True):
        vocabulary[position] = word
        object_row[position], human_row[position] = p_object, p_human
    return {
        "probabilities": [object_row, human_row],
        "forms": ["object", "human"],
        "vocabulary": vocabulary,
    }


@pytest.fixture(scope="module")
def change():
    return import_evaluate().load(METRIC)


def _words(table):
    return [word for word, _, _ in table]


def test_roberta_table_1_object_to_human(change):
    result = change.compute(**_inputs([ROBERTA_TABLE_1, ROBERTA_TABLE_2], 50_265))
    assert result["vocabulary_size"] == 50_265
    assert result["chance"] == pytest.approx(1 / 50_265)
    listed = result["object_to_human"]
    assert [entry["word"] for entry in listed] == _words(ROBERTA_TABLE_1)
    # Both printed probabilities come back with each word; dried: (5.0e-7 - 2.0683e-4) / 2.0683e-4.
    assert [(e["p_start"], e["p_end"]) for e in listed] == [(o, h) for _, o, h in ROBERTA_TABLE_1]
    assert listed[0]["change_rate"] == pytest.approx((0.00000050 - 0.00020683) / 0.00020683)
    # undeniable, the 15th: 1.39e-6 / 1.7082e-4 - 1
    assert listed[-1]["change_rate"] == pytest.approx(0.00000139 / 0.00017082 - 1)


def test_roberta_table_2_human_to_object(change):
    result = change.compute(**_inputs([ROBERTA_TABLE_1, ROBERTA_TABLE_2], 50_265))
    listed = [entry["word"] for entry in result["human_to_object"]]
    # The paper's order, except its last two words. From the printed (rounded) numbers,
    # Nobody: 4.6e-7 / 2.419e-5 - 1 = -0.980984 and seventeen: 2.96e-6 / 1.5601e-4 - 1 =
    # -0.981027, so seventeen drops more. The printed digits cannot settle it: Nobody's
    # 0.00000046 stands for anything in [4.55e-7, 4.65e-7), a rate in [-0.98119, -0.98078],
    # which contains seventeen's. The first 13 follow the paper exactly.
    assert listed[:13] == _words(ROBERTA_TABLE_2)[:13]
    assert listed[13:] == ["seventeen", "Nobody"]
    nobody_low, nobody_high = 0.000000455 / 0.00002419 - 1, 0.000000465 / 0.00002419 - 1
    assert nobody_low < 0.00000296 / 0.00015601 - 1 < nobody_high


def test_bert_tables_3_and_4(change):
    result = change.compute(**_inputs([BERT_TABLE_3, BERT_TABLE_4], 30_522))
    assert result["chance"] == pytest.approx(1 / 30_522)
    assert [e["word"] for e in result["object_to_human"]] == _words(BERT_TABLE_3)
    assert [e["word"] for e in result["human_to_object"]] == _words(BERT_TABLE_4)


def test_distractors_stay_out_and_gains_go_elsewhere(change):
    result = change.compute(**_inputs([ROBERTA_TABLE_1, ROBERTA_TABLE_2], 50_265), top_k=40)
    drops_from_object = [e["word"] for e in result["object_to_human"]]
    drops_from_human = [e["word"] for e in result["human_to_object"]]
    # With room for more than 15, only the halved word follows each table: the
    # below-chance words and the unchanged one are never listed.
    assert drops_from_object == _words(ROBERTA_TABLE_1) + ["half_object"]
    assert len(drops_from_human) == 16 and drops_from_human[-1] == "half_human"
    assert set(drops_from_human[:15]) == set(_words(ROBERTA_TABLE_2))
    # Gains, highest first. From the object form: divorced 2.59995e-3 / 2.481e-5 - 1 =
    # +103.8, married 9.3741e-3 / 1.599e-4 - 1 = +57.6, half_human +1.0.
    gains = [(e["word"], e["change_rate"]) for e in result["gains"]["object_to_human"]]
    assert [word for word, _ in gains] == ["divorced", "married", "half_human"]
    assert gains[0][1] == pytest.approx(0.00259995 / 0.00002481 - 1)
    # From the human form: slaughtered (above chance there, 8.791e-5) +127.5, half_object +1.0.
    assert [e["word"] for e in result["gains"]["human_to_object"]] == ["slaughtered", "half_object"]
