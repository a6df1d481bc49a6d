"""``python -m assay.scale.subshard SPEC RESULT``: run one pickled shard spec in this interpreter.

Used by :func:`assay.scale.shard.run_shard` when a worker's hash seed differs from
the client's; the result is pickled to the file RESULT.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

from assay.scale.shard import run_shard_here
from assay.store.atomic import write_bytes


def main(argv: list[str]) -> int:
    spec = pickle.loads(Path(argv[0]).read_bytes())
    write_bytes(argv[1], pickle.dumps(run_shard_here(spec)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
