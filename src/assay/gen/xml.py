"""``xml@1``: XML 1.0 documents with namespaces and an internal DTD subset.

A value is an :class:`XmlDocument`: an optional XML declaration, a prolog
(comments, processing instructions, whitespace and at most one DOCTYPE with
ELEMENT, ATTLIST and ENTITY declarations), the root :class:`Element` and an
epilog.  Character data is stored *escaped*, with entity and character
references as their own :class:`Ref` nodes, so ``render`` is concatenation and
``parse`` reads back exactly what ``render`` wrote.

Generated documents are namespace-well-formed (every prefix is declared where it
is used, no attribute appears twice by expanded name) and every entity they
reference is declared.  Entity expansion is bounded: an entity refers to at
most :data:`MAX_ENTITY_REFS` others and the chain is at most
:data:`MAX_ENTITY_DEPTH` deep, so no billion laughs.  Mutations keep all that
most of the time; at :data:`INVALID_RATE` they introduce one adjacent
well-formedness error (a mismatched end tag, an unbound prefix, an undeclared
entity, ``--`` in a comment).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, replace
from typing import Iterator, Union

from assay.gen.strategy import register_strategy

MAX_BYTES = 8192  #: hard bound on a rendered document
MAX_PARSE_BYTES = 65536  #: larger input is not read (parse returns None)
MAX_DEPTH = 5  #: element nesting bound for generated documents
MAX_ELEMENTS = 40  #: element bound for generated documents
MAX_CHILDREN = 5  #: children drawn per element
MAX_ATTRS = 4  #: attributes drawn per element
MAX_ENTITY_DEPTH = 2  #: an entity's replacement text references entities at most this deep
MAX_ENTITY_REFS = 2  #: entity references inside one entity value
MAX_PARSE_DEPTH = 128  #: deeper input is not read
INVALID_RATE = 0.1  #: share of mutations that break well-formedness on purpose
MAX_SHRINK = 64  #: bound on shrink candidates per call
MAX_TOKENS = 64  #: bound on dictionary tokens per value


@dataclass(frozen=True, slots=True)
class Text:
    """Character data, escaped (no raw ``<`` or ``&`` in generated values)."""

    raw: str


@dataclass(frozen=True, slots=True)
class Ref:
    """``&name;`` (entity) or ``&#...;`` (character reference: ``name`` starts with ``#``)."""

    name: str


@dataclass(frozen=True, slots=True)
class PERef:
    """A parameter-entity reference ``%name;`` between declarations."""

    name: str


@dataclass(frozen=True, slots=True)
class CData:
    text: str


@dataclass(frozen=True, slots=True)
class Comment:
    text: str


@dataclass(frozen=True, slots=True)
class PI:
    """A processing instruction ``<?target data?>``."""

    target: str
    data: str = ""


@dataclass(frozen=True, slots=True)
class Attr:
    """``name=quote value quote``; ``value`` is escaped and may hold references."""

    name: str
    value: str
    quote: str = '"'


@dataclass(frozen=True, slots=True)
class Element:
    """An element; ``end_name`` differs from ``name`` only in deliberately broken values."""

    name: str
    attrs: tuple[Attr, ...] = ()
    children: tuple["Node", ...] = ()
    empty: bool = False
    end_name: str | None = None


@dataclass(frozen=True, slots=True)
class Decl:
    """A markup declaration ``<!kind name body>`` (``kind``: ELEMENT, ATTLIST or ENTITY).

    For a parameter entity ``name`` is ``"% name"``.  ``body`` is verbatim: a
    content model, attribute definitions, or a quoted entity value.
    """

    kind: str
    name: str
    body: str


@dataclass(frozen=True, slots=True)
class Doctype:
    """``<!DOCTYPE name external [subset]>``; ``subset`` is ``None`` when there are no brackets."""

    name: str
    external: str = ""
    subset: tuple[Union[Decl, Comment, PI, PERef, Text], ...] | None = None


@dataclass(frozen=True, slots=True)
class XmlDecl:
    version: str = "1.0"
    encoding: str | None = None
    standalone: str | None = None


Node = Union[Element, Text, Ref, CData, Comment, PI]
Misc = Union[Comment, PI, Text, Doctype]


@dataclass(frozen=True, slots=True)
class XmlDocument:
    """A whole document: declaration, prolog, root element, epilog."""

    root: Element
    decl: XmlDecl | None = None
    prolog: tuple[Misc, ...] = ()
    epilog: tuple[Union[Comment, PI, Text, Element], ...] = ()


# ---------------------------------------------------------------- rendering


