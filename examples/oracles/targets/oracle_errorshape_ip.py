"""Error shape: ``ipaddress`` as the validator, ``socket.inet_pton`` as the user.

A service validates an address with ``ipaddress.ip_address`` and later hands
the same text to the C library (``inet_pton``, as ``socket`` calls and many C
extensions do).  Where the two disagree, either the validator lets through text
the C side refuses (``valid-rejected``) or it refuses text the C side happily
packs (``invalid-accepted``), which is how validator/parser mismatches become
filter bypasses.
"""

from __future__ import annotations

import ipaddress
import socket

import assay
from assay.oracles import error_shape

_SEEDS = [
    b"192.0.2.1",
    b"::1",
    b"2001:db8::8a2e:370:7334",
    b"::ffff:192.0.2.128",
    b"fe80::1%eth0",
    b"0.0.0.0",
    b"1::2:3:4:5:6:7",
]


def validate(text: str):
    return ipaddress.ip_address(text)


def pack(text: str) -> bytes:
    family = socket.AF_INET6 if ":" in text else socket.AF_INET
    if family == socket.AF_INET6:
        # Documented difference, normalised: ipaddress accepts an RFC 4007 zone
        # ("fe80::1%eth0", any non-empty text after '%', since 3.9), inet_pton
        # never does; a correct user packs the address without its zone.  The
        # first campaign reported "::%\x00" as valid-rejected before this line.
        address, percent, zone = text.partition("%")
        # Only a zone ipaddress itself would take: non-empty, no second '%', and
        # no '/' anywhere (ipaddress rejects prefix notation before it looks at
        # the zone).  Stripping blindly was this example's own invalid-accepted
        # finding on "::%/".
        if percent and zone and "%" not in zone and "/" not in text:
            text = address
    return socket.inet_pton(family, text)


@assay.target(
    sources=["ipaddress"],
    seeds=_SEEDS,
    max_len=64,
    dictionary=[b".", b":", b"::", b"%", b"0", b"00", b"255", b"ffff", b"1.2.3.4"],
)
def oracle_errorshape_ip(data: bytes) -> None:
    text = data.decode("latin-1")
    error_shape(validate, pack, text, name="ip_address~inet_pton")
