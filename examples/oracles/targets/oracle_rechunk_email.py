"""Re-chunking ``email.feedparser.BytesFeedParser``: the message must not depend on the chunking.

``FeedParser`` exists to be fed "incrementally" from a socket or file, in
chunks of any size; ``close()`` returns the message.  The oracle compares the
structure of the messages parsed from the whole input, from data-derived
chunkings and byte by byte: for every part its headers (names and raw values),
its content type, its defect classes and its undecoded payload.
"""

from __future__ import annotations

from email import policy
from email.feedparser import BytesFeedParser

import assay
from assay.oracles import rechunk

_SEEDS = [
    b"From: Alice <alice@example.com>\r\nTo: bob@example.org\r\nSubject: hello\r\n\r\nHi Bob.\r\n",
    b'To: x@y.z\nContent-Type: multipart/mixed; boundary="XX"\n\npreamble\n--XX\nContent-Type: text/plain\n\none\n'
    b"--XX\r\nContent-Type: message/rfc822\r\n\r\nSubject: inner\r\n\r\nbody\r\n--XX--\r\nepilogue",
    b"Subject: folded\n  continuation\n\tmore\nX-Empty:\n\nline one\rline two\r\n",
    b"Content-Type: multipart/alternative; boundary=b\n\n--b\n\n--b\nContent-Type: text/html\n\n<p>x</p>\n--b--\n",
]


def _shape(msg) -> list:
    parts = []
    for part in msg.walk():
        payload = part.get_payload() if not part.is_multipart() else None
        parts.append(
            (
                tuple((k, str(v)) for k, v in part.raw_items()),
                part.get_content_type(),
                tuple(sorted(type(d).__name__ for d in part.defects)),
                payload if isinstance(payload, str) else None,
                part.preamble,
                part.epilogue,
            )
        )
    return parts


def feed_message(chunks: list[bytes]) -> list:
    parser = BytesFeedParser(policy=policy.compat32)
    for chunk in chunks:
        parser.feed(chunk)
    return _shape(parser.close())


# One call per byte plus the chunkings for each input: a generous timeout.
@assay.target(
    sources=["email.feedparser"],
    seeds=_SEEDS,
    max_len=1024,
    timeout=10.0,
    dictionary=[b"\r\n", b"\n", b"\r", b"--", b"boundary=", b"Content-Type: multipart/mixed; "],
)
def oracle_rechunk_email(data: bytes) -> None:
    rechunk(feed_message, data, name="email-feedparser")
