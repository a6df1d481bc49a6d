"""Reading bytes back into the document tree (lossless for what ``render`` writes)."""

from __future__ import annotations

import re

from assay.gen.xml.model import (
    MAX_PARSE_BYTES,
    MAX_PARSE_DEPTH,
    PI,
    Attr,
    CData,
    Comment,
    Decl,
    Doctype,
    Element,
    Misc,
    Node,
    PERef,
    Ref,
    Text,
    XmlDecl,
    XmlDocument,
)

_NAME = r"[^\s<>&;=/!?\"'%\[\]()|,*+#]+"
_NAME_RE = re.compile(_NAME)
_WS_RE = re.compile(r"[ \t\r\n]*")
_ATTR_RE = re.compile(r"[ \t\r\n]+(" + _NAME + r")[ \t\r\n]*=[ \t\r\n]*(?:\"([^\"]*)\"|'([^']*)')")
_XMLDECL_RE = re.compile(
    r"<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*([\"'])(.*?)\1"
    r"(?:[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*([\"'])(.*?)\3)?"
    r"(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*([\"'])(.*?)\5)?[ \t\r\n]*\?>"
)
REF_RE = re.compile(r"&(#[xX][0-9a-fA-F]+|#[0-9]+|" + _NAME + r");")
_PEREF_RE = re.compile(r"%(" + _NAME + r");")


