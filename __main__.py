"""``python -m bias_hub ...``: the ``bias-hub`` command."""

import sys

from bias_hub.pipelines.cli import main

if __name__ == "__main__":
    sys.exit(main())
