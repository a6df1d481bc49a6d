"""A self-contained HTML page for one run: coverage over time, bugs, settings and seeds.

The page has no external resource (styles and SVG charts are inline; the one
script only copies replay commands), so it can be archived as a CI artifact and
opened offline.  Rendered with Jinja2 (the ``html`` extra): the template is a
page of markup, which a template engine keeps readable and escapes correctly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from assay.core.errors import ConfigError
from assay.findings.status import MEANING
from assay.reports.plot import chart
from assay.store.atomic import write_bytes

#: Input bytes shown in a bug's hexdump (the artifact keeps all of them).
HEXDUMP_BYTES = 512
_TIMELINE_ROWS = ("cases", "seconds", "edges", "corpus")


def require_jinja2() -> None:
    """Raise :class:`ConfigError` unless Jinja2 (the ``html`` extra) is installed."""
    try:
        import jinja2  # noqa: F401
    except ImportError:
        raise ConfigError("--html needs Jinja2 (assay's html extra): pip install 'jinja2>=3.1'") from None


def hexdump(data: bytes, limit: int = HEXDUMP_BYTES) -> str:
    """``xxd``-style lines (offset, 16 bytes in hex, printable ASCII) of the first ``limit`` bytes."""
    lines = []
    for off in range(0, min(len(data), limit), 16):
        chunk = data[off : off + 16]
        hexes = " ".join(f"{b:02x}" for b in chunk)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{off:08x}  {hexes:<47}  {text}")
    if len(data) > limit:
        lines.append(f"... {len(data) - limit} more bytes")
    return "\n".join(lines) if lines else "(empty input)"


def _input_of(bug: dict[str, Any]) -> bytes | None:
    for artifact in bug.get("artifacts", []):
        try:
            return (Path(artifact) / "input").read_bytes()
        except OSError:
            continue
    return None


def html_page(report: dict[str, Any]) -> str:
    """The page for ``report`` (a :func:`assay.reports.campaign.build_report` result)."""
    require_jinja2()
    import jinja2

    env = jinja2.Environment(
        loader=jinja2.PackageLoader("assay.reports", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    targets = []
    for name, t in report.get("targets", {}).items():
        timeline = t.get("timeline") or []
        charts = (
            [chart(timeline, x, f"{name}: edges and corpus against {x}") for x in ("cases", "seconds")]
            if len(timeline) >= 2
            else []
        )
        targets.append({"name": name, "t": t, "charts": charts, "points": len(timeline)})
    bugs = []
    for bug in report.get("bugs", []):
        data = _input_of(bug)
        status = bug.get("status") or ""
        bugs.append(
            {
                "b": bug,
                "hexdump": hexdump(data) if data is not None else None,
                "status": status,
                "meaning": MEANING.get(status, ""),
            }
        )
    return env.get_template("report.html.j2").render(report=report, targets=targets, bugs=bugs)


def write_html(path: str, report: dict[str, Any]) -> None:
    """Write :func:`html_page` to ``path`` atomically."""
    write_bytes(path, html_page(report).encode("utf-8"))
