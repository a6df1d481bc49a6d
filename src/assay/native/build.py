"""Builds you can trust: a build identity, a manifest beside every binary, and rebuilds.

The **build identity** is the SHA-256 of the build manifest: the compiler's identity
(resolved path, binary digest, ``--version``, Debian package, sanitizer runtime
archives), the exact compiler argv (output path aside), the digest of every file the
compiler reads (the harness, the sources and every header ``clang -MM`` reports with
the same flags) and, for ``embed_python``, the Python version, ABI and libpython
digest.  A build lives in ``<project>/.assay/native/<target>/<identity>/`` as
``fuzzer`` + ``manifest.json``; it is reused only when the manifest recomputed now is
the one on disk and the binary's digest is the recorded one.  Anything else is rebuilt:
a stale binary is never run.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.core.errors import BuildError, NativeError
from assay.core.native_target import NativeTarget
from assay.native.toolchain import Toolchain, file_sha256, find_toolchain
from assay.store.atomic import TMP_PREFIX, fsync_dir, write_json

#: Sanitizer and debug flags every native build uses.
SANITIZE_FLAGS = ("-fsanitize=fuzzer,address,undefined", "-fno-sanitize-recover=undefined", "-g", "-O1")
#: Seconds one build (compile and link) may take before it is killed.
BUILD_TIMEOUT = 600.0
#: Version of the manifest layout; part of the identity.
MANIFEST_VERSION = 1
#: Where builds live, relative to the project root.
BUILD_DIR = ".assay/native"
#: Times a build is redone when a file it read changed while it ran.
MAX_BUILD_ATTEMPTS = 3
#: Seconds clang may take to check one declared flag on an empty file (after a failed build).
FLAG_CHECK_TIMEOUT = 60.0
#: Placeholder for the output path in the recorded argv.
OUT = "<out>"


@dataclass(frozen=True)
class Build:
    """A built (or reused) harness binary and the manifest that names it."""

    target: str
    identity: str
    folder: Path
    binary: Path
    manifest: dict[str, Any]
    reused: bool
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        """What reports and artifacts record of this build."""
        return {
            "identity": self.identity,
            "binary": str(self.binary),
            "manifest": str(self.folder / "manifest.json"),
            "reused": self.reused,
            "build_seconds": round(self.seconds, 3),
            "compiler": self.manifest.get("compiler"),
            "argv": self.manifest.get("argv"),
            "inputs": self.manifest.get("inputs"),
            "python": self.manifest.get("python"),
        }


def python_embedding() -> dict[str, Any]:
    """Compile and link flags, and identity, of this interpreter's libpython."""
    include = sysconfig.get_paths()["include"]
    plat = sysconfig.get_paths().get("platinclude") or include
    libdir = sysconfig.get_config_var("LIBDIR") or ""
    ldlibrary = sysconfig.get_config_var("LDLIBRARY") or ""
    libpython = Path(libdir) / ldlibrary
    if not sysconfig.get_config_var("Py_ENABLE_SHARED") or not libpython.is_file():
        raise NativeError(
            f"embed_python needs a shared libpython, and {sys.executable} has none ({libpython}); "
            "use a Python built with --enable-shared (Debian's python3-dev has one)"
        )
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    cflags = [f"-I{include}"] + ([f"-I{plat}"] if plat != include else [])
    ldflags = [f"-L{libdir}", f"-lpython{version}{getattr(sys, 'abiflags', '')}", f"-Wl,-rpath,{libdir}", "-ldl", "-lm"]
    return {
        "cflags": cflags,
        "ldflags": ldflags,
        "identity": {
            "version": sys.version,
            "abi": sysconfig.get_config_var("SOABI") or "",
            "libpython": str(libpython.resolve()),
            "libpython_sha256": file_sha256(libpython.resolve()),
        },
    }


def compile_flags(target: NativeTarget, root: Path, embed: dict[str, Any] | None) -> list[str]:
    """Flags shared by the build and the dependency scan (no inputs, no output)."""
    flags = list(SANITIZE_FLAGS)
    flags += [f"-I{target.path(root, d)}" for d in target.include_dirs]
    flags += [f"-D{d}" for d in target.defines]
    flags += list(target.cflags)
    if embed:
        flags += embed["cflags"]
    return flags


