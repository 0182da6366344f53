"""One loader for every pipeline: any Hub id or local folder, the head the part needs, checked.

``load_model(name, kind, options)`` returns ``(model, tokenizer)`` in eval mode on the chosen
device. Before any weights are read it checks that a path exists, that the checkpoint's
architecture is the head the part needs, that no weight of the head would be newly initialised
(unless ``allow_new_head``: fine-tuning), and that the checkpoint is not marked untrained
(``mark_untrained``: ``nli init-model``, a demo's random model): a score from an untrained head
measures its random initialisation, not a bias (``--allow-untrained``: plumbing tests only).
"""

from __future__ import annotations

import functools
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

__all__ = [
    "KINDS",
    "UNTRAINED_MARKER",
    "ModelOptions",
    "check_model_name",
    "load_model",
    "load_tokenizer",
    "looks_like_path",
    "mark_trained",
    "mark_untrained",
    "resolve_device",
    "resolve_dtype",
]

log = logging.getLogger(__name__)

DTYPES = ("auto", "float32", "bfloat16", "float16")
_DTYPE_ALIASES = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "half": "float16"}
# The config.json key of a model whose head was never trained; its value says what made it.
UNTRAINED_MARKER = "bias_hub_untrained"
# ORG/NAME or NAME, as the Hub spells repository ids.
_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*(/[\w.-]+)?")


@dataclass(frozen=True)
class Kind:
    auto_class: str
    description: str
    # Class-name endings of checkpoints that carry this head.
    heads: tuple[str, ...]
    # Weights a pipeline of this kind never uses: their absence is not an error.
    unused: tuple[str, ...] = ()


KINDS: dict[str, Kind] = {
    "sequence-classification": Kind(
        "AutoModelForSequenceClassification",
        "a sequence classifier (…ForSequenceClassification)",
        ("ForSequenceClassification",),
    ),
    "masked-lm": Kind(
        "AutoModelForMaskedLM",
        "a masked language model (…ForMaskedLM)",
        ("ForMaskedLM", "ForPreTraining"),
    ),
    "causal-lm": Kind(
        "AutoModelForCausalLM",
        "a causal language model (…ForCausalLM / …LMHeadModel)",
        ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration"),
    ),
    # Attentions come from the encoder body; any checkpoint with one will do.
    "encoder": Kind("AutoModel", "an encoder (BERT-like)", (), unused=("pooler.",)),
}


@dataclass
class ModelOptions:
    """How to load a model: what every pipeline command's flags pass through."""

    token: str | None = None
    revision: str | None = None
    dtype: str | None = None
    device: str | None = None
    device_map: str | None = None
    trust_remote_code: bool = False
    allow_new_head: bool = False
    # Score a checkpoint marked untrained (``mark_untrained``): plumbing tests only.
    allow_untrained: bool = False
    attentions: bool = False
    extra: dict = field(default_factory=dict)


def resolve_device(device: str | None) -> str:
    """``device`` checked against this machine; None: CUDA when available, else CPU."""
    import torch

    if device is None or device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    kind, _, index = device.partition(":")
    if kind == "cuda":
        if not torch.cuda.is_available():
            raise ValueError(
                f"--device {device}: CUDA is not available on this machine (torch {torch.__version__}, "
                f"{'built without CUDA' if torch.version.cuda is None else 'no GPU visible'}); use --device cpu"
            )
        if index and (not index.isdigit() or int(index) >= torch.cuda.device_count()):
            raise ValueError(
                f"--device {device}: this machine has {torch.cuda.device_count()} CUDA device(s)"
            )
    elif kind == "mps":
        if not torch.backends.mps.is_available():
            raise ValueError(
                f"--device {device}: MPS is not available on this machine; use --device cpu"
            )
    elif kind != "cpu":
        raise ValueError(f"--device {device}: expected cpu, cuda, cuda:N or mps")
    return device


def resolve_dtype(dtype: str | None):
    """A torch dtype, ``"auto"`` (the checkpoint's) or None (torch's default, float32)."""
    import torch

    if dtype is None:
        return None
    name = _DTYPE_ALIASES.get(str(dtype).lower(), str(dtype).lower())
    if name not in DTYPES:
        raise ValueError(f"--dtype {dtype}: expected one of {', '.join(DTYPES)}")
    return "auto" if name == "auto" else getattr(torch, name)