def _render_node(node: object, out: list[str]) -> None:
    if isinstance(node, Element):
        out.append("<" + node.name)
        for a in node.attrs:
            out.append(" " + a.name + "=" + a.quote + a.value + a.quote)
        if node.empty and not node.children:
            out.append("/>")
            return
        out.append(">")
        for child in node.children:
            _render_node(child, out)
        out.append("</" + (node.end_name if node.end_name is not None else node.name) + ">")
    elif isinstance(node, Text):
        out.append(node.raw)
    elif isinstance(node, Ref):
        out.append("&" + node.name + ";")
    elif isinstance(node, PERef):
        out.append("%" + node.name + ";")
    elif isinstance(node, CData):
        out.append("<![CDATA[" + node.text + "]]>")
    elif isinstance(node, Comment):
        out.append("<!--" + node.text + "-->")
    elif isinstance(node, PI):
        out.append("<?" + node.target + (" " + node.data if node.data else "") + "?>")
    elif isinstance(node, Decl):
        out.append("<!" + node.kind + " " + node.name + " " + node.body + ">")
    elif isinstance(node, Doctype):
        out.append("<!DOCTYPE " + node.name + node.external)
        if node.subset is not None:
            out.append("[")
            for item in node.subset:
                _render_node(item, out)
            out.append("]")
        out.append(">")
    elif isinstance(node, XmlDecl):
        out.append('<?xml version="' + node.version + '"')
        if node.encoding is not None:
            out.append(' encoding="' + node.encoding + '"')
        if node.standalone is not None:
            out.append(' standalone="' + node.standalone + '"')
        out.append("?>")
    else:  # pragma: no cover - the node types above are exhaustive
        raise TypeError(f"not an XML node: {node!r}")


def render_document(doc: XmlDocument) -> bytes:
    """The UTF-8 bytes of ``doc``."""
    out: list[str] = []
    if doc.decl is not None:
        _render_node(doc.decl, out)
    for node in doc.prolog:
        _render_node(node, out)
    _render_node(doc.root, out)
    for node in doc.epilog:
        _render_node(node, out)
    return "".join(out).encode("utf-8", "surrogatepass")


# ------------------------------------------------------------------ parsing

_NAME = r"[^\s<>&;=/!?\"'%\[\]()|,*+#]+"
_NAME_RE = re.compile(_NAME)
_WS_RE = re.compile(r"[ \t\r\n]*")
_ATTR_RE = re.compile(r"[ \t\r\n]+(" + _NAME + r")[ \t\r\n]*=[ \t\r\n]*(?:\"([^\"]*)\"|'([^']*)')")
_XMLDECL_RE = re.compile(
    r"<\?xml[ \t\r\n]+version[ \t\r\n]*=[ \t\r\n]*([\"'])(.*?)\1"
    r"(?:[ \t\r\n]+encoding[ \t\r\n]*=[ \t\r\n]*([\"'])(.*?)\3)?"
    r"(?:[ \t\r\n]+standalone[ \t\r\n]*=[ \t\r\n]*([\"'])(.*?)\5)?[ \t\r\n]*\?>"
)
_REF_RE = re.compile(r"&(#[xX][0-9a-fA-F]+|#[0-9]+|" + _NAME + r");")
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
        self.pos = m.end()
        return m.group(0)

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
                m = _REF_RE.match(text, self.pos)
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


# --------------------------------------------------------------- generation

_ELEMENT_NAMES = ("root", "item", "a", "b", "data", "entry", "x", "value", "list", "name", "title", "p",
                  "span", "svg", "g", "rect", "node", "child", "café", "名前", "x-y", "_u", "n.1", "Ω",
                  "html", "body", "Envelope", "Body", "feed")
_ATTR_NAMES = ("id", "class", "href", "type", "name", "lang", "x", "y", "width", "data-v", "ref", "état",
               "src", "version", "key", "_a", "b.c")
_PREFIXES = ("p", "ns", "x", "soap", "xs", "svg", "a1", "ñ")
_URIS = ("http://example.com/ns", "urn:x-assay:a", "http://www.w3.org/2000/svg",
         "http://www.w3.org/1999/xhtml", "tag:example.com,2024:x", "http://schemas.xmlsoap.org/soap/envelope/",
         "urn:ü", "http://example.com/ns?q=1&amp;r=2")
_WORDS = ("hello", "world", "Lorem", "ipsum", "42", "-1", "true", "café", "中文", "😀", " ", "\n", "\t",
          ">", '"', "'", "]", "a]b", "x y", "\r\n", "  ", "\u00a0", "\u2028", "%", ";", "=", "/")
_PREDEFINED = ("lt", "gt", "amp", "quot", "apos")
_CHAR_REFS = ("#65", "#x41", "#xE9", "#233", "#x1F600", "#x10FFFF", "#x9", "#xA", "#xD", "#32", "#x20AC",
              "#x0000041")
_COMMENTS = ("", " comment ", "a-b", " <tag> & stuff ", "é", "\n multi\n line\n")
_PI_TARGETS = ("pi", "xml-stylesheet", "php", "target", "x.y", "proc-ins")
_PI_DATA = ("", "data", 'href="style.css" type="text/css"', "echo 1; ", "? >", "<x>", "a=b&c")
_CDATA = ("", "<not-a-tag>", "a & b", "]]", "]>", "x]]y", "if (a < b && c > d) {}", "😀")
_ENCODINGS = (None, "UTF-8", "utf-8", "Utf-8")


@dataclass(slots=True)
class _Entity:
    name: str
    value: str
    depth: int
    markup: bool


class _Ctx:
    """What generation can refer to: declared entities and the element budget."""

    def __init__(self, rng: random.Random, entities: list[_Entity], budget: int) -> None:
        self.rng = rng
        self.entities = entities
        self.budget = budget

    def text_entities(self) -> list[str]:
        return [e.name for e in self.entities if not e.markup]


def _gen_text(rng: random.Random) -> str:
    out = "".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 5))).replace("]]>", "]] >")
    # Never end in "]": two adjacent text nodes could otherwise spell "]]>".
    return out + "." if out.endswith("]") else out


