"""The sample inputs a project keeps beside its code, as seeds for the targets ``assay init`` writes.

A parser's project often holds real inputs (a certificate, a config file, a
capture) in a folder such as ``samples/`` or ``tests/data/``.  A fuzzer that
starts from them is past the format's first checks at case one; one that starts
from nothing may never build a well-formed certificate.  init points each target
that takes one input whole at the first such folder it finds.
"""

from __future__ import annotations

from pathlib import Path

#: Folder names that hold sample inputs, tried in order at the project root, then under tests/ and test/.
SAMPLE_FOLDERS = ("samples", "sample", "testdata", "test_data", "test-data", "fixtures", "corpus", "data")
#: Largest sample file taken as a seed (the default max_len: a longer input is cut anyway).
MAX_SEED_BYTES = 4096
#: Most sample files a target is seeded with.
MAX_SEEDS = 64


def find_samples(root: Path) -> tuple[Path, list[Path]] | None:
    """The first sample folder of the project at ``root`` holding a file of at most :data:`MAX_SEED_BYTES`,
    with its :func:`seed_files` (one listing serves both the pick and init's count)."""
    for base in (root, root / "tests", root / "test"):
        for name in SAMPLE_FOLDERS:
            folder = base / name
            if folder.is_dir() and (files := seed_files(folder)):
                return folder, files
    return None


def seed_files(folder: Path) -> list[Path]:
    """The files of ``folder`` (not below it) that can be seeds, in name order."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))
    return [p for p in files if p.stat().st_size <= MAX_SEED_BYTES][:MAX_SEEDS]


def seeds_block(root: Path, folder: Path) -> str:
    """The lines of the target file that read the folder's files as ``SEEDS``."""
    where = folder.relative_to(root).as_posix()
    parts = ", ".join(f'"{part}"' for part in folder.relative_to(root).parts)
    return (
        f"# The project's sample inputs ({where}/, files up to {MAX_SEED_BYTES} bytes) seed the targets\n"
        "# that take one input whole.\n"
        f"SAMPLES = pathlib.Path(__file__).resolve().parents[1].joinpath({parts})\n"
        "SEEDS = tuple(\n"
        "    p.read_bytes()\n"
        "    for p in sorted(SAMPLES.iterdir())\n"
        f'    if p.is_file() and not p.name.startswith(".") and p.stat().st_size <= {MAX_SEED_BYTES}\n'
        f")[:{MAX_SEEDS}]\n"
    )
