"""Replaying one input through a native target: what ``assay replay`` and emitted tests run.

The target is rebuilt first if its build identity changed (a fix in the C source is
a new identity), so a replay never runs a stale binary.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from assay.core.config import Project
from assay.core.errors import TargetError
from assay.core.verdict import Verdict
from assay.native.build import ensure_build
from assay.native.discovery import load_native_targets
from assay.native.findings import Replayer
from assay.native.run import sanitizer_env
from assay.native.toolchain import find_toolchain


def replay_native(project: Project, name: str, data: bytes) -> tuple[Verdict | None, str]:
    """Run ``data`` once through native target ``name`` (rebuilt if its identity changed).

    Returns (verdict or None when the input passes, the sanitizer report or libFuzzer's output).
    """
    targets = load_native_targets(project)
    if name not in targets:
        raise TargetError(f"no native target named {name!r} (native: {', '.join(targets) or 'none'})")
    target = targets[name]
    tc = find_toolchain()
    build = ensure_build(target, project.root, tc=tc)
    env = sanitizer_env(embed_python=target.embed_python, symbolizer=tc.symbolizer)
    with tempfile.TemporaryDirectory(prefix="assay-native-replay-") as tmp:
        failure, log = Replayer(build, target, project.root, env, Path(tmp)).run(data)
    return (failure.verdict(), failure.report) if failure else (None, log)
