"""assay against schemathesis on the HTTP examples: requests/s, time to each planted bug, conformance findings.

Both tools drive the same apps in-process (assay: its own ASGI/WSGI callers;
schemathesis: its ASGI and WSGI test clients) with the same request budget per
run, over the same OpenAPI documents.  For each app and each of ``--reps``
seeds:

* **assay**: a real campaign (``run_campaign``, coverage-guided, one worker)
  of ``--requests`` cases on the app's ``http_target``; the target is wrapped
  to note when each signature first appears.
* **schemathesis**: every operation's positive and negative strategies
  (``as_strategy``) under Hypothesis, ``--requests`` requests split over the
  operations, each response passed to ``case.validate_response`` (its default
  checks: server errors, status code, content type and response schema
  conformance, ...) and, since schemathesis has no planted-secret oracle, to
  assay's ``no_secret`` check as well.

A planted bug counts as found when its class appears: the malformed-header
5xx/panic, the planted secret in a body, and the schema violation on the edge
value.  The table shows medians over the seeds (a bug not found in a run
counts as not found; its median time is shown only when found in most runs).

    .venv/bin/python bench/http_vs_schemathesis.py [--requests 2000] [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples" / "http"))

from assay.core.verdict import classify  # noqa: E402
from assay.engine.campaign import CampaignOptions, run_campaign  # noqa: E402
from assay.harness.define import make_target  # noqa: E402

DEFAULT_REQUESTS = 2000  #: requests (cases) per tool, app and seed
DEFAULT_REPS = 3  #: seeds; the table shows medians

#: Planted bug classes per app: name -> predicate over (operation, kind of failure).
BUGS: dict[str, dict[str, Callable[[str, str], bool]]] = {
    "shop (FastAPI)": {
        "malformed header": lambda op, kind: op == "getStats" and kind in ("5xx", "panic"),
        "path traversal": lambda op, kind: op == "getFile" and kind == "secret",
        "schema on edge value": lambda op, kind: op == "quoteItem" and kind == "schema",
    },
    "notes (Flask)": {
        "malformed header": lambda op, kind: op == "listNotes" and kind in ("5xx", "panic"),
        "path traversal": lambda op, kind: op == "getAttachment" and kind == "secret",
        "schema on edge value": lambda op, kind: op == "summarizeNote" and kind == "schema",
    },
}


def _apps() -> dict[str, tuple[Any, Any, Path]]:
    import notes_flask
    import shop_fastapi

    shop = shop_fastapi.create_app()
    notes = notes_flask.create_app()
    return {
        "shop (FastAPI)": (shop, None, shop.state.files_dir),
        "notes (Flask)": (notes, notes_flask.OPENAPI, notes.config["ATTACHMENTS"]),
    }


def _assay_kind(signature: str) -> tuple[str, str]:
    oracle, _, key = signature.partition(":")
    if oracle == "panic":
        frames = key.split("@", 1)[-1]
        op = {"client_major": "getStats"}.get(frames.split("<")[0].rsplit(":", 1)[-1], frames)
        return op, "panic"
    op, _, kind = key.partition("/")
    if oracle == "http-5xx":
        return op, "5xx"
    if oracle == "path-escape":
        return op, "secret"
    if oracle == "error-shape":
        return op, "schema" if kind.startswith("body:") else kind.split(":")[0]
    return op, oracle


def run_assay(app: Any, openapi: Any, served: Path, requests: int, seed: int) -> dict[str, Any]:
    from assay.http import http_target

    source = str(ROOT / "examples" / "http" / ("notes_flask.py" if openapi is not None else "shop_fastapi.py"))
    surface = http_target(app, openapi, served_root=served, register=False, name="bench_http", sources=[source])
    base = surface.assay_target
    log = Path(tempfile.mkdtemp(prefix="assay-bench-http-")) / "first.jsonl"
    start = time.perf_counter()

    def noted(data: bytes) -> Any:
        try:
            return base.fn(data)
        except BaseException as exc:
            verdict = classify(exc, base.expected)
            if verdict is not None:
                with open(log, "a") as handle:
                    handle.write(json.dumps([time.perf_counter() - start, verdict.signature]) + "\n")
            raise

    target = make_target(noted, name="bench_http", seeds=base.seeds, max_len=base.max_len, sources=base.source_paths())
    work = log.parent
    start = time.perf_counter()
    result = run_campaign(
        [target],
        CampaignOptions(
            corpus_root=str(work / "c"), artifact_root=str(work / "a"), max_cases=requests, seed=seed, shrink_cases=64
        ),
    )
    elapsed = time.perf_counter() - start
    first: dict[str, float] = {}
    for line in log.read_text().splitlines() if log.exists() else []:
        t, sig = json.loads(line)
        first.setdefault(sig, t)
    cases = result.targets[0].cases if hasattr(result.targets[0], "cases") else requests
    shutil.rmtree(work, ignore_errors=True)
    return {
        "elapsed": elapsed,
        "requests": cases,
        "found": [(_assay_kind(sig), t) for sig, t in first.items()],
        "conformance": sorted({sig for sig in first if sig.startswith("error-shape:")}),
    }


def run_schemathesis(app: Any, openapi: Any, served: Path, requests: int, seed: int) -> dict[str, Any]:
    import hypothesis
    import schemathesis
    from hypothesis import HealthCheck, given, settings, strategies as st
    from schemathesis import GenerationMode

    from assay.oracles.http import plant_secret

    secret = plant_secret(served)
    if openapi is None:
        schema = schemathesis.openapi.from_asgi("/openapi.json", app)
    else:
        schema = schemathesis.openapi.from_dict(openapi)
        schema.app = app
    ops = [result.ok() for result in schema.get_all_operations()]
    ops = [op for op in ops if op.method.upper() in ("GET", "HEAD", "OPTIONS")]
    per_op = max(1, requests // len(ops))
    found: dict[tuple[str, str], float] = {}
    conformance: set[str] = set()
    sent = 0
    start = time.perf_counter()
    for op in ops:
        label = op.definition.raw.get("operationId") or op.label
        strategy = st.one_of(op.as_strategy(GenerationMode.POSITIVE), op.as_strategy(GenerationMode.NEGATIVE))

        @settings(
            max_examples=per_op,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
            phases=[hypothesis.Phase.generate],
            derandomize=False,
        )
        @hypothesis.seed(seed)
        @given(case=strategy)
        def drive(case: Any) -> None:
            nonlocal sent
            sent += 1
            response = case.call()
            now = time.perf_counter() - start
            body = response.content if hasattr(response, "content") else b""
            if secret.token in body:
                found.setdefault((label, "secret"), now)  # noqa: B023 - drive() runs within this turn
            if response.status_code >= 500:
                found.setdefault((label, "5xx"), now)  # noqa: B023 - drive() runs within this turn
            try:
                case.validate_response(response)
            except BaseException as exc:  # noqa: BLE001 - schemathesis reports failures as exception groups
                if isinstance(exc, KeyboardInterrupt):
                    raise
                for failure in getattr(exc, "exceptions", [exc]):
                    title = getattr(failure, "title", type(failure).__name__)
                    conformance.add(f"{label}: {title}")  # noqa: B023 - drive() runs within this turn
                    if "schema" in title.lower() and "response" in title.lower():
                        found.setdefault((label, "schema"), now)  # noqa: B023 - drive() runs within this turn

        try:
            drive()
        except BaseException as exc:  # noqa: BLE001 - an app exception ends that operation's run
            if isinstance(exc, KeyboardInterrupt):
                raise
            found.setdefault((label, "panic"), time.perf_counter() - start)
    elapsed = time.perf_counter() - start
    return {"elapsed": elapsed, "requests": sent, "found": list(found.items()), "conformance": sorted(conformance)}


def _bug_times(app_name: str, found: list) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    for bug, predicate in BUGS[app_name].items():
        times = [t for (op, kind), t in found if predicate(op, kind)]
        out[bug] = min(times) if times else None
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=DEFAULT_REQUESTS)
    parser.add_argument("--reps", type=int, default=DEFAULT_REPS)
    args = parser.parse_args(argv)
    print(
        f"load average at start: {os.getloadavg()}; {os.cpu_count()} CPUs; {args.requests} requests per run, "
        f"medians of {args.reps} seeds"
    )
    for app_name, (app, openapi, served) in _apps().items():
        rows: dict[str, list[dict[str, Any]]] = {"assay": [], "schemathesis": []}
        for rep in range(args.reps):
            for tool, runner in (("assay", run_assay), ("schemathesis", run_schemathesis)):
                r = runner(app, openapi, served, args.requests, rep + 1)
                r["bugs"] = _bug_times(app_name, r["found"])
                rows[tool].append(r)
        print(f"\n## {app_name}")
        print("| tool | requests/s | " + " | ".join(f"time to {b} (found)" for b in BUGS[app_name]) + " |")
        print("|---|---|" + "---|" * len(BUGS[app_name]))
        for tool, runs in rows.items():
            rate = statistics.median(r["requests"] / r["elapsed"] for r in runs)
            cells = []
            for bug in BUGS[app_name]:
                times = [r["bugs"][bug] for r in runs if r["bugs"][bug] is not None]
                median = f"{statistics.median(times):.1f} s" if len(times) * 2 > len(runs) else "-"
                cells.append(f"{median} ({len(times)}/{len(runs)})")
            print(f"| {tool} | {rate:.0f} | " + " | ".join(cells) + " |")
        for tool, runs in rows.items():
            union = sorted({c for r in runs for c in r["conformance"]})
            print(f"\n{tool} failures of response checks (union over seeds, {len(union)}):")
            for line in union:
                print(f"  - {line}")
    print(f"\nload average at end: {os.getloadavg()}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
