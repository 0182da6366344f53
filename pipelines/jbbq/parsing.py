"""The answer parser of ``--scoring generate``.

Rule (the prompt asks for the bare index, so the parser is strict on purpose):

1. Full-width digits (０-９) are read as ASCII digits; surrounding whitespace is ignored.
2. The reply must contain at least one number, and its FIRST number (a maximal run
   of digits, not part of a decimal like ``1.5``) is the answer.
3. The answer must be one of the choice indices (0, 1, 2); anything else, or a
   reply with no number at all, is unparsable and becomes ``-1``.

So ``"1"``, ``" 2\\n"``, ``"２"``, ``"回答: 0"``, ``"1. 女性"`` and ``"1です"`` parse;
``"わかりません"``, ``"3"``, ``"10"`` and ``"0.5"`` do not. The answer text itself
(``"女性"``) is not matched back to an index: the paper counts such replies
as unparsable.
"""

from __future__ import annotations

import re

__all__ = ["UNPARSABLE", "answer_is_settled", "parse_answer"]

UNPARSABLE = -1
_FULL_WIDTH = str.maketrans("０１２３４５６７８９", "0123456789")
_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def parse_answer(reply: str, n_choices: int = 3) -> int:
    """The answer index in a generated ``reply``, or ``-1`` when it cannot be read."""
    match = _NUMBER.search(reply.translate(_FULL_WIDTH))
    if match is None or "." in match.group():
        return UNPARSABLE
    value = int(match.group())
    return value if 0 <= value < n_choices else UNPARSABLE


def answer_is_settled(reply: str) -> bool:
    """Whether ``parse_answer`` reads the same answer from ``reply`` and from every text that
    continues it, so generation may stop there.

    The first number cannot change once a character that cannot extend it follows: not a
    digit, and not a "." that a digit may still follow (``"1."`` may become ``"1.5"``). A
    first number that already is a decimal stays one (unparsable). With no number yet,
    nothing is settled.

    >>> [answer_is_settled(r) for r in ("1", "1\\n", "1.", "1.\\n", "0.5", "回答: ２です", "はい")]
    [False, True, False, True, True, True, False]
    """
    text = reply.translate(_FULL_WIDTH)
    match = _NUMBER.search(text)
    if match is None:
        return False
    if "." in match.group():
        return True
    end = match.end()
    if end == len(text):
        return False
    return text[end] != "." or end + 1 < len(text)
