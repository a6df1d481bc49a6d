"""Differential: two ``email`` address parsers, ``email.utils.parseaddr`` and ``email.headerregistry``.

Both read one RFC 5322 mailbox (``Name <local@domain>``) into a display name and
an address.  ``parseaddr`` is the legacy parser, ``policy.default``'s header
registry the modern one (the ``msg["To"].addresses`` path).  Each is normalised
to ``(display_name, addr_spec)`` or an exception "not exactly one mailbox";
differences outside the allow-list below are findings.
"""

from __future__ import annotations

from email import policy
from email.errors import HeaderParseError
from email.utils import parseaddr

import assay
from assay.oracles import Allow, AllowList, differential

_SEEDS = [
    b"Fred Bloggs <fred@example.com>",
    b'"Bloggs, Fred" <fred@example.com>',
    b"jane@example.org",
    b'"J. Q. Public" (comment) <jqp@[192.0.2.1]>',
    b"=?utf-8?q?Andr=C3=A9?= <andre@example.com>",
    b"<@route1,@route2:user@example.com>",
]


class NotOneMailbox(ValueError):
    """The parser found no mailbox, or several."""


def legacy(text: str) -> tuple[str, str]:
    name, addr = parseaddr(text)
    if not addr:
        raise NotOneMailbox("parseaddr found no address")
    return name, addr


class Defective(ValueError):
    """The header registry parsed the text but recorded defects."""


def modern(text: str) -> tuple[str, str]:
    header = policy.default.header_factory("To", text)
    addresses = header.addresses
    if len(addresses) != 1:
        raise NotOneMailbox(f"{len(addresses)} mailboxes")
    if header.defects:
        # The registry never raises on bad syntax: it repairs what it can and
        # records a defect (documented in email.headerregistry / email.errors).
        # A repaired parse is its way of rejecting, so it counts as one here.
        raise Defective(", ".join(sorted({type(d).__name__ for d in header.defects})))
    (a,) = addresses
    return a.display_name, a.addr_spec


ALLOW = AllowList(
    Allow(
        "parseaddr-does-not-validate",
        "parseaddr is a best-effort splitter that never validates: it returns ('', 'bad') for "
        "'bad' (email.utils docs: on failure it returns ('', '') only when it cannot split at all); "
        "where the registry parsed the same single mailbox but recorded defects, the legacy answer "
        "is not a contradiction",
        lambda data, a, b: a.ok and b.error is Defective,
        pair=("parseaddr", "headerregistry"),
    ),
    Allow(
        "comment-in-display-name",
        "the legacy parser keeps comments in the real name (alone, the RFC 822 'addr (Real Name)' "
        "convention; after a phrase, appended to it); the registry treats comments as whitespace "
        "(RFC 5322 section 3.2.2).  Same address, names differing where the text has a comment",
        lambda data, a, b: a.ok and b.ok and a.value[1] == b.value[1] and "(" in data,
        pair=("parseaddr", "headerregistry"),
    ),
    Allow(
        "encoded-words-undecoded",
        "parseaddr returns RFC 2047 encoded words ('=?utf-8?q?...?=') as they are (decoding is "
        "email.header.decode_header's job); the registry decodes them, to '' when they are empty or "
        "malformed.  Same address, the legacy name holding an encoded word",
        lambda data, a, b: a.ok and b.ok and a.value[1] == b.value[1] and "=?" in a.value[0],
        pair=("parseaddr", "headerregistry"),
    ),
    Allow(
        "both-reject",
        "both found no single mailbox; the exception classes are ours and carry no meaning",
        lambda data, a, b: a.is_error and b.is_error,
    ),
)


@assay.target(
    expected=(UnicodeDecodeError,),
    sources=["email._parseaddr", "email._header_value_parser"],
    seeds=_SEEDS,
    max_len=256,
    dictionary=[b"<", b">", b"@", b",", b";", b":", b'"', b"\\", b"(", b")", b"[", b"]", b"=?utf-8?q?", b"?="],
)
def oracle_diff_address(data: bytes) -> None:
    text = data.decode("utf-8")
    if "\r" in text or "\n" in text:
        return  # one logical header line; folding belongs to the message parser
    # Only our own "no single mailbox" verdicts are outcomes: anything else either
    # parser raises is a crash of that parser and must surface as a panic with its
    # own frames (a first version caught Exception and reported gh-134155's
    # AttributeError as a mere value-vs-error difference).
    differential(
        {"parseaddr": legacy, "headerregistry": modern},
        text,
        name="address",
        allow=ALLOW,
        catch=(ValueError, HeaderParseError),
    )
