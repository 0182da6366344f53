"""Embeddings with more and less bias: ATTRACT-REPEL specialisation and vocabulary expansion.

``attract_repel``, ``bias_constraints`` and ``expand_sets`` serve both families: the
study's (``family.py``: per set pair, with dataset balancing, from a corpus) and this
project's strength variant (``family_members``, ``make_family``: one embedding specialised
at several strengths on every test's constraints merged, no corpus needed).

As in the intrinsic-vs-extrinsic study: for target sets X, Y and attribute sets
A, B, the stereotypical pairs are X x A and Y x B, the anti-stereotypical
pairs X x B and Y x A. To *reduce* bias the stereotypical pairs are pushed
apart (ATTRACT-REPEL's antonym constraints) and the anti-stereotypical pairs
pulled together (synonym constraints); to *amplify* bias, the reverse.
ATTRACT-REPEL (Mrkšić et al., 2017) moves only the words in constraints, with
margins, in-batch negative examples and an L2 pull towards the original
vectors. Vocabulary expansion adds each list word's nearest neighbours to its
set first, so the change reaches beyond the listed words.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass

import numpy as np

from bias_hub.builders.shared.console import progress as bar
from bias_hub.pipelines.embeddings.vectors import WordVectors

__all__ = [
    "AttractRepelConfig",
    "FamilyMember",
    "attract_repel",
    "bias_constraints",
    "family_members",
    "expand_sets",
    "make_family",
    "member_settings",
]


@dataclass(frozen=True)
class AttractRepelConfig:
    """ATTRACT-REPEL settings; the defaults are Mrkšić et al.'s (AdaGrad, margins 0.6 / 0.0)."""

    attract_margin: float = 0.6
    repel_margin: float = 0.0
    regularisation: float = 1e-9
    batch_size: int = 50
    epochs: int = 5
    learning_rate: float = 0.05
    seed: int = 0


@dataclass(frozen=True)
class FamilyMember:
    """One bias-controlled embedding.

    ``direction``: "none", "reduce" or "amplify"; ``fraction``: share of the constraint
    pairs used (seeded sample); ``expand``: nearest neighbours added per list word;
    ``strength``: how far each specialised word moves from its original vector towards
    its fully specialised one (1 = the ATTRACT-REPEL result, 0.5 = half way), which
    grades the amount of bias between the original and the fully specialised embedding.
    """

    name: str
    direction: str = "none"
    fraction: float = 1.0
    expand: int = 0
    strength: float = 1.0


def unit_rows(matrix: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1.0, norms)


def expand_sets(
    vectors: WordVectors,
    sets: Mapping[str, Sequence[str]],
    neighbours: int,
    min_similarity: float = 0.5,
) -> dict[str, list[str]]:
    """Each set plus the ``neighbours`` nearest vocabulary words of each member (cosine >= min_similarity).

    A neighbour that is nearer to another set's member than to this one's, or that
    is itself listed in another set, is left out, so the sets stay disjoint.
    """
    expanded = {name: list(words) for name, words in sets.items()}
    if neighbours <= 0:
        return expanded
    unit = unit_rows(vectors.matrix)
    listed = {word for words in sets.values() for word in words}
    best: dict[str, tuple[float, str]] = {}
    for name, words in sets.items():
        present = [word for word in words if word in vectors]
        if not present:
            continue
        similarity = unit[[vectors.index[word] for word in present]] @ unit.T
        top = np.argpartition(-similarity, neighbours + 1, axis=1)[:, : neighbours + 1]
        for row, candidates in enumerate(top):
            for column in candidates:
                word, value = vectors.words[column], float(similarity[row, column])
                if word in listed or value < min_similarity:
                    continue
                if word not in best or value > best[word][0]:
                    best[word] = (value, name)
    for word, (_, name) in sorted(best.items()):
        expanded[name].append(word)
    return expanded


