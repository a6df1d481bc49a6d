"""The FastAPI shop as a fuzz target, from its own OpenAPI document (``app.openapi()``)."""

from shop_fastapi import app

import assay.http

shop = assay.http.http_target(
    app,
    name="http_shop",
    served_root=app.state.files_dir,  # plants a secret next to the served folder (path-escape)
    sources=["shop_fastapi.py"],
)
