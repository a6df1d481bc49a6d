"""assay: coverage-guided, structure-aware fuzzing and mutation testing for Python."""

from typing import TYPE_CHECKING, Any

from assay.core.errors import (
    ArtifactError,
    AssayError,
    ConfigError,
    CorpusError,
    MonitoringUnavailable,
    TargetError,
)
from assay.core.observe import InvariantViolation, OracleFailure, feature, fuzzing, invariant
from assay.core.target import REGISTRY, Target, target
from assay.core.version import __version__
from assay.gen.bytesource import ByteSource
from assay.gen.strategy import Strategy, get_strategy, register_strategy
from assay.native.config import NativeTarget, native_target
from assay.promote.regression import Failure, replay, replay_example, replay_steps, replay_test

if TYPE_CHECKING:  # imported lazily at run time (__getattr__ below); its type for checkers
    from assay.http.target import http_target

__all__ = [
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
    "replay_steps",
    "replay_test",
    "target",
    "http_target",
]


def __getattr__(name: str) -> Any:
    """``assay.http_target`` without importing the HTTP package until it is used."""
    if name == "http_target":
        from assay.http.target import http_target

        return http_target
    raise AttributeError(f"module 'assay' has no attribute {name!r}")
