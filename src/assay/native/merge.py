"""libFuzzer's ``-merge=1`` selection for native targets (needs :mod:`assay.native`).

Imported by :func:`assay.scale.merge.native_selection` only where the native backend is
installed.  The harness is built (or its build reused) exactly as ``assay fuzz``
builds it, the union's entries are written to a temporary folder named by digest,
and the binary runs ``-merge=1 OUT IN`` with the campaign's sanitizer environment
and per-input limits.  libFuzzer names what it keeps by SHA-1, so the kept files are
mapped back to the union's SHA-256 digests by their content.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from assay.core.errors import AssayError
from assay.store.corpus import digest

#: Seconds a native merge may take per input before it is abandoned (plus a fixed minute).
MERGE_SECONDS_PER_INPUT = 2.0


class NativeMergeError(AssayError):
    """libFuzzer's merge did not finish (its log says why)."""


def libfuzzer_merge(project: Any, target: Any, entries: dict[str, bytes]) -> set[str]:
    """The digests among ``entries`` that libFuzzer's ``-merge=1`` keeps for ``target``."""
    from assay.native.build import ensure_build
    from assay.native.findings import harness_flags
    from assay.native.run import run_fuzzer, sanitizer_env
    from assay.native.toolchain import find_toolchain

    if not entries:
        return set()
    tc = find_toolchain()
    build = ensure_build(target, project.root, tc=tc)
    env = sanitizer_env(embed_python=target.embed_python, symbolizer=tc.symbolizer)
    work = Path(tempfile.mkdtemp(prefix=f"assay-merge-{target.name}-"))
    try:
        src, out = work / "in", work / "out"
        src.mkdir()
        out.mkdir()
        for d, data in entries.items():
            (src / d).write_bytes(data)
        args = ["-merge=1", f"-max_len={target.max_len}", *harness_flags(target), str(out), str(src)]
        deadline = 60.0 + MERGE_SECONDS_PER_INPUT * len(entries)
        result = run_fuzzer(build.binary, args, env=env, log_path=work / "merge.log", deadline=deadline, cwd=work)
        if result.returncode != 0 or result.killed:
            raise NativeMergeError(
                f"native target {target.name!r}: libFuzzer -merge=1 failed "
                f"(exit {result.returncode}):\n{result.log[-2000:]}"
            )
        kept = {digest(p.read_bytes()) for p in out.iterdir() if p.is_file()}
        return kept & set(entries)
    finally:
        shutil.rmtree(work, ignore_errors=True)
