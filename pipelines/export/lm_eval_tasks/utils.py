"""The functions of the tasks beside this file: bias-hub's own, installed (lm-eval imports this file by its path)."""

from bias_hub.pipelines.export.lm_eval_installed import (  # noqa: F401
    installed_bbq_dataset,
    installed_jbbq_dataset,
)
from bias_hub.pipelines.export.lm_eval_utils import *  # noqa: F403
