"""What every pipeline shares: dataset and metric paths, the model loader, the run folder, the flags.

See ``CONTRIBUTING.md`` for how a part uses them. Heavy libraries (torch,
transformers, datasets) are imported inside the functions, so importing this
package is cheap.
"""

from bias_hub.pipelines.common.arguments import COMMON_FLAGS, pipeline_command, settings_from_args
from bias_hub.pipelines.common.locations import (
    dataset_folder,
    import_metric_module,
    load_dataset_split,
    metric_folder,
    metric_scores,
)
from bias_hub.pipelines.common.models import (
    ModelOptions,
    check_model_name,
    load_model,
    load_tokenizer,
    resolve_device,
    resolve_dtype,
)
from bias_hub.pipelines.common.run_folder import RunFolder, command_line, package_versions
from bias_hub.pipelines.common.settings import RunSettings
from bias_hub.pipelines.common.stats import holm

__all__ = [
    "COMMON_FLAGS",
    "ModelOptions",
    "RunFolder",
    "RunSettings",
    "check_model_name",
    "command_line",
    "dataset_folder",
    "load_dataset_split",
    "holm",
    "import_metric_module",
    "load_model",
    "load_tokenizer",
    "metric_folder",
    "metric_scores",
    "package_versions",
    "pipeline_command",
    "resolve_device",
    "resolve_dtype",
    "settings_from_args",
]
