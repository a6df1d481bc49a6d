"""The XML document tree, its bounds, and rendering it to bytes."""

from __future__ import annotations

from dataclasses import dataclass

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
    children: tuple[Node, ...] = ()
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
    subset: tuple[Decl | Comment | PI | PERef | Text, ...] | None = None


@dataclass(frozen=True, slots=True)
class XmlDecl:
    version: str = "1.0"
    encoding: str | None = None
    standalone: str | None = None


Node = Element | Text | Ref | CData | Comment | PI
Misc = Comment | PI | Text | Doctype


@dataclass(frozen=True, slots=True)
class XmlDocument:
    """A whole document: declaration, prolog, root element, epilog."""

    root: Element
    decl: XmlDecl | None = None
    prolog: tuple[Misc, ...] = ()
    epilog: tuple[Comment | PI | Text | Element, ...] = ()


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
    for node in doc.epilog:  # type: ignore[assignment]  # _render_node takes any node
        _render_node(node, out)
    return "".join(out).encode("utf-8", "surrogatepass")
