"""``schema=`` targets: the JSON strategy on a real schema, judged by ``jsonschema``, and ``assay fuzz`` on it."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest

from assay.core.errors import ConfigError, TargetError
from assay.gen.schema import generate, judge
from assay.gen.schema.strategy import SchemaStrategy, load_schema
from assay.gen.strategy import get_strategy
from assay.harness.define import make_target

validate_pyproject = pytest.importorskip("validate_pyproject")
pytest.importorskip("pyproject_metadata")

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "schema"
#: The PEP 621 ``[project]`` schema validate-pyproject ships (draft 7).
PEP621 = Path(validate_pyproject.__file__).parent / "project_metadata.schema.json"


def _pointer(error: jsonschema.ValidationError) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in error.absolute_path)


def _errors(schema: dict, value: object) -> list[jsonschema.ValidationError]:
    return list(jsonschema.validators.validator_for(schema)(schema).iter_errors(value))


def _outputs(strategy: SchemaStrategy, seed: int, count: int) -> list:
    """What the engine gets from the strategy: fresh values, mutations and crossovers of earlier ones."""
    rng = random.Random(seed)
    pool = [strategy.generate(rng) for _ in range(4)]
    out = list(pool)
    for i in range(count):
        if i % 3 == 0:
            made = strategy.generate(rng)
        elif i % 3 == 1:
            made = strategy.mutate(pool[rng.randrange(len(pool))], rng)
        else:
            made = strategy.crossover(pool[rng.randrange(len(pool))], pool[rng.randrange(len(pool))], rng)
        pool.append(made)
        out.append(made)
    return out


@pytest.mark.parametrize("mode", ["valid", "adjacent", "both"])
def test_every_strategy_output_is_what_the_mode_declares(mode: str) -> None:
    schema = load_schema(PEP621)
    strategy = SchemaStrategy(schema, mode)
    kinds = {"valid": 0, "adjacent": 0}
    for made in _outputs(strategy, seed=3, count=60):
        data = strategy.render(made)
        value = json.loads(data)
        assert value == made.value
        errors = _errors(schema, value)
        if mode == "valid" or (mode == "both" and made.mode == "valid"):
            assert made.mode == "valid" and not errors, [(e.validator, _pointer(e)) for e in errors]
        else:
            assert made.mode == "adjacent" and len(errors) == 1, [(e.validator, _pointer(e)) for e in errors]
            assert (errors[0].validator, _pointer(errors[0])) == (made.violation, made.path)
        assert strategy.parse(data).mode == made.mode
        kinds[made.mode] += 1
    if mode == "both":
        assert kinds["valid"] >= 15 and kinds["adjacent"] >= 15, kinds


def test_both_mode_draws_its_coin_from_the_case_rng() -> None:
    strategy = SchemaStrategy(load_schema(PEP621), "both")
    first = [strategy.render(strategy.generate(random.Random(seed))) for seed in range(12)]
    again = [strategy.render(strategy.generate(random.Random(seed))) for seed in range(12)]
    assert first == again
    assert len(set(first)) == 12


def test_shrink_candidates_are_simpler_and_bounded() -> None:
    strategy = SchemaStrategy(load_schema(PEP621), "valid")
    made = strategy.parse(json.dumps({"name": "spam", "version": "1.0", "keywords": ["a", "b"]}).encode())
    candidates = [strategy.render(c) for c in strategy.shrink_candidates(made)]
    assert b'{"version":"1.0","keywords":["a","b"]}' in candidates
    assert b'{"name":"spam","version":"1.0","keywords":["b"]}' in candidates
    assert all(len(c) < len(strategy.render(made)) for c in candidates)
    assert strategy.parse(b"{not json") is None


def test_schema_target_registers_a_strategy_named_by_contents(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}}, "required": ["n"]}
    a = make_target(lambda data: None, name="a", schema=schema, schema_mode="adjacent")
    b = make_target(lambda data: None, name="b", schema=dict(schema), schema_mode="adjacent")
    c = make_target(lambda data: None, name="c", schema=schema, schema_mode="valid")
    assert a.strategy == b.strategy != c.strategy
    assert a.strategy.startswith("schema-") and a.strategy.endswith("@1")
    strategy = get_strategy(a.strategy)
    for seed in range(20):
        value = json.loads(strategy.render(strategy.generate(random.Random(seed))))
        assert len(_errors(schema, value)) == 1
    path = tmp_path / "n.schema.json"
    path.write_text(json.dumps(schema))
    d = make_target(lambda data: None, name="d", schema=str(path), schema_mode="valid")
    assert d.strategy.startswith("schema-n-") and d.strategy.endswith(c.strategy.rsplit("-", 1)[1])


def test_schema_target_settings_are_checked(tmp_path: Path) -> None:
    def body(data: bytes) -> None:
        return None

    with pytest.raises(TargetError, match="not both"):
        make_target(body, schema={"type": "string"}, strategy="json@1")
    with pytest.raises(TargetError, match="schema mode must be one of"):
        make_target(body, schema={"type": "string"}, schema_mode="mixed")
    with pytest.raises(TargetError, match="does not exist"):
        make_target(body, schema=str(tmp_path / "missing.json"))
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(TargetError, match="not a readable JSON document"):
        make_target(body, schema=str(tmp_path / "bad.json"))
    with pytest.raises(TargetError, match="single-violation"):
        make_target(body, schema={}, schema_mode="adjacent")  # accepts everything: nothing is adjacent
    with pytest.raises(TargetError, match="needs schema"):
        make_target(body, schema_mode="valid")
    with pytest.raises(TargetError, match="must be JSON data"):
        make_target(body, schema={"enum": [b"bytes"]})
    with pytest.raises(TargetError, match="draft 3"):
        make_target(body, schema={"$schema": "http://json-schema.org/draft-03/schema#"})


def test_without_jsonschema_generation_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    monkeypatch.setattr(judge, "_CACHE", type(judge._CACHE)())
    with pytest.raises(ConfigError, match=r"pip install 'jsonschema>=4.20'"):
        generate({"type": "integer"}, random.Random(0))
    with pytest.raises(TargetError, match=r"target 'needs_it': .*pip install 'jsonschema>=4.20'"):
        make_target(lambda data: None, name="needs_it", schema={"type": "integer", "minimum": 3})


def _consume(data: bytes) -> None:
    value = json.loads(data)
    if isinstance(value, dict) and value.get("n", 0) > 2:
        raise ValueError("n too large")


@pytest.mark.campaign
def test_schema_target_campaign_is_deterministic(campaign, tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer", "maximum": 3}, "tags": {"type": "array"}}}
    runs = []
    for i in range(2):
        target = make_target(_consume, name="det", schema=schema, expected=(ValueError,), max_len=512)
        runs.append(campaign([target], cases=150, seed=5, corpus=tmp_path / f"c{i}", artifacts=tmp_path / f"a{i}"))
    assert runs[0].targets[0].schedule_digest == runs[1].targets[0].schedule_digest
    assert runs[0].targets[0].strategy.startswith("schema-")


def _assay(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay", *args], capture_output=True, text=True, timeout=300)


@pytest.mark.campaign
def test_assay_fuzz_on_the_example_finds_a_real_and_the_planted_bug(tmp_path: Path) -> None:
    report = tmp_path / "report.json"
    # The command examples/schema/README.md documents.
    r = _assay(
        "fuzz",
        "--project",
        str(EXAMPLE),
        "--fuzz-cases",
        "2500",
        "--fuzz-seed",
        "12",
        "--fuzz-corpus",
        str(tmp_path / "corpus"),
        "--fuzz-artifacts",
        str(tmp_path / "artifacts"),
        "--report",
        str(report),
    )
    assert r.returncode == 1, r.stderr
    targets = json.loads(report.read_text())["targets"]
    card, consumer = targets["project_card"], targets["pyproject_metadata_project"]
    planted = [f for f in card["findings"] if f["signature"] == "panic:builtins.IndexError@project_table:project_card"]
    assert len(planted) == 1, card["findings"]
    # A real pyproject-metadata 0.12.1 bug on a schema-valid table: license-files = [""] reaches
    # pathlib's glob("") (ValueError) instead of a ConfigurationError.
    (real,) = [f for f in consumer["findings"] if f["signature"].startswith("panic:builtins.ValueError@")]
    assert "_get_files_from_globs" in real["signature"]
    table = json.loads((Path(real["artifact"]) / "input").read_bytes())
    assert "" in table["license-files"]
    assert not _errors(load_schema(PEP621), table)
    # The other real one, on an adjacent table: a dynamic that is not an array ("", 0).
    assert any(
        f["signature"].startswith("panic:builtins.AttributeError@pyproject_metadata") for f in consumer["findings"]
    )
    assert card["strategy"].startswith("schema-") and card["strategy"] != consumer["strategy"]
    found = json.loads((Path(planted[0]["artifact"]) / "input").read_bytes())
    assert found["description"] == ""


_HARNESS = """
import assay

