"""Finding clang and describing it: the compiler half of a build identity.

A :class:`Toolchain` is the resolved clang binary with its digest, ``--version``,
Debian package version, the sanitizer runtime archives it links (each with its
digest) and the symbolizer ASan should use.  :func:`find_toolchain` refuses (exit 2,
with the install command) when clang is missing or cannot link ``-fsanitize=fuzzer``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from assay.core.errors import NativeError

#: The command that installs a clang with libFuzzer, ASan and UBSan on Debian 12.
INSTALL_HINT = "apt-get update && apt-get install -y --no-install-recommends clang clang-14 libclang-rt-14-dev"
#: Environment variable naming the clang to use instead of ``clang`` on PATH.
CLANG_ENV = "ASSAY_CLANG"
#: Sanitizer runtime archives (``libclang_rt.<name>-<arch>.a``) that belong to the identity.
RUNTIME_NAMES = (
    "fuzzer",
    "fuzzer_no_main",
    "asan",
    "asan_cxx",
    "asan_static",
    "asan-preinit",
    "ubsan_standalone",
    "ubsan_standalone_cxx",
)
#: Seconds a probe of the compiler (``--version``, the link check) may take.
PROBE_TIMEOUT = 120

_PROBE = (
    b"#include <stdint.h>\n#include <stddef.h>\nint LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n"
)


def file_sha256(path: str | os.PathLike[str]) -> str:
    """SHA-256 of a file's bytes, read in chunks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@dataclass(frozen=True)
class Toolchain:
    """A clang able to build libFuzzer harnesses with ASan and UBSan."""

    clang: str
    clangxx: str
    sha256: str
    version: str
    package: str | None
    runtimes: dict[str, str] = field(default_factory=dict)
    symbolizer: str | None = None

    def identity(self) -> dict[str, Any]:
        """The compiler's identity as plain data (part of every build manifest)."""
        return {
            "path": self.clang,
            "sha256": self.sha256,
            "version": self.version,
            "package": self.package,
            "runtimes": dict(sorted(self.runtimes.items())),
        }

    def driver(self, cxx: bool) -> str:
        return self.clangxx if cxx else self.clang


def _run(argv: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT, **kwargs)


def _missing(why: str) -> NativeError:
    return NativeError(
        f"the native backend needs clang with libFuzzer, ASan and UBSan ({why}); install it with:\n"
        f"  {INSTALL_HINT}\n(or point {CLANG_ENV} at a clang that has them)"
    )


def _package_of(path: str) -> str | None:
    """``name=version`` of the Debian package owning ``path``, if dpkg knows it."""
    if not shutil.which("dpkg-query"):
        return None
    try:
        owner = _run(["dpkg-query", "-S", path])
        if owner.returncode != 0 or ":" not in owner.stdout:
            return None
        name = owner.stdout.split(":", 1)[0].strip()
        version = _run(["dpkg-query", "-W", "-f=${Version}", name])
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{name}={version.stdout.strip()}" if version.returncode == 0 else None


def _runtimes(clang: str) -> dict[str, str]:
    out = _run([clang, "-print-resource-dir"])
    folder = Path(out.stdout.strip()) / "lib" / "linux"
    found: dict[str, str] = {}
    arch = os.uname().machine
    for name in RUNTIME_NAMES:
        archive = folder / f"libclang_rt.{name}-{arch}.a"
        if archive.is_file():
            found[str(archive)] = file_sha256(archive)
    return found


def _link_check(clang: str) -> str | None:
    """None when clang links a libFuzzer harness with ASan and UBSan; else its error."""
    with tempfile.TemporaryDirectory(prefix="assay-probe-") as tmp:
        src = Path(tmp) / "probe.c"
        src.write_bytes(_PROBE)
        try:
            r = _run([clang, "-fsanitize=fuzzer,address,undefined", str(src), "-o", str(Path(tmp) / "probe")])
        except (OSError, subprocess.SubprocessError) as exc:
            return str(exc)
        return None if r.returncode == 0 else (r.stderr.strip().splitlines() or ["failed"])[-1]


@functools.lru_cache(maxsize=8)
def _toolchain(clang: str, mtime: float) -> Toolchain:  # noqa: ARG001 - mtime keys the cache
    error = _link_check(clang)
    if error:
        raise _missing(f"{clang} cannot link -fsanitize=fuzzer,address,undefined: {error}")
    version = _run([clang, "--version"]).stdout.strip()
    sibling = Path(clang).with_name(Path(clang).name.replace("clang", "clang++", 1))
    clangxx = str(sibling) if sibling.exists() else (shutil.which("clang++") or clang)
    symbolizer = shutil.which("llvm-symbolizer") or None
    near = Path(clang).with_name("llvm-symbolizer")
    if near.exists():
        symbolizer = str(near)
    return Toolchain(
        clang=clang,
        clangxx=clangxx,
        sha256=file_sha256(clang),
        version=version,
        package=_package_of(clang),
        runtimes=_runtimes(clang),
        symbolizer=symbolizer,
    )


def find_toolchain() -> Toolchain:
    """The clang to build with (``$ASSAY_CLANG`` or ``clang`` on PATH), checked once per process.

    Raises :class:`~assay.core.errors.NativeError` (exit 2, with the install command) when
    there is none or it cannot link ``-fsanitize=fuzzer,address,undefined``.
    """
    name = os.environ.get(CLANG_ENV) or "clang"
    found = shutil.which(name)
    if not found:
        raise _missing(f"{name!r} is not on PATH")
    resolved = os.path.realpath(found)
    return _toolchain(resolved, os.stat(resolved).st_mtime)


def available() -> str | None:
    """None when the native backend can build here; otherwise why not (for test skips)."""
    try:
        find_toolchain()
    except NativeError as exc:
        return str(exc)
    return None