class _Reject(Exception):
    pass


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def startswith(self, s: str) -> bool:
        return self.text.startswith(s, self.pos)

    def until(self, end: str) -> str:
        i = self.text.find(end, self.pos)
        if i < 0:
            raise _Reject
        out = self.text[self.pos : i]
        self.pos = i + len(end)
        return out

    def name(self) -> str:
        m = _NAME_RE.match(self.text, self.pos)
        if not m:
            raise _Reject
        self.pos = m.end()
        return m.group(0)

    def ws(self) -> str:
        m = _WS_RE.match(self.text, self.pos)
        self.pos = m.end()  # type: ignore[union-attr]  # [ \t\r\n]* always matches
        return m.group(0)  # type: ignore[union-attr]

    def comment_or_pi(self) -> Comment | PI | None:
        if self.startswith("<!--"):
            self.pos += 4
            return Comment(self.until("-->"))
        if self.startswith("<?"):
            self.pos += 2
            target = self.name()
            if self.startswith("?>"):
                self.pos += 2
                return PI(target)
            if not self.ws():
                raise _Reject
            return PI(target, self.until("?>"))
        return None

    def quoted_tail(self) -> str:
        """Text up to the next ``>`` outside quotes, consuming the ``>``."""
        start = self.pos
        quote = ""
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if quote:
                if ch == quote:
                    quote = ""
            elif ch in "\"'":
                quote = ch
            elif ch == ">":
                body = self.text[start : self.pos]
                self.pos += 1
                return body
            self.pos += 1
        raise _Reject

    def doctype(self) -> Doctype:
        self.pos += len("<!DOCTYPE")
        if not self.ws():
            raise _Reject
        name = self.name()
        start = self.pos
        quote = ""
        while self.pos < len(self.text):
            ch = self.text[self.pos]
            if quote:
                quote = "" if ch == quote else quote
            elif ch in "\"'":
                quote = ch
            elif ch in "[>":
                break
            self.pos += 1
        external = self.text[start : self.pos]
        subset = None
        if self.startswith("["):
            self.pos += 1
            items: list = []
            while not self.startswith("]"):
                if self.pos >= len(self.text):
                    raise _Reject
                ws = self.ws()
                if ws:
                    items.append(Text(ws))
                    continue
                misc = self.comment_or_pi()
                if misc is not None:
                    items.append(misc)
                    continue
                m = _PEREF_RE.match(self.text, self.pos)
                if m:
                    items.append(PERef(m.group(1)))
                    self.pos = m.end()
                    continue
                for kind in ("ELEMENT", "ATTLIST", "ENTITY"):
                    if self.startswith("<!" + kind):
                        self.pos += 2 + len(kind)
                        if not self.ws():
                            raise _Reject
                        if kind == "ENTITY" and self.startswith("%"):
                            self.pos += 1
                            if not self.ws():
                                raise _Reject
                            name_ = "% " + self.name()
                        else:
                            name_ = self.name()
                        if not self.ws():
                            raise _Reject
                        items.append(Decl(kind, name_, self.quoted_tail().rstrip(" \t\r\n")))
                        break
                else:
                    raise _Reject
            self.pos += 1
            subset = tuple(items)
            self.ws()
        if not self.startswith(">"):
            raise _Reject
        self.pos += 1
        return Doctype(name, external, subset)

    def element(self, depth: int) -> Element:
        if depth > MAX_PARSE_DEPTH:
            raise _Reject
        self.pos += 1
        name = self.name()
        attrs: list[Attr] = []
        while True:
            m = _ATTR_RE.match(self.text, self.pos)
            if not m:
                break
            if m.group(2) is not None:
                attrs.append(Attr(m.group(1), m.group(2), '"'))
            else:
                attrs.append(Attr(m.group(1), m.group(3), "'"))
            self.pos = m.end()
        self.ws()
        if self.startswith("/>"):
            self.pos += 2
            return Element(name, tuple(attrs), (), True)
        if not self.startswith(">"):
            raise _Reject
        self.pos += 1
        children = self.content(depth)
        # content() stops at "</"
        self.pos += 2
        end = self.name()
        self.ws()
        if not self.startswith(">"):
            raise _Reject
        self.pos += 1
        return Element(name, tuple(attrs), tuple(children), False, None if end == name else end)

    def content(self, depth: int) -> list[Node]:
        children: list[Node] = []
        text = self.text
        while True:
            if self.pos >= len(text):
                raise _Reject
            ch = text[self.pos]
            if ch == "<":
                if self.startswith("</"):
                    return children
                if self.startswith("<![CDATA["):
                    self.pos += 9
                    children.append(CData(self.until("]]>")))
                    continue
                misc = self.comment_or_pi()
                if misc is not None:
                    children.append(misc)
                    continue
                children.append(self.element(depth + 1))
            elif ch == "&":
                m = REF_RE.match(text, self.pos)
                if not m:
                    raise _Reject
                children.append(Ref(m.group(1)))
                self.pos = m.end()
            else:
                end = len(text)
                for stop in ("<", "&"):
                    i = text.find(stop, self.pos)
                    if 0 <= i < end:
                        end = i
                children.append(Text(text[self.pos : end]))
                self.pos = end

    def document(self) -> XmlDocument:
        decl = None
        m = _XMLDECL_RE.match(self.text, 0)
        if m:
            decl = XmlDecl(m.group(2), m.group(4), m.group(6))
            self.pos = m.end()
        prolog: list[Misc] = []
        while True:
            ws = self.ws()
            if ws:
                prolog.append(Text(ws))
            if self.startswith("<!DOCTYPE"):
                prolog.append(self.doctype())
                continue
            misc = self.comment_or_pi()
            if misc is not None:
                prolog.append(misc)
                continue
            break
        if not self.startswith("<"):
            raise _Reject
        root = self.element(0)
        epilog: list = []
        while self.pos < len(self.text):
            ws = self.ws()
            if ws:
                epilog.append(Text(ws))
                continue
            misc = self.comment_or_pi()
            if misc is not None:
                epilog.append(misc)
            elif self.startswith("<") and not self.startswith("</"):
                epilog.append(self.element(0))
            else:
                raise _Reject
        return XmlDocument(root, decl, tuple(prolog), tuple(epilog))


def parse_document(data: bytes) -> XmlDocument | None:
    """The document in ``data`` (UTF-8), or ``None`` if it cannot be read."""
    if len(data) > MAX_PARSE_BYTES:
        return None
    try:
        return _Parser(data.decode("utf-8")).document()
    except (UnicodeDecodeError, _Reject, RecursionError):
        return None