def _gen_attr_value(rng: random.Random, ctx: _Ctx, quote: str) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(0, 4)):
        roll = rng.random()
        if roll < 0.7:
            parts.append(_gen_text(rng).replace(quote, ""))
        elif roll < 0.85:
            parts.append("&" + rng.choice(_PREDEFINED) + ";")
        elif roll < 0.93:
            parts.append("&" + rng.choice(_CHAR_REFS) + ";")
        else:
            names = ctx.text_entities()
            if names:
                parts.append("&" + rng.choice(names) + ";")
    return "".join(parts)


def _gen_qname(rng: random.Random, pool: tuple[str, ...], scope: frozenset[str], p: float) -> str:
    local = rng.choice(pool)
    if scope and rng.random() < p:
        return rng.choice(sorted(scope)) + ":" + local
    return local


def _local(name: str) -> str:
    return name.rsplit(":", 1)[-1]


def _prefix(name: str) -> str | None:
    return name.split(":", 1)[0] if ":" in name else None


def _declared(attrs: tuple[Attr, ...] | list[Attr]) -> set[str]:
    return {a.name[6:] for a in attrs if a.name.startswith("xmlns:")}


def _gen_attrs(rng: random.Random, ctx: _Ctx, scope: frozenset[str]) -> tuple[list[Attr], frozenset[str]]:
    attrs: list[Attr] = []
    if rng.random() < 0.15:
        prefix = rng.choice(_PREFIXES)
        attrs.append(Attr("xmlns:" + prefix, rng.choice(_URIS), rng.choice('""\'')))
        scope = scope | {prefix}
    if rng.random() < 0.08:
        attrs.append(Attr("xmlns", rng.choice(_URIS + ("",))))
    locals_used: set[str] = set()
    for _ in range(rng.randint(0, MAX_ATTRS)):
        name = _gen_qname(rng, _ATTR_NAMES, scope, 0.2)
        if _local(name) in locals_used:
            continue
        locals_used.add(_local(name))
        quote = '"' if rng.random() < 0.8 else "'"
        attrs.append(Attr(name, _gen_attr_value(rng, ctx, quote), quote))
    rng.shuffle(attrs)
    return attrs, scope


def _gen_leaf(rng: random.Random, ctx: _Ctx) -> Node:
    roll = rng.random()
    if roll < 0.55:
        return Text(_gen_text(rng))
    if roll < 0.7:
        return Ref(rng.choice(_PREDEFINED))
    if roll < 0.78:
        return Ref(rng.choice(_CHAR_REFS))
    if roll < 0.85 and ctx.entities:
        return Ref(rng.choice(ctx.entities).name)
    if roll < 0.9:
        return CData(rng.choice(_CDATA))
    if roll < 0.95:
        return Comment(rng.choice(_COMMENTS))
    return PI(rng.choice(_PI_TARGETS), rng.choice(_PI_DATA))


def _gen_element(rng: random.Random, ctx: _Ctx, depth: int, scope: frozenset[str]) -> Element:
    ctx.budget -= 1
    attrs, scope = _gen_attrs(rng, ctx, scope)
    name = _gen_qname(rng, _ELEMENT_NAMES, scope, 0.3)
    children: list[Node] = []
    if depth < MAX_DEPTH and rng.random() < 0.85:
        for _ in range(rng.randint(0, MAX_CHILDREN)):
            if ctx.budget > 0 and rng.random() < 0.45:
                children.append(_gen_element(rng, ctx, depth + 1, scope))
            else:
                children.append(_gen_leaf(rng, ctx))
    return Element(name, tuple(attrs), tuple(children), empty=not children and rng.random() < 0.5)


def _gen_entities(rng: random.Random) -> list[_Entity]:
    entities: list[_Entity] = []
    for i in range(rng.randint(0, 4)):
        name = rng.choice(("e", "ent", "copy", "x", "é", "long")) + str(i)
        if rng.random() < 0.2:
            value = rng.choice(("<b>bold</b>", "<i x='1'/>", "t<!-- c -->t", "<a>&amp;</a>"))
            entities.append(_Entity(name, value, 0, True))
            continue
        parts = [_gen_text(rng).replace('"', "").replace("%", "")]
        depth = 0
        refs = 0
        markup = False
        for _ in range(rng.randint(0, 3)):
            roll = rng.random()
            if roll < 0.4 and entities and refs < MAX_ENTITY_REFS:
                target = rng.choice(entities)
                if target.depth < MAX_ENTITY_DEPTH:
                    parts.append("&" + target.name + ";")
                    depth = max(depth, target.depth + 1)
                    markup = markup or target.markup
                    refs += 1
            elif roll < 0.6:
                parts.append("&" + rng.choice(("#233", "#x41", "#x1F600", "#169")) + ";")
            else:
                parts.append(_gen_text(rng).replace('"', "").replace("%", ""))
        entities.append(_Entity(name, "".join(parts), depth, markup))
    return entities


def _content_model(rng: random.Random, names: list[str]) -> str:
    picks = rng.sample(names, min(len(names), rng.randint(1, 3))) if names else ["a"]
    roll = rng.random()
    if roll < 0.2:
        return rng.choice(("EMPTY", "ANY"))
    if roll < 0.5:
        return "(#PCDATA" + "".join("|" + n for n in picks) + ")*" if rng.random() < 0.7 else "(#PCDATA)"
    sep = rng.choice((",", "|"))
    return "(" + sep.join(n + rng.choice(("", "?", "*", "+")) for n in picks) + ")" + rng.choice(("", "?", "*", "+"))


