#!/usr/bin/env bash
# Fetch the sdists whose C code the native examples fuzz, into .cache/ (never committed).
#   httptools: the vendored llhttp and http-parser HTTP parsers (standalone harnesses)
#   markupsafe: _speedups.c, driven through embedded CPython (embed_python = true)
set -euo pipefail
cd "$(dirname "$0")"
PY="${PYTHON:-python3}"
mkdir -p .cache/downloads
"$PY" -m pip download --quiet --no-binary :all: --no-deps -d .cache/downloads "httptools==0.9.0" "markupsafe==3.0.4"
for archive in .cache/downloads/*.tar.gz; do
    tar -xzf "$archive" -C .cache
done
rm -rf .cache/httptools .cache/markupsafe
mv .cache/httptools-0.9.0 .cache/httptools
mv .cache/markupsafe-3.0.4 .cache/markupsafe
echo "sdists unpacked under $(pwd)/.cache: httptools (vendor/llhttp, vendor/http-parser), markupsafe (src/markupsafe/_speedups.c)"
