"""A framed-message reader, planted for the structural survivor tests (``test_reshape.py``).

A message is a separator line, then header lines up to an empty line, then a
stream of parts: the delimiter ``--SEP`` on a line of its own starts the first part
(only a preamble of one word and CRLF may come before it) and separates the next
ones.  The stream is read ``READ_SIZE`` bytes at a time, as a socket delivers it.
"""

from __future__ import annotations

READ_SIZE = 16


class FramingError(ValueError):
    """The input is not a framed message."""


def read_message(data: bytes) -> tuple[list[tuple[bytes, bytes]], list[bytes]]:
    sep, nl, rest = data.partition(b"\n")
    if not nl or not sep:
        raise FramingError("no separator line")
    head, blank, stream = rest.partition(b"\r\n\r\n")
    if not blank:
        raise FramingError("no end of headers")
    headers = read_headers(head.split(b"\r\n") if head else [])
    reader = StreamReader(b"--" + sep)
    for at in range(0, len(stream), READ_SIZE):
        reader.feed(stream[at : at + READ_SIZE])
    return headers, reader.close()


def read_headers(lines: list[bytes]) -> list[tuple[bytes, bytes]]:
    """``Name: value`` lines; a line starting with a space or a tab continues the header before it."""
    headers: list[list[bytes]] = []
    length = -1
    for line in lines:
        if line[:1] in b" \t":
            if not headers:
                raise FramingError("continuation before any header")
            headers[-1][1] += b" " + line.strip()
            continue
        name, colon, value = line.partition(b":")
        if not colon or not name.strip().isalpha():
            raise FramingError("bad header line")
        value = value.strip()
        if name.strip().lower() == b"length":
            if length >= 0:
                raise FramingError("length given twice")
            if not value.isdigit():
                raise FramingError("bad length")
            length = int(value)
        headers.append([name.strip(), value])
    return [(name, value) for name, value in headers]


class StreamReader:
    """Parts between delimiter lines, fed in chunks."""

    def __init__(self, delimiter: bytes) -> None:
        self.delimiter = delimiter
        self.buffer = b""
        self.started = False
        self.parts: list[bytes] = []
        self.current = b""

    def feed(self, chunk: bytes) -> None:
        buffer = self.buffer + chunk
        d_len = len(self.delimiter)
        if not self.started:
            at = buffer.find(self.delimiter)
            if at == -1:
                if len(buffer) > 2 * READ_SIZE:
                    raise FramingError("no delimiter at the start")
                self.buffer = buffer
                return
            if at > 0 and (buffer[at - 2 : at] != b"\r\n" or not buffer[: at - 2].isalnum()):
                raise FramingError("a preamble is one word ended by CRLF")
            end = at + d_len + 2
            if end > len(buffer):  # the delimiter's line end is in the next chunk
                self.buffer = buffer[max(0, at - 2) :]
                return
            if buffer[at + d_len : end] != b"\r\n":
                raise FramingError("bad first delimiter line")
            self.started = True
            buffer = buffer[end:]
        marker = b"\r\n" + self.delimiter
        while (found := buffer.find(marker)) != -1:
            self.parts.append(self.current + buffer[:found])
            self.current, buffer = b"", buffer[found + len(marker) :]
        self.buffer = buffer

    def close(self) -> list[bytes]:
        if not self.started:
            raise FramingError("no delimiter")
        return [*self.parts, self.current + self.buffer]
