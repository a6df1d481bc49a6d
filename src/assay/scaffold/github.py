"""GitHub Actions workflows: a pull-request check and a nightly sharded campaign.

``assay-pr.yml`` (pull requests): restore the main branch's merged corpus read-only,
replay every target on it (``--fuzz-replay-only``, Python backend only, so no sanitizer
harness is ever built) and sample the mutants on lines changed since the PR base.  It
never saves a cache.

``assay-nightly.yml`` (schedule + manual dispatch): a plan job lists the targets of both
backends; a matrix runs 4 independently seeded shards per target, at most 2 at once,
each with a case cap and a time budget (a native target's shard first installs clang
with libFuzzer when the runner lacks it, as ``.ci/run`` does), uploading ``fuzz-corpus-<target>-<shard>-<run id>`` (14
days) and ``fuzz-results-<target>-<shard>-<run id>`` (90 days; a ``:`` in a target's
name becomes ``-``); a merge job (even when
a shard failed) downloads the shard corpora, runs ``assay merge-corpus``, uploads
``fuzz-corpus-merged-<run id>`` (90 days) and saves it as the next run's cache (it
needs clang too when there are native targets: their inputs are kept by libFuzzer's
``-merge=1``).

Every ``run:`` step uses only environment variables and ``${{ }}`` expressions, so the
tests can run the very same scripts locally.
"""

from __future__ import annotations

import json
import string
from dataclasses import asdict, dataclass

#: Folder (under the repository) the workflows are written to.
WORKFLOW_DIR = ".github/workflows"
#: File names of the two workflows.
PR_FILE, NIGHTLY_FILE = "assay-pr.yml", "assay-nightly.yml"


@dataclass(frozen=True)
class Settings:
    """What ``assay init --ci github`` lets a user choose (the issue's defaults)."""

    python: str = "3.12"
    #: Where CI installs assay from (a pip requirement: a git URL, a path, a wheel); assay is
    #: not on the package index.  ``assay init`` writes where the running assay came from.
    assay_source: str = "git+https://github.com/OWNER/assay@COMMIT"
    install: str = 'python -m pip install -e . "$ASSAY_SOURCE"'
    shards: int = 4
    max_parallel: int = 2
    cases: int = 50000
    budget: int = 240
    corpus_days: int = 14
    results_days: int = 90
    merged_days: int = 90
    mutant_samples: int = 100
    mutant_fail_under: int = 0
    cron: str = "17 3 * * *"


class _Template(string.Template):
    delimiter = "%%"  # GitHub's ${{ }} and the shell's $VAR stay as they are


_CACHE_PATH = ".assay/corpus"
_CACHE_KEY = "assay-corpus-merged"
#: The step that makes clang with libFuzzer, ASan and UBSan available (native targets):
#: nothing when it can already link ``-fsanitize=fuzzer``; else the distribution's clang
#: and its compiler runtime (``libclang-rt-<major>-dev`` on Debian and Ubuntu).
_CLANG_SCRIPT = """\
native_ok() {
  command -v clang >/dev/null 2>&1 || return 1
  probe=$(mktemp -d)
  printf '#include <stdint.h>\\n#include <stddef.h>\\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\\n' > "$probe/p.c"
  clang -fsanitize=fuzzer,address,undefined "$probe/p.c" -o "$probe/p" >/dev/null 2>&1
  ok=$?
  rm -rf "$probe"
  return $ok
}
if native_ok; then echo "clang with libFuzzer: $(command -v clang)"; exit 0; fi
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends clang
$SUDO apt-get install -y -q --no-install-recommends "libclang-rt-$(clang -dumpversion | cut -d. -f1)-dev"
native_ok || { echo "clang cannot link -fsanitize=fuzzer after installing it" >&2; exit 1; }
"""