def looks_like_path(name: str) -> bool:
    """Whether ``name`` is meant as a local folder rather than a Hub id (ORG/NAME)."""
    return (
        name.startswith((".", "/", "~"))
        or os.sep in name.rstrip(os.sep).split(os.sep, 1)[-1]
        or not _HUB_ID.fullmatch(name)
    )


def check_model_name(name: str, flag: str = "--model") -> None:
    """Refuse, before anything is loaded, a path that does not exist, and a Hub id that cannot
    load: not cached while ``HF_HUB_OFFLINE`` is set or the Hub is out of reach (one request of at
    most ``HUB_PROBE_TIMEOUT`` seconds, made once per process)."""
    if not name or not name.strip():
        raise ValueError(f"{flag}: empty model name")
    path = Path(name).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ValueError(
                f"{flag} {name}: is a file; expected a model folder (config.json and weights) or a Hub id"
            )
        if not (path / "config.json").is_file():
            raise ValueError(
                f"{flag} {name}: the folder holds no config.json; expected a saved transformers model"
            )
        return
    if looks_like_path(name):
        raise FileNotFoundError(
            f"{flag} {name}: no such model folder (and not a Hub id of the form ORG/NAME)"
        )
    _check_hub_id_available(name, flag)


# Seconds the Hub gets to answer one request before a Hub id counts as out of reach.
HUB_PROBE_TIMEOUT = 3.0
_LOCAL_HINT = (
    "pass a local model folder instead (config.json and weights, as save_pretrained writes them), "
    "or fetch the model where the network is open"
)


def _in_hub_cache(name: str) -> bool:
    """Whether the Hugging Face cache holds any snapshot of the model repo ``name``."""
    from huggingface_hub import constants

    snapshots = Path(constants.HF_HUB_CACHE) / f"models--{name.replace('/', '--')}" / "snapshots"
    return snapshots.is_dir() and any(snapshots.iterdir())


@functools.lru_cache(maxsize=4)
def _hub_unreachable(endpoint: str) -> str | None:
    """Why ``endpoint`` cannot be reached (one request, no retries), or None when it answers."""
    from huggingface_hub import get_session

    try:
        get_session().head(endpoint, timeout=HUB_PROBE_TIMEOUT)
    except Exception as err:  # any failure to get an answer: DNS, refused, timeout, proxy
        text = " ".join(str(err).split())
        return f"{type(err).__name__}: {text}" if text else type(err).__name__
    return None


def _check_hub_id_available(name: str, flag: str) -> None:
    """Refuse at once a Hub id that is not cached while offline or with the Hub out of reach,
    instead of transformers' retries (about a minute of retry lines) ending in the same error."""
    from huggingface_hub import constants

    if _in_hub_cache(name):
        return
    if constants.is_offline_mode():
        raise FileNotFoundError(
            f"{flag} {name}: no local folder of that name and not in the Hugging Face cache ({constants.HF_HUB_CACHE}); "
            f"HF_HUB_OFFLINE is set, so the Hub is not asked: {_LOCAL_HINT} (and unset HF_HUB_OFFLINE)"
        )
    reason = _hub_unreachable(constants.ENDPOINT)
    if reason is not None:
        raise FileNotFoundError(
            f"{flag} {name}: no local folder of that name, not in the Hugging Face cache, and the Hub at "
            f"{constants.ENDPOINT} cannot be reached ({reason}): {_LOCAL_HINT}; set HF_HUB_OFFLINE=1 to "
            "use only cached models without trying the network"
        )


def _hub_error(name: str, flag: str, err: Exception) -> Exception:
    offline = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE")
    reason = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
    hint = (
        " (HF_HUB_OFFLINE is set: only models already in the local cache load)" if offline else ""
    )
    return FileNotFoundError(
        f"{flag} {name}: no local folder of that name, and the Hub did not provide it{hint}: {reason}"
    )


def _hub_options(options: ModelOptions) -> dict:
    """What the model and its tokenizer are both loaded with."""
    return {key: getattr(options, key) for key in ("token", "revision", "trust_remote_code")}


def load_tokenizer(name: str, options: ModelOptions | None = None, flag: str = "--model"):
    from transformers import AutoTokenizer

    options = options or ModelOptions()
    check_model_name(name, flag)
    try:
        return AutoTokenizer.from_pretrained(name, **_hub_options(options))
    except OSError as err:
        raise _hub_error(name, flag, err) from None


def mark_untrained(model, made_by: str) -> None:
    """Mark ``model`` (or its config) as never trained before it is saved; ``made_by`` names
    the command that made it (``"bias-hub nli init-model"``). Scorers refuse it by default."""
    config = getattr(model, "config", model)
    setattr(config, UNTRAINED_MARKER, made_by)


