"""Pygments 2.7.3: ``SMLLexer`` loops forever on a bare ``exception`` (CVE-2021-20270).

The Standard ML lexer's state for the ``exception`` keyword pops back into
itself when the keyword ends the input, so ``get_tokens`` never returns.  Fixed
in 2.7.4.  A hang has no exception: assay's per-input timeout reports it as a
``wedge`` (atheris: libFuzzer's ``-timeout``); slower-than-threshold calls that do
return raise ``SlowInput`` (see ``_slow.py``).
"""

from __future__ import annotations

from _slow import slow_guard
from pygments.lexers.ml import SMLLexer

import assay

THRESHOLD = 0.25  # seconds; a seed lexes in about a millisecond

HISTORY = {
    "venv": "pygments-2.7.3",
    "requirement": "pygments==2.7.3",
    "fixed": "pygments==2.7.4",
    "module": "pygments",
    "kind": "hang",
    "threshold_ms": 250,
    "bug": ["SlowInput", "wedge"],
    "reference": "CVE-2021-20270 (Pygments 2.7.4 changelog)",
    "poc": b"exception",
}

_LEXER = SMLLexer()


def _lex(text: str) -> list:
    return list(_LEXER.get_tokens(text))


@assay.target(
    name="pygments_2_7_3_sml",
    sources=["pygments.lexers.ml", "pygments.lexer"],
    seeds=[
        b"val x = 1\nfun f y = y + 1\n",
        b"datatype t = A | B of int\n",
        b"exception Empty of string\nstructure S = struct end\n",
    ],
    max_len=512,
    timeout=1.0,
)
def pygments_sml(data: bytes) -> None:
    slow_guard(_lex, data.decode("latin-1"), THRESHOLD)
