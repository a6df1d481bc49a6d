"""Say so when a target's coverage scope saw almost nothing: feedback is then silently off."""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator

from assay.core.target import Target

#: A target whose scope saw fewer edges than this after a run gets a hint: a scope holding only
#: the harness file shows 0-3 (its own few branches), while even a small parser shows more.
FEW_EDGES = 4


def low_coverage_hints(outcomes: Iterable[object], targets: Iterable[Target]) -> Iterator[str]:
    """One line per target that ran cases but saw fewer than :data:`FEW_EDGES` edges, with the fix."""
    by_name = {t.name: t for t in targets}
    for outcome in outcomes:
        target = by_name.get(getattr(outcome, "name", None))  # type: ignore[arg-type]  # None: no such target
        edges, cases = getattr(outcome, "edges", 0), getattr(outcome, "cases", 0)
        if target is None or cases == 0 or edges >= FEW_EDGES:
            continue
        scope = ", ".join(_short(p) for p in getattr(outcome, "sources", ())) or "nothing"
        if target.sources:
            fix = (
                f"check that its sources ({', '.join(target.sources)}) name the Python code the target runs "
                "(a C extension or the standard library doing the work has no edges there)"
            )
        elif target.implied_sources:
            fix = (
                f"the packages it imports ({', '.join(target.implied_sources)}) ran almost no Python code (a C "
                "extension or the standard library may do the work): name the code to watch with --sources PKG "
                "or @assay.target(sources=[...])"
            )
        else:
            fix = (
                "it imports no package outside the standard library and test tools, so only its own file is "
                'watched: name the code under test with --sources PKG or @assay.target(sources=["yourpackage"])'
            )
        yield f"{target.name}: only {edges} edge(s) seen in its coverage scope ({scope}): feedback is nearly off; {fix}"


def _short(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return rel if not rel.startswith("..") else path
