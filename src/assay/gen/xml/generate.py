"""Fresh namespace-well-formed documents with a bounded internal DTD subset."""

from __future__ import annotations

import random
from dataclasses import dataclass

from assay.gen.xml.model import (
    MAX_ATTRS,
    MAX_CHILDREN,
    MAX_DEPTH,
    MAX_ELEMENTS,
    MAX_ENTITY_DEPTH,
    MAX_ENTITY_REFS,
    PI,
    Attr,
    CData,
    Comment,
    Decl,
    Doctype,
    Element,
    Misc,
    Node,
    Ref,
    Text,
    XmlDecl,
    XmlDocument,
)

ELEMENT_NAMES = (
    "root",
    "item",
    "a",
    "b",
    "data",
    "entry",
    "x",
    "value",
    "list",
    "name",
    "title",
    "p",
    "span",
    "svg",
    "g",
    "rect",
    "node",
    "child",
    "café",
    "名前",
    "x-y",
    "_u",
    "n.1",
    "Ω",
    "html",
    "body",
    "Envelope",
    "Body",
    "feed",
)
ATTR_NAMES = (
    "id",
    "class",
    "href",
    "type",
    "name",
    "lang",
    "x",
    "y",
    "width",
    "data-v",
    "ref",
    "état",
    "src",
    "version",
    "key",
    "_a",
    "b.c",
)
PREFIXES = ("p", "ns", "x", "soap", "xs", "svg", "a1", "ñ")
URIS = (
    "http://example.com/ns",
    "urn:x-assay:a",
    "http://www.w3.org/2000/svg",
    "http://www.w3.org/1999/xhtml",
    "tag:example.com,2024:x",
    "http://schemas.xmlsoap.org/soap/envelope/",
    "urn:ü",
    "http://example.com/ns?q=1&amp;r=2",
)
_WORDS = (
    "hello",
    "world",
    "Lorem",
    "ipsum",
    "42",
    "-1",
    "true",
    "café",
    "中文",
    "😀",
    " ",
    "\n",
    "\t",
    ">",
    '"',
    "'",
    "]",
    "a]b",
    "x y",
    "\r\n",
    "  ",
    "\u00a0",
    "\u2028",
    "%",
    ";",
    "=",
    "/",
)
PREDEFINED_ENTITIES = ("lt", "gt", "amp", "quot", "apos")
CHAR_REFS = ("#65", "#x41", "#xE9", "#233", "#x1F600", "#x10FFFF", "#x9", "#xA", "#xD", "#32", "#x20AC", "#x0000041")
COMMENTS = ("", " comment ", "a-b", " <tag> & stuff ", "é", "\n multi\n line\n")
PI_TARGETS = ("pi", "xml-stylesheet", "php", "target", "x.y", "proc-ins")
PI_DATA = ("", "data", 'href="style.css" type="text/css"', "echo 1; ", "? >", "<x>", "a=b&c")
CDATA_TEXTS = ("", "<not-a-tag>", "a & b", "]]", "]>", "x]]y", "if (a < b && c > d) {}", "😀")
ENCODINGS = (None, "UTF-8", "utf-8", "Utf-8")


@dataclass(slots=True)
class EntityDef:
    name: str
    value: str
    depth: int
    markup: bool


class GenContext:
    """What generation can refer to: declared entities and the element budget."""

    def __init__(self, rng: random.Random, entities: list[EntityDef], budget: int) -> None:
        self.rng = rng
        self.entities = entities
        self.budget = budget

    def text_entities(self) -> list[str]:
        return [e.name for e in self.entities if not e.markup]


def gen_text(rng: random.Random) -> str:
    out = "".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 5))).replace("]]>", "]] >")
    # Never end in "]": two adjacent text nodes could otherwise spell "]]>".
    return out + "." if out.endswith("]") else out


def gen_attr_value(rng: random.Random, ctx: GenContext, quote: str) -> str:
    parts: list[str] = []
    for _ in range(rng.randint(0, 4)):
        roll = rng.random()
        if roll < 0.7:
            parts.append(gen_text(rng).replace(quote, ""))
        elif roll < 0.85:
            parts.append("&" + rng.choice(PREDEFINED_ENTITIES) + ";")
        elif roll < 0.93:
            parts.append("&" + rng.choice(CHAR_REFS) + ";")
        else:
            names = ctx.text_entities()
            if names:
                parts.append("&" + rng.choice(names) + ";")
    return "".join(parts)


def gen_qname(rng: random.Random, pool: tuple[str, ...], scope: frozenset[str], p: float) -> str:
    local = rng.choice(pool)
    if scope and rng.random() < p:
        return rng.choice(sorted(scope)) + ":" + local
    return local


def local_name(name: str) -> str:
    return name.rsplit(":", 1)[-1]


def name_prefix(name: str) -> str | None:
    return name.split(":", 1)[0] if ":" in name else None


def declared_prefixes(attrs: tuple[Attr, ...] | list[Attr]) -> set[str]:
    return {a.name[6:] for a in attrs if a.name.startswith("xmlns:")}


