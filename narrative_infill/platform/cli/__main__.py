"""``python -m narrative_infill.platform.cli``: the same as the ``narrative-infill`` command."""

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
