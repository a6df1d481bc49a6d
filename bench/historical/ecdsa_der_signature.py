"""ecdsa 0.13.2: malformed DER signatures raise arbitrary exceptions (CVE-2019-14853).

``VerifyingKey.verify(..., sigdecode=sigdecode_der)`` should reject a bad
signature with ``BadSignatureError`` (or the library's ``UnexpectedDER``); up to
0.13.2 truncated or malformed DER escapes as ``IndexError``/``ValueError`` from
``ecdsa.der``.  Fixed in 0.13.3, where every decoding failure in ``verify``
becomes ``BadSignatureError``.
"""

from __future__ import annotations

import hashlib

from ecdsa import BadSignatureError, NIST256p, SigningKey
from ecdsa.der import UnexpectedDER
from ecdsa.util import sigdecode_der, sigencode_der

import assay

HISTORY = {
    "venv": "ecdsa-0.13.2",
    "requirement": "ecdsa==0.13.2",
    "fixed": "ecdsa==0.13.3",
    "module": "ecdsa",
    "kind": "crash",
    "bug": ["*"],  # any exception other than BadSignatureError / UnexpectedDER
    "reference": "CVE-2019-14853 (python-ecdsa 0.13.3 release notes)",
    "poc": b"\x30\x02\x02\x00",
}

_SK = SigningKey.from_secret_exponent(123456789, curve=NIST256p)
_VK = _SK.get_verifying_key()
_SIG = _SK.sign(b"message", hashfunc=hashlib.sha256, sigencode=sigencode_der, k=7777)


@assay.target(
    name="ecdsa_0_13_2_verify_der",
    expected=(BadSignatureError, UnexpectedDER),
    sources=["ecdsa"],
    seeds=[_SIG, _SIG[:-1] + b"\x00"],
    max_len=256,
)
def ecdsa_verify(data: bytes) -> None:
    _VK.verify(data, b"message", hashfunc=hashlib.sha256, sigdecode=sigdecode_der)
