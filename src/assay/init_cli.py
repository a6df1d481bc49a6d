"""``assay init --ci github``: write the pull-request and nightly workflows into a project."""

from __future__ import annotations

import argparse
from pathlib import Path

from assay.argtypes import positive_int
from assay.errors import ConfigError


def register(subparsers) -> None:
    """Add ``init`` to the ``assay`` command line."""
    p = subparsers.add_parser("init", help="write CI workflows (--ci github) for this project")
    p.add_argument("--project", metavar="DIR", help="project (repository) folder (default: current folder)")
    p.add_argument("--ci", choices=("github",), help="CI provider whose workflows to write")
    p.add_argument("--force", action="store_true", help="overwrite workflow files that exist")
    g = p.add_argument_group("nightly campaign")
    g.add_argument("--shards", type=positive_int, default=4, metavar="N", help="seeded shards per target (default 4)")
    g.add_argument("--max-parallel", type=positive_int, default=2, metavar="N", help="shards at once (default 2)")
    g.add_argument("--cases", type=positive_int, default=50000, metavar="N", help="case cap per shard (default 50000)")
    g.add_argument("--budget", type=positive_int, default=240, metavar="S", help="seconds per shard (default 240)")
    g.add_argument("--python", default="3.12", metavar="VERSION", help="Python version on the runners (default 3.12)")
    g.add_argument("--install", default=None, metavar="CMD",
                   help="the install step's command (default: python -m pip install -e . assay)")
    p.set_defaults(func=cmd_init)


def cmd_init(args: argparse.Namespace) -> int:
    """Write the workflows; refuse (exit 2) to overwrite without ``--force``."""
    from assay.ci.github import WORKFLOW_DIR, Settings, render
    from assay.store.atomic import write_bytes

    if args.ci is None:
        raise ConfigError("assay init writes CI workflows: pass --ci github")
    root = Path(args.project or ".").resolve()
    if not root.is_dir():
        raise ConfigError(f"project folder {root} does not exist; pass an existing folder to --project")
    settings = Settings(shards=args.shards, max_parallel=args.max_parallel, cases=args.cases, budget=args.budget,
                        python=args.python, **({"install": args.install} if args.install else {}))
    files = {root / WORKFLOW_DIR / name: text for name, text in render(settings).items()}
    existing = [str(p) for p in files if p.exists()]
    if existing and not args.force:
        raise ConfigError(f"{', '.join(existing)} already exist(s); pass --force to overwrite")
    for path, text in files.items():
        write_bytes(path, text.encode("utf-8"))
        print(f"wrote {path}")
    return 0