PR_TEMPLATE = """\
# Written by `assay init --ci github`. Pull requests: replay the main branch's corpus,
# then sample the mutants on changed lines. Never saves a cache; Python backend only.
name: assay (pull request)

on:
  pull_request:

permissions:
  contents: read

env:
%%{source_env}

concurrency:
  group: assay-pr-${{ github.event.pull_request.number || github.ref }}
  cancel-in-progress: true

jobs:
  replay:
    runs-on: ubuntu-latest
    timeout-minutes: 30
    env:
      ASSAY_MUTANT_SAMPLES: "%%{mutant_samples}"
      ASSAY_MUTANT_FAIL_UNDER: "%%{mutant_fail_under}"
    steps:
      - uses: actions/checkout@v4
        with:
          fetch-depth: 0
      - uses: actions/setup-python@v5
        with:
          python-version: "%%{python}"
      - name: Install
        id: install
        run: %%{install}
      - name: Restore the main branch corpus (read-only)
        uses: actions/cache/restore@v4
        with:
          path: %%{cache_path}
          key: %%{cache_key}-${{ github.run_id }}
          restore-keys: |
            %%{cache_key}-
      - name: Replay every target on the corpus
        id: replay
        run: |
          mkdir -p %%{cache_path}
          assay fuzz --fuzz-backend python --fuzz-replay-only --fuzz-corpus %%{cache_path} \\
            --fuzz-artifacts replay-results/artifacts --report replay-results/report.json
      - name: Mutants on lines changed since the PR base
        id: mutants
        run: |
          git fetch --no-tags origin "${{ github.base_ref }}"
          assay mutant --changed "origin/${{ github.base_ref }}" --sample "$ASSAY_MUTANT_SAMPLES" \\
            --mutant-fail-under "$ASSAY_MUTANT_FAIL_UNDER" --report replay-results/mutants.json
      - name: Upload the reports
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: assay-pr-results-${{ github.run_id }}
          path: replay-results
          retention-days: %%{corpus_days}
          if-no-files-found: ignore
"""

