"""Response oracles for one operation: ``http-5xx`` and response conformance (``error-shape``).

Conformance has three checks, each an ``error-shape`` finding keyed
``<operation>/<check>``:

* ``status:<code>``: the status is not documented for the operation (no exact
  code, no ``NXX`` range, no ``default``);
* ``content-type:<code>``: the response's media type is not one the document
  lists for that status;
* ``body:<pointer class>:<keyword>``: the JSON body fails the documented
  schema (checked by ``jsonschema``); the pointer class is the failing JSON
  pointer with array indices folded to ``*`` so one bug keeps one signature.

A 5xx is ``http-5xx`` (``<operation>/<code>``) unless the operation documents
that status or the user excluded it; status conformance leaves 5xx to it.
"""

from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from typing import Any

from assay.core.observe import OracleFailure, feature
from assay.http.openapi import Document, Operation, escape
from assay.oracles._common import short_repr
from assay.oracles.http import MAX_BODY_KEPT, WsgiResponse

#: The conformance checks, all on by default.
CHECKS = ("status", "content-type", "body")
_DOC_URI = "urn:assay:openapi"


@dataclass
class Conformance:
    """Judges responses of one document's operations; builds ``jsonschema`` validators once."""

    doc: Document | None
    checks: tuple[str, ...] = CHECKS
    allow_5xx: tuple[str, ...] = ()
    _validators: dict[str, Any] = field(default_factory=dict)
    _registry: Any = None

    def excluded_5xx(self, op: Operation, status: int) -> bool:
        """A 5xx the operation documents, or one ``allow_5xx`` lists (``"<op pattern>:<code>"`` or ``"<code>"``)."""
        if str(status) in op.responses or f"{str(status)[0]}XX" in op.responses:
            return True
        for rule in self.allow_5xx:
            pattern, _, code = rule.rpartition(":") if ":" in rule else ("*", "", rule)
            if code in (str(status), "*", "5XX") and (
                fnmatch.fnmatchcase(op.label, pattern) or fnmatch.fnmatchcase(op.path, pattern)
            ):
                return True
        return False

    def judge(self, op: Operation, response: WsgiResponse, method: str, *, rerouted: bool = False) -> None:
        """Raise :class:`OracleFailure` on a 5xx or a non-conforming response.

        ``rerouted`` requests (path mutated or violated) may have reached another
        route or none, so only ``http-5xx`` judges them.
        """
        feature(f"http.{op.label}.status", response.status)
        if 500 <= response.status <= 599:
            if not self.excluded_5xx(op, response.status):
                raise OracleFailure(
                    op.label,
                    f"server error {response.status}",
                    kind=str(response.status),
                    oracle="http-5xx",
                    data=_data(response),
                )
            return
        if self.doc is None or not op.responses or rerouted:
            return
        key = self._documented(op, response.status)
        if key is None:
            if "status" in self.checks:
                raise OracleFailure(
                    op.label,
                    f"status {response.status} is not documented for the operation",
                    kind=f"status:{response.status}",
                    oracle="error-shape",
                    data=_data(response),
                )
            return
        content = (op.responses.get(key) or {}).get("content")
        if not isinstance(content, dict) or not content or method == "HEAD" or response.status in (204, 304):
            return
        media = (response.header("content-type") or "").split(";")[0].strip().lower()
        if "content-type" in self.checks and not any(_media_match(m, media) for m in content):
            raise OracleFailure(
                op.label,
                f"content type {media or '(none)'!r} is not documented for {key}",
                kind=f"content-type:{key}",
                oracle="error-shape",
                data=_data(response),
            )
        if "body" not in self.checks:
            return
        documented = next((m for m in content if _media_match(m, media)), None)
        if documented is None or not (media == "application/json" or media.endswith("+json")):
            return
        if not isinstance(content[documented], dict) or "schema" not in content[documented]:
            return
        try:
            body = json.loads(response.body)
        except (ValueError, UnicodeDecodeError):
            raise OracleFailure(
                op.label,
                "the body is not JSON though the content type says so",
                kind=f"body:not-json:{key}",
                oracle="error-shape",
                data=_data(response),
            ) from None
        pointer = f"{op.pointer}/responses/{escape(key)}/content/{escape(documented)}/schema"
        error = next(iter(self._validator(pointer).iter_errors(body)), None)
        if error is not None:
            where = "".join("/" + ("*" if isinstance(p, int) else escape(str(p))) for p in error.absolute_path)
            raise OracleFailure(
                op.label,
                f"body violates the documented schema at {where or '/'}: {error.message}",
                kind=f"body:{where or '/'}:{error.validator}",
                oracle="error-shape",
                data={**_data(response), "pointer": "".join("/" + escape(str(p)) for p in error.absolute_path)},
            )

    def _documented(self, op: Operation, status: int) -> str | None:
        code = str(status)
        for key in (code, f"{code[0]}XX", f"{code[0]}xx", "default"):
            if key in op.responses:
                return key
        return None

    def _validator(self, pointer: str) -> Any:
        validator = self._validators.get(pointer)
        if validator is None:
            import jsonschema
            from referencing import Registry, Resource
            from referencing.jsonschema import DRAFT4, DRAFT202012

            assert self.doc is not None
            spec = DRAFT4 if self.doc.draft == 4 else DRAFT202012
            if self._registry is None:
                self._registry = Registry().with_resource(_DOC_URI, Resource(contents=self.doc.raw, specification=spec))  # type: ignore[call-arg]  # attrs
            cls = jsonschema.Draft4Validator if self.doc.draft == 4 else jsonschema.Draft202012Validator
            validator = cls({"$ref": _DOC_URI + pointer}, registry=self._registry)
            self._validators[pointer] = validator
        return validator


def _media_match(documented: str, actual: str) -> bool:
    documented = documented.split(";")[0].strip().lower()
    if documented in ("*/*", actual):
        return True
    if documented.endswith("/*"):
        return actual.startswith(documented[:-1])
    return False


def _data(response: WsgiResponse) -> dict[str, Any]:
    return {"status": response.status, "body": short_repr(response.body[:MAX_BODY_KEPT])}
