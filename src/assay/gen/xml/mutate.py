"""Tree surgery and the mutations built on it (well-formedness kept, or broken on purpose)."""

from __future__ import annotations

import random
from dataclasses import replace

from assay.gen.xml.generate import (
    ATTR_NAMES,
    CDATA_TEXTS,
    CHAR_REFS,
    COMMENTS,
    ELEMENT_NAMES,
    ENCODINGS,
    PI_DATA,
    PI_TARGETS,
    PREDEFINED_ENTITIES,
    PREFIXES,
    URIS,
    EntityDef,
    GenContext,
    attlist_body,
    collect_element_names,
    content_model,
    declared_prefixes,
    gen_attr_value,
    gen_doctype,
    gen_element,
    gen_entities,
    gen_leaf,
    gen_qname,
    gen_text,
    local_name,
    name_prefix,
)
from assay.gen.xml.model import (
    MAX_DEPTH,
    MAX_ENTITY_DEPTH,
    PI,
    Attr,
    CData,
    Comment,
    Decl,
    Doctype,
    Element,
    Node,
    Ref,
    Text,
    XmlDecl,
    XmlDocument,
)
from assay.gen.xml.parse import REF_RE

Path = tuple[int, ...]


def node_paths(root: Element, limit: int = 512) -> list[tuple[Path, Node]]:
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
    return [p for p, n in node_paths(root) if isinstance(n, Element)]


def _get(root: Element, path: Path) -> Node:
    node: Node = root
    for i in path:
        assert isinstance(node, Element)
        node = node.children[i]
    return node


def put_node(root: Element, path: Path, new: Node) -> Element:
    if not path:
        assert isinstance(new, Element)
        return new
    children = list(root.children)
    head = children[path[0]]
    children[path[0]] = put_node(head, path[1:], new) if len(path) > 1 else new  # type: ignore[arg-type]
    return replace(root, children=tuple(children))


def splice(root: Element, path: Path, index: int, nodes: list[Node], remove: int = 0) -> Element:
    """The element at ``path`` with ``remove`` children at ``index`` replaced by ``nodes``."""
    parent = _get(root, path)
    assert isinstance(parent, Element)
    children = list(parent.children)
    children[index : index + remove] = nodes
    return put_node(root, path, replace(parent, children=tuple(children), empty=parent.empty and not children))


def scope_at(root: Element, path: Path) -> frozenset[str]:
    """Prefixes declared on the element at ``path`` and its ancestors."""
    scope: set[str] = set()
    node: Node = root
    scope |= declared_prefixes(root.attrs)
    for i in path:
        assert isinstance(node, Element)
        node = node.children[i]
        if isinstance(node, Element):
            scope |= declared_prefixes(node.attrs)
    return frozenset(scope)


def doctype_of(doc: XmlDocument) -> Doctype | None:
    for node in doc.prolog:
        if isinstance(node, Doctype):
            return node
    return None


def entities_of(doc: XmlDocument) -> list[EntityDef]:
    doctype = doctype_of(doc)
    out: list[EntityDef] = []
    for item in (doctype.subset or ()) if doctype else ():
        if isinstance(item, Decl) and item.kind == "ENTITY" and not item.name.startswith("%"):
            out.append(EntityDef(item.name, item.body[1:-1], MAX_ENTITY_DEPTH, "<" in item.body))
    # An entity that refers to one with markup carries markup too (matters in attribute values).
    changed = True
    while changed:
        changed = False
        marked = {e.name for e in out if e.markup}
        for e in out:
            if not e.markup and any(m.group(1) in marked for m in REF_RE.finditer(e.value)):
                e.markup = changed = True
    return out


def sanitize(node: Node, scope: frozenset[str], entities: set[str]) -> Node:
    """``node`` made safe to place where ``scope`` prefixes and ``entities`` are declared."""
    if isinstance(node, Ref):
        if node.name.startswith("#") or node.name in PREDEFINED_ENTITIES or node.name in entities:
            return node
        return Text(node.name)
    if not isinstance(node, Element):
        return node
    scope = scope | declared_prefixes(node.attrs)
    name = (
        node.name
        if name_prefix(node.name) in (None, "xml") or name_prefix(node.name) in scope
        else local_name(node.name)
    )
    attrs: list[Attr] = []
    seen: set[str] = set()
    for a in node.attrs:
        aname = a.name
        p = name_prefix(aname)
        if p not in (None, "xmlns", "xml") and p not in scope:
            aname = local_name(aname)
        if aname in seen:
            continue
        seen.add(aname)
        attrs.append(
            replace(
                a,
                name=aname,
                value=REF_RE.sub(
                    lambda m: (
                        m.group(0)
                        if m.group(1).startswith("#") or m.group(1) in PREDEFINED_ENTITIES or m.group(1) in entities
                        else m.group(1)
                    ),
                    a.value,
                ),
            )
        )
    children = tuple(sanitize(c, scope, entities) for c in node.children)
    return Element(name, tuple(attrs), children, node.empty, node.end_name)


