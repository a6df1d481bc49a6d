"""Each written target imported and called once, in a child process, before ``assay init`` finishes.

A target that cannot run (its file does not import, or its own code fails: a
wrong name, a call with the wrong arguments) is reported by init rather than by
the first fuzz run.  An exception from the project's code on the trial input is
fine: it is an expected rejection or a finding for ``assay fuzz`` to make.
Run as ``python -m assay.scaffold.trial FILE ROOT OUT`` (the child writes its
results to OUT as JSON).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: The input each target is called with once.
TRIAL_INPUT = b"1"
#: Seconds the child may take for all targets of a file.
TRIAL_TIMEOUT = 120.0


@dataclass(frozen=True)
class Trial:
    """How one target's trial call went."""

    target: str
    runs: bool
    detail: str

    def line(self) -> str:
        return f"{'ran    ' if self.runs else 'CANNOT RUN'} {self.target}: {self.detail}"


def trial(path: Path, root: Path) -> list[Trial]:
    """Import ``path`` and call each of its targets once, in a child process."""
    with tempfile.TemporaryDirectory(prefix="assay-init-") as work:
        out = Path(work) / "trial.json"
        env = {
            **os.environ,
            "TMPDIR": work,  # an argument's temporary file goes where it is cleaned up
            "PYTHONPATH": os.pathsep.join(
                filter(None, [str(root / "src"), str(root), os.environ.get("PYTHONPATH", "")])
            ),
        }
        try:
            done = subprocess.run(
                [sys.executable, "-m", "assay.scaffold.trial", str(path), str(root), str(out)],
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=TRIAL_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return [Trial(path.name, False, f"calling the targets once took over {TRIAL_TIMEOUT:.0f} s")]
        if not out.is_file():
            last = (done.stderr.strip().splitlines() or ["no output"])[-1]
            return [Trial(path.name, False, f"the trial process failed ({last})")]
        return [Trial(**row) for row in json.loads(out.read_text("utf-8"))]


def main(argv: list[str]) -> int:
    """The child: import the file, call each target once, write the results."""
    from assay.core.observe import OracleFailure
    from assay.core.verdict import classify, code_frames
    from assay.harness.discovery import import_file, make_importable, targets_in

    path, root, out = Path(argv[0]).resolve(), Path(argv[1]), Path(argv[2])
    make_importable(root)
    rows: list[dict[str, object]] = []
    try:
        targets = targets_in(import_file(path, root))
    except Exception as exc:  # noqa: BLE001 - any import failure is what the trial reports
        rows.append({"target": path.name, "runs": False, "detail": f"cannot be imported: {exc}"})
        targets = []
    for target in targets:
        try:
            target(TRIAL_INPUT)
        except Exception as exc:  # noqa: BLE001 - judged below
            frames = code_frames(exc.__traceback__)
            glue = not isinstance(exc, OracleFailure) and bool(frames) and Path(frames[0].file).resolve() == path
            message = (str(exc).strip().splitlines() or [""])[0][:160]
            what = f"{type(exc).__name__}: {message}"
            if glue:
                rows.append({"target": target.name, "runs": False, "detail": f"its own code fails: {what}"})
            elif classify(exc, target.expected, target.expected_from) is None:
                rows.append({"target": target.name, "runs": True, "detail": f"rejected the trial input ({what})"})
            else:
                where = frames[0].identity if frames else "?"
                rows.append({"target": target.name, "runs": True, "detail": f"raised {what} in {where}: a finding"})
        else:
            rows.append({"target": target.name, "runs": True, "detail": "returned"})
    out.write_text(json.dumps(rows), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