def _gen_attrs(rng: random.Random, ctx: GenContext, scope: frozenset[str]) -> tuple[list[Attr], frozenset[str]]:
    attrs: list[Attr] = []
    if rng.random() < 0.15:
        prefix = rng.choice(PREFIXES)
        attrs.append(Attr("xmlns:" + prefix, rng.choice(URIS), rng.choice('""\'')))
        scope = scope | {prefix}
    if rng.random() < 0.08:
        attrs.append(Attr("xmlns", rng.choice(URIS + ("",))))
    locals_used: set[str] = set()
    for _ in range(rng.randint(0, MAX_ATTRS)):
        name = gen_qname(rng, ATTR_NAMES, scope, 0.2)
        if local_name(name) in locals_used:
            continue
        locals_used.add(local_name(name))
        quote = '"' if rng.random() < 0.8 else "'"
        attrs.append(Attr(name, gen_attr_value(rng, ctx, quote), quote))
    rng.shuffle(attrs)
    return attrs, scope


def gen_leaf(rng: random.Random, ctx: GenContext) -> Node:
    roll = rng.random()
    if roll < 0.55:
        return Text(gen_text(rng))
    if roll < 0.7:
        return Ref(rng.choice(PREDEFINED_ENTITIES))
    if roll < 0.78:
        return Ref(rng.choice(CHAR_REFS))
    if roll < 0.85 and ctx.entities:
        return Ref(rng.choice(ctx.entities).name)
    if roll < 0.9:
        return CData(rng.choice(CDATA_TEXTS))
    if roll < 0.95:
        return Comment(rng.choice(COMMENTS))
    return PI(rng.choice(PI_TARGETS), rng.choice(PI_DATA))


def gen_element(rng: random.Random, ctx: GenContext, depth: int, scope: frozenset[str]) -> Element:
    ctx.budget -= 1
    attrs, scope = _gen_attrs(rng, ctx, scope)
    name = gen_qname(rng, ELEMENT_NAMES, scope, 0.3)
    children: list[Node] = []
    if depth < MAX_DEPTH and rng.random() < 0.85:
        for _ in range(rng.randint(0, MAX_CHILDREN)):
            if ctx.budget > 0 and rng.random() < 0.45:
                children.append(gen_element(rng, ctx, depth + 1, scope))
            else:
                children.append(gen_leaf(rng, ctx))
    return Element(name, tuple(attrs), tuple(children), empty=not children and rng.random() < 0.5)


def gen_entities(rng: random.Random) -> list[EntityDef]:
    entities: list[EntityDef] = []
    for i in range(rng.randint(0, 4)):
        name = rng.choice(("e", "ent", "copy", "x", "é", "long")) + str(i)
        if rng.random() < 0.2:
            value = rng.choice(("<b>bold</b>", "<i x='1'/>", "t<!-- c -->t", "<a>&amp;</a>"))
            entities.append(EntityDef(name, value, 0, True))
            continue
        parts = [gen_text(rng).replace('"', "").replace("%", "")]
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
                parts.append(gen_text(rng).replace('"', "").replace("%", ""))
        entities.append(EntityDef(name, "".join(parts), depth, markup))
    return entities


def content_model(rng: random.Random, names: list[str]) -> str:
    picks = rng.sample(names, min(len(names), rng.randint(1, 3))) if names else ["a"]
    roll = rng.random()
    if roll < 0.2:
        return rng.choice(("EMPTY", "ANY"))
    if roll < 0.5:
        return "(#PCDATA" + "".join("|" + n for n in picks) + ")*" if rng.random() < 0.7 else "(#PCDATA)"
    sep = rng.choice((",", "|"))
    return "(" + sep.join(n + rng.choice(("", "?", "*", "+")) for n in picks) + ")" + rng.choice(("", "?", "*", "+"))


def attlist_body(rng: random.Random) -> str:
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


def collect_element_names(node: Element, out: list[str], limit: int = 64) -> list[str]:
    if len(out) < limit and node.name not in out:
        out.append(node.name)
    for child in node.children:
        if isinstance(child, Element):
            collect_element_names(child, out, limit)
    return out


def gen_doctype(rng: random.Random, root: Element, entities: list[EntityDef]) -> Doctype:
    items: list = [Text("\n")]
    names = collect_element_names(root, [])
    decls: list = [Decl("ENTITY", e.name, '"' + e.value + '"') for e in entities]
    for _ in range(rng.randint(0, 3)):
        decls.append(Decl("ELEMENT", rng.choice(names), content_model(rng, names)))
    for _ in range(rng.randint(0, 2)):
        decls.append(Decl("ATTLIST", rng.choice(names), attlist_body(rng)))
    if rng.random() < 0.2:
        decls.append(Comment(rng.choice(COMMENTS)))
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
    entities = gen_entities(rng) if with_dtd else []
    ctx = GenContext(rng, entities, MAX_ELEMENTS)
    root = gen_element(rng, ctx, 0, frozenset())
    decl = None
    if rng.random() < 0.6:
        decl = XmlDecl("1.0", rng.choice(ENCODINGS), rng.choice((None, None, "yes", "no")))
    prolog: list[Misc] = []
    if decl is not None:
        prolog.append(Text("\n"))
    if rng.random() < 0.15:
        prolog += [Comment(rng.choice(COMMENTS)), Text("\n")]
    if with_dtd:
        prolog += [gen_doctype(rng, root, entities), Text("\n")]
    if rng.random() < 0.1:
        prolog += [PI(rng.choice(PI_TARGETS), rng.choice(PI_DATA)), Text("\n")]
    epilog: tuple = ()
    if rng.random() < 0.2:
        epilog = (Text("\n"), rng.choice((Comment("end"), PI("pi", "x"), Text("\n"))))
    return XmlDocument(root, decl, tuple(prolog), epilog)
