"""The bucket store: a committed JSON file mapping signature -> regression test path.

It is how the promoter knows a bug is already known.  The file is read on every
call (another process may have promoted since) and rewritten atomically with
sorted keys, so its diffs are reviewable.  A missing or empty file is an empty
store; anything that is not a JSON object of strings is a configuration error.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

from assay.core.errors import ConfigError
from assay.store.atomic import write_json

#: File name of the bucket store inside the regressions folder.
BUCKETS_FILE = "buckets.json"


class BucketStore:
    """Signature -> test path (relative to the project root, ``/``-separated)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)

    def load(self) -> dict[str, str]:
        """The whole mapping as it is on disk now."""
        try:
            text = self.path.read_text("utf-8")
        except FileNotFoundError:
            return {}
        except UnicodeDecodeError:
            raise ConfigError(f"{self.path} is not UTF-8 text; restore it from version control") from None
        if not text.strip():
            return {}
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"{self.path} is not valid JSON ({exc}); restore it from version control or delete it"
            ) from None
        if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
            raise ConfigError(f"{self.path} must be a JSON object mapping signatures to test paths")
        return data

    def get(self, signature: str) -> str | None:
        """The test path recorded for ``signature``, or ``None``."""
        return self.load().get(signature)

    def __contains__(self, signature: object) -> bool:
        return signature in self.load()

    def __len__(self) -> int:
        return len(self.load())

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.load()))

    def add(self, signature: str, test_path: str) -> None:
        """Record (or re-point) ``signature``; written atomically."""
        if not signature or not isinstance(signature, str):
            raise ConfigError(f"a bucket signature must be a non-empty string, not {signature!r}")
        data = self.load()
        if data.get(signature) == test_path and self.path.exists():
            return
        data[signature] = test_path
        write_json(self.path, data)

    def remove(self, signature: str) -> bool:
        """Forget ``signature`` (when its test is deleted); True if it was there."""
        data = self.load()
        if signature not in data:
            return False
        del data[signature]
        write_json(self.path, data)
        return True