NIGHTLY_TEMPLATE = """\
# Written by `assay init --ci github`. Nightly: %%{shards} seeded shards per target,
# at most %%{max_parallel} at once; then one merged, minimized corpus for the next run.
name: assay (nightly)

on:
  schedule:
    - cron: "%%{cron}"
  workflow_dispatch:

permissions:
  contents: read

concurrency:
  group: assay-nightly
  cancel-in-progress: false

env:
%%{source_env}
  ASSAY_CASES: "%%{cases}"
  ASSAY_BUDGET: "%%{budget}"

jobs:
  plan:
    runs-on: ubuntu-latest
    timeout-minutes: 15
    outputs:
      targets: ${{ steps.plan.outputs.targets }}
      native: ${{ steps.plan.outputs.native }}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "%%{python}"
      - name: Install
        id: install
        run: %%{install}
      - name: List the targets
        id: plan
        run: |
          assay targets --json > targets.json
          python -c 'import json; t = [{"name": x["name"], "backend": x.get("backend", "python")} for x in json.load(open("targets.json"))]; print("targets=" + json.dumps(t)); print("native=" + str(any(x["backend"] == "native" for x in t)).lower())' >> "$GITHUB_OUTPUT"

  fuzz:
    needs: plan
    runs-on: ubuntu-latest
    timeout-minutes: 30
    strategy:
      fail-fast: false
      max-parallel: %%{max_parallel}
      matrix:
        target: ${{ fromJSON(needs.plan.outputs.targets) }}
        shard: %%{shard_list}
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "%%{python}"
      - name: Install
        id: install
        run: %%{install}
      - name: Restore the last merged corpus
        uses: actions/cache/restore@v4
        with:
          path: %%{cache_path}
          key: %%{cache_key}-${{ github.run_id }}
          restore-keys: |
            %%{cache_key}-
      - name: Name the artifacts
        id: names
        # Targets named file:function (atheris harnesses) hold a colon, which artifact names may not.
        run: echo "slug=$(printf '%s' "${{ matrix.target.name }}" | tr ':' '-')" >> "$GITHUB_OUTPUT"
      - name: Install clang with libFuzzer (native targets)
        id: clang
        if: matrix.target.backend == 'native'
        run: |
%%{clang_script}
      - name: Fuzz one seeded shard
        id: shard
        run: |
          mkdir -p shard/corpus shard/results
          if [ -d "%%{cache_path}/${{ matrix.target.name }}" ]; then cp -R "%%{cache_path}/${{ matrix.target.name }}" shard/corpus/; fi
          assay fuzz --fuzz-backend "${{ matrix.target.backend }}" --fuzz-target "${{ matrix.target.name }}" \\
            --fuzz-seed "${{ github.run_id }}${{ matrix.shard }}" \\
            --fuzz-cases "$ASSAY_CASES" --fuzz-budget "$ASSAY_BUDGET" \\
            --fuzz-corpus shard/corpus --fuzz-artifacts shard/results/artifacts \\
            --report shard/results/report.json
      - name: Upload the shard corpus
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: fuzz-corpus-${{ steps.names.outputs.slug }}-${{ matrix.shard }}-${{ github.run_id }}
          path: shard/corpus
          retention-days: %%{corpus_days}
          if-no-files-found: ignore
      - name: Upload the shard results
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: fuzz-results-${{ steps.names.outputs.slug }}-${{ matrix.shard }}-${{ github.run_id }}
          path: shard/results
          retention-days: %%{results_days}
          if-no-files-found: ignore

  merge:
    needs: [plan, fuzz]
    if: always()
    runs-on: ubuntu-latest
    timeout-minutes: 60
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: "%%{python}"
      - name: Install
        id: install
        run: %%{install}
      - name: Restore the last merged corpus
        uses: actions/cache/restore@v4
        with:
          path: %%{cache_path}
          key: %%{cache_key}-${{ github.run_id }}
          restore-keys: |
            %%{cache_key}-
      - name: Download the shard corpora
        uses: actions/download-artifact@v4
        with:
          pattern: fuzz-corpus-*-${{ github.run_id }}
          path: shards
      - name: Install clang with libFuzzer (native targets)
        id: clang
        if: needs.plan.outputs.native == 'true'
        run: |
%%{clang_script}
      - name: Merge and minimize
        id: merge
        run: |
          mkdir -p %%{cache_path} shards merge-results
          assay merge-corpus --aside merge-results/aside --report merge-results/merge.json \\
            %%{cache_path} %%{cache_path} $(find shards -mindepth 1 -maxdepth 1 -type d | sort)
      - name: Upload the merged corpus
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: fuzz-corpus-merged-${{ github.run_id }}
          path: %%{cache_path}
          retention-days: %%{merged_days}
          if-no-files-found: ignore
      - name: Upload the merge report
        if: always()
        uses: actions/upload-artifact@v4
        with:
          name: fuzz-merge-results-${{ github.run_id }}
          path: merge-results
          retention-days: %%{results_days}
          if-no-files-found: ignore
      - name: Save the merged corpus for the next run
        if: always()
        uses: actions/cache/save@v4
        with:
          path: %%{cache_path}
          key: %%{cache_key}-${{ github.run_id }}-${{ github.run_attempt }}
"""


def source_env(source: str) -> str:
    """The workflow's ``ASSAY_SOURCE`` setting, with the comment that says how to change it."""
    return (
        "  # Where the Install steps get assay (it is not on the package index): `assay init` wrote\n"
        "  # where the assay that ran it came from. A local path or wheel works only on a runner that\n"
        "  # can reach it: for GitHub-hosted runners make this a git URL, e.g.\n"
        "  # git+https://github.com/OWNER/assay@COMMIT (or a wheel committed to this repository).\n"
        f"  ASSAY_SOURCE: {json.dumps(source)}"
    )


def render(settings: Settings | None = None) -> dict[str, str]:
    """File name -> workflow text, for ``settings`` (the defaults when None)."""
    s = settings or Settings()
    clang = "".join(f"          {line}\n" if line else "\n" for line in _CLANG_SCRIPT.splitlines()).rstrip("\n")
    values = {
        **asdict(s),
        "source_env": source_env(s.assay_source),
        "cache_path": _CACHE_PATH,
        "cache_key": _CACHE_KEY,
        "clang_script": clang,
        "shard_list": "[" + ", ".join(str(k) for k in range(1, s.shards + 1)) + "]",
    }
    return {
        PR_FILE: _Template(PR_TEMPLATE).substitute(values),
        NIGHTLY_FILE: _Template(NIGHTLY_TEMPLATE).substitute(values),
    }