def units(target: NativeTarget, root: Path) -> list[Path]:
    """The files compiled: the harness, then the sources in declared order."""
    return [target.path(root, target.harness)] + [target.path(root, s) for s in target.sources]


def parse_make_deps(text: str) -> list[str]:
    """The prerequisites of a make rule printed by ``clang -MM`` (several rules allowed)."""
    joined = text.replace("\\\n", " ")
    out: list[str] = []
    for rule in joined.splitlines():
        if ":" not in rule:
            continue
        body = rule.split(": ", 1)[1] if ": " in rule else rule.split(":", 1)[1]
        token, escaped = "", False
        for ch in body + " ":
            if escaped:
                token += ch
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch.isspace():
                if token:
                    out.append(token)
                token = ""
            else:
                token += ch
    return out


def read_files(tc: Toolchain, target: NativeTarget, root: Path, flags: list[str]) -> list[Path]:
    """Every file the compiler reads for ``target`` (``clang -MM`` with the build's flags)."""
    files: dict[Path, None] = {}
    for unit in units(target, root):
        r = subprocess.run(
            [tc.driver(target.cxx), *flags, "-MM", str(unit)],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT,
        )
        if r.returncode != 0:
            raise BuildError(
                _blamed(tc, target, root)
                + f"native target {target.name!r}: scanning the headers of {unit} failed:\n{_tail(r.stderr)}"
            )
        files[unit] = None
        for dep in parse_make_deps(r.stdout):
            files[(root / dep).resolve()] = None
    return list(files)


def plan(
    target: NativeTarget, root: str | os.PathLike[str], tc: Toolchain | None = None
) -> tuple[dict[str, Any], list[str]]:
    """(manifest, argv with :data:`OUT` for the output) of ``target``'s build as things are now."""
    root = Path(root).resolve()
    tc = tc or find_toolchain()
    target.check_paths(root)
    embed = python_embedding() if target.embed_python else None
    flags = compile_flags(target, root, embed)
    argv = [tc.driver(target.cxx), *flags, *(str(u) for u in units(target, root)), "-o", OUT]
    if embed:
        argv += embed["ldflags"]
    inputs = {str(p): file_sha256(p) for p in read_files(tc, target, root, flags)}
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        "target": target.name,
        "compiler": tc.identity(),
        "argv": argv,
        "inputs": dict(sorted(inputs.items())),
        "python": embed["identity"] if embed else None,
    }
    return manifest, argv


def identity_of(manifest: dict[str, Any]) -> str:
    """The build identity: SHA-256 of the manifest's canonical JSON."""
    text = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def build_root(root: str | os.PathLike[str], target: str) -> Path:
    return Path(root).resolve() / BUILD_DIR / target


def _valid(folder: Path, manifest: dict[str, Any], identity: str) -> bool:
    try:
        stored = json.loads((folder / "manifest.json").read_text("utf-8"))
        binary = folder / "fuzzer"
        return (
            stored.get("identity") == identity
            and stored.get("manifest") == manifest
            and binary.is_file()
            and file_sha256(binary) == stored.get("binary_sha256")
        )
    except (OSError, ValueError):
        return False


