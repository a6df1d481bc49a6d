"""Loading a survivor test's subject module from ``tests/mutant/subjects/`` once per process.

The subjects are loaded from their files under a name of their own (not imported as a
package), so a mutant's path is the file the test names and two tests share one module.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_subject(path: Path) -> ModuleType:
    """The module of the subject file ``path``, executed at its first load only."""
    name = f"assay_test_subject_{path.stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]
