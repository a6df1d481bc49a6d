"""Fuzz targets for the standard library's ``urllib.parse``.

``url_split_roundtrip`` checks that ``urlunsplit`` is a right inverse of ``urlsplit``
on the components ``urlsplit`` produces:

    urlsplit(urlunsplit(urlsplit(x))) == urlsplit(x)

The documentation allows ``urlunsplit(urlsplit(x))`` to differ from ``x`` (an empty
``?`` or ``#`` is dropped, the scheme is lower-cased, tabs and newlines are removed),
which is why the relation starts from the split form rather than from ``x``: every
one of those normalizations is already applied once, so a second pass must change
nothing.  One more deliberate normalization is accepted: for schemes that always
have an authority (``uses_netloc``), "http:x" is written back as "http:///x".  The
invariant's kind names the components that changed.  It also reads ``hostname``/``port`` (``ValueError`` for a bad port is the
documented rejection).

``url_query_roundtrip`` checks ``parse_qsl`` against ``urlencode``: the pairs read
from a query string, encoded again and read back, are the same pairs.
"""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit, uses_netloc

import assay

_URL_SEEDS = [
    b"https://user:pass@www.example.com:8080/a/b;p?q=1&r=2#frag",
    b"http://[::1]:80/index.html",
    b"file:///etc/hosts",
    b"mailto:someone@example.com",
    b"//cdn.example.com/lib.js",
    b"../relative/path?x#y",
    b"urn:isbn:0451450523",
    b"HTTP://EXAMPLE.com/%7Efoo/b%20ar?a=b%26c",
    b"svn+ssh://host/repo",
    b"http://\xe4\xbe\x8b\xe5\xad\x90.\xe6\xb5\x8b\xe8\xaf\x95/",
]

_URL_DICT = [
    b"//",
    b"/",
    b":",
    b"@",
    b"?",
    b"#",
    b";",
    b"[",
    b"]",
    b"%",
    b"%2F",
    b"http:",
    b"file:",
    b"\t",
    b"\n",
    b" ",
    b"::1",
    b":80",
    b"..",
]


@assay.target(
    expected=(ValueError,),
    sources=["urllib.parse"],
    max_len=1024,
    seeds=_URL_SEEDS,
    dictionary=_URL_DICT,
    timeout=2.0,
)
def url_split_roundtrip(data: bytes) -> None:
    # ValueError covers the documented rejections: bad IPv6 brackets, an NFKC-unsafe
    # netloc, an out-of-range port; UnicodeDecodeError (from .decode) is a ValueError.
    url = data.decode("utf-8")
    parts = urlsplit(url)
    assay.feature("shape", tuple(bool(p) for p in parts))
    parts.hostname  # noqa: B018 - the property parses the netloc and may raise
    parts.port  # noqa: B018 - the property parses the port and may raise
    joined = urlunsplit(parts)
    again = urlsplit(joined)
    if again == parts:
        return
    if (
        parts.scheme in uses_netloc
        and not parts.netloc
        and parts.path[:1] not in ("", "/")
        and again == parts._replace(path="/" + parts.path)
    ):
        # Deliberate in urlunsplit: for a scheme in ``uses_netloc`` (http, ftp,
        # file, ...) it always writes an authority, so "http:x" becomes "http:///x"
        # and the rootless path "x" becomes "/x".  Such URLs always have an
        # authority and an absolute path, so this is treated as a normalization.
        return
    changed = [f for f in parts._fields if getattr(parts, f) != getattr(again, f)]
    raise assay.InvariantViolation(
        "split-fixed-point", f"{url!r} -> {parts!r} -> {joined!r} -> {again!r}", kind="+".join(changed)
    )


_QUERY_SEEDS = [
    b"a=1&b=2&a=3",
    b"q=hello+world&lang=en%2Dus&empty=&flag",
    b"x=%E2%82%AC&y=%ZZ&z=a%3Db",
    b"&&=&a==b",
]


@assay.target(
    expected=(ValueError,),
    sources=["urllib.parse"],
    max_len=1024,
    seeds=_QUERY_SEEDS,
    dictionary=[b"&", b"=", b"+", b"%", b"%26", b"%3D", b"%2B", b"%20", b";"],
    timeout=2.0,
)
def url_query_roundtrip(data: bytes) -> None:
    query = data.decode("utf-8")
    pairs = parse_qsl(query, keep_blank_values=True)
    assay.feature("pairs", min(len(pairs), 16))
    encoded = urlencode(pairs)
    again = parse_qsl(encoded, keep_blank_values=True)
    if again != pairs:
        raise assay.InvariantViolation(
            "query-roundtrip", f"{query!r} -> {pairs!r} -> {encoded!r} -> {again!r}", kind="mismatch"
        )
