"""Say so when a target's coverage scope misses the code it runs: feedback is then partly or wholly off.

Two signs, one line per target: most of the Python code its inputs ran (outside
the standard library and test tools) lies outside its scope, which names the
packages to add; or, with nothing to name, its scope saw almost no edges.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass

from assay.core.target import Target

#: A target whose scope saw fewer edges than this after a run gets a hint: a scope holding only
#: the harness file shows 0-3 (its own few branches), while even a small parser shows more.
FEW_EDGES = 4
#: Share of a target's executed lines outside its scope above which the run warns: past half,
#: most of what the inputs do is invisible to the feedback.
MOSTLY_OUTSIDE = 0.5
#: Packages named in the warning at most (the largest first).
NAMED_PACKAGES = 3
#: Share of the lines a target's first cases ran that a package outside its default scope must
#: hold to join that scope ("executed by first cases"): a helper that ran a few lines stays out.
FOLLOW_SHARE = 0.1
#: The reason of a package that joined the default scope that way.
EXECUTED_BY_FIRST_CASES = "executed by first cases"


@dataclass(frozen=True)
class ExecutedLines:
    """Lines of Python code a target's inputs ran: in its scope, and per package outside it."""

    inside: int
    outside: dict[str, int]

    @property
    def outside_share(self) -> float:
        total = self.inside + sum(self.outside.values())
        return sum(self.outside.values()) / total if total else 0.0


def packages_to_follow(executed: ExecutedLines) -> list[str]:
    """Packages outside the scope that ran at least :data:`FOLLOW_SHARE` of the executed lines, largest first."""
    total = executed.inside + sum(executed.outside.values())
    ranked = sorted(executed.outside.items(), key=lambda item: (-item[1], item[0]))
    return [pkg for pkg, lines in ranked if total and lines >= FOLLOW_SHARE * total]


def outside_scope_hint(name: str, executed: ExecutedLines) -> str | None:
    """The warning for a target most of whose executed lines lie outside its scope, else ``None``."""
    if executed.outside_share <= MOSTLY_OUTSIDE:
        return None
    ranked = sorted(executed.outside.items(), key=lambda item: (-item[1], item[0]))[:NAMED_PACKAGES]
    total = executed.inside + sum(executed.outside.values())
    named = ", ".join(f"{pkg} ({lines} lines)" for pkg, lines in ranked)
    flags = " ".join(f"--sources {pkg}" for pkg, _ in ranked)
    return (
        f"{name}: {total - executed.inside} of the {total} lines of Python code its inputs ran lie outside its "
        f"coverage scope, in {named}: feedback misses most of the work; watch them with {flags} (add the "
        "target's own packages too) or sources=[...]"
    )


def low_coverage_hints(
    outcomes: Iterable[object], targets: Iterable[Target], executed: Mapping[str, ExecutedLines] | None = None
) -> Iterator[str]:
    """One line per target whose scope misses its code (see the module docstring), with the fix.

    ``executed`` maps a target's name to what its inputs ran (absent: not measured).
    """
    by_name = {t.name: t for t in targets}
    for outcome in outcomes:
        target = by_name.get(getattr(outcome, "name", None))  # type: ignore[arg-type]  # None: no such target
        edges, cases = getattr(outcome, "edges", 0), getattr(outcome, "cases", 0)
        if target is None or cases == 0:
            continue
        ran = (executed or {}).get(target.name)
        hint = outside_scope_hint(target.name, ran) if ran is not None else None
        if hint is not None:
            yield hint
            continue
        if edges >= FEW_EDGES:
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