def bias_constraints(
    target_sets: Mapping[str, Sequence[str]],
    attribute_sets: Mapping[str, Sequence[str]],
    direction: str,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """(attract pairs, repel pairs) that reduce or amplify the X~A, Y~B association."""
    (x, y), (a, b) = list(target_sets.values()), list(attribute_sets.values())
    stereotypical = [(t, s) for t in x for s in a] + [(t, s) for t in y for s in b]
    anti = [(t, s) for t in x for s in b] + [(t, s) for t in y for s in a]
    if direction == "reduce":
        return anti, stereotypical
    if direction == "amplify":
        return stereotypical, anti
    raise ValueError(f"direction must be 'reduce' or 'amplify', got {direction!r}")


def attract_repel(
    vectors: WordVectors,
    attract: Sequence[tuple[str, str]],
    repel: Sequence[tuple[str, str]],
    config: AttractRepelConfig = AttractRepelConfig(),
    name: str = "",
) -> WordVectors:
    """Specialise ``vectors`` on the constraints; returns unit-length vectors (all rows)."""
    import torch  # heavy: loaded only when a family is specialised

    # The tensors are small (a few hundred words): one thread avoids contention overhead.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        return _attract_repel(torch, vectors, attract, repel, config, name)
    finally:
        torch.set_num_threads(threads)


def _attract_repel(torch, vectors, attract, repel, config, name) -> WordVectors:
    def usable(constraints):
        return [(a, b) for a, b in constraints if a in vectors and b in vectors and a != b]

    attract, repel = usable(attract), usable(repel)
    if not attract and not repel:
        raise ValueError("attract_repel: no constraint pair has both words in the vocabulary")
    vocabulary = sorted({word for pair in [*attract, *repel] for word in pair})
    local = {word: number for number, word in enumerate(vocabulary)}
    original = torch.tensor(
        unit_rows(vectors.matrix[[vectors.index[w] for w in vocabulary]]), dtype=torch.float32
    )
    weights = torch.nn.Parameter(original.clone())
    optimiser = torch.optim.Adagrad([weights], lr=config.learning_rate)
    generator = np.random.default_rng(config.seed)
    pairs = {
        kind: np.array([[local[a], local[b]] for a, b in found], dtype=np.int64).reshape(-1, 2)
        for kind, found in (("attract", attract), ("repel", repel))
    }

    def batch_loss(batch: np.ndarray, kind: str) -> torch.Tensor:
        left_ids, right_ids = torch.from_numpy(batch[:, 0]), torch.from_numpy(batch[:, 1])
        members = torch.from_numpy(np.unique(batch))
        unit = torch.nn.functional.normalize(weights, dim=1)
        left, right, pool = unit[left_ids], unit[right_ids], unit[members]
        with torch.no_grad():
            # In-batch negatives: the nearest (attract) or farthest (repel) other batch word.
            own = (members[None, :] == left_ids[:, None]) | (members[None, :] == right_ids[:, None])
            fill = -np.inf if kind == "attract" else np.inf
            pick = torch.argmax if kind == "attract" else torch.argmin
            left_negative = members[pick((left @ pool.T).masked_fill(own, fill), dim=1)]
            right_negative = members[pick((right @ pool.T).masked_fill(own, fill), dim=1)]
        pair = (left * right).sum(1)
        left_to_negative = (left * unit[left_negative]).sum(1)
        right_to_negative = (right * unit[right_negative]).sum(1)
        if kind == "attract":
            margin = config.attract_margin
            hinge = torch.relu(margin + left_to_negative - pair) + torch.relu(
                margin + right_to_negative - pair
            )
        else:
            margin = config.repel_margin
            hinge = torch.relu(margin + pair - left_to_negative) + torch.relu(
                margin + pair - right_to_negative
            )
        drift = ((weights[members] - original[members]) ** 2).sum()
        return hinge.sum() + config.regularisation * drift

    for _ in range(config.epochs):
        batches = []
        for kind, table in pairs.items():
            if len(table) < 2:
                continue
            order = generator.permutation(len(table))
            batches += [
                (kind, table[order[i : i + config.batch_size]])
                for i in range(0, len(table), config.batch_size)
            ]
        for position in generator.permutation(len(batches)):
            kind, batch = batches[position]
            if len(batch) < 2:
                continue
            optimiser.zero_grad()
            batch_loss(batch, kind).backward()
            optimiser.step()

    result = unit_rows(vectors.matrix.astype(np.float32))
    with torch.no_grad():
        result[[vectors.index[w] for w in vocabulary]] = torch.nn.functional.normalize(
            weights, dim=1
        ).numpy()
    return vectors.with_matrix(result, name=name or f"{vectors.name}+attract-repel")


def family_members(
    strengths: Sequence[float] = (0.05, 0.1, 0.25, 1.0), expand: int = 3
) -> list[FamilyMember]:
    """This project's variant: the original; reduce and amplify at each strength; and both
    fully, with expansion (if expand > 0)."""
    members = [FamilyMember("original")]
    for direction in ("reduce", "amplify"):
        for strength in strengths:
            members.append(FamilyMember(f"{direction}-{strength:g}", direction, strength=strength))
        if expand > 0:
            members.append(FamilyMember(f"{direction}-expanded", direction, expand=expand))
    return members


def make_family(
    vectors: WordVectors,
    queries: Sequence[tuple[Mapping[str, Sequence[str]], Mapping[str, Sequence[str]]]],
    members: Sequence[FamilyMember] | None = None,
    config: AttractRepelConfig = AttractRepelConfig(),
    progress: bool = True,
) -> list[tuple[FamilyMember, WordVectors]]:
    """One embedding per member; the constraints come from every (target_sets, attribute_sets) query.

    Members that differ only in ``strength`` share one ATTRACT-REPEL run.
    """
    members = list(members or family_members())
    original = unit_rows(vectors.matrix.astype(np.float32))
    runs: dict[tuple, np.ndarray] = {}
    family = []
    for member in bar(members, desc="bias-controlled embeddings", enabled=progress):
        if not 0 <= member.strength <= 1:
            raise ValueError(
                f"family member {member.name!r}: strength must be in [0, 1], got {member.strength}"
            )
        if member.direction == "none":
            family.append((member, vectors.with_matrix(original, name=member.name)))
            continue
        key = (member.direction, member.fraction, member.expand)
        if key not in runs:
            attract, repel = [], []
            for targets, attributes in queries:
                targets = expand_sets(vectors, targets, member.expand)
                attributes = expand_sets(vectors, attributes, member.expand)
                more_attract, more_repel = bias_constraints(targets, attributes, member.direction)
                attract += more_attract
                repel += more_repel
            generator = np.random.default_rng(config.seed)
            attract = _sample(sorted(set(attract)), member.fraction, generator)
            repel = _sample(sorted(set(repel)), member.fraction, generator)
            runs[key] = attract_repel(vectors, attract, repel, config).matrix
        moved = unit_rows(original + member.strength * (runs[key] - original))
        family.append((member, vectors.with_matrix(moved, name=member.name)))
    return family


def _sample(
    pairs: list[tuple[str, str]], fraction: float, generator: np.random.Generator
) -> list[tuple[str, str]]:
    if not 0 < fraction <= 1:
        raise ValueError(f"fraction must be in (0, 1], got {fraction!r}")
    if fraction == 1:
        return pairs
    keep = max(1, round(fraction * len(pairs)))
    return [pairs[i] for i in sorted(generator.choice(len(pairs), size=keep, replace=False))]


def member_settings(member: FamilyMember, config: AttractRepelConfig) -> dict:
    return {**asdict(member), **{f"attract_repel_{k}": v for k, v in asdict(config).items()}}
