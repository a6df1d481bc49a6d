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

from assay.gen.strategy import register_strategy
from assay.gen.xml.generate import generate_document
from assay.gen.xml.model import (
    INVALID_RATE,
    MAX_ATTRS,
    MAX_BYTES,
    MAX_CHILDREN,
    MAX_DEPTH,
    MAX_ELEMENTS,
    MAX_ENTITY_DEPTH,
    MAX_ENTITY_REFS,
    MAX_PARSE_BYTES,
    MAX_PARSE_DEPTH,
    MAX_SHRINK,
    MAX_TOKENS,
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
    render_document,
)
from assay.gen.xml.parse import parse_document
from assay.gen.xml.strategy import XmlStrategy

__all__ = [
    "INVALID_RATE",
    "MAX_ATTRS",
    "MAX_BYTES",
    "MAX_CHILDREN",
    "MAX_DEPTH",
    "MAX_ELEMENTS",
    "MAX_ENTITY_DEPTH",
    "MAX_ENTITY_REFS",
    "MAX_PARSE_BYTES",
    "MAX_PARSE_DEPTH",
    "MAX_SHRINK",
    "MAX_TOKENS",
    "PI",
    "Attr",
    "CData",
    "Comment",
    "Decl",
    "Doctype",
    "Element",
    "Misc",
    "Node",
    "PERef",
    "Ref",
    "Text",
    "XmlDecl",
    "XmlDocument",
    "XmlStrategy",
    "generate_document",
    "parse_document",
    "render_document",
]

register_strategy(XmlStrategy())