def mark_trained(model) -> None:
    """Drop the mark of ``mark_untrained`` (training calls it before saving what it trained)."""
    config = getattr(model, "config", model)
    if hasattr(config, UNTRAINED_MARKER):
        delattr(config, UNTRAINED_MARKER)


def _check_trained(name: str, config, flag: str, options: ModelOptions) -> None:
    made_by = getattr(config, UNTRAINED_MARKER, None)
    if not made_by or options.allow_untrained or options.allow_new_head:
        return
    raise ValueError(
        f"{flag} {name}: its head was never trained (config.json: {UNTRAINED_MARKER}: {made_by!r}); "
        "a score from it measures a random initialisation. Train it first, or pass --allow-untrained "
        "for a plumbing test"
    )


def _check_architecture(name: str, config, kind: str, flag: str) -> None:
    spec = KINDS[kind]
    architectures = list(getattr(config, "architectures", None) or [])
    # A base checkpoint (BertModel, …ForMaskedLM) has no classifier: for a sequence classifier,
    # the weight check decides.
    if not (spec.heads and architectures) or kind == "sequence-classification":
        return
    if any(arch.endswith(spec.heads) for arch in architectures):
        return
    raise ValueError(
        f"{flag} {name}: the checkpoint is a {', '.join(architectures)}; expected {spec.description}"
    )


def load_model(
    name: str,
    kind: str,
    options: ModelOptions | None = None,
    flag: str = "--model",
    with_tokenizer: bool = True,
):
    """``(model, tokenizer)`` of ``kind`` (a key of ``KINDS``), in eval mode on its device."""
    import transformers
    from transformers import AutoConfig

    if kind not in KINDS:
        raise ValueError(f"unknown model kind {kind!r}; expected one of {sorted(KINDS)}")
    options = options or ModelOptions()
    spec = KINDS[kind]
    check_model_name(name, flag)
    device = None if options.device_map else resolve_device(options.device)
    dtype = resolve_dtype(options.dtype)
    common = _hub_options(options)
    try:
        config = AutoConfig.from_pretrained(name, **common)
    except OSError as err:
        raise _hub_error(name, flag, err) from None
    except ValueError as err:
        raise ValueError(f"{flag} {name}: not a transformers model ({err})") from None
    _check_architecture(name, config, kind, flag)
    _check_trained(name, config, flag, options)
    kwargs = dict(common, **options.extra)
    if dtype is not None:
        kwargs["dtype"] = dtype
    if options.device_map:
        kwargs["device_map"] = options.device_map
    if options.attentions:
        # sdpa (the default) returns no attention weights.
        kwargs["attn_implementation"] = "eager"
    auto = getattr(transformers, spec.auto_class)
    # transformers prints its own loading report (missing / unexpected weights) as a warning;
    # the weights that matter are checked below, the rest (a pooler an encoder never uses,
    # the head of another task) is noise on the console; the DEBUG line below records it.
    verbosity = transformers.logging.get_verbosity()
    if verbosity > transformers.logging.DEBUG:
        transformers.logging.set_verbosity_error()
    try:
        model, info = auto.from_pretrained(name, output_loading_info=True, **kwargs)
    except OSError as err:
        raise _hub_error(name, flag, err) from None
    except ValueError as err:
        raise ValueError(f"{flag} {name}: cannot be loaded as {spec.description} ({err})") from None
    finally:
        transformers.logging.set_verbosity(verbosity)
    log.debug(
        "loading %s: missing %s, unexpected %s",
        name,
        info.get("missing_keys"),
        info.get("unexpected_keys"),
    )
    new = [
        key for key in info.get("missing_keys", []) if not any(part in key for part in spec.unused)
    ]
    if new and not (options.allow_new_head or options.allow_untrained):
        raise ValueError(
            f"{flag} {name}: {type(model).__name__} would start with {len(new)} newly initialised "
            f"weight(s) ({', '.join(sorted(new)[:3])}{', …' if len(new) > 3 else ''}); the checkpoint "
            f"({', '.join(getattr(config, 'architectures', None) or ['unknown class'])}) has no such head. "
            f"Expected {spec.description} (or pass --allow-untrained for a plumbing test)"
        )
    if device is not None:
        model = model.to(device)
    model.eval()
    log.debug("loaded %s as %s on %s", name, type(model).__name__, device or options.device_map)
    tokenizer = load_tokenizer(name, options, flag) if with_tokenizer else None
    return model, tokenizer
