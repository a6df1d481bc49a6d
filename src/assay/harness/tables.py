"""Tables of ``[tool.assay]`` that declare targets, and who reads each.

Discovery (:mod:`assay.harness.discovery`) reads ``[tool.assay] targets`` itself; a
table such as ``[tool.assay.http]`` belongs to a package above it, which registers a
loader here (the package root does, lazily), so discovery never imports that package.
Kept apart from discovery so that registering costs ``import assay`` nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from assay.core.target import Target

#: What turns one table of ``[tool.assay]`` into targets: (project root, the table) -> targets.
TableLoader = Callable[[Path, Any], Iterable[Target]]
#: ``[tool.assay.<table>]`` sections that declare targets, by table name.  Filled by the
#: packages that define such tables (``http``), through :func:`register_table_loader`
#: from the package root, so that discovery, below them, never imports them.
TABLE_LOADERS: dict[str, TableLoader] = {}


def register_table_loader(table: str, loader: TableLoader) -> None:
    """Let ``[tool.assay.<table>]`` declare targets: ``loader(root, table)`` returns them."""
    TABLE_LOADERS[table] = loader
