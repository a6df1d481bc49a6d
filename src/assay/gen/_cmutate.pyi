"""Types of the optional C twin of the byte-mode generator (_cmutate.c, cmutate_*.c)."""

from collections.abc import Callable, Sequence
from types import CodeType
from typing import Any, TypeVar

_T = TypeVar("_T")

#: The sixteen mutations' names, in the order of ByteMutator's.
NAMES: tuple[str, ...]
UNICODE_CHARS: tuple[bytes, ...]
#: The tunables compiled in (name -> int or float).
CONSTANTS: dict[str, int | float]

class Random:
    """assay.engine.seeds.FastRandom's twin."""

    _pool: int
    _index: int
    _more: int
    @property
    def _key(self) -> bytes: ...
    def __init__(self, pool: int, key: bytes, index: int) -> None: ...
    def _randbelow(self, n: int, /) -> int: ...
    def randrange(self, start: int, stop: int | None = None, /) -> int: ...
    def randint(self, a: int, b: int, /) -> int: ...
    def random(self) -> float: ...
    def choice(self, seq: Sequence[_T], /) -> _T: ...
    def shuffle(self, x: list[Any], /) -> None: ...
    def getrandbits(self, k: int, /) -> int: ...
    def randbytes(self, n: int, /) -> bytes: ...
    def expovariate(self, lambd: float = 1.0, /) -> float: ...

class Stream:
    """assay.engine.seeds.CaseStream's twin."""

    @property
    def key(self) -> bytes: ...
    def __init__(self, key: bytes) -> None: ...
    def rng(self, index: int, /) -> Random: ...

class LineTally:
    """assay.engine.traced.LineTally's twin: sys.monitoring LINE and JUMP callbacks."""

    count: int
    def __init__(self, cap: int, finish: Callable[[], object]) -> None: ...
    def hit(self, *args: object) -> object: ...
    def jump(self, code: CodeType, offset: int, destination: int, /) -> object: ...

class Recorder:
    """The value-profile run's comparison recorder, called as assay_cmp(op, site, vsite, a, b)."""

    def __init__(
        self,
        values: list[Any] | None,
        max_values: int,
        max_compared: int,
        cut: Any,
        *,
        guards: list[Any] | None = None,
        max_guards: int = 0,
        records: list[Any] | None = None,
        max_records: int = 0,
        in_order: Callable[..., Any] | None = None,
        max_members: int = 0,
    ) -> None: ...
    def __call__(self, op: int, site: Any, vsite: Any, a: Any, b: Any, /) -> Any: ...
    def last(self) -> Any: ...

class FuzzedDataProvider:
    """assay.harness.fdp.PythonFuzzedDataProvider's twin (atheris' provider, value for value)."""

    def __init__(self, data: bytes, /) -> None: ...
    def remaining_bytes(self) -> int: ...
    def buffer(self) -> bytes: ...
    def ConsumeBytes(self, count: int, /) -> bytes: ...  # noqa: N802
    def ConsumeUnicode(self, count: int) -> str: ...  # noqa: N802
    def ConsumeUnicodeNoSurrogates(self, count: int, /) -> str: ...  # noqa: N802
    def ConsumeString(self, count: int, /) -> str: ...  # noqa: N802
    def ConsumeRandomLengthBytes(self, max_length: int = ..., /) -> bytes: ...  # noqa: N802
    def ConsumeRandomLengthString(self, max_length: int = ..., /) -> str: ...  # noqa: N802
    def ConsumeInt(self, byte_count: int, /) -> int: ...  # noqa: N802
    def ConsumeUInt(self, byte_count: int, /) -> int: ...  # noqa: N802
    def ConsumeIntInRange(self, min_value: int, max_value: int, /) -> int: ...  # noqa: N802
    def ConsumeIntList(self, count: int, byte_count: int, /) -> list[int]: ...  # noqa: N802
    def ConsumeIntListInRange(self, count: int, min_value: int, max_value: int, /) -> list[int]: ...  # noqa: N802
    def ConsumeBool(self) -> bool: ...  # noqa: N802
    def ConsumeProbability(self) -> float: ...  # noqa: N802
    def ConsumeFloat(self) -> float: ...  # noqa: N802
    def ConsumeRegularFloat(self) -> float: ...  # noqa: N802
    def ConsumeFloatInRange(self, min_value: float, max_value: float, /) -> float: ...  # noqa: N802
    def ConsumeFloatList(self, count: int, /) -> list[float]: ...  # noqa: N802
    def ConsumeRegularFloatList(self, count: int, /) -> list[float]: ...  # noqa: N802
    def ConsumeProbabilityList(self, count: int, /) -> list[float]: ...  # noqa: N802
    def ConsumeFloatListInRange(self, count: int, min_value: float, max_value: float, /) -> list[float]: ...  # noqa: N802
    def PickValueInList(self, values: list[_T], /) -> _T: ...  # noqa: N802

class HotLoop:
    """The worker's byte-mode hot loop (Worker._block with InputSource.next)."""

    @property
    def dropped(self) -> int: ...
    @property
    def restaged(self) -> int: ...
    def __init__(
        self,
        *,
        fn: Any,
        target: Any,
        source: Any,
        stream: Stream,
        mutate_args: tuple[Any, ...],
        replace_one: Any,
        feedback: Any,
        sink: Any,
        boring: set[Any] | frozenset[Any],
        rejects: set[Any] | frozenset[Any],
        seen: set[Any] | frozenset[Any],
        values: Any,
        journal: Any,
        sandbox: Any,
        allow: Any,
        strays_returned: Any,
        outlier: float | None,
        data_at: int,
        clock_every: int,
    ) -> None: ...
    def run(
        self, i: int, stop: int, executed: int, wake_at: float | None = None, /
    ) -> tuple[int, int, int, Any, Any, Any, Any, Any, float]: ...

def mutate(
    max_len: int,
    dictionary: list[bytes],
    wins: list[Any],
    inserting: list[Any],
    names: tuple[str, ...],
    n_picks: int,
    win_cut: int,
    rng: Random,
    data: bytes,
    other: list[bytes] | bytes | None,
    limit: int | None,
    /,
) -> tuple[bytes, list[str]]: ...
def replace_one(data: bytes, pattern: bytes, replacement: bytes, pick: int, /) -> bytes | None: ...
def add_audit_hook(hook: Callable[[str, tuple[Any, ...]], object], events: Sequence[str], /) -> None:
    """An audit hook that calls ``hook(event, args)`` for the named events only (never removed)."""

def swap_codes(functions: list[Any], codes: list[CodeType], /) -> list[CodeType]:
    """Set each function's ``__code__`` (all or none); the codes they had."""
