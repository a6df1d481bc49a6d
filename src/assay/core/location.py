"""Where assay's own code lives: frames there are assay's, never a target's.

Signatures, wedge keys, traced stacks and the sandbox all skip these frames; one
definition keeps them agreeing wherever a module of assay moves.
"""

from __future__ import annotations

import os

#: The ``assay`` package folder (absolute, with a trailing separator), for frames' file names.
ASSAY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
#: The same folder with symlinks resolved, for paths the audit hook reports resolved.
ASSAY_REAL_DIR = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep


def is_assay_file(filename: str) -> bool:
    """Whether ``filename`` (a code object's or frame's file) is part of assay itself."""
    return os.path.abspath(filename).startswith(ASSAY_DIR)