def ensure_build(
    target: NativeTarget, root: str | os.PathLike[str], *, timeout: float = BUILD_TIMEOUT, tc: Toolchain | None = None
) -> Build:
    """The binary for ``target`` as its sources are now: reused if its manifest matches, else built.

    The build runs in its own process group, killed past ``timeout`` seconds
    (:class:`~assay.core.errors.BuildError`).  When a file it read changes during the build,
    the result is discarded and the build redone.
    """
    root = Path(root).resolve()
    tc = tc or find_toolchain()
    for _ in range(MAX_BUILD_ATTEMPTS):
        manifest, argv = plan(target, root, tc)
        identity = identity_of(manifest)
        folder = build_root(root, target.name) / identity
        if _valid(folder, manifest, identity):
            stored = json.loads((folder / "manifest.json").read_text("utf-8"))
            return Build(
                target.name,
                identity,
                folder,
                folder / "fuzzer",
                manifest,
                True,
                float(stored.get("build_seconds", 0.0)),
            )
        seconds, tmp = _compile(tc, target, root, argv, timeout)
        after, _ = plan(target, root, tc)
        if after != manifest:  # an input changed while compiling: this binary matches neither
            shutil.rmtree(tmp, ignore_errors=True)
            continue
        write_json(
            tmp / "manifest.json",
            {
                "identity": identity,
                "manifest": manifest,
                "binary_sha256": file_sha256(tmp / "fuzzer"),
                "build_seconds": round(seconds, 3),
            },
        )
        if folder.exists():  # present but not valid: a tampered or half-removed build
            shutil.rmtree(folder)
        try:
            os.rename(tmp, folder)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
            if not _valid(folder, manifest, identity):
                raise
        fsync_dir(folder.parent)
        return Build(target.name, identity, folder, folder / "fuzzer", manifest, False, seconds)
    raise BuildError(f"native target {target.name!r}: its files kept changing during {MAX_BUILD_ATTEMPTS} builds")


def _compile(tc: Toolchain, target: NativeTarget, root: Path, argv: list[str], timeout: float) -> tuple[float, Path]:
    parent = build_root(root, target.name)
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=TMP_PREFIX, dir=parent))
    real = [str(tmp / "fuzzer") if a == OUT else a for a in argv]
    started = time.monotonic()
    with open(tmp / "build.log", "w+b") as log:
        proc = subprocess.Popen(real, cwd=root, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            shutil.rmtree(tmp, ignore_errors=True)
            raise BuildError(
                f"native target {target.name!r}: the build ran past its {timeout:g} s limit and was killed"
            ) from None
        log.seek(0)
        output = log.read().decode("utf-8", "replace")
    if rc != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        raise BuildError(
            _blamed(tc, target, root)
            + f"native target {target.name!r} failed to build (exit {rc}):\n  {' '.join(real)}\n{_tail(output)}\n"
            f"fix the harness or [tool.assay.native.{target.name}] and run again"
        )
    return time.monotonic() - started, tmp


def refused_flag(tc: Toolchain, target: NativeTarget, root: Path) -> str | None:
    """Which ``cflags`` or ``defines`` entry clang refuses on an empty file, said in one line; None if none.

    Each entry is tried alone, then all ``cflags`` together (an option and its value
    may be two entries).  Called only after a build or header scan failed, so a
    working build costs nothing.
    """
    language = ["-x", "c++" if target.cxx else "c"]
    trials = [("cflags", e, [e]) for e in target.cflags] + [("defines", e, [f"-D{e}"]) for e in target.defines]
    if len(target.cflags) > 1:
        trials.append(("cflags", " ".join(target.cflags), list(target.cflags)))
    for key, entry, flags in trials:
        r = subprocess.run(
            [tc.driver(target.cxx), *flags, "-fsyntax-only", *language, "-"],
            input="",
            cwd=root,
            capture_output=True,
            text=True,
            timeout=FLAG_CHECK_TIMEOUT,
        )
        if r.returncode != 0:
            said = next((line for line in r.stderr.splitlines() if "error" in line), r.stderr.strip())
            return f"{key} entry {entry!r} is refused by clang ({said.strip()})"
    return None


def _blamed(tc: Toolchain, target: NativeTarget, root: Path) -> str:
    """The first line of a build error when a declared flag is the cause: the key, the entry, where to fix it."""
    try:
        why = refused_flag(tc, target, root)
    except (OSError, subprocess.SubprocessError):
        return ""
    if why is None:
        return ""
    where = (
        f"[tool.assay.native.{target.name}] of {target.defined_in}"
        if target.defined_in.endswith(".toml")
        else f"the native_target({target.name!r}, ...) call"
    )
    return f"native target {target.name!r}: {why}; fix it in {where}\n"


def _tail(text: str, lines: int = 30) -> str:
    return "\n".join(text.strip().splitlines()[-lines:])
