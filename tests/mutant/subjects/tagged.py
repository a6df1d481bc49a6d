"""A versioned tagged-value reader, planted for the message-kill tests (``test_message_kills.py``).

``VERSION:body``: the reader names what it reads in its error messages and in what
it returns, so a mutant of that name differs by message on almost any input, and by
behaviour only on an input of the known version.
"""

from __future__ import annotations


class TagError(ValueError):
    """The input is not a tagged value."""


def read_tagged(data: bytes) -> tuple[str, bytes]:
    kind = "tagged value"
    head, sep, body = data.partition(b":")
    if not sep:
        raise TagError(f"a {kind} needs a colon")
    if head != b"v1":
        raise TagError(f"a {kind} of an unknown version")
    return kind, body
