"""idna 3.6: ``idna.encode`` is quadratic in the label length (CVE-2024-3651).

``valid_contextj`` scans the whole label backwards and forwards for every ZERO
WIDTH NON-JOINER without stopping at the first non-transparent character, so a
long label of U+200C between joining letters costs O(n^2) before the length
check ever runs.  3.7 stops the scans early.  (3.6 and 3.7
also scan the label once per ARABIC-INDIC DIGIT in ``valid_contexto``; later
releases reject over-long input up front.  The artifact shows which path was
hit.)  Slowness target: see ``_slow.py``.
"""

from __future__ import annotations

import idna
from _slow import slow_guard

import assay

THRESHOLD = 0.1  # seconds; a seed encodes in about 50 microseconds

HISTORY = {
    "venv": "idna-3.6",
    "requirement": "idna==3.6",
    "fixed": "idna==3.7",
    "module": "idna",
    "kind": "slow",
    "threshold_ms": 100,
    "bug": ["SlowInput", "wedge"],
    "reference": "CVE-2024-3651 (idna 3.7 release notes)",
    "poc": ("\u0628" + "\u200c" * 1000 + "\u0628").encode(),
}


@assay.target(
    name="idna_3_6_encode",
    expected=(idna.IDNAError, UnicodeError),
    sources=["idna"],
    seeds=[b"example.com", "bücher.example".encode(), "例え.テスト".encode(), "مثال.إختبار".encode()],
    max_len=4096,
    slow=THRESHOLD,  # cost feedback: the search climbs toward slower inputs
)
def idna_encode(data: bytes) -> None:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    slow_guard(idna.encode, text, THRESHOLD)
