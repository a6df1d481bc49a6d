"""The ``assay`` argument parser: a bad flag or value is one line on stderr and exit 2.

argparse's own ``error()`` prints the whole usage (ten lines for ``assay fuzz``) before
the reason, which buries the one line that says what to change.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn


class OneLineParser(argparse.ArgumentParser):
    """An :class:`argparse.ArgumentParser` whose errors are one line naming the command and
    pointing to its ``--help``; subcommands added to it are of this class too."""

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE (see PROG --help)`` on one line and exit 2."""
        text = " ".join(message.split())
        sys.stderr.write(f"{self.prog}: error: {text} (see {self.prog} --help)\n")
        sys.exit(2)
