"""Stateful sequences from a declarative transition table.

A :class:`StateSpec` names an app factory (a fresh app, with fresh storage, per
sequence), the operations that may run, and the table:

* ``links``: what a successful response feeds to later steps, as
  ``{"createItem": {"item": "$response.body#/id"}}`` (bundle ``item`` gets
  the ``id`` of each created body); OpenAPI ``links`` are read the same way
  (:meth:`StateSpec.from_openapi_links`);
* ``uses``: which parameter of an operation takes a bundle's values, as
  ``{"getItem": {"item_id": "item"}}``; an operation that uses a bundle runs
  only once the bundle holds a value (its precondition);
* ``reset``: when given, one app per process is reset before each sequence
  instead of building a new one with ``factory`` (much faster for big apps);
* invariants beside the table: ``readable`` (a created resource is readable
  by ``(create, read)``), ``gone`` (a deleted resource never comes back, by
  ``(delete, read)``), and ``step_timeout`` (a step longer than that is a
  ``wedge``).

Every response is also judged by the single-request oracles (``http-5xx``,
conformance, a planted secret).  A sequence is a list of steps ``(operation
index, pick, data)``; :func:`encode` turns it into bytes and :meth:`StateSpec.run`
runs such bytes, so a sequence is an ordinary fuzz input of the spec's bytes
target (:meth:`StateSpec.target`), and a failing sequence (from a campaign or
from the Hypothesis ``RuleBasedStateMachine`` of :func:`state_machine`) goes
through the promoter like any other artifact.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.core.errors import ConfigError
from assay.core.observe import InvariantViolation, OracleFailure, feature
from assay.gen.bytesource import ByteSource
from assay.harness.define import make_target
from assay.http.callers import app_kind, asgi_startup, call
from assay.http.conformance import CHECKS, Conformance
from assay.http.openapi import Document, Operation, parse
from assay.http.request import Request, generate, serialize
from assay.http.select import select

#: Most steps in one sequence.
MAX_STEPS = 24
#: Largest per-step choice chunk, in bytes.
MAX_STEP_DATA = 48
#: Default per-step time limit in seconds (a longer step is a ``wedge``).
DEFAULT_STEP_TIMEOUT = 1.0

Step = tuple[int, int, bytes]


def encode(steps: Iterable[Step]) -> bytes:
    """The bytes that :meth:`StateSpec.decode` reads back as exactly ``steps``."""
    out = bytearray()
    for index, pick, data in steps:
        data = data[:MAX_STEP_DATA]
        out += bytes([index & 0xFF]) + (pick & 0xFFFF).to_bytes(2, "big") + bytes([len(data)]) + data
    return bytes(out)


def pointer_value(expression: str, response_body: Any) -> Any:
    """Evaluate ``$response.body#/a/0/b`` against a decoded JSON body (``KeyError`` when absent)."""
    prefix = "$response.body"
    if not expression.startswith(prefix):
        raise ConfigError(f"link expression {expression!r} is not supported; use '$response.body#/pointer'")
    node = response_body
    fragment = expression[len(prefix) :].lstrip("#")
    for raw in fragment.split("/")[1:]:
        token = raw.replace("~1", "/").replace("~0", "~")
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node


