"""An HTTP target is an ordinary bytes target: same seed and case cap, same schedule and findings."""

from __future__ import annotations

from http_apps import EXAMPLES  # noqa: F401 - puts examples/http on the path

from assay.http import http_target


def test_same_seed_same_schedule_digest_and_findings(campaign, tmp_path):
    import notes_flask

    app = notes_flask.create_app(tmp_path / "notes")
    surface = http_target(
        app, notes_flask.OPENAPI, served_root=app.config["ATTACHMENTS"], register=False, name="http_notes_det"
    )
    runs = [
        campaign([surface.assay_target], cases=400, seed=7, corpus=tmp_path / f"c{i}", artifacts=tmp_path / f"a{i}")
        for i in range(2)
    ]
    first, second = (r.targets[0] for r in runs)
    assert first.schedule_digest and first.schedule_digest == second.schedule_digest
    assert sorted(f.signature for f in first.findings) == sorted(f.signature for f in second.findings)
