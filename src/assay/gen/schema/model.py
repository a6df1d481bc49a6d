"""Constants, results and failures shared by the schema generator's modules."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from assay.core.errors import ConfigError

MODES = ("valid", "adjacent", "mixed")
DEFAULT_DEPTH = 4  #: nesting below which optional structure is still added
HARD_DEPTH = 24  #: recursion through required structure deeper than this is unsatisfiable
MAX_ATTEMPTS = 16  #: whole-value retries before giving up on valid mode
MAX_ADJACENT_TRIES = 24  #: candidate violations tried before giving up on adjacent mode
MAX_ITEMS = 64  #: largest array generated
MAX_STRING = 2048  #: longest string generated
OPTIONAL_RATE = 0.5  #: chance to include an optional property at the top level
EXTRA_RATE = 0.15  #: chance to add an undeclared property where the schema allows one
THEN_RATE = 0.35  #: chance to generate for an if-block's "then" side (else its "else" side)
ROOT_URI = "urn:assay:schema"


class Unsatisfiable(ConfigError):
    """No value of the requested mode could be generated for this schema."""


@dataclass(frozen=True)
class Generated:
    """A generated value, its mode, and (for adjacent values) the one violation."""

    value: Any
    mode: str
    violation: str | None = None
    path: str | None = None
    detail: str = ""


class AttemptFailed(Exception):
    """This attempt cannot produce a value (another attempt may)."""


Error = tuple[str, tuple[Any, ...]]
