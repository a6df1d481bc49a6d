"""Typed arguments from a target's bytes, for targets that call functions taking more than bytes.

``assay init`` writes targets that build each parameter of a project function
with one call here (``args.text()``, ``args.integer()``, ``args.path()``, ...).
Values are cut from the input front to back with :class:`PythonFuzzedDataProvider`
(atheris' semantics); the one input-like parameter a function usually has gets
``rest=True``: all the bytes left, so the fuzzer's mutations reach it unchanged.
Nothing here rejects an input: every byte string gives some value of each kind.
"""

from __future__ import annotations

import io
import os
import tempfile
from pathlib import Path
from typing import Any

from assay.harness.fdp import PythonFuzzedDataProvider

#: Longest piece (bytes or characters) cut for a parameter that is not the last input.
PIECE_MAX = 256
#: Deepest nesting of a structured value (lists and mappings).
VALUE_DEPTH = 3
#: Most items in one list or mapping of a structured value.
VALUE_ITEMS = 6


class Arguments:
    """Typed values cut from ``data``, each method taking what it needs from the front."""

    def __init__(self, data: bytes) -> None:
        self._fdp = PythonFuzzedDataProvider(bytes(data))
        self._files = 0

    def bytes(self, *, rest: bool = False) -> bytes:
        """Bytes: all that is left with ``rest``, else a piece of random length."""
        fdp = self._fdp
        return fdp.ConsumeBytes(fdp.remaining_bytes()) if rest else fdp.ConsumeRandomLengthBytes(PIECE_MAX)

    def text(self, *, rest: bool = False) -> str:
        """Text: the bytes decoded as UTF-8 (undecodable bytes replaced)."""
        return self.bytes(rest=rest).decode("utf-8", errors="replace")

    def integer(self) -> int:
        """A whole number, small ones and boundary values most often."""
        fdp = self._fdp
        return fdp.ConsumeIntInRange(-1, 64) if fdp.ConsumeBool() else fdp.ConsumeInt(8)

    def number(self) -> float:
        """A float, special values (inf, nan, -0.0) included."""
        return self._fdp.ConsumeFloat()

    def flag(self) -> bool:
        """A bool."""
        return self._fdp.ConsumeBool()

    def choice(self, values: list[Any]) -> Any:
        """One of ``values`` (a ``Literal`` or an enumeration)."""
        return self._fdp.PickValueInList(list(values))

    def present(self) -> bool:
        """Whether an ``Optional`` parameter gets a value (else ``None``)."""
        return self._fdp.ConsumeIntInRange(0, 7) != 0

    def value(self, depth: int = 0) -> Any:
        """A JSON-like value: ``None``, bool, int, float, str, list or str-keyed dict."""
        kind = self._fdp.ConsumeIntInRange(0, 6 if depth < VALUE_DEPTH else 4)
        if kind == 0:
            return None
        if kind == 1:
            return self.flag()
        if kind == 2:
            return self.integer()
        if kind == 3:
            return self.number()
        if kind == 4:
            return self._fdp.ConsumeRandomLengthString(32)
        if kind == 5:
            return self.listing(depth + 1)
        return self.mapping(depth + 1)

    def listing(self, depth: int = 0) -> list[Any]:
        """A list of JSON-like values."""
        return [self.value(depth) for _ in range(self._fdp.ConsumeIntInRange(0, VALUE_ITEMS))]

    def mapping(self, depth: int = 0) -> dict[str, Any]:
        """A dict of str keys to JSON-like values."""
        count = self._fdp.ConsumeIntInRange(0, VALUE_ITEMS)
        return {self._fdp.ConsumeRandomLengthString(16): self.value(depth) for _ in range(count)}

    def binary_stream(self, *, rest: bool = False) -> io.BytesIO:
        """A binary stream holding the bytes."""
        return io.BytesIO(self.bytes(rest=rest))

    def text_stream(self, *, rest: bool = False) -> io.StringIO:
        """A text stream holding the decoded text."""
        return io.StringIO(self.text(rest=rest))

    def path(self, *, rest: bool = False) -> Path:
        """A temporary file holding the bytes (one per parameter and process, rewritten on every call).

        It lies in the temporary folder, which assay's sandbox lets a worker write.
        """
        self._files += 1
        where = Path(tempfile.gettempdir()) / f"assay-input-{os.getpid()}-{self._files}"
        where.write_bytes(self.bytes(rest=rest))
        return where
