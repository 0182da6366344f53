"""The settings every pipeline shares: ``RunSettings`` and ``IntervalSettings``, which each
part's ``settings.py`` subclasses. Their fields' defaults are the only defaults: ``arguments``
makes them the flags'."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, ClassVar

from bias_hub.pipelines.common.models import ModelOptions

__all__ = ["INTERVAL_FIELDS", "MAX_RESAMPLES", "IntervalSettings", "RunSettings", "check_intervals"]


@dataclasses.dataclass(kw_only=True)
class RunSettings:
    """Settings every pipeline takes; each part subclasses it with its own fields."""

    datasets_root: Path | None = None
    metrics_root: Path | None = None
    device: str | None = None
    dtype: str | None = None
    device_map: str | None = None
    token: str | None = None
    revision: str | None = None
    trust_remote_code: bool = False
    # Score a model whose head was never trained (bias_hub.pipelines.common.models.mark_untrained): plumbing tests.
    allow_untrained: bool = False
    seed: int = 0
    # Progress bars (still only on a terminal); False under -q and in tests.
    progress: bool = True
    # Set by ``--preset`` through ``bias_hub.pipelines.common.presets.apply_preset``: the preset's name
    # and every value the run took that differs from it (recorded in results.json and report.md).
    preset: str | None = None
    departures: list[dict] = dataclasses.field(default_factory=list)

    def prerequisites(self, model, dataset) -> dict | None:
        """What a run on ``model`` and ``dataset`` needs before it starts, as
        ``check_prerequisites`` takes it (``extras``, ``datasets``, ``models``, ``keys``); None:
        the extra ``models`` where the command loads a model (its module's ``LOADS_MODELS``)."""
        return None

    def model_options(self, **changes: Any) -> ModelOptions:
        shared = "token revision dtype device device_map trust_remote_code allow_untrained".split()
        return ModelOptions(**{**{name: getattr(self, name) for name in shared}, **changes})


@dataclasses.dataclass(kw_only=True)
class IntervalSettings:
    """The interval settings, mixed into a part's settings (``class Settings(IntervalSettings,
    RunSettings)``; flags by ``add_interval_flags``). ``confidence_level`` None switches
    intervals and paired tests off. ``bootstrap_unit``: what one draw resamples, ``items`` or
    ``templates`` (one template's items together: they are not independent), where the part
    lists both in ``BOOTSTRAP_UNITS``."""

    BOOTSTRAP_UNITS: ClassVar[tuple[str, ...]] = ("items",)

    confidence_level: float | None = 0.95
    n_resamples: int = 2000
    bootstrap_unit: str = "items"

    def __post_init__(self) -> None:
        check_intervals(self.confidence_level, self.n_resamples)
        if self.bootstrap_unit not in self.BOOTSTRAP_UNITS:
            raise ValueError(
                f"--bootstrap-unit {self.bootstrap_unit!r}: expected one of "
                f"{', '.join(self.BOOTSTRAP_UNITS)}"
            )

    def interval_options(self) -> dict:
        """The keyword arguments every metric module's ``compute`` takes for its intervals."""
        record = self.interval_record()
        return {key: record[key] for key in ("confidence_level", "n_resamples", "seed")}

    def interval_record(self, bootstrap_unit: str | None = None) -> dict:
        """What every part's results.json records under ``"intervals"`` (``bootstrap_unit`` given
        where the data decides it rather than a flag); all but the level None when they are off."""
        on = self.confidence_level is not None
        return {
            "confidence_level": self.confidence_level,
            "n_resamples": self.n_resamples if on else None,
            "bootstrap_unit": (bootstrap_unit or self.bootstrap_unit) if on else None,
            "seed": getattr(self, "seed", 0) if on else None,
        }


# The fields ``interval_record`` writes under "intervals": a part that records its settings in
# results.json leaves them out there, so that they are written in one place.
INTERVAL_FIELDS = frozenset(item.name for item in dataclasses.fields(IntervalSettings))

# The most bootstrap resamples a run takes. A percentile end point estimated from N resamples of
# a normal-shaped bootstrap distribution with standard deviation sd has a Monte Carlo standard
# error of about sqrt(0.025 * 0.975 / N) / phi(1.96) * sd = 2.67 sd / sqrt(N): 0.0084 sd at
# 100,000 (our bound, not a paper's).
MAX_RESAMPLES = 100_000


def check_intervals(level: float | None, n_resamples: int) -> None:
    """The one check of the interval settings, naming the flags (a settings object built in
    Python fails the same way)."""
    if level is not None and (
        isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1
    ):
        raise ValueError(
            f"--confidence-level {level!r}: expected a level between 0 and 1 such as 0.95, or none"
        )
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int) or n_resamples < 100:
        raise ValueError(f"--n-resamples {n_resamples!r}: expected a whole number of at least 100")
    if n_resamples > MAX_RESAMPLES:
        raise ValueError(
            f"--n-resamples {n_resamples:,}: at most {MAX_RESAMPLES:,}. There an interval's end "
            "point is within 1 % of the estimate's standard error of where infinitely many "
            "resamples would put it (the Monte Carlo error falls as 1/sqrt(N)); beyond, the time "
            "grows with N and the interval does not change"
        )
