"""HTTP targets declared in ``pyproject.toml``: ``[tool.assay.http.<name>]``.

::

    [tool.assay.http.shop]
    app = "shop_fastapi:app"             # module:attribute (dotted attributes allowed)
    openapi = "openapi.json"             # a file, "module:attribute", or absent: the app's own / its routes
    allow = ["createItem", "tag:write"]  # besides GET/HEAD/OPTIONS
    exclude = ["/admin/*"]
    served_root = "shop_fastapi:app.state.files_dir"   # a folder, or module:attribute
    allow_5xx = ["getHealth:503"]
    checks = ["status", "content-type", "body"]
    sources = ["shop_fastapi.py"]
    max_len = 2048
    timeout = 2.0

Modules are imported with the project root on ``sys.path``.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
from pathlib import Path
from typing import Any

from assay.core.errors import ConfigError
from assay.core.target import Target

#: Keys a ``[tool.assay.http.<name>]`` table accepts.
KEYS = frozenset(
    {
        "app",
        "openapi",
        "routes",
        "allow",
        "exclude",
        "served_root",
        "allow_5xx",
        "checks",
        "sources",
        "max_len",
        "timeout",
        "replays",
        "seeds",
    }
)


def _object(spec: str, root: Path, where: str) -> Any:
    module_name, _, attrs = spec.partition(":")
    if not attrs:
        raise ConfigError(f"{where}: {spec!r} must be 'module:attribute'")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        value: Any = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure is a configuration error naming the module
        raise ConfigError(f"{where}: module {module_name!r} failed to import: {type(exc).__name__}: {exc}") from None
    for attr in attrs.split("."):
        try:
            value = getattr(value, attr)
        except AttributeError:
            raise ConfigError(f"{where}: {spec!r} has no attribute {attr!r}") from None
    return value


def _path_or_object(value: Any, root: Path, where: str) -> Any:
    if isinstance(value, str) and ":" in value and not Path(root / value).exists():
        return _object(value, root, where)
    if isinstance(value, str):
        return root / value
    raise ConfigError(f"{where} must be a path or 'module:attribute', not {value!r}")


def targets_from_config(root: Path, section: Any) -> list[Target]:
    """The targets of every ``[tool.assay.http.<name>]`` table (none registered globally)."""
    from assay.http.target import http_target

    if not section:
        return []
    if not isinstance(section, dict):
        raise ConfigError("[tool.assay.http] must be a table of tables: [tool.assay.http.<name>]")
    out = []
    for name, table in sorted(section.items()):
        where = f"[tool.assay.http.{name}]"
        if not isinstance(table, dict):
            raise ConfigError(f"{where} must be a table")
        unknown = sorted(set(table) - KEYS)
        if unknown:
            raise ConfigError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(KEYS))}")
        if not isinstance(table.get("app"), str):
            raise ConfigError(f"{where}: app = 'module:attribute' is required")
        app = _object(table["app"], root, f"{where} app")
        openapi = _path_or_object(table["openapi"], root, f"{where} openapi") if "openapi" in table else None
        served = table.get("served_root")
        options = {
            k: table[k]
            for k in ("routes", "allow", "exclude", "allow_5xx", "checks", "max_len", "timeout", "replays", "seeds")
            if k in table
        }
        module_file = getattr(sys.modules.get(table["app"].partition(":")[0]), "__file__", None) or ""
        sources = [str(root / s) for s in table.get("sources", [])] or ([module_file] if module_file else [])
        surface = http_target(
            app,
            openapi,
            name=name,
            register=False,
            served_root=_path_or_object(served, root, f"{where} served_root") if served is not None else None,
            sources=sources,
            **options,
        )
        assert surface.assay_target is not None
        out.append(dataclasses.replace(surface.assay_target, defined_in=module_file))
    return out
