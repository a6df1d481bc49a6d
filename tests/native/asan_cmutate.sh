#!/bin/sh
# The C twin (assay.gen._cmutate) under AddressSanitizer and UBSan.
#
#   tests/native/asan_cmutate.sh [PYTHON]          (from the repository root; PYTHON defaults to python3)
#
# 1. builds the extension with clang -fsanitize=address,undefined into a temporary copy of src/
#    (the source list and libraries of pyproject.toml's [[tool.setuptools.ext-modules]]);
# 2. runs its equivalence tests (tests/test_cmutate.py, tests/test_hot_loop.py, tests/test_fdp_c.py; test_cmplog.py and
#    test_sandbox_filter.py for the code swaps and the audit filter), the hostile
#    calls (tests/reliability/test_reliab_ctwin.py) and a short byte-mode campaign against that
#    build, with the ASan runtime preloaded, PYTHONMALLOC=malloc (so ASan sees every object)
#    and every sanitizer report written to a log folder that must stay empty (a forked
#    worker's report would otherwise only show as a crash finding);
# 3. fuzzes each public entry point with assay's native backend (libFuzzer, ASan, UBSan,
#    embedded CPython: tests/native/cmutate_harness/) for CMUTATE_FUZZ_RUNS runs each
#    (default 3000) and fails on any finding.
#
# Exit 0: all clean; 1: a test failed or a sanitizer reported; 0 with "SKIP:" when clang
# (or its ASan runtime) is missing.  Everything it writes goes to a temporary folder.
set -eu

PYTHON=${1:-python3}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
CLANG=${ASSAY_CLANG:-clang}
RUNS=${CMUTATE_FUZZ_RUNS:-3000}

if ! command -v "$CLANG" >/dev/null 2>&1; then
    echo "SKIP: $CLANG not found: the sanitized build of the C twin needs clang (apt-get install clang)"
    exit 0
fi
ASAN_RT=$("$CLANG" -print-file-name=libclang_rt.asan-x86_64.so)
if [ ! -f "$ASAN_RT" ]; then
    echo "SKIP: clang's ASan runtime ($ASAN_RT) is missing (apt-get install libclang-rt-dev)"
    exit 0
fi

WORK=$(mktemp -d "${TMPDIR:-/tmp}/asan-cmutate.XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
mkdir -p "$WORK/tests/native" "$WORK/logs"
cp -R "$ROOT/src" "$WORK/src"
cp -R "$ROOT/tests/native/cmutate_harness" "$WORK/tests/native/cmutate_harness"
find "$WORK/src" -name '_cmutate*.so' -delete
find "$WORK" -name '.assay' -type d -prune -exec rm -rf {} +

# The source list, libraries and flags of pyproject.toml, and where the module goes.
eval "$("$PYTHON" - "$ROOT" <<'PY'
import shlex, sys, sysconfig, tomllib
root = sys.argv[1]
with open(f"{root}/pyproject.toml", "rb") as f:
    (ext,) = [e for e in tomllib.load(f)["tool"]["setuptools"]["ext-modules"] if e["name"] == "assay.gen._cmutate"]
print("SOURCES=" + shlex.quote(" ".join(f"{root}/{s}" for s in ext["sources"])))
print("LIBS=" + shlex.quote(" ".join("-l" + lib for lib in ext.get("libraries", []))))
print("EXTRA=" + shlex.quote(" ".join(a for a in ext.get("extra-compile-args", []) if not a.startswith("-O"))))
print("PYINC=" + shlex.quote(sysconfig.get_paths()["include"]))
print("SUFFIX=" + shlex.quote(sysconfig.get_config_var("EXT_SUFFIX")))
PY
)"
SO="$WORK/src/assay/gen/_cmutate$SUFFIX"
echo "== building the C twin with -fsanitize=address,undefined: $SO"
# shellcheck disable=SC2086
"$CLANG" -shared -fPIC -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined \
    $EXTRA -I"$PYINC" $SOURCES $LIBS -o "$SO"

export PYTHONPATH="$WORK/src"
export PYTHONMALLOC=malloc
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:abort_on_error=0:log_path=$WORK/logs/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:report_error_type=1:log_path=$WORK/logs/ubsan"

reports() {
    if ls "$WORK/logs"/* >/dev/null 2>&1; then
        echo "FAIL: sanitizer reports after $1:"
        cat "$WORK/logs"/*
        exit 1
    fi
}

sanitized() { LD_PRELOAD="$ASAN_RT" "$@"; }

echo "== the sanitized module is the one imported"
sanitized "$PYTHON" -c "
import sys
from assay.gen.accelerated import cmutate
assert cmutate is not None and cmutate.__file__ == sys.argv[1], (cmutate, sys.argv[1])
" "$SO"
reports "the import"

echo "== equivalence tests and hostile calls under ASan/UBSan"
cd "$ROOT"
JOBS=""
if "$PYTHON" -c "import xdist" 2>/dev/null; then JOBS="-n 2"; fi
set +e
# shellcheck disable=SC2086
sanitized "$PYTHON" -m pytest -q -p no:cacheprovider $JOBS \
    tests/test_cmutate.py tests/test_hot_loop.py tests/test_fdp_c.py tests/reliability/test_reliab_ctwin.py \
    tests/test_cmplog.py tests/test_sandbox_filter.py
rc=$?
set -e
reports "the tests"
if [ "$rc" -ne 0 ]; then echo "FAIL: the tests under ASan/UBSan exited $rc"; exit 1; fi

echo "== a short byte-mode campaign under ASan/UBSan"
set +e
sanitized "$PYTHON" -m assay fuzz --project "$ROOT/examples" "$ROOT/examples/fuzz/fuzz_json.py" \
    --fuzz-cases 3000 --fuzz-seed 1 --fuzz-corpus "$WORK/campaign/corpus" --fuzz-artifacts "$WORK/campaign/artifacts"
rc=$?
set -e
if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then echo "FAIL: the campaign exited $rc"; exit 1; fi
reports "the campaign"

echo "== libFuzzer on each entry point ($RUNS runs each)"
unset PYTHONMALLOC LD_PRELOAD ASAN_OPTIONS UBSAN_OPTIONS
export PYTHONPATH="$ROOT/src"   # assay itself; the harnesses link their own copy of the twin
WHY=$("$PYTHON" -c "from assay.native.toolchain import available; print(available() or '')")
if [ -n "$WHY" ]; then
    echo "SKIP: the entry points' fuzzing: the native backend is unavailable here: $WHY"
    echo "OK: the C twin's tests, hostile calls and campaign are clean under ASan and UBSan"
    exit 0
fi
export CMUTATE_HARNESS_DIR="$WORK/tests/native/cmutate_harness"
set +e
"$PYTHON" -m assay fuzz --project "$WORK/tests/native/cmutate_harness" --fuzz-backend native \
    --fuzz-cases "$RUNS" --fuzz-seed 1 --fuzz-corpus "$WORK/native/corpus" --fuzz-artifacts "$WORK/native/artifacts"
rc=$?
set -e
if [ "$rc" -ne 0 ]; then echo "FAIL: the entry points' fuzzing exited $rc (1: a finding; see above)"; exit 1; fi
echo "OK: the C twin is clean under ASan and UBSan"
