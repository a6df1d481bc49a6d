"""``assay init [--ci github]``: scaffold ``fuzz/`` and ``[tool.assay]``, and with ``--ci github`` the workflows."""

from __future__ import annotations

import argparse
from pathlib import Path

from assay.cli.argtypes import positive_int
from assay.core.errors import ConfigError


def register(subparsers) -> None:
    """Add ``init`` to the ``assay`` command line."""
    p = subparsers.add_parser(
        "init", help="create fuzz/ with an example target and [tool.assay]; --ci github also writes CI workflows"
    )
    p.add_argument("--project", metavar="DIR", help="project (repository) folder (default: current folder)")
    p.add_argument("--ci", choices=("github",), help="CI provider whose workflows to write")
    p.add_argument("--force", action="store_true", help="overwrite the example target and workflow files that exist")
    g = p.add_argument_group("nightly campaign")
    g.add_argument("--shards", type=positive_int, default=4, metavar="N", help="seeded shards per target (default 4)")
    g.add_argument("--max-parallel", type=positive_int, default=2, metavar="N", help="shards at once (default 2)")
    g.add_argument("--cases", type=positive_int, default=50000, metavar="N", help="case cap per shard (default 50000)")
    g.add_argument("--budget", type=positive_int, default=240, metavar="S", help="seconds per shard (default 240)")
    g.add_argument("--python", default="3.12", metavar="VERSION", help="Python version on the runners (default 3.12)")
    g.add_argument(
        "--install",
        default=None,
        metavar="CMD",
        help='the install step\'s command (default: python -m pip install -e . "$ASSAY_SOURCE")',
    )
    g.add_argument(
        "--assay-source",
        metavar="REQ",
        help="where CI installs assay from: a git URL (git+https://...@COMMIT), a path or a wheel "
        "(default: where this assay was installed from; assay is not on the package index)",
    )
    p.set_defaults(func=cmd_init)


def cmd_init(args: argparse.Namespace) -> int:
    """Scaffold the project (keeping what exists), then the workflows (refused, exit 2, without ``--force``)."""
    from assay.store.atomic import write_bytes

    root = Path(args.project or ".").resolve()
    if root.is_file():
        raise ConfigError(
            f"--project {args.project}: is a file, not a folder; pass the project's folder ({root.parent})"
        )
    if not root.is_dir():
        raise ConfigError(f"project folder {root} does not exist; pass an existing folder to --project")
    files: dict[Path, str] = {}
    if args.ci == "github":
        from assay.scaffold.github import WORKFLOW_DIR, Settings, render
        from assay.scaffold.install_source import install_source

        settings = Settings(
            shards=args.shards,
            max_parallel=args.max_parallel,
            cases=args.cases,
            budget=args.budget,
            python=args.python,
            assay_source=args.assay_source or install_source(),
            **({"install": args.install} if args.install else {}),
        )
        files = {root / WORKFLOW_DIR / name: text for name, text in render(settings).items()}
        existing = [str(p) for p in files if p.exists()]
        if existing and not args.force:
            raise ConfigError(f"{', '.join(existing)} already exist(s); pass --force to overwrite")
    for line in _scaffold(root, args.force):
        print(line)
    for path, text in files.items():
        write_bytes(path, text.encode("utf-8"))
        print(f"wrote {path}")
    return 0


def _scaffold(root: Path, force: bool) -> list[str]:
    """Write fuzz/<targets>.py and [tool.assay] where missing; one line per thing done, kept or decided."""
    from assay.scaffold.project import (
        has_targets_configured,
        packaging_table,
        plan_example,
        suggested_command,
        table_text,
    )
    from assay.scaffold.trial import trial
    from assay.store.atomic import write_bytes

    table = table_text(root)  # checked before anything is written
    lines = []
    targets = 1
    if has_targets_configured(root):
        lines.append("kept [tool.assay] targets in pyproject.toml (no example target written)")
    else:
        example = plan_example(root)
        targets = max(1, example.targets)
        lines += example.decisions
        if example.path.exists() and not force:
            lines.append(f"kept {example.path} (it exists; --force rewrites it)")
        else:
            write_bytes(example.path, example.text.encode("utf-8"))
            if example.targets:
                plural = "s" if example.targets != 1 else ""
                lines.append(f"wrote {example.path} ({example.targets} target{plural})")
                results = trial(example.path, root)
                lines += [f"  {r.line()}" for r in results]
                broken = [r.target for r in results if not r.runs]
                if broken:
                    lines.append(
                        f"{len(broken)} target(s) cannot run ({', '.join(broken)}): fix them in {example.path}"
                    )
            else:
                lines.append(f"wrote {example.path} (an example target calling json.loads: edit it to call your code)")
    if table is None:
        lines.append("kept the [tool.assay] table in pyproject.toml")
    else:
        write_bytes(root / "pyproject.toml", table.encode("utf-8"))
        lines.append(f"added [tool.assay] to {root / 'pyproject.toml'}")
    pyproject = root / "pyproject.toml"
    packaging = packaging_table(root, pyproject.read_text("utf-8")) if pyproject.is_file() else None
    if packaging is not None:
        write_bytes(pyproject, packaging[0].encode("utf-8"))
        lines.append(packaging[1])
    lines.append(f"next: {suggested_command(targets)}   (assay targets lists each target and what it watches)")
    return lines