LOG = {log!r}
SCHEMA = {schema!r}

def _log(mode, data):
    with open(f"{{LOG}}/{{mode}}.jsonl", "a") as f:
        f.write(data.hex() + "\\n")

@assay.target(schema=SCHEMA, schema_mode="valid", allow=[f"write:{{LOG}}"], max_len=8192)
def declared_valid(data):
    _log("valid", data)

@assay.target(schema=SCHEMA, schema_mode="adjacent", allow=[f"write:{{LOG}}"], max_len=8192)
def declared_adjacent(data):
    _log("adjacent", data)

@assay.target(schema=SCHEMA, schema_mode="both", allow=[f"write:{{LOG}}"], max_len=8192)
def declared_both(data):
    _log("both", data)
"""


@pytest.mark.campaign
def test_inputs_assay_fuzz_feeds_are_valid_or_adjacent_as_declared(tmp_path: Path) -> None:
    """Strategy outputs are exact; the engine byte-mutates a share of mutated values on top, so not all are."""
    log = tmp_path / "log"
    log.mkdir()
    (tmp_path / "fuzz").mkdir()
    (tmp_path / "fuzz" / "declared.py").write_text(_HARNESS.format(log=str(log), schema=str(PEP621)))
    (tmp_path / "pyproject.toml").write_text('[tool.assay]\ntargets = ["fuzz"]\n')
    r = _assay("fuzz", "--project", str(tmp_path), "--fuzz-cases", "200", "--fuzz-seed", "2")
    assert r.returncode == 0, r.stdout + r.stderr
    schema = load_schema(PEP621)
    for mode in ("valid", "adjacent", "both"):
        counts = {"valid": 0, "adjacent": 0, "other": 0}
        inputs = [bytes.fromhex(line) for line in (log / f"{mode}.jsonl").read_text().split()]
        assert len(inputs) >= 200
        for data in inputs:
            try:
                errors = len(_errors(schema, json.loads(data)))
            except (ValueError, RecursionError):  # byte mutations on top: not JSON, or nested too deep
                errors = -1
            counts["valid" if errors == 0 else "adjacent" if errors == 1 else "other"] += 1
        declared = counts["valid"] + counts["adjacent"] if mode == "both" else counts[mode]
        assert declared >= 0.8 * len(inputs), (mode, counts)
        if mode != "both":
            assert counts["adjacent" if mode == "valid" else "valid"] <= 0.05 * len(inputs), (mode, counts)
        else:
            assert min(counts["valid"], counts["adjacent"]) >= 0.25 * len(inputs), counts