@dataclass
class StateSpec:
    """A transition table and its invariants, over apps made by ``factory``."""

    name: str
    factory: Callable[[], Any]
    openapi: Any = None
    links: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    uses: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    readable: tuple[str, str] | None = None
    gone: tuple[str, str] | None = None
    step_timeout: float = DEFAULT_STEP_TIMEOUT
    allow: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    checks: tuple[str, ...] = CHECKS
    reset: Callable[[Any], None] | None = None
    doc: Document | None = None
    operations: list[Operation] = field(default_factory=list)
    _app: Any = None

    def fresh_app(self) -> Any:
        """The app for a new sequence: ``factory()``, or (with ``reset``) one app per process, reset."""
        if self.reset is None:
            return self.factory()
        if self._app is None or self._app[0] != os.getpid():
            self._app = (os.getpid(), self.factory())
        self.reset(self._app[1])
        return self._app[1]

    def __post_init__(self) -> None:
        probe = self.factory()
        source = self.openapi if self.openapi is not None else probe
        self.doc = parse(source)
        self.operations = select(self.doc.operations, self.allow, self.exclude)
        labels = {op.label for op in self.operations}
        named = set(self.links) | set(self.uses) | {o for pair in (self.readable, self.gone) if pair for o in pair}
        missing = sorted(named - labels)
        if missing:
            raise ConfigError(
                f"state spec {self.name!r}: operations {', '.join(missing)} are not selected "
                f"(selected: {', '.join(sorted(labels))}); allow them or fix the table"
            )
        if len(self.operations) > 256:
            raise ConfigError(f"state spec {self.name!r}: at most 256 operations per sequence table")

    @classmethod
    def from_openapi_links(
        cls, name: str, factory: Callable[[], Any], openapi: Any = None, **options: Any
    ) -> StateSpec:
        """A spec whose ``links``/``uses`` come from the document's OpenAPI ``links``."""
        doc = parse(openapi if openapi is not None else factory())
        links: dict[str, dict[str, str]] = {}
        uses: dict[str, dict[str, str]] = {}
        for op in doc.operations:
            for response_links in op.links.values():
                for link in response_links.values():
                    target = link.get("operationId") if isinstance(link, dict) else None
                    for param, expression in (link.get("parameters") or {}).items() if target else ():
                        bundle = f"{target}.{param.split('.')[-1]}"
                        links.setdefault(op.label, {})[bundle] = str(expression)
                        uses.setdefault(str(target), {})[param.split(".")[-1]] = bundle
        return cls(
            name,
            factory,
            openapi,
            links={**links, **options.pop("links", {})},
            uses={**uses, **options.pop("uses", {})},
            **options,
        )

    # ------------------------------------------------------------------ running

    def decode(self, data: bytes) -> list[Step]:
        """The steps ``data`` encodes (see :func:`encode`)."""
        source = ByteSource(data)
        steps: list[Step] = []
        while not source.exhausted and len(steps) < MAX_STEPS:
            index = source.draw_int(0, 255) % len(self.operations)
            pick = source.draw_int(0, 0xFFFF)
            size = min(source.draw_int(0, 255), MAX_STEP_DATA)
            steps.append((index, pick, source.draw_raw(size)))
        return steps

    def run(self, data: bytes) -> int:
        """Run the sequence ``data`` encodes on a fresh app; the number of steps that ran."""
        run = SequenceRun(self)
        for step in self.decode(data):
            run.step(*step)
        return run.ran

    def target(self, **settings: Any) -> Callable[[bytes], int]:
        """This spec as a bytes target (each input a sequence; a fresh app per input).

        Returns the target function with the :class:`~assay.core.target.Target` on its
        ``assay_target`` attribute, so a module global holding it is discovered.
        """

        def sequence(data: bytes) -> int:
            return self.run(data)

        seeds = [encode([(i, 0, b"")]) for i in range(len(self.operations))]
        tgt = make_target(
            sequence,
            name=settings.pop("name", self.name),
            seeds=seeds,
            timeout=settings.pop("timeout", max(2.0, self.step_timeout * MAX_STEPS)),
            **settings,
        )
        sequence.assay_target = tgt  # type: ignore[attr-defined]
        return sequence

    def describe(self, data: bytes) -> list[dict[str, Any]]:
        """The sequence ``data`` encodes, run on a fresh app, as readable steps (the last may say how it failed)."""
        run = SequenceRun(self)
        out: list[dict[str, Any]] = []
        for index, pick, chunk in self.decode(data):
            request = run.request(index, pick, chunk)
            entry: dict[str, Any] = {"operation": self.operations[index].label}
            entry.update({"request": request.describe()} if request else {"skipped": "precondition"})
            out.append(entry)
            try:
                run.step(index, pick, chunk)
            except Exception as exc:  # noqa: BLE001 - describing, not judging
                entry["failed"] = f"{type(exc).__name__}: {exc}"
                break
        return out


