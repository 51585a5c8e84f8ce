"""``python -m narrative_infill.cli``: the same as the ``narrative-infill`` command."""

import sys

from . import main

if __name__ == "__main__":
    sys.exit(main())
