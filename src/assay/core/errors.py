"""The exception hierarchy of assay.

Every error that assay raises on purpose derives from :class:`AssayError`.  Only
``assay.cli.main.main`` turns these into exit codes: a configuration or usage error is
exit code 2, with the message telling the user what to change; an
:class:`InternalError` (assay's own fault, not the user's nor the target's) is
exit code 3.
"""

from __future__ import annotations


class AssayError(Exception):
    """Root of every error assay raises deliberately."""


class ConfigError(AssayError):
    """Broken configuration, bad flags, or a target that cannot be loaded (exit 2)."""


class TargetError(ConfigError):
    """A target is malformed, cannot be imported, or is not registered."""


class CorpusError(ConfigError):
    """A corpus directory breaks the content-addressing rules; nothing was run."""


class ArtifactError(ConfigError):
    """An artifact directory or its metadata cannot be read."""


class SandboxRefusedEverything(ConfigError):
    """Every case of a run was refused by the sandbox: the target needs an ``allow`` it lacks (exit 2)."""


class MonitoringUnavailable(AssayError):
    """``sys.monitoring`` (PEP 669) is missing or has no free tool id."""


class NativeError(ConfigError):
    """The native (libFuzzer) backend cannot run: no usable clang, a bad native target (exit 2)."""


class BuildError(NativeError):
    """A native harness failed to build, or its build ran past the build time limit (exit 2)."""


class InternalError(AssayError):
    """assay itself failed (a worker's own code, a write it could not make): exit 3."""