class SequenceRun:
    """One sequence in progress: a fresh app, the bundles, and what the invariants remember."""

    def __init__(self, spec: StateSpec) -> None:
        self.spec = spec
        self.app = spec.fresh_app()
        self.kind = app_kind(self.app)
        if self.kind == "asgi":
            asgi_startup(self.app)
        self.conformance = Conformance(spec.doc, spec.checks)
        self.bundles: dict[str, list[Any]] = {}
        self.deleted: set[tuple[str, str]] = set()
        self.ran = 0
        self.trace: list[str] = []

    def enabled(self, index: int) -> bool:
        """The precondition of operation ``index``: every bundle it uses holds a value."""
        uses = self.spec.uses.get(self.spec.operations[index].label, {})
        return all(self.bundles.get(bundle) for bundle in uses.values())

    def request(self, index: int, pick: int, data: bytes) -> Request | None:
        """The request of a step, or ``None`` when its precondition does not hold."""
        if not self.enabled(index):
            return None
        op = self.spec.operations[index]
        assert self.spec.doc is not None
        request = generate(self.spec.doc, op, data, mode="valid")
        uses = self.spec.uses.get(op.label, {})
        if uses:
            values = dict(request.values) if isinstance(request.values, dict) else {}
            for param, bundle in uses.items():
                pool = self.bundles[bundle]
                location = next((p.location for p in op.parameters if p.name == param), "path")
                values[location] = {**(values.get(location) or {}), param: pool[pick % len(pool)]}
            request = serialize(op, values)
            request.mode = "stateful"
        return request

    def step(self, index: int, pick: int, data: bytes) -> None:
        """Run one step and check the response, the links and the invariants."""
        request = self.request(index, pick, data)
        if request is None:
            return
        op = self.spec.operations[index]
        self.trace.append(f"{op.label} {request.method} {request.target}")
        response = self._send(op, request)
        self.ran += 1
        feature("http.step", f"{op.label}:{response.status}")
        self.conformance.judge(op, response, request.method)
        ok = 200 <= response.status < 300
        used = [
            (bundle, _key(self._value(request, op, param)))
            for param, bundle in self.spec.uses.get(op.label, {}).items()
        ]
        self._check(op, response.status, used)
        if ok and op.label in self.spec.links:
            try:
                body = json.loads(response.body)
            except ValueError:
                body = None
            for bundle, expression in self.spec.links[op.label].items():
                try:
                    value = pointer_value(expression, body)
                except (KeyError, IndexError, TypeError, ValueError):
                    raise InvariantViolation(
                        f"{self.spec.name}:link",
                        f"{op.label} answered {response.status} without {expression}",
                        kind=op.label,
                    ) from None
                self.bundles.setdefault(bundle, []).append(value)
                self.deleted.discard((bundle, _key(value)))
                if self.spec.readable and self.spec.readable[0] == op.label:
                    self._read_back(bundle, value)
        if ok and self.spec.gone and op.label == self.spec.gone[0]:
            self.deleted.update(used)

    def _value(self, request: Request, op: Operation, param: str) -> Any:
        values = request.values if isinstance(request.values, dict) else {}
        for location in ("path", "query", "header", "cookie"):
            if param in (values.get(location) or {}):
                return values[location][param]
        return None

    def _check(self, op: Operation, status: int, used: list[tuple[str, str]]) -> None:
        gone = self.spec.gone
        if gone and op.label == gone[1] and 200 <= status < 300:
            back = [u for u in used if u in self.deleted]
            if back:
                raise InvariantViolation(
                    f"{self.spec.name}:deleted-comes-back",
                    f"{op.label} answered {status} for deleted {back[0][0]} {back[0][1]}; "
                    f"sequence: {' -> '.join(self.trace)}",
                    kind=op.label,
                )

    def _read_back(self, bundle: str, value: Any) -> None:
        read = self.spec.readable[1] if self.spec.readable else None
        index = next((i for i, op in enumerate(self.spec.operations) if op.label == read), None)
        if index is None:
            return
        pool = self.bundles[bundle]
        request = self.request(index, len(pool) - 1, b"")
        if request is None:
            return
        op = self.spec.operations[index]
        response = self._send(op, request)
        if not 200 <= response.status < 300:
            raise InvariantViolation(
                f"{self.spec.name}:created-unreadable",
                f"{op.label} answered {response.status} for the {bundle} just created "
                f"({value!r}); sequence: {' -> '.join(self.trace)}",
                kind=op.label,
            )

    def _send(self, op: Operation, request: Request) -> Any:
        limit = self.spec.step_timeout
        start = time.perf_counter()
        try:
            response = call(
                self.app,
                self.kind,
                request.method,
                request.target,
                request.headers,
                request.body,
                timeout=limit if self.kind == "asgi" else None,
            )
        except TimeoutError:
            raise OracleFailure(
                op.label, f"step ran longer than {limit}s", kind="step-timeout", oracle="wedge"
            ) from None
        if time.perf_counter() - start > limit:  # WSGI calls cannot be interrupted: judged afterwards
            raise OracleFailure(op.label, f"step ran longer than {limit}s", kind="step-timeout", oracle="wedge")
        return response


def _key(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)
