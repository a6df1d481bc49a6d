"""Safety for HTTP targets: a handler that starts a process or writes outside the
worker's temp folder is refused by the campaign's sandbox and becomes a ``safety``
finding; the side effect never happens."""

from __future__ import annotations

import subprocess
from pathlib import Path

from flask import Flask

from assay.http import http_target


def _app(marker: Path) -> Flask:
    app = Flask("sandboxed")

    @app.get("/spawn")
    def spawn():
        subprocess.run(["true"], check=False)
        return "spawned"

    @app.get("/write")
    def write():
        marker.write_text("written")
        return "wrote"

    return app


def test_handler_side_effects_are_safety_findings(campaign, tmp_path):
    marker = tmp_path / "outside" / "marker.txt"
    marker.parent.mkdir()
    surface = http_target(_app(marker), routes=["GET /spawn", "GET /write"], register=False, name="http_sandboxed")
    result = campaign([surface.assay_target], cases=200, seed=1)
    oracles = {f.signature.split(":", 1)[0] for f in result.targets[0].findings}
    keys = " ".join(f.signature for f in result.targets[0].findings)
    assert oracles == {"safety"}, keys
    assert "subprocess" in keys or "os.posix_spawn" in keys or "os.fork" in keys or "exec" in keys, keys
    assert "open" in keys, keys
    assert not marker.exists()  # refused, not performed
