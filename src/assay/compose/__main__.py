"""``python -m assay.compose [options]``: the ``assay compose`` subcommand, standalone."""

import sys

from assay.cli.compose import main

sys.exit(main(["compose", *sys.argv[1:]]))