def _attlist_body(rng: random.Random) -> str:
    defs = []
    for attr in rng.sample(("id", "kind", "lang", "fixed", "note"), rng.randint(1, 3)):
        roll = rng.random()
        if roll < 0.3:
            defs.append(attr + " CDATA #IMPLIED")
        elif roll < 0.5:
            defs.append(attr + ' (x|y|z) "x"')
        elif roll < 0.65:
            defs.append(attr + " ID #IMPLIED")
        elif roll < 0.8:
            defs.append(attr + ' NMTOKEN #FIXED "v1"')
        else:
            defs.append(attr + ' CDATA "def &amp; ault"')
    return " ".join(defs)


def _element_names(node: Element, out: list[str], limit: int = 64) -> list[str]:
    if len(out) < limit and node.name not in out:
        out.append(node.name)
    for child in node.children:
        if isinstance(child, Element):
            _element_names(child, out, limit)
    return out


def _gen_doctype(rng: random.Random, root: Element, entities: list[_Entity]) -> Doctype:
    items: list = [Text("\n")]
    names = _element_names(root, [])
    decls: list = [Decl("ENTITY", e.name, '"' + e.value + '"') for e in entities]
    for _ in range(rng.randint(0, 3)):
        decls.append(Decl("ELEMENT", rng.choice(names), _content_model(rng, names)))
    for _ in range(rng.randint(0, 2)):
        decls.append(Decl("ATTLIST", rng.choice(names), _attlist_body(rng)))
    if rng.random() < 0.2:
        decls.append(Comment(rng.choice(_COMMENTS)))
    # Entities must come in declaration order (an entity's value may refer to earlier ones).
    entity_decls = [d for d in decls if isinstance(d, Decl) and d.kind == "ENTITY"]
    others = [d for d in decls if not (isinstance(d, Decl) and d.kind == "ENTITY")]
    rng.shuffle(others)
    for decl in entity_decls + others:
        items.append(decl)
        items.append(Text(rng.choice(("\n", " ", "\n  "))))
    return Doctype(root.name, " ", tuple(items))


def generate_document(rng: random.Random) -> XmlDocument:
    """A fresh namespace-well-formed document whose entities are declared and bounded."""
    with_dtd = rng.random() < 0.3
    entities = _gen_entities(rng) if with_dtd else []
    ctx = _Ctx(rng, entities, MAX_ELEMENTS)
    root = _gen_element(rng, ctx, 0, frozenset())
    decl = None
    if rng.random() < 0.6:
        decl = XmlDecl("1.0", rng.choice(_ENCODINGS), rng.choice((None, None, "yes", "no")))
    prolog: list[Misc] = []
    if decl is not None:
        prolog.append(Text("\n"))
    if rng.random() < 0.15:
        prolog += [Comment(rng.choice(_COMMENTS)), Text("\n")]
    if with_dtd:
        prolog += [_gen_doctype(rng, root, entities), Text("\n")]
    if rng.random() < 0.1:
        prolog += [PI(rng.choice(_PI_TARGETS), rng.choice(_PI_DATA)), Text("\n")]
    epilog: tuple = ()
    if rng.random() < 0.2:
        epilog = (Text("\n"), rng.choice((Comment("end"), PI("pi", "x"), Text("\n"))))
    return XmlDocument(root, decl, tuple(prolog), epilog)


# ------------------------------------------------------------- tree surgery

Path = tuple[int, ...]


def _paths(root: Element, limit: int = 512) -> list[tuple[Path, Node]]:
    """Every node under (and including) the root, depth first."""
    out: list[tuple[Path, Node]] = []
    stack: list[tuple[Path, Node]] = [((), root)]
    while stack and len(out) < limit:
        path, node = stack.pop()
        out.append((path, node))
        if isinstance(node, Element):
            for i in range(len(node.children) - 1, -1, -1):
                stack.append((path + (i,), node.children[i]))
    return out


def _element_paths(root: Element) -> list[Path]:
    return [p for p, n in _paths(root) if isinstance(n, Element)]


def _get(root: Element, path: Path) -> Node:
    node: Node = root
    for i in path:
        assert isinstance(node, Element)
        node = node.children[i]
    return node


def _put(root: Element, path: Path, new: Node) -> Element:
    if not path:
        assert isinstance(new, Element)
        return new
    children = list(root.children)
    head = children[path[0]]
    children[path[0]] = _put(head, path[1:], new) if len(path) > 1 else new  # type: ignore[arg-type]
    return replace(root, children=tuple(children))


def _splice(root: Element, path: Path, index: int, nodes: list[Node], remove: int = 0) -> Element:
    """The element at ``path`` with ``remove`` children at ``index`` replaced by ``nodes``."""
    parent = _get(root, path)
    assert isinstance(parent, Element)
    children = list(parent.children)
    children[index : index + remove] = nodes
    return _put(root, path, replace(parent, children=tuple(children), empty=parent.empty and not children))


def _scope(root: Element, path: Path) -> frozenset[str]:
    """Prefixes declared on the element at ``path`` and its ancestors."""
    scope: set[str] = set()
    node: Node = root
    scope |= _declared(root.attrs)
    for i in path:
        assert isinstance(node, Element)
        node = node.children[i]
        if isinstance(node, Element):
            scope |= _declared(node.attrs)
    return frozenset(scope)


