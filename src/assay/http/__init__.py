"""HTTP surfaces: ASGI and WSGI apps driven in-process from their OpenAPI documents.

Frameworks are never imported here: an app is driven through its own calling
convention, and ``jsonschema`` is imported only when a response is checked.

Layer: may import the promoter and everything below; never compose, mutant or native.
"""

from assay.http.callers import app_kind, asgi_call, call
from assay.http.conformance import CHECKS, Conformance
from assay.http.openapi import Document, OpenAPIError, Operation, parse
from assay.http.request import Request
from assay.http.select import SAFE_METHODS
from assay.http.target import HttpSurface, http_target

__all__ = [
    "CHECKS",
    "Conformance",
    "Document",
    "HttpSurface",
    "OpenAPIError",
    "Operation",
    "Request",
    "SAFE_METHODS",
    "app_kind",
    "asgi_call",
    "call",
    "http_target",
    "parse",
]
