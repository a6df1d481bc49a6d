"""The Flask notes app as a fuzz target, from its hand-written OpenAPI 3.0 document."""

from notes_flask import OPENAPI, app

import assay.http

notes = assay.http.http_target(
    app,
    OPENAPI,
    name="http_notes",
    served_root=app.config["ATTACHMENTS"],
    sources=["notes_flask.py"],
)
