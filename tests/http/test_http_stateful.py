"""Stateful sequences: the table, its invariants, the Hypothesis machine and the promoter."""

from __future__ import annotations

import asyncio
import dataclasses

import pytest
from http_apps import EXAMPLES

from assay.core.config import load_project
from assay.core.errors import ConfigError
from assay.core.observe import OracleFailure
from assay.engine.execute import run_input
from assay.http.machine import find_sequence, promote_sequence
from assay.http.stateful import StateSpec, encode, pointer_value
from assay.promote.summary import KNOWN, PROMOTED


def test_encode_decodes_back_exactly():
    import states_shop

    spec = states_shop.SHOP_STATES
    steps = [(1, 7, b"abc"), (3, 65535, b""), (2, 0, bytes(range(40)))]
    assert spec.decode(encode(steps)) == steps


def test_link_expressions():
    assert pointer_value("$response.body#/id", {"id": 4}) == 4
    assert pointer_value("$response.body#/items/1/a~1b", {"items": [{}, {"a/b": "x"}]}) == "x"
    with pytest.raises(ConfigError, match="not supported"):
        pointer_value("$request.path.id", {})


def test_table_naming_an_unselected_operation_is_refused():
    from shop_fastapi import create_app

    with pytest.raises(ConfigError, match="createItem"):
        StateSpec("bad", create_app, links={"createItem": {"item": "$response.body#/id"}})


def test_only_a_sequence_finds_the_cache_bug_and_it_is_promoted(tmp_path):
    import states_shop

    spec = states_shop.SHOP_STATES
    target = states_shop.shop_states.assay_target
    data = find_sequence(spec, max_examples=40, steps=6)
    assert data is not None
    ops = [step["operation"] for step in spec.describe(data) if "request" in step]
    assert ops == ["createItem", "deleteItem", "getItem"]
    verdict = run_input(target, data, timeout=target.timeout)
    assert verdict is not None and verdict.signature == "invariant:http_shop_states:deleted-comes-back/getItem"
    project = dataclasses.replace(
        load_project(EXAMPLES),
        regressions=tmp_path / "regressions",
        staging=tmp_path / "staging",
        quarantine=tmp_path / "q.jsonl",
    )
    outcome = promote_sequence(project, target, data, replays=3, write=True)
    assert outcome.status == PROMOTED and outcome.path is not None and outcome.path.exists()
    assert "target: http_shop_states" in outcome.path.read_text()
    assert promote_sequence(project, target, data, replays=3).status == KNOWN  # dedup by signature


def test_fixed_app_passes_the_same_sequence():
    import states_shop
    from shop_fastapi import create_app

    spec = states_shop.SHOP_STATES
    data = encode([(1, 0, b""), (3, 0, b""), (2, 0, b"")])  # create, delete, read
    with pytest.raises(OracleFailure):
        spec.run(data)

    def fixed():
        app = create_app()
        app.state.cache = _Forgetful()  # the fix: a read cache that is never stale
        return app

    assert dataclasses.replace(spec, factory=fixed, reset=None).run(data) == 3


class _Forgetful(dict):
    """A cache that never hits."""

    def __contains__(self, key: object) -> bool:
        return False


def test_a_slow_step_is_a_wedge():
    from starlette.applications import Starlette
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    async def slow(request):
        await asyncio.sleep(2)
        return JSONResponse({})

    doc = {
        "openapi": "3.1.0",
        "info": {"title": "s", "version": "1"},
        "paths": {"/slow": {"get": {"operationId": "slow", "responses": {"200": {"description": "ok"}}}}},
    }
    spec = StateSpec("slow_states", lambda: Starlette(routes=[Route("/slow", slow)]), doc, step_timeout=0.05)
    with pytest.raises(OracleFailure) as info:
        spec.run(encode([(0, 0, b"")]))
    assert (info.value.oracle, info.value.name, info.value.kind) == ("wedge", "slow", "step-timeout")


def test_openapi_links_become_the_table():
    from http_apps import echo_asgi

    doc = {
        "openapi": "3.1.0",
        "info": {"title": "l", "version": "1"},
        "paths": {
            "/things": {
                "post": {
                    "operationId": "createThing",
                    "responses": {
                        "201": {
                            "description": "made",
                            "links": {
                                "GetIt": {"operationId": "getThing", "parameters": {"path.id": "$response.body#/id"}}
                            },
                        }
                    },
                }
            },
            "/things/{id}": {
                "get": {
                    "operationId": "getThing",
                    "parameters": [{"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}],
                    "responses": {"200": {"description": "ok"}},
                }
            },
        },
    }
    spec = StateSpec.from_openapi_links("linked", lambda: echo_asgi, doc, allow=("createThing",))
    assert spec.links == {"createThing": {"getThing.id": "$response.body#/id"}}
    assert spec.uses == {"getThing": {"id": "getThing.id"}}
    run_index = [op.label for op in spec.operations].index("getThing")
    from assay.http.stateful import SequenceRun

    assert not SequenceRun(spec).enabled(run_index)  # nothing created yet: the precondition holds it back
