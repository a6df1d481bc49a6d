"""The worked example as an ordinary assay target (found by ``assay fuzz`` discovery).

``shell_compose`` is the composition oracle over ``shell_classifier.is_allowed``
and ``leaves.txt``; ``assay fuzz --fuzz-target shell_compose`` runs it with the
corpus, artifacts, shrinking, promotion and report of any other target.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from shell_classifier import is_allowed

from assay.compose import composition_target

shell_compose = composition_target(is_allowed, Path(__file__).with_name("leaves.txt"), name="shell_compose")
