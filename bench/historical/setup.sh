#!/usr/bin/env bash
# Make one virtualenv per old package version for bench/time_to_bug.py, under
# bench/historical/.venvs/ (git-ignored).  Idempotent: a venv whose marker file
# already names the same requirement is left alone.  Nothing is installed into the
# project's own .venv.  Needs network access to the package registry (pip).
#
#   bash bench/historical/setup.sh            # old versions + hypofuzz
#   bash bench/historical/setup.sh --fixed    # also the fixing versions (for --verify)
#   PYTHON=/path/to/python3.12 bash bench/historical/setup.sh
#
# assay itself is not installed into these venvs: the benchmark runs them with
# PYTHONPATH=<repo>/src (assay has no dependencies).
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
VENVS="$HERE/.venvs"
mkdir -p "$VENVS"

if [[ -z "${PYTHON:-}" ]]; then
  if [[ -x "$ROOT/.venv/bin/python" ]]; then
    # The interpreter the project's venv was made from (same minor version as assay's).
    PYTHON="$("$ROOT/.venv/bin/python" -c 'import sys; print(getattr(sys, "_base_executable", sys.executable))')"
  else
    PYTHON="$(command -v python3.12 || command -v python3)"
  fi
fi

FIXED=0
[[ "${1:-}" == "--fixed" ]] && FIXED=1

# name|requirements (space separated)
OLD=(
  "tomli-1.0.2|tomli==1.0.2"
  "python-dateutil-2.7.0|python-dateutil==2.7.0"
  "ecdsa-0.13.2|ecdsa==0.13.2"
  "sqlparse-0.4.1|sqlparse==0.4.1"
  "sqlparse-0.4.3|sqlparse==0.4.3"
  "sqlparse-0.4.4|sqlparse==0.4.4"
  "python-multipart-0.0.6|python-multipart==0.0.6"
  "pygments-2.7.3|pygments==2.7.3"
  "idna-3.6|idna==3.6"
  # HypoFuzz drives the mazes; pinned so a later release cannot change the API it is driven through.
  "hypofuzz|hypofuzz==25.11.1 hypothesis==6.170.17"
)
FIXED_SET=(
  "tomli-1.0.3|tomli==1.0.3"
  "python-dateutil-2.7.3|python-dateutil==2.7.3"
  "ecdsa-0.13.3|ecdsa==0.13.3"
  "sqlparse-0.4.2|sqlparse==0.4.2"
  "sqlparse-0.4.4|sqlparse==0.4.4"
  "sqlparse-0.5.0|sqlparse==0.5.0"
  "python-multipart-0.0.7|python-multipart==0.0.7"
  "pygments-2.7.4|pygments==2.7.4"
  "idna-3.7|idna==3.7"
)

make_venv() {
  local name="$1" reqs="$2" dir="$VENVS/$1"
  if [[ -f "$dir/.requirement" && "$(cat "$dir/.requirement")" == "$reqs" && -x "$dir/bin/python" ]]; then
    echo "ok      $name"
    return 0
  fi
  rm -rf "$dir"
  "$PYTHON" -m venv "$dir"
  # shellcheck disable=SC2086
  if "$dir/bin/python" -m pip install --quiet --disable-pip-version-check $reqs >"$dir.log" 2>&1; then
    echo "$reqs" >"$dir/.requirement"
    echo "made    $name ($reqs)"
  else
    echo "FAILED  $name ($reqs): see $dir.log" >&2
    return 1
  fi
}

status=0
entries=("${OLD[@]}")
[[ $FIXED == 1 ]] && entries+=("${FIXED_SET[@]}")
for entry in "${entries[@]}"; do
  make_venv "${entry%%|*}" "${entry#*|}" || status=1
done
exit $status