# ---------------------------------------------------------------- mutation


def random_element(doc: XmlDocument, rng: random.Random) -> tuple[Path, Element]:
    path = rng.choice(_element_paths(doc.root))
    node = _get(doc.root, path)
    assert isinstance(node, Element)
    return path, node


def with_root(doc: XmlDocument, root: Element) -> XmlDocument:
    return replace(doc, root=root)


def _mut_rename(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = random_element(doc, rng)
    scope = scope_at(doc.root, path)
    names = collect_element_names(doc.root, [])
    if rng.random() < 0.5:
        name = rng.choice(names)
        if name_prefix(name) is not None and name_prefix(name) not in scope:
            name = local_name(name)
    else:
        name = gen_qname(rng, ELEMENT_NAMES, scope, 0.3)
    return with_root(doc, put_node(doc.root, path, replace(el, name=name, end_name=None)))


def _mut_attr(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = random_element(doc, rng)
    scope = scope_at(doc.root, path)
    ctx = GenContext(rng, entities_of(doc), 0)
    attrs = list(el.attrs)
    roll = rng.random()
    plain = [i for i, a in enumerate(attrs) if not a.name.startswith("xmlns")]
    if roll < 0.35 or not plain:
        used = {local_name(a.name) for a in attrs if not a.name.startswith("xmlns")}
        name = gen_qname(rng, ATTR_NAMES, scope, 0.2)
        if local_name(name) in used:
            return doc
        quote = rng.choice('""\'')
        attrs.insert(rng.randint(0, len(attrs)), Attr(name, gen_attr_value(rng, ctx, quote), quote))
    elif roll < 0.55:
        del attrs[rng.choice(plain)]
    elif roll < 0.85:
        i = rng.choice(plain)
        attrs[i] = replace(attrs[i], value=gen_attr_value(rng, ctx, attrs[i].quote))
    else:
        i = rng.choice(plain)
        quote = "'" if attrs[i].quote == '"' else '"'
        attrs[i] = replace(
            attrs[i], value=attrs[i].value.replace(quote, "&" + ("quot" if quote == '"' else "apos") + ";"), quote=quote
        )
    return with_root(doc, put_node(doc.root, path, replace(el, attrs=tuple(attrs))))


def _mut_namespace(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = random_element(doc, rng)
    prefix = rng.choice(PREFIXES)
    attrs = [a for a in el.attrs if a.name != "xmlns:" + prefix]
    attrs.append(Attr("xmlns:" + prefix, rng.choice(URIS)))
    el = replace(el, attrs=tuple(attrs))
    if rng.random() < 0.6:
        el = replace(el, name=prefix + ":" + local_name(el.name), end_name=None)
    return with_root(doc, put_node(doc.root, path, el))


def _mut_insert(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = random_element(doc, rng)
    ctx = GenContext(rng, entities_of(doc), 4)
    if len(path) < MAX_DEPTH + 2 and rng.random() < 0.4:
        node: Node = gen_element(rng, ctx, MAX_DEPTH - 1, scope_at(doc.root, path))
    else:
        node = gen_leaf(rng, ctx)
    return with_root(doc, splice(doc.root, path, rng.randint(0, len(el.children)), [node]))


def _mut_delete(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = random_element(doc, rng)
    if not el.children:
        return with_root(doc, put_node(doc.root, path, replace(el, empty=not el.empty)))
    return with_root(doc, splice(doc.root, path, rng.randrange(len(el.children)), [], remove=1))


def _mut_duplicate(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = random_element(doc, rng)
    if not el.children:
        return _mut_insert(doc, rng)
    i = rng.randrange(len(el.children))
    return with_root(doc, splice(doc.root, path, i, [el.children[i]]))


def _mut_swap(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    path, el = random_element(doc, rng)
    if len(el.children) < 2:
        return _mut_insert(doc, rng)
    children = list(el.children)
    i, j = rng.sample(range(len(children)), 2)
    children[i], children[j] = children[j], children[i]
    return with_root(doc, put_node(doc.root, path, replace(el, children=tuple(children))))


def _mut_move(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    """Cut a subtree and paste it under another element, fixing prefixes and references."""
    nodes = [(p, n) for p, n in node_paths(doc.root) if p]
    if not nodes:
        return _mut_insert(doc, rng)
    src, node = rng.choice(nodes)
    root = splice(doc.root, src[:-1], src[-1], [], remove=1)
    dest = rng.choice(_element_paths(root))
    parent = _get(root, dest)
    assert isinstance(parent, Element)
    entities = {e.name for e in entities_of(doc)}
    moved = sanitize(node, scope_at(root, dest), entities)
    return with_root(doc, splice(root, dest, rng.randint(0, len(parent.children)), [moved]))


def _mut_wrap(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    nodes = [(p, n) for p, n in node_paths(doc.root) if p]
    if not nodes or rng.random() < 0.2:
        return replace(doc, root=Element(rng.choice(ELEMENT_NAMES), (), (doc.root,)))
    path, node = rng.choice(nodes)
    if isinstance(node, Element) and rng.random() < 0.5:
        # Unwrap: the element's children take its place (prefixes it declared must stay declared).
        scope = scope_at(doc.root, path[:-1])
        entities = {e.name for e in entities_of(doc)}
        kids = [sanitize(c, scope, entities) for c in node.children]
        return with_root(doc, splice(doc.root, path[:-1], path[-1], kids, remove=1))
    wrapper = Element(rng.choice(ELEMENT_NAMES), (), (node,))
    return with_root(doc, put_node(doc.root, path, wrapper))


def _mut_text(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    leaves = [(p, n) for p, n in node_paths(doc.root) if not isinstance(n, Element)]
    if not leaves:
        return _mut_insert(doc, rng)
    path, node = rng.choice(leaves)
    ctx = GenContext(rng, entities_of(doc), 0)
    if isinstance(node, Text):
        new: Node = Text(gen_text(rng)) if rng.random() < 0.5 else Text(node.raw + gen_text(rng))
    elif isinstance(node, Ref):
        new = Ref(rng.choice(CHAR_REFS + PREDEFINED_ENTITIES + tuple(ctx.text_entities())))
    elif isinstance(node, CData):
        new = CData(rng.choice(CDATA_TEXTS) + node.text[:16])
    elif isinstance(node, Comment):
        new = Comment(rng.choice(COMMENTS))
    else:
        new = PI(rng.choice(PI_TARGETS), rng.choice(PI_DATA))
    return with_root(doc, put_node(doc.root, path, new))


def _mut_prolog(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    roll = rng.random()
    if roll < 0.3:
        if doc.decl is None:
            return replace(doc, decl=XmlDecl("1.0", rng.choice(ENCODINGS), rng.choice((None, "yes", "no"))))
        if rng.random() < 0.3:
            return replace(doc, decl=None)
        return replace(
            doc, decl=replace(doc.decl, encoding=rng.choice(ENCODINGS), standalone=rng.choice((None, "yes", "no")))
        )
    if roll < 0.5:
        misc = rng.choice((Comment(rng.choice(COMMENTS)), PI(rng.choice(PI_TARGETS), rng.choice(PI_DATA)), Text("\n")))
        if rng.random() < 0.5:
            return replace(doc, epilog=doc.epilog + (misc,))
        prolog = list(doc.prolog)
        prolog.insert(rng.randint(0, len(prolog)), misc)
        return replace(doc, prolog=tuple(prolog))
    return _mut_dtd(doc, rng)


def _mut_dtd(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    doctype = doctype_of(doc)
    if doctype is None:
        entities = gen_entities(rng) or [EntityDef("e0", "text", 0, False)]
        new_doctype = gen_doctype(rng, doc.root, entities)
        # Comments and PIs may precede the DOCTYPE, so it can always go last in the prolog.
        doc = replace(doc, prolog=doc.prolog + (new_doctype, Text("\n")))
        if rng.random() < 0.7:
            path, el = random_element(doc, rng)
            doc = with_root(
                doc, splice(doc.root, path, rng.randint(0, len(el.children)), [Ref(rng.choice(entities).name)])
            )
        return doc
    subset = list(doctype.subset or ())
    roll = rng.random()
    names = collect_element_names(doc.root, [])
    if roll < 0.4:
        existing = entities_of(doc)
        name = "m" + str(len(subset))
        value = gen_text(rng).replace('"', "").replace("%", "")
        text_names = [e.name for e in existing if not e.markup]
        if text_names and rng.random() < 0.5:
            # Reference one existing entity: depth grows by at most one level per mutation,
            # so cap by counting the chain explicitly.
            target = rng.choice(text_names)
            if _entity_depth(existing, target) < MAX_ENTITY_DEPTH:
                value += "&" + target + ";"
        subset += [Decl("ENTITY", name, '"' + value + '"'), Text("\n")]
        doc = replace(
            doc, prolog=tuple(replace(doctype, subset=tuple(subset)) if n is doctype else n for n in doc.prolog)
        )
        path, el = random_element(doc, rng)
        return with_root(doc, splice(doc.root, path, rng.randint(0, len(el.children)), [Ref(name)]))
    if roll < 0.6:
        subset += [Decl("ELEMENT", rng.choice(names), content_model(rng, names)), Text("\n")]
    elif roll < 0.8:
        subset += [Decl("ATTLIST", rng.choice(names), attlist_body(rng)), Text("\n")]
    else:
        removable = [i for i, d in enumerate(subset) if isinstance(d, Decl) and d.kind != "ENTITY"]
        if removable:
            del subset[rng.choice(removable)]
    return replace(doc, prolog=tuple(replace(doctype, subset=tuple(subset)) if n is doctype else n for n in doc.prolog))


def _entity_depth(entities: list[EntityDef], name: str, seen: frozenset[str] = frozenset()) -> int:
    by_name = {e.name: e for e in entities}
    entity = by_name.get(name)
    if entity is None or name in seen or len(seen) > MAX_ENTITY_DEPTH + 2:
        return MAX_ENTITY_DEPTH + 1 if name in seen else 0
    refs = [m.group(1) for m in REF_RE.finditer(entity.value) if not m.group(1).startswith("#")]
    return max((1 + _entity_depth(entities, r, seen | {name}) for r in refs), default=0)


VALID_OPS = (
    (_mut_rename, 2),
    (_mut_attr, 4),
    (_mut_namespace, 1),
    (_mut_insert, 4),
    (_mut_delete, 3),
    (_mut_duplicate, 2),
    (_mut_swap, 1),
    (_mut_move, 1),
    (_mut_wrap, 1),
    (_mut_text, 3),
    (_mut_prolog, 2),
)


def mut_invalid(doc: XmlDocument, rng: random.Random) -> XmlDocument:
    """``doc`` with one adjacent well-formedness error."""
    path, el = random_element(doc, rng)
    kind = rng.choice(
        (
            "end_tag",
            "dup_attr",
            "undeclared_entity",
            "unbound_prefix",
            "comment_dashes",
            "raw_lt",
            "raw_amp",
            "cdata_end",
            "bad_char_ref",
            "pi_xml",
            "second_root",
            "control_char",
            "recursive_entity",
            "attr_lt",
        )
    )
    at = rng.randint(0, len(el.children))
    if kind == "end_tag":
        return with_root(doc, put_node(doc.root, path, replace(el, empty=False, end_name=el.name + "x")))
    if kind == "dup_attr":
        attrs = el.attrs + (el.attrs[0],) if el.attrs else (Attr("id", "1"), Attr("id", "2"))
        return with_root(doc, put_node(doc.root, path, replace(el, attrs=attrs)))
    if kind == "unbound_prefix":
        return with_root(doc, put_node(doc.root, path, replace(el, name="zz:" + local_name(el.name), end_name=None)))
    if kind == "recursive_entity":
        doctype = Doctype(doc.root.name, " ", (Decl("ENTITY", "r1", '"&r2;"'), Decl("ENTITY", "r2", '"&r1;"')))
        prolog = tuple(n for n in doc.prolog if not isinstance(n, Doctype)) + (doctype,)
        return replace(doc, prolog=prolog, root=splice(doc.root, path, at, [Ref("r1")]))
    if kind == "second_root":
        return replace(doc, epilog=doc.epilog + (Element(rng.choice(ELEMENT_NAMES)),))
    if kind == "attr_lt":
        attr = Attr(rng.choice(ATTR_NAMES) + "2", rng.choice(("a<b", "a&b", "&undeclared;")))
        return with_root(doc, put_node(doc.root, path, replace(el, attrs=el.attrs + (attr,))))
    node: Node = {  # type: ignore[assignment]  # every value is a Node
        "undeclared_entity": Ref("undeclared"),
        "comment_dashes": Comment(rng.choice(("a--b", "ends-", "--"))),
        "raw_lt": Text(rng.choice(("a<b", "<", "a < b"))),
        "raw_amp": Text(rng.choice(("a&b", "&", "& ;", "&#;"))),
        "cdata_end": Text("]]>"),
        "bad_char_ref": Ref(rng.choice(("#0", "#x0", "#xD800", "#x110000", "#xFFFE", "#x", "#-1", "#x1"))),
        "pi_xml": PI(rng.choice(("xml", "XML", "xMl")), "version='1.0'"),
        "control_char": Text(rng.choice(("\x01", "a\x0bb", "\x1f", "\ufffe"))),
    }[kind]
    return with_root(doc, splice(doc.root, path, at, [node]))


def pick_weighted(ops, rng: random.Random):
    total = sum(w for _, w in ops)
    roll = rng.randrange(total)
    for op, weight in ops:
        if roll < weight:
            return op
        roll -= weight
    return ops[-1][0]


def tree_depth(node: Node) -> int:
    if not isinstance(node, Element) or not node.children:
        return 0
    return 1 + max(tree_depth(c) for c in node.children)
