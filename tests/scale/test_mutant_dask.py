"""``assay mutant --executor dask``: the same verdict per mutant id as a local run.

Every run here is ``python -m assay mutant`` in a subprocess (the planning run
starts the Dask cluster, so no Dask thread ever lives in this test process).  The
project is the shop of tests/mutant/test_mutant_cli.py, whose 26 mutants cover
every verdict: killed, survived, unreached, timeout (a loop) and error (os._exit).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip(
    "dask.distributed", reason="the dask extra is not installed (pip install 'dask[distributed]>=2024')"
)

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "mutant"))
from test_mutant_cli import SHOP, TESTS

sys.path.pop(0)


@pytest.fixture
def shop(tmp_path):
    return _shop(tmp_path)


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    """The verdicts of a local run: the reference every Dask run must match."""
    root = tmp_path_factory.mktemp("local")
    return mutant(_shop(root), "--no-history", report="local.json")[1]


def _shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "tests").mkdir(parents=True)
    (root / "shop.py").write_text(SHOP)
    (root / "tests" / "test_shop.py").write_text(TESTS)
    (root / "pyproject.toml").write_text('[tool.assay]\nmutate = ["shop.py"]\n')
    return root


def mutant(root: Path, *args: str, report: str) -> tuple[subprocess.CompletedProcess, dict]:
    proc = subprocess.run(
        [sys.executable, "-m", "assay", "mutant", "--jobs", "2", "--report", str(root / report), *args],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 1, proc.stdout + proc.stderr  # survivors and unreached mutants remain
    return proc, json.loads((root / report).read_text())


def verdicts(report: dict) -> dict[str, str]:
    return {m["id"]: m["verdict"] for m in report["mutants"]}


def test_dask_and_local_runs_give_the_same_verdict_per_mutant_and_share_the_history(shop, local):
    proc, dask = mutant(shop, "--executor", "dask", report="dask.json")
    assert verdicts(dask) == verdicts(local)
    assert set(verdicts(local).values()) == {"killed", "survived", "unreached", "timeout", "error"}
    assert dask["counts"] == local["counts"] and "Traceback" not in proc.stderr
    killed = [m for m in dask["mutants"] if m["verdict"] == "killed"]
    assert killed and all(m["killed_by"] and m["failure"] and not m["cached"] for m in killed)
    # The Dask run's verdicts went into the project's history, as a local run's do:
    # the next local run replays each killed mutant's recorded killer first.
    history = json.loads((shop / ".assay" / "mutants" / "history.json").read_text())
    assert set(verdicts(local)) <= set(history["mutants"])
    proc, again = mutant(shop, "--jobs", "1", report="again.json")
    assert verdicts(again) == verdicts(local)
    assert f"{len(killed)} gold replays ({len(killed)} killed by the recorded test)" in proc.stdout


def test_an_existing_scheduler_runs_the_batches(shop, tmp_path, local):
    address_file = tmp_path / "scheduler.json"
    dask = [sys.executable, "-m", "distributed.cli.dask_scheduler"]
    scheduler = subprocess.Popen(
        [*dask, "--port", "0", "--no-dashboard", "--scheduler-file", str(address_file)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    worker = None
    try:
        deadline = time.monotonic() + 120
        while not address_file.exists() and time.monotonic() < deadline:
            time.sleep(0.2)
        address = json.loads(address_file.read_text())["address"]
        worker = subprocess.Popen(
            [sys.executable, "-m", "distributed.cli.dask_worker", address, "--nthreads", "1", "--no-dashboard"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            cwd=tmp_path,
        )
        proc, remote = mutant(shop, "--no-history", "--executor", "dask", "--scheduler", address, report="remote.json")
        assert verdicts(remote) == verdicts(local), proc.stderr
        # The worker lives on; the tests change (they now kill spin's survivors), and the
        # next run on it must judge with the tests on disk, not the ones it imported.
        with (shop / "tests" / "test_shop.py").open("a") as fh:
            fh.write("\n\ndef test_spin_more():\n    assert spin(0) == 0 and spin(3) == 3\n")
        _, local2 = mutant(shop, "--no-history", report="local2.json")
        proc, remote2 = mutant(
            shop, "--no-history", "--executor", "dask", "--scheduler", address, report="remote2.json"
        )
        assert verdicts(remote2) == verdicts(local2), proc.stderr
        assert local2["counts"]["survived"] < local["counts"]["survived"]
    finally:
        for p in (worker, scheduler):
            if p is not None:
                os.killpg(p.pid, 15)
                p.wait(timeout=60)


def test_a_worker_whose_copy_differs_refuses_its_batch(shop, tmp_path):
    from assay.mutant.batch import MutantBatch

    batch = MutantBatch(str(shop), (), ((str(shop / "shop.py"), "0" * 64),), ())
    given = tmp_path / "batch.pickle"
    given.write_bytes(pickle.dumps(batch))
    proc = subprocess.run(
        [
            sys.executable,
            "-c",
            "import pickle, sys\nfrom assay.mutant.batch import run_batch\n"
            f"run_batch(pickle.loads(open({str(given)!r}, 'rb').read()))",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1 and "BatchError" in proc.stderr
    assert f"this worker's copy of {shop / 'shop.py'} differs" in proc.stderr


def test_a_failing_batch_is_one_message_and_exit_2(shop):
    # The worker's copy of the project is broken: the planning run's baseline passes (it
    # runs first), then every batch fails on the worker.  Simulated by a run_batch that
    # raises as the real one does; the planning run and the cluster are real.
    code = (
        "import sys\n"
        "import assay.mutant.batch as batch\n"
        "def broken(b):\n"
        "    raise batch.BatchError('3 selected test(s) fail on this worker without any mutant, e.g. t')\n"
        "batch.run_batch = broken\n"
        "import assay.scale.dask_mutants as dm\n"
        "dm.run_batch = broken\n"
        "from assay.cli.main import main\n"
        "sys.exit(main(['mutant', '--executor', 'dask', '--jobs', '1', '--no-history']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=shop,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "fail on this worker without any mutant" in proc.stderr
    assert "INTERNALERROR" not in proc.stderr and "Traceback" not in proc.stderr


def test_scheduler_without_dask_executor_is_exit_2(shop):
    proc = subprocess.run(
        [sys.executable, "-m", "assay", "mutant", "--scheduler", "tcp://127.0.0.1:1"],
        cwd=shop,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "--scheduler needs --executor dask" in proc.stderr


def test_mutant_executor_dask_without_dask_is_exit_2_before_pytest_runs(shop):
    code = (
        "import sys; sys.modules['dask.distributed'] = None\n"
        "from assay.cli.main import main; sys.exit(main(['mutant', '--executor', 'dask']))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        cwd=shop,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    assert proc.returncode == 2 and "pip install 'dask[distributed]>=2024'" in proc.stderr, proc.stderr
    assert "baseline" not in proc.stdout + proc.stderr and "Traceback" not in proc.stderr
