"""A segment-header reader, planted for the distance-feedback tests (``assay.mutant.meet``).

Each header line is a known name, a colon and a value.  The size limit counts the
whole line, and the instance holds it, set from a constructor default many times the
target's ``max_len`` (multipart 2.0.1's ``len(line) > self.max_header_size``): a
word grown to the limit overshoots it by the name and the separator.
"""

from __future__ import annotations


class SegmentError(ValueError):
    """The input is not a segment."""


KNOWN = (b"Content-Disposition", b"Content-Type", b"Content-Length")


class SegmentHeaders:
    """A header block and a body; header lines under a size limit the instance holds."""

    def __init__(self, max_header_size: int = 4096 + 128) -> None:
        self.max_header_size = max_header_size

    def read(self, data: bytes) -> tuple[list[tuple[bytes, bytes]], bytes]:
        head, sep, body = data.partition(b"\r\n\r\n")
        if not sep:
            raise SegmentError("no end of the header block")
        headers = []
        for line in head.split(b"\r\n"):
            name, colon, value = line.partition(b":")
            if not colon or name not in KNOWN:
                raise SegmentError("unknown segment header")
            if len(line) > self.max_header_size:
                raise SegmentError("segment header too long")
            headers.append((name, value.strip()))
        return headers, body


def read_fields(data: bytes, **options: int) -> list[tuple[bytes, bytes]]:
    """``&``-separated ``name=value`` fields under a count limit (multipart 2.0.1's url-encoded ``part_limit``)."""
    limit = options.get("limit", 100)
    fields = data.split(b"&", limit)
    if len(fields) > limit:
        raise SegmentError("too many fields")
    return [(name, value) for name, _, value in (field.partition(b"=") for field in fields) if name]
