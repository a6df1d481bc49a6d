"""Oracle helpers a target calls to judge a run beyond "it did not crash".

Each helper raises :class:`~assay.core.observe.OracleFailure` (or its ``invariant``
subclass) with a tag, a relation name and a kind, so the finding's signature is
``<tag>:<name>/<kind>`` and distinct broken relations never dedup together:

* ``invariant``: :func:`rechunk`, :func:`round_trip`, :func:`idempotent`,
  :func:`monotonic`, :func:`monotonic_sequence` (metamorphic relations);
* ``error-shape``: :func:`error_shape` (a validator and its user disagree);
* ``differential``: :func:`differential` with an explicit :class:`AllowList`;
* ``http-5xx`` / ``path-escape``: :func:`wsgi_call`, :func:`no_5xx`,
  :func:`http_5xx`, :func:`plant_secret`, :func:`no_secret` (an in-process
  WSGI app).

Layer: may import :mod:`assay.core` only; a target calls these, the engine never does.
"""

from assay.oracles._common import Outcome
from assay.oracles.differential import NOTHING_ALLOWED, Allow, AllowList, both_raise, differential, errors_are
from assay.oracles.errorshape import Shape, error_shape
from assay.oracles.http import PlantedSecret, WsgiResponse, http_5xx, no_5xx, no_secret, plant_secret, wsgi_call
from assay.oracles.metamorphic import (
    derive_chunkings,
    idempotent,
    monotonic,
    monotonic_sequence,
    rechunk,
    round_trip,
)

__all__ = [
    "Allow",
    "AllowList",
    "NOTHING_ALLOWED",
    "Outcome",
    "PlantedSecret",
    "Shape",
    "WsgiResponse",
    "both_raise",
    "derive_chunkings",
    "differential",
    "error_shape",
    "errors_are",
    "http_5xx",
    "idempotent",
    "monotonic",
    "monotonic_sequence",
    "no_5xx",
    "no_secret",
    "plant_secret",
    "rechunk",
    "round_trip",
    "wsgi_call",
]