def _doctype(doc: XmlDocument) -> Doctype | None:
    for node in doc.prolog:
        if isinstance(node, Doctype):
            return node
    return None


def _entities(doc: XmlDocument) -> list[_Entity]:
    doctype = _doctype(doc)
    out: list[_Entity] = []
    for item in (doctype.subset or ()) if doctype else ():
        if isinstance(item, Decl) and item.kind == "ENTITY" and not item.name.startswith("%"):
            out.append(_Entity(item.name, item.body[1:-1], MAX_ENTITY_DEPTH, "<" in item.body))
    # An entity that refers to one with markup carries markup too (matters in attribute values).
    changed = True
    while changed:
        changed = False
        marked = {e.name for e in out if e.markup}
        for e in out:
            if not e.markup and any(m.group(1) in marked for m in _REF_RE.finditer(e.value)):
                e.markup = changed = True
    return out


def _sanitize(node: Node, scope: frozenset[str], entities: set[str]) -> Node:
    """``node`` made safe to place where ``scope`` prefixes and ``entities`` are declared."""
    if isinstance(node, Ref):
        if node.name.startswith("#") or node.name in _PREDEFINED or node.name in entities:
            return node
        return Text(node.name)
    if not isinstance(node, Element):
        return node
    scope = scope | _declared(node.attrs)
    name = node.name if _prefix(node.name) in (None, "xml") or _prefix(node.name) in scope else _local(node.name)
    attrs: list[Attr] = []
    seen: set[str] = set()
    for a in node.attrs:
        aname = a.name
        p = _prefix(aname)
        if p not in (None, "xmlns", "xml") and p not in scope:
            aname = _local(aname)
        if aname in seen:
            continue
        seen.add(aname)
        attrs.append(replace(a, name=aname, value=_REF_RE.sub(
            lambda m: m.group(0) if m.group(1).startswith("#") or m.group(1) in _PREDEFINED
            or m.group(1) in entities else m.group(1), a.value)))
    children = tuple(_sanitize(c, scope, entities) for c in node.children)
    return Element(name, tuple(attrs), children, node.empty, node.end_name)


# ---------------------------------------------------------------- mutation


def _random_element(doc: XmlDocument, rng: random.Random) -> tuple[Path, Element]:
    path = rng.choice(_element_paths(doc.root))
    node = _get(doc.root, path)
    assert isinstance(node, Element)
    return path, node


def _with_root(doc: XmlDocument, root: Element) -> XmlDocument:
    return replace(doc, root=root)


