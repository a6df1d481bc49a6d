"""assay: coverage-guided, structure-aware fuzzing and mutation testing for Python.

This module is the public API (the names in ``__all__``) and the one place that wires
packages together across layers: where a lower layer must reach a feature above it
(discovery reading ``[tool.assay.http]``, the promoter offering native artifacts), the
lower layer keeps a registry and the feature is registered here, lazily, so that no
package imports a higher one and no optional package loads before it is used.
"""

from pathlib import Path
from typing import TYPE_CHECKING, Any

from assay.core.errors import (
    ArtifactError,
    AssayError,
    ConfigError,
    CorpusError,
    MonitoringUnavailable,
    TargetError,
)
from assay.core.native_target import NativeTarget, native_target
from assay.core.observe import InvariantViolation, OracleFailure, feature, fuzzing, invariant
from assay.core.target import REGISTRY, Target
from assay.core.version import __version__
from assay.gen.bytesource import ByteSource
from assay.gen.strategy import Strategy, get_strategy, register_strategy
from assay.harness.define import target
from assay.harness.tables import register_table_loader
from assay.promote.backends import register_backend
from assay.promote.regression import Failure, replay, replay_example, replay_steps, replay_test

if TYPE_CHECKING:  # imported lazily at run time (__getattr__ and the wiring below); their types for checkers
    from assay.harness.arguments import Arguments
    from assay.http.target import http_target
    from assay.native.regression import replay_native
    from assay.promote.rubric import Candidate
    from assay.store.artifacts import Artifact

__all__ = [
    "Arguments",
    "AssayError",
    "ArtifactError",
    "ByteSource",
    "ConfigError",
    "CorpusError",
    "Failure",
    "InvariantViolation",
    "MonitoringUnavailable",
    "NativeTarget",
    "OracleFailure",
    "REGISTRY",
    "Strategy",
    "Target",
    "TargetError",
    "__version__",
    "feature",
    "fuzzing",
    "get_strategy",
    "invariant",
    "native_target",
    "register_strategy",
    "replay",
    "replay_example",
    "replay_native",
    "replay_steps",
    "replay_test",
    "target",
    "http_target",
]


def __getattr__(name: str) -> Any:
    """``assay.http_target``, ``assay.replay_native`` and ``assay.Arguments`` without importing them until used."""
    if name == "Arguments":
        from assay.harness.arguments import Arguments

        return Arguments
    if name == "http_target":
        from assay.http.target import http_target

        return http_target
    if name == "replay_native":
        from assay.native.regression import replay_native

        return replay_native
    raise AttributeError(f"module 'assay' has no attribute {name!r}")


def _http_table_targets(root: Path, table: Any) -> list[Target]:
    """The targets of ``[tool.assay.http.<name>]`` tables (the HTTP package loads only for them)."""
    from assay.http.config import targets_from_config

    return targets_from_config(root, table)


def _native_candidate(artifact: "Artifact", project_root: Path) -> "Candidate":
    """A native artifact offered for promotion (the native backend loads only for one)."""
    from assay.native.promote import NativeCandidate

    return NativeCandidate(artifact, project_root)


register_table_loader("http", _http_table_targets)
register_backend("native", _native_candidate)
