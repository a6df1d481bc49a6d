#!/bin/bash
# Issue 43's benchmark shape, whole commands as a user runs them: `assay fuzz` against the
# harness under atheris (`python harness.py`, its `instrument_all()` included in the wall
# time), seeds 1-3, the order alternated per seed. Prints assay's summary line and
# libFuzzer's own `exec/s` and `Done` lines, with the load.
#   bench/two_providers_whole.sh                 # -max_total_time=20 each
#   LIMIT=-runs=300000 bench/two_providers_whole.sh
# Run from the repository root with the project's venv (the bench extra: atheris, email-validator).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
H=$ROOT/bench/harnesses/fuzz_two_providers.py
PY=${PYTHON:-$ROOT/.venv/bin/python}
case $PY in /*) ;; *) PY=$PWD/$PY ;; esac  # the runs start in temporary folders
LIMIT=${LIMIT:--max_total_time=20}
for s in 1 2 3; do
    if [ "$s" = 2 ]; then order="atheris assay"; else order="assay atheris"; fi
    for tool in $order; do
        d=$(mktemp -d)
        mkdir "$d/corpus"
        t0=$(date +%s.%N)
        if [ "$tool" = assay ]; then
            line=$(cd "$d" && "$PY" -m assay fuzz "$H" corpus "$LIMIT" "-seed=$s" 2>&1 | grep 'cases in')
        else
            line=$(cd "$d" && "$PY" "$H" corpus "$LIMIT" "-seed=$s" 2>&1 | grep -E 'exec/s|Done' | tail -2 | tr '\n' ' ')
        fi
        t1=$(date +%s.%N)
        echo "seed $s $tool wall $(awk "BEGIN { printf \"%.1f\", $t1 - $t0 }") s :: $line :: load $(cut -d' ' -f1 /proc/loadavg)"
        rm -rf "$d"
    done
done
