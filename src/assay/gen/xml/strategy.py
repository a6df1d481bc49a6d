"""The ``xml@1`` strategy object: the Strategy protocol over the modules beside it."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace

from assay.gen.xml.generate import PREDEFINED_ENTITIES, generate_document
from assay.gen.xml.model import (
    INVALID_RATE,
    MAX_BYTES,
    MAX_DEPTH,
    MAX_SHRINK,
    MAX_TOKENS,
    PI,
    Decl,
    Doctype,
    Element,
    Ref,
    XmlDocument,
    render_document,
)
from assay.gen.xml.mutate import (
    VALID_OPS,
    doctype_of,
    entities_of,
    mut_invalid,
    node_paths,
    pick_weighted,
    put_node,
    random_element,
    sanitize,
    scope_at,
    splice,
    tree_depth,
    with_root,
)
from assay.gen.xml.parse import REF_RE, parse_document


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
            out = mut_invalid(value, rng)
        else:
            out = pick_weighted(VALID_OPS, rng)(value, rng)
        return out if self._fits(out) else value

    def crossover(self, a: XmlDocument, b: XmlDocument, rng: random.Random) -> XmlDocument:
        """``a`` with a subtree of ``b`` inserted or swapped in (prefixes and references fixed up)."""
        donors = [n for p, n in node_paths(b.root) if p] or [b.root]
        donor = rng.choice(donors)
        path, el = random_element(a, rng)
        entities = {e.name for e in entities_of(a)}
        moved = sanitize(donor, scope_at(a.root, path), entities)
        if el.children and rng.random() < 0.5:
            out = with_root(a, splice(a.root, path, rng.randrange(len(el.children)), [moved], remove=1))
        else:
            out = with_root(a, splice(a.root, path, rng.randint(0, len(el.children)), [moved]))
        if rng.random() < 0.2 and b.decl is not None:
            out = replace(out, decl=b.decl)
        return out if self._fits(out) else a

    def tokens(self, value: XmlDocument) -> list[bytes]:
        """Element and attribute names, attribute values, namespace URIs, entity names, PI targets."""
        seen: dict[bytes, None] = {}

        def add(token: str) -> None:
            if token and len(seen) < MAX_TOKENS:
                seen[token.encode("utf-8", "surrogatepass")] = None

        for _, node in node_paths(value.root):
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
        doctype = doctype_of(value)
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
            doctype = doctype_of(value)
            kept = tuple(n for n in value.prolog if isinstance(n, Doctype) and _uses_entities(value.root))
            candidates.append(replace(value, prolog=kept))
            if doctype is not None and doctype.subset:
                plain = tuple(d for d in doctype.subset if isinstance(d, Decl) and d.kind == "ENTITY")
                candidates.append(
                    replace(
                        value, prolog=tuple(replace(doctype, subset=plain) if n is doctype else n for n in value.prolog)
                    )
                )
        if value.epilog:
            candidates.append(replace(value, epilog=()))
        for path, node in node_paths(value.root, limit=128):
            if not isinstance(node, Element):
                continue
            for i in range(len(node.children)):
                candidates.append(with_root(value, splice(value.root, path, i, [], remove=1)))
            plain_attrs = tuple(a for a in node.attrs if a.name.startswith("xmlns"))
            if plain_attrs != node.attrs:
                candidates.append(with_root(value, put_node(value.root, path, replace(node, attrs=plain_attrs))))
            if len(candidates) >= MAX_SHRINK:
                break
        for path, node in node_paths(value.root, limit=64):
            if path and isinstance(node, Element) and len(candidates) < 2 * MAX_SHRINK:
                entities = {e.name for e in entities_of(value)}
                kids = [sanitize(c, scope_at(value.root, path[:-1]), entities) for c in node.children]
                candidates.append(with_root(value, splice(value.root, path[:-1], path[-1], kids, remove=1)))
        for candidate in candidates:
            yield candidate
            count += 1
            if count >= MAX_SHRINK:
                return

    @staticmethod
    def _fits(doc: XmlDocument) -> bool:
        return tree_depth(doc.root) <= MAX_DEPTH + 4 and len(render_document(doc)) <= MAX_BYTES


def _uses_entities(root: Element) -> bool:
    for _, node in node_paths(root):
        if isinstance(node, Ref) and not node.name.startswith("#") and node.name not in PREDEFINED_ENTITIES:
            return True
        if isinstance(node, Element) and any(
            m.group(1) not in PREDEFINED_ENTITIES and not m.group(1).startswith("#")
            for a in node.attrs
            for m in REF_RE.finditer(a.value)
        ):
            return True
    return False