def _mut_rename(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = _random_element(doc, rng)
    scope = _scope(doc.root, path)
    names = _element_names(doc.root, [])
    if rng.random() < 0.5:
        name = rng.choice(names)
        if _prefix(name) is not None and _prefix(name) not in scope:
            name = _local(name)
    else:
        name = _gen_qname(rng, _ELEMENT_NAMES, scope, 0.3)
    return _with_root(doc, _put(doc.root, path, replace(el, name=name, end_name=None)))


def _mut_attr(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = _random_element(doc, rng)
    scope = _scope(doc.root, path)
    ctx = _Ctx(rng, _entities(doc), 0)
    attrs = list(el.attrs)
    roll = rng.random()
    plain = [i for i, a in enumerate(attrs) if not a.name.startswith("xmlns")]
    if roll < 0.35 or not plain:
        used = {_local(a.name) for a in attrs if not a.name.startswith("xmlns")}
        name = _gen_qname(rng, _ATTR_NAMES, scope, 0.2)
        if _local(name) in used:
            return doc
        quote = rng.choice('""\'')
        attrs.insert(rng.randint(0, len(attrs)), Attr(name, _gen_attr_value(rng, ctx, quote), quote))
    elif roll < 0.55:
        del attrs[rng.choice(plain)]
    elif roll < 0.85:
        i = rng.choice(plain)
        attrs[i] = replace(attrs[i], value=_gen_attr_value(rng, ctx, attrs[i].quote))
    else:
        i = rng.choice(plain)
        quote = "'" if attrs[i].quote == '"' else '"'
        attrs[i] = replace(attrs[i], value=attrs[i].value.replace(quote, "&" + ("quot" if quote == '"' else "apos") + ";"),
                           quote=quote)
    return _with_root(doc, _put(doc.root, path, replace(el, attrs=tuple(attrs))))


def _mut_namespace(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = _random_element(doc, rng)
    prefix = rng.choice(_PREFIXES)
    attrs = [a for a in el.attrs if a.name != "xmlns:" + prefix]
    attrs.append(Attr("xmlns:" + prefix, rng.choice(_URIS)))
    el = replace(el, attrs=tuple(attrs))
    if rng.random() < 0.6:
        el = replace(el, name=prefix + ":" + _local(el.name), end_name=None)
    return _with_root(doc, _put(doc.root, path, el))


def _mut_insert(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = _random_element(doc, rng)
    ctx = _Ctx(rng, _entities(doc), 4)
    if len(path) < MAX_DEPTH + 2 and rng.random() < 0.4:
        node: Node = _gen_element(rng, ctx, MAX_DEPTH - 1, _scope(doc.root, path))
    else:
        node = _gen_leaf(rng, ctx)
    return _with_root(doc, _splice(doc.root, path, rng.randint(0, len(el.children)), [node]))


def _mut_delete(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = _random_element(doc, rng)
    if not el.children:
        return _with_root(doc, _put(doc.root, path, replace(el, empty=not el.empty)))
    return _with_root(doc, _splice(doc.root, path, rng.randrange(len(el.children)), [], remove=1))


def _mut_duplicate(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = _random_element(doc, rng)
    if not el.children:
        return _mut_insert(doc, rng)
    i = rng.randrange(len(el.children))
    return _with_root(doc, _splice(doc.root, path, i, [el.children[i]]))


def _mut_swap(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = _random_element(doc, rng)
    if len(el.children) < 2:
        return _mut_insert(doc, rng)
    children = list(el.children)
    i, j = rng.sample(range(len(children)), 2)
    children[i], children[j] = children[j], children[i]
    return _with_root(doc, _put(doc.root, path, replace(el, children=tuple(children))))


def _mut_move(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    """Cut a subtree and paste it under another element, fixing prefixes and references."""
    nodes = [(p, n) for p, n in _paths(doc.root) if p]
    if not nodes:
        return _mut_insert(doc, rng)
    src, node = rng.choice(nodes)
    root = _splice(doc.root, src[:-1], src[-1], [], remove=1)
    dest = rng.choice(_element_paths(root))
    parent = _get(root, dest)
    assert isinstance(parent, Element)
    entities = {e.name for e in _entities(doc)}
    moved = _sanitize(node, _scope(root, dest), entities)
    return _with_root(doc, _splice(root, dest, rng.randint(0, len(parent.children)), [moved]))


def _mut_wrap(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    nodes = [(p, n) for p, n in _paths(doc.root) if p]
    if not nodes or rng.random() < 0.2:
        return replace(doc, root=Element(rng.choice(_ELEMENT_NAMES), (), (doc.root,)))
    path, node = rng.choice(nodes)
    if isinstance(node, Element) and rng.random() < 0.5:
        # Unwrap: the element's children take its place (prefixes it declared must stay declared).
        scope = _scope(doc.root, path[:-1])
        entities = {e.name for e in _entities(doc)}
        kids = [_sanitize(c, scope, entities) for c in node.children]
        return _with_root(doc, _splice(doc.root, path[:-1], path[-1], kids, remove=1))
    wrapper = Element(rng.choice(_ELEMENT_NAMES), (), (node,))
    return _with_root(doc, _put(doc.root, path, wrapper))


def _mut_text(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    leaves = [(p, n) for p, n in _paths(doc.root) if not isinstance(n, Element)]
    if not leaves:
        return _mut_insert(doc, rng)
    path, node = rng.choice(leaves)
    ctx = _Ctx(rng, _entities(doc), 0)
    if isinstance(node, Text):
        new: Node = Text(_gen_text(rng)) if rng.random() < 0.5 else Text(node.raw + _gen_text(rng))
    elif isinstance(node, Ref):
        new = Ref(rng.choice(_CHAR_REFS + _PREDEFINED + tuple(ctx.text_entities())))
    elif isinstance(node, CData):
        new = CData(rng.choice(_CDATA) + node.text[:16])
    elif isinstance(node, Comment):
        new = Comment(rng.choice(_COMMENTS))
    else:
        new = PI(rng.choice(_PI_TARGETS), rng.choice(_PI_DATA))
    return _with_root(doc, _put(doc.root, path, new))


def _mut_prolog(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    roll = rng.random()
    if roll < 0.3:
        if doc.decl is None:
            return replace(doc, decl=XmlDecl("1.0", rng.choice(_ENCODINGS), rng.choice((None, "yes", "no"))))
        if rng.random() < 0.3:
            return replace(doc, decl=None)
        return replace(doc, decl=replace(doc.decl, encoding=rng.choice(_ENCODINGS),
                                         standalone=rng.choice((None, "yes", "no"))))
    if roll < 0.5:
        misc = rng.choice((Comment(rng.choice(_COMMENTS)), PI(rng.choice(_PI_TARGETS), rng.choice(_PI_DATA)),
                           Text("\n")))
        if rng.random() < 0.5:
            return replace(doc, epilog=doc.epilog + (misc,))
        prolog = list(doc.prolog)
        prolog.insert(rng.randint(0, len(prolog)), misc)
        return replace(doc, prolog=tuple(prolog))
    return _mut_dtd(doc, rng)


def _mut_dtd(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    doctype = _doctype(doc)
    if doctype is None:
        entities = _gen_entities(rng) or [_Entity("e0", "text", 0, False)]
        new_doctype = _gen_doctype(rng, doc.root, entities)
        # Comments and PIs may precede the DOCTYPE, so it can always go last in the prolog.
        doc = replace(doc, prolog=doc.prolog + (new_doctype, Text("\n")))
        if rng.random() < 0.7:
            path, el = _random_element(doc, rng)
            doc = _with_root(doc, _splice(doc.root, path, rng.randint(0, len(el.children)),
                                          [Ref(rng.choice(entities).name)]))
        return doc
    subset = list(doctype.subset or ())
    roll = rng.random()
    names = _element_names(doc.root, [])
    if roll < 0.4:
        existing = _entities(doc)
        name = "m" + str(len(subset))
        value = _gen_text(rng).replace('"', "").replace("%", "")
        text_names = [e.name for e in existing if not e.markup]
        if text_names and rng.random() < 0.5:
            # Reference one existing entity: depth grows by at most one level per mutation,
            # so cap by counting the chain explicitly.
            target = rng.choice(text_names)
            if _entity_depth(existing, target) < MAX_ENTITY_DEPTH:
                value += "&" + target + ";"
        subset += [Decl("ENTITY", name, '"' + value + '"'), Text("\n")]
        doc = replace(doc, prolog=tuple(replace(doctype, subset=tuple(subset)) if n is doctype else n
                                        for n in doc.prolog))
        path, el = _random_element(doc, rng)
        return _with_root(doc, _splice(doc.root, path, rng.randint(0, len(el.children)), [Ref(name)]))
    if roll < 0.6:
        subset += [Decl("ELEMENT", rng.choice(names), _content_model(rng, names)), Text("\n")]
    elif roll < 0.8:
        subset += [Decl("ATTLIST", rng.choice(names), _attlist_body(rng)), Text("\n")]
    else:
        removable = [i for i, d in enumerate(subset) if isinstance(d, Decl) and d.kind != "ENTITY"]
        if removable:
            del subset[rng.choice(removable)]
    return replace(doc, prolog=tuple(replace(doctype, subset=tuple(subset)) if n is doctype else n
                                     for n in doc.prolog))


def _entity_depth(entities: list[_Entity], name: str, seen: frozenset[str] = frozenset()) -> int:
    by_name = {e.name: e for e in entities}
    entity = by_name.get(name)
    if entity is None or name in seen or len(seen) > MAX_ENTITY_DEPTH + 2:
        return MAX_ENTITY_DEPTH + 1 if name in seen else 0
    refs = [m.group(1) for m in _REF_RE.finditer(entity.value) if not m.group(1).startswith("#")]
    return max((1 + _entity_depth(entities, r, seen | {name}) for r in refs), default=0)


_VALID_OPS = ((_mut_rename, 2), (_mut_attr, 4), (_mut_namespace, 1), (_mut_insert, 4), (_mut_delete, 3),
              (_mut_duplicate, 2), (_mut_swap, 1), (_mut_move, 1), (_mut_wrap, 1), (_mut_text, 3),
              (_mut_prolog, 2))


def _mut_invalid(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    """``doc`` with one adjacent well-formedness error."""
    path, el = _random_element(doc, rng)
    kind = rng.choice(("end_tag", "dup_attr", "undeclared_entity", "unbound_prefix", "comment_dashes",
                       "raw_lt", "raw_amp", "cdata_end", "bad_char_ref", "pi_xml", "second_root",
                       "control_char", "recursive_entity", "attr_lt"))
    at = rng.randint(0, len(el.children))
    if kind == "end_tag":
        return _with_root(doc, _put(doc.root, path, replace(el, empty=False, end_name=el.name + "x")))
    if kind == "dup_attr":
        attrs = el.attrs + (el.attrs[0],) if el.attrs else (Attr("id", "1"), Attr("id", "2"))
        return _with_root(doc, _put(doc.root, path, replace(el, attrs=attrs)))
    if kind == "unbound_prefix":
        return _with_root(doc, _put(doc.root, path, replace(el, name="zz:" + _local(el.name), end_name=None)))
    if kind == "recursive_entity":
        doctype = Doctype(doc.root.name, " ", (Decl("ENTITY", "r1", '"&r2;"'), Decl("ENTITY", "r2", '"&r1;"')))
        prolog = tuple(n for n in doc.prolog if not isinstance(n, Doctype)) + (doctype,)
        return replace(doc, prolog=prolog, root=_splice(doc.root, path, at, [Ref("r1")]))
    if kind == "second_root":
        return replace(doc, epilog=doc.epilog + (Element(rng.choice(_ELEMENT_NAMES)),))
    if kind == "attr_lt":
        attr = Attr(rng.choice(_ATTR_NAMES) + "2", rng.choice(("a<b", "a&b", "&undeclared;")))
        return _with_root(doc, _put(doc.root, path, replace(el, attrs=el.attrs + (attr,))))
    node: Node = {
        "undeclared_entity": Ref("undeclared"),
        "comment_dashes": Comment(rng.choice(("a--b", "ends-", "--"))),
        "raw_lt": Text(rng.choice(("a<b", "<", "a < b"))),
        "raw_amp": Text(rng.choice(("a&b", "&", "& ;", "&#;"))),
        "cdata_end": Text("]]>"),
        "bad_char_ref": Ref(rng.choice(("#0", "#x0", "#xD800", "#x110000", "#xFFFE", "#x", "#-1", "#x1"))),
        "pi_xml": PI(rng.choice(("xml", "XML", "xMl")), "version='1.0'"),
        "control_char": Text(rng.choice(("\x01", "a\x0bb", "\x1f", "\ufffe"))),
    }[kind]
    return _with_root(doc, _splice(doc.root, path, at, [node]))


def _weighted(ops, rng: random.Random):
    total = sum(w for _, w in ops)
    roll = rng.randrange(total)
    for op, weight in ops:
        if roll < weight:
            return op
        roll -= weight
    return ops[-1][0]


def _depth(node: Node) -> int:
    if not isinstance(node, Element) or not node.children:
        return 0
    return 1 + max(_depth(c) for c in node.children)


class XmlStrategy:
    """Structured generation for XML documents (``xml@1``)."""

    name = "xml"
    version = 1

    def generate(self, rng: random.Random) -> XmlDocument:
        """A fresh well-formed document within :data:`MAX_BYTES`."""
        doc = generate_document(rng)
        while len(render_document(doc)) > MAX_BYTES:
            doc = generate_document(rng)
        return doc

    def parse(self, data: bytes) -> XmlDocument | None:
        """The document in ``data``; ``None`` when it cannot be read."""
        return parse_document(data)

    def render(self, value: XmlDocument) -> bytes:
        """UTF-8 bytes."""
        return render_document(value)

    def mutate(self, value: XmlDocument, rng: random.Random) -> XmlDocument:
        """One structural change; adjacent-invalid at :data:`INVALID_RATE`."""
        if rng.random() < INVALID_RATE:
            out = _mut_invalid(value, rng)
        else:
            out = _weighted(_VALID_OPS, rng)(value, rng)
        return out if self._fits(out) else value

    def crossover(self, a: XmlDocument, b: XmlDocument, rng: random.Random) -> XmlDocument:
        """``a`` with a subtree of ``b`` inserted or swapped in (prefixes and references fixed up)."""
        donors = [n for p, n in _paths(b.root) if p] or [b.root]
        donor = rng.choice(donors)
        path, el = _random_element(a, rng)
        entities = {e.name for e in _entities(a)}
        moved = _sanitize(donor, _scope(a.root, path), entities)
        if el.children and rng.random() < 0.5:
            out = _with_root(a, _splice(a.root, path, rng.randrange(len(el.children)), [moved], remove=1))
        else:
            out = _with_root(a, _splice(a.root, path, rng.randint(0, len(el.children)), [moved]))
        if rng.random() < 0.2 and b.decl is not None:
            out = replace(out, decl=b.decl)
        return out if self._fits(out) else a

    def tokens(self, value: XmlDocument) -> list[bytes]:
        """Element and attribute names, attribute values, namespace URIs, entity names, PI targets."""
        seen: dict[bytes, None] = {}

        def add(token: str) -> None:
            if token and len(seen) < MAX_TOKENS:
                seen[token.encode("utf-8", "surrogatepass")] = None

        for _, node in _paths(value.root):
            if isinstance(node, Element):
                add("<" + node.name)
                add("</" + node.name + ">")
                for a in node.attrs:
                    add(a.name + "=")
                    add(a.value)
            elif isinstance(node, Ref):
                add("&" + node.name + ";")
            elif isinstance(node, PI):
                add("<?" + node.target)
        doctype = _doctype(value)
        if doctype is not None:
            for item in doctype.subset or ():
                if isinstance(item, Decl):
                    add("<!" + item.kind + " " + item.name)
        return list(seen)

    def shrink_candidates(self, value: XmlDocument) -> Iterator[XmlDocument]:
        """No declaration or DOCTYPE, fewer children, fewer attributes, elements unwrapped."""
        count = 0
        candidates: list[XmlDocument] = []
        if value.decl is not None:
            candidates.append(replace(value, decl=None))
        if value.prolog:
            doctype = _doctype(value)
            kept = tuple(n for n in value.prolog if isinstance(n, Doctype) and _uses_entities(value.root))
            candidates.append(replace(value, prolog=kept))
            if doctype is not None and doctype.subset:
                plain = tuple(d for d in doctype.subset if isinstance(d, Decl) and d.kind == "ENTITY")
                candidates.append(replace(value, prolog=tuple(replace(doctype, subset=plain) if n is doctype else n
                                                              for n in value.prolog)))
        if value.epilog:
            candidates.append(replace(value, epilog=()))
        for path, node in _paths(value.root, limit=128):
            if not isinstance(node, Element):
                continue
            for i in range(len(node.children)):
                candidates.append(_with_root(value, _splice(value.root, path, i, [], remove=1)))
            plain_attrs = tuple(a for a in node.attrs if a.name.startswith("xmlns"))
            if plain_attrs != node.attrs:
                candidates.append(_with_root(value, _put(value.root, path, replace(node, attrs=plain_attrs))))
            if len(candidates) >= MAX_SHRINK:
                break
        for path, node in _paths(value.root, limit=64):
            if path and isinstance(node, Element) and len(candidates) < 2 * MAX_SHRINK:
                entities = {e.name for e in _entities(value)}
                kids = [_sanitize(c, _scope(value.root, path[:-1]), entities) for c in node.children]
                candidates.append(_with_root(value, _splice(value.root, path[:-1], path[-1], kids, remove=1)))
        for candidate in candidates:
            yield candidate
            count += 1
            if count >= MAX_SHRINK:
                return

    @staticmethod
    def _fits(doc: XmlDocument) -> bool:
        return _depth(doc.root) <= MAX_DEPTH + 4 and len(render_document(doc)) <= MAX_BYTES


def _uses_entities(root: Element) -> bool:
    for _, node in _paths(root):
        if isinstance(node, Ref) and not node.name.startswith("#") and node.name not in _PREDEFINED:
            return True
        if isinstance(node, Element) and any(
            m.group(1) not in _PREDEFINED and not m.group(1).startswith("#")
            for a in node.attrs for m in _REF_RE.finditer(a.value)
        ):
            return True
    return False


register_strategy(XmlStrategy())
