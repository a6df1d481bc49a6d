"""Fuzz targets for the standard library's ``email`` package (modern ``policy.default`` API).

``email_address_header`` parses one address header (``To:``) with the header
registry, the way ``msg["To"]`` does, then checks two relations:

* ``reparse``: for input that parsed without defects, the header's own string
  form, ``str(h)``, parsed again, names the same groups and addresses;
* ``fold``: the header as ``policy.default`` would write it into a message
  (``h.fold()``), read back by the message parser, is still one ``To`` header
  (kind ``header-split``: otherwise folding injected a header line) and, when the
  input parsed without defects, names the same groups and addresses (kind
  ``mismatch``).

For input with defects the addresses are the parser's best-effort guess, so the
two ``mismatch`` checks skip it; any exception other than the documented
``HeaderParseError`` is still a finding, whatever the input.

``email_message`` parses a whole message from bytes, reads every header (the
header values are parsed lazily) and serializes it again (``as_bytes()``), which
runs the folding code on every header; it checks that the serialized message
parses back into the same header names.

Both report parse defects as a semantic feature, so inputs that provoke a new
kind of defect are kept even when they reach no new branch.
"""

from __future__ import annotations

import email
import email.errors
from email import policy

import assay

_ADDRESS_SEEDS = [
    b"Fred Bloggs <fred@example.com>",
    b'"Bloggs, Fred" <fred@example.com>, jane@example.org',
    b"undisclosed-recipients:;",
    b"team: alice@example.com, Bob <bob@example.com>;, carol@example.net",
    b'"J. Q. Public" (comment) <jqp@[192.0.2.1]>',
    b"=?utf-8?q?Andr=C3=A9?= <andre@example.com>",
    b"Pete(A nice \\) chap) <pete(his account)@silly.test(his host)>",
    b'"quoted\\"local"@example.com',
    "Jos\u00e9 <jose@ex\u00e4mple.com>".encode("utf-8"),
    b"<@route1,@route2:user@example.com>",
]

_ADDRESS_DICT = [
    b"<",
    b">",
    b"@",
    b",",
    b";",
    b":",
    b'"',
    b"\\",
    b"(",
    b")",
    b"[",
    b"]",
    b"=?utf-8?q?",
    b"=?utf-8?b?",
    b"?=",
    b"=20",
    b" ",
    b"\t",
    b".",
    b"\xc3\xa9",
]


def _clean(text: str | None) -> str | None:
    # Undecodable bytes are carried as lone surrogates (the email package's
    # surrogateescape convention) and str(header) deliberately shows each as U+FFFD,
    # so the two spellings are treated as equal.
    if text is None:
        return None
    return "".join("\ufffd" if "\udc80" <= c <= "\udcff" else c for c in text)


def _shape(header) -> list:
    """Groups and addresses of a parsed address header, as plain comparable data."""
    return [
        (_clean(g.display_name), [(_clean(a.display_name), _clean(a.username), _clean(a.domain)) for a in g.addresses])
        for g in header.groups
    ]


@assay.target(
    expected=(email.errors.HeaderParseError, UnicodeDecodeError),
    sources=["email"],
    max_len=512,
    seeds=_ADDRESS_SEEDS,
    dictionary=_ADDRESS_DICT,
    timeout=2.0,
)
def email_address_header(data: bytes) -> None:
    text = data.decode("utf-8")
    if "\r" in text or "\n" in text:
        # A header value given to the registry is one logical line; line breaks
        # belong to the message parser (see email_message).
        return
    header = policy.default.header_factory("To", text)
    assay.feature("defects", tuple(sorted({type(d).__name__ for d in header.defects})))
    assay.feature("addresses", min(len(header.addresses), 8))
    shape = _shape(header)

    again = policy.default.header_factory("To", str(header))
    if not header.defects and _shape(again) != shape:
        raise assay.InvariantViolation(
            "reparse", f"str(h)={str(header)!r}: {shape!r} != {_shape(again)!r}", kind="mismatch"
        )

    folded = header.fold(policy=policy.default)
    message = email.message_from_string(folded, policy=policy.default)
    reread = message["To"]
    if reread is None or len(message.keys()) != 1:
        raise assay.InvariantViolation(
            "fold", f"fold()={folded!r} reads back as headers {message.keys()!r}", kind="header-split"
        )
    if not header.defects and _shape(reread) != shape:
        raise assay.InvariantViolation("fold", f"fold()={folded!r}: {shape!r} != {_shape(reread)!r}", kind="mismatch")


_MESSAGE_SEEDS = [
    b"From: Alice <alice@example.com>\r\nTo: bob@example.org\r\nSubject: hello\r\n\r\nHi Bob.\r\n",
    b"From: a@b.c\nSubject: =?utf-8?b?w6lsw6h2ZQ==?=\nMIME-Version: 1.0\n"
    b'Content-Type: text/plain; charset="utf-8"\nContent-Transfer-Encoding: quoted-printable\n\ncaf=C3=A9\n',
    b'To: x@y.z\nContent-Type: multipart/mixed; boundary="XX"\n\n--XX\nContent-Type: text/plain\n\none\n'
    b'--XX\nContent-Type: application/octet-stream\nContent-Disposition: attachment; filename="a.bin"\n'
    b"Content-Transfer-Encoding: base64\n\nAAEC\n--XX--\n",
    b"Message-ID: <1234@local.machine.example>\nDate: Fri, 21 Nov 1997 09:55:06 -0600\n"
    b"References: <a@b> <c@d>\nSubject: a very long subject line that goes on and on and on and on "
    b"and on until it needs folding\n\nbody\n",
]


@assay.target(
    expected=(email.errors.HeaderParseError, email.errors.MessageError),
    sources=["email"],
    max_len=2048,
    seeds=_MESSAGE_SEEDS,
    dictionary=_ADDRESS_DICT
    + [
        b"\n",
        b"\r\n",
        b"Content-Type: ",
        b"multipart/",
        b"boundary=",
        b"charset=",
        b"filename*=",
        b"Date: ",
        b"Message-ID: ",
        b"MIME-Version: 1.0",
    ],
    timeout=2.0,
)
def email_message(data: bytes) -> None:
    msg = email.message_from_bytes(data, policy=policy.default)
    kinds = set()
    for part in msg.walk():
        kinds.update(type(d).__name__ for d in part.defects)
        for _name, value in part.items():  # parsing each header value happens here
            kinds.update(type(d).__name__ for d in getattr(value, "defects", ()))
    assay.feature("defects", tuple(sorted(kinds)))
    out = msg.as_bytes()
    again = email.message_from_bytes(out, policy=policy.default)
    names = [k.lower() for k in msg.keys()]
    names_again = [k.lower() for k in again.keys()]
    if names != names_again:
        raise assay.InvariantViolation(
            "serialize", f"headers {names!r} re-read as {names_again!r}", kind="header-names"
        )
