"""Composition cases drawn from fuzz bytes, and how they render to one command.

A case is one of:

* a tree, ``Leaf(i) | Node(tree, op, tree)`` (the F and R checks);
* ``Wrap(member, inner)``: a wrapper around a leaf (or a tree, for string wrappers);
* ``Redir(member, path, host)``: a write to a protected path appended to a leaf;
* ``Embedded(member, host, position, inner)``: a leaf placed in a substitution
  inside another leaf.

Decoding reads the bytes front to back with :class:`~assay.gen.bytesource.ByteSource`
and is total.  It is shaped for the byte shrinker: the first byte picks the kind
of case (zero: a tree); a tree is postfix instructions of one byte each, so every
subtree is a contiguous run of bytes that deletion removes whole, and smaller
bytes select lower leaf indices.  Shrinking therefore ends at the fewest leaves,
with the lowest indices, that still violate.  :func:`encode` is the exact
inverse, used for seeds and tests.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from assay.compose.operators import OperatorTable, fill
from assay.gen.bytesource import ByteSource

#: Most leaves in one tree (keeps each case cheap to render and to judge).
MAX_LEAVES = 8
#: A first byte below this decodes to a tree; above, to a metamorphic family member.
TREE_SHARE = 160
#: A tree byte at or above this is an operator instruction; below, a leaf.
NODE_AT = 128


@dataclass(frozen=True)
class Leaf:
    index: int


@dataclass(frozen=True)
class Node:
    left: Tree
    op: int
    right: Tree


Tree = Leaf | Node


@dataclass(frozen=True)
class Wrap:
    member: int
    inner: Tree


@dataclass(frozen=True)
class Redir:
    member: int
    path: int
    host: int


@dataclass(frozen=True)
class Embedded:
    member: int
    host: int
    position: int
    inner: int


Case = Leaf | Node | Wrap | Redir | Embedded


@dataclass(frozen=True)
class Pool:
    """What decoding and rendering need to know of the leaves: texts and word ends."""

    texts: tuple[str, ...]
    word_ends: tuple[tuple[int, ...], ...]

    def __len__(self) -> int:
        return len(self.texts)


def families(table: OperatorTable, enabled: Sequence[str] = ("wrapper", "redirect", "embed")) -> list[str]:
    """The metamorphic families this table (and this selection) can draw."""
    out = []
    if "wrapper" in enabled and table.wrappers:
        out.append("wrapper")
    if "redirect" in enabled and table.redirects and table.protected_paths:
        out.append("redirect")
    if "embed" in enabled and table.embeds:
        out.append("embed")
    return out


# -- decoding ---------------------------------------------------------------------------------
#
# A tree is read as postfix (reverse Polish) instructions, one byte each for pools
# and tables of up to 128 entries: a byte below NODE_AT pushes a leaf, a byte at or
# above it joins the top two trees of the stack with an operator.  The case is the
# tree on top of the stack once the bytes run out.  Every subtree is a contiguous
# run of bytes, so deleting bytes (what the shrinker does) drops subtrees whole:
# the shrunk input keeps just the smallest part that still violates.


def _index(src: ByteSource, n: int) -> int:
    return src.draw_int(0, n - 1)


def _payload(src: ByteSource, first: int, n: int) -> int:
    """The index an instruction byte (plus one more byte for tables over 128) selects."""
    low = first & (NODE_AT - 1)
    if n > NODE_AT:
        low = (low << 8) | src.draw_int(0, 255)
    return low % n


def draw_tree(src: ByteSource, pool_size: int, table: OperatorTable, budget: int = MAX_LEAVES) -> Tree:
    """The tree that the rest of ``src`` spells in postfix (at most ``budget`` leaves)."""
    stack: list[Tree] = []
    while not src.exhausted:
        byte = src.draw_int(0, 255)
        if byte < NODE_AT:
            stack.append(Leaf(_payload(src, byte, pool_size)))
            continue
        op = _payload(src, byte, len(table.binary))
        if len(stack) >= 2 and count_leaves(stack[-2]) + count_leaves(stack[-1]) <= budget:
            right = stack.pop()
            stack[-1] = Node(stack[-1], op, right)
    return stack[-1] if stack else Leaf(0)


def decode(
    data: bytes,
    pool_size: int,
    table: OperatorTable,
    enabled: Sequence[str] = ("wrapper", "redirect", "embed"),
    max_leaves: int = MAX_LEAVES,
) -> Case:
    """The case that fuzz input ``data`` describes (total: every input decodes)."""
    src = ByteSource(data)
    fams = families(table, enabled)
    head = src.draw_int(0, 255)
    if head < TREE_SHARE or not fams:
        return draw_tree(src, pool_size, table, max_leaves)
    fam = fams[(head - TREE_SHARE) * len(fams) // (256 - TREE_SHARE)]
    if fam == "wrapper":
        member = _index(src, len(table.wrappers))
        if table.wrappers[member].compound:
            return Wrap(member, draw_tree(src, pool_size, table, max_leaves))
        return Wrap(member, Leaf(_index(src, pool_size)))
    if fam == "redirect":
        member = _index(src, len(table.redirects))
        path = _index(src, len(table.protected_paths))
        return Redir(member, path, _index(src, pool_size))
    member = _index(src, len(table.embeds))
    host = _index(src, pool_size)
    position = src.draw_int(0, 255)
    return Embedded(member, host, position, _index(src, pool_size))


# -- encoding (the inverse of decode) ---------------------------------------------------------


def _int_bytes(value: int, n: int) -> bytes:
    span = n - 1
    if span <= 0:
        return b""
    return value.to_bytes((span.bit_length() + 7) // 8, "big")


def _instruction(kind: int, value: int, n: int) -> bytes:
    if n > NODE_AT:
        return bytes([kind | (value >> 8), value & 0xFF])
    return bytes([kind | value])


def _encode_tree(tree: Tree, pool_size: int, table: OperatorTable, budget: int) -> bytes:
    if count_leaves(tree) > budget:
        raise ValueError("tree has more leaves than the budget allows")

    def post(t: Tree) -> bytes:
        if isinstance(t, Leaf):
            return _instruction(0, t.index, pool_size)
        return post(t.left) + post(t.right) + _instruction(NODE_AT, t.op, len(table.binary))

    return post(tree)


def encode(
    case: Case,
    pool_size: int,
    table: OperatorTable,
    enabled: Sequence[str] = ("wrapper", "redirect", "embed"),
    max_leaves: int = MAX_LEAVES,
) -> bytes:
    """Fuzz bytes that :func:`decode` turns back into ``case``."""
    if isinstance(case, (Leaf, Node)):
        return b"\x00" + _encode_tree(case, pool_size, table, max_leaves)
    fams = families(table, enabled)
    width = (256 - TREE_SHARE) // len(fams)

    def head(fam: str) -> bytes:
        if fam not in fams:
            raise ValueError(f"family {fam!r} is not enabled for this table")
        return bytes([TREE_SHARE + fams.index(fam) * width])

    if isinstance(case, Wrap):
        out = head("wrapper") + _int_bytes(case.member, len(table.wrappers))
        if table.wrappers[case.member].compound:
            return out + _encode_tree(case.inner, pool_size, table, max_leaves)
        if not isinstance(case.inner, Leaf):
            raise ValueError("a non-compound wrapper wraps a single leaf")
        return out + _int_bytes(case.inner.index, pool_size)
    if isinstance(case, Redir):
        return (
            head("redirect")
            + _int_bytes(case.member, len(table.redirects))
            + _int_bytes(case.path, len(table.protected_paths))
            + _int_bytes(case.host, pool_size)
        )
    return (
        head("embed")
        + _int_bytes(case.member, len(table.embeds))
        + _int_bytes(case.host, pool_size)
        + bytes([case.position])
        + _int_bytes(case.inner, pool_size)
    )


# -- structure ----------------------------------------------------------------------------------


def count_leaves(tree: Tree) -> int:
    if isinstance(tree, Leaf):
        return 1
    return count_leaves(tree.left) + count_leaves(tree.right)


def tree_leaves(tree: Tree) -> list[int]:
    """Leaf indices left to right."""
    if isinstance(tree, Leaf):
        return [tree.index]
    return tree_leaves(tree.left) + tree_leaves(tree.right)


def tree_ops(tree: Tree) -> list[int]:
    if isinstance(tree, Leaf):
        return []
    return tree_ops(tree.left) + [tree.op] + tree_ops(tree.right)


def subtrees_postorder(tree: Tree) -> Iterator[Node]:
    """Inner nodes, children before parents (so the first match is a minimal one)."""
    if isinstance(tree, Node):
        yield from subtrees_postorder(tree.left)
        yield from subtrees_postorder(tree.right)
        yield tree


def executed_leaves(case: Case) -> list[int]:
    """Leaves that the rendered command executes (each exactly as written)."""
    if isinstance(case, (Leaf, Node)):
        return tree_leaves(case)
    if isinstance(case, Wrap):
        return tree_leaves(case.inner)
    if isinstance(case, Redir):
        return [case.host]
    return [case.host, case.inner]


# -- rendering ------------------------------------------------------------------------------------


def render_tree(tree: Tree, pool: Pool, table: OperatorTable) -> str:
    if isinstance(tree, Leaf):
        return pool.texts[tree.index]
    op = table.binary[tree.op]
    return fill(op.template, {"A": render_tree(tree.left, pool, table), "B": render_tree(tree.right, pool, table)})


def insertion_point(pool: Pool, host: int, position: int) -> int:
    """Where an argument embedding goes: after one of the host's words (chosen by ``position``)."""
    ends = pool.word_ends[host] or (len(pool.texts[host]),)
    return ends[position % len(ends)]


def render(case: Case, pool: Pool, table: OperatorTable) -> str:
    """The one command line that ``case`` stands for."""
    if isinstance(case, (Leaf, Node)):
        return render_tree(case, pool, table)
    if isinstance(case, Wrap):
        return fill(table.wrappers[case.member].template, {"C": render_tree(case.inner, pool, table)})
    if isinstance(case, Redir):
        op = table.redirects[case.member]
        return fill(op.template, {"C": pool.texts[case.host], "P": table.protected_paths[case.path]})
    emb = table.embeds[case.member]
    fragment = fill(emb.fragment, {"D": pool.texts[case.inner]})
    host = pool.texts[case.host]
    if emb.placement == "prefix":
        return f"{fragment} {host}"
    at = insertion_point(pool, case.host, case.position)
    return f"{host[:at]} {fragment}{host[at:]}"


def shape(case: Case, table: OperatorTable) -> tuple[str, str]:
    """``(family, member name)`` of a case: ``("binary", "and")``, ``("wrapper", "sudo")``, ..."""
    if isinstance(case, Leaf):
        return "leaf", "leaf"
    if isinstance(case, Node):
        return "binary", table.binary[case.op].name
    if isinstance(case, Wrap):
        return "wrapper", table.wrappers[case.member].name
    if isinstance(case, Redir):
        return "redirect", table.redirects[case.member].name
    return "embed", table.embeds[case.member].name


def to_json(case: Case, pool: Pool, table: OperatorTable) -> Any:
    """The case as plain data, leaves named by index and text."""

    def tree(t: Tree) -> Any:
        if isinstance(t, Leaf):
            return {"leaf": t.index, "text": pool.texts[t.index]}
        return {"op": table.binary[t.op].name, "left": tree(t.left), "right": tree(t.right)}

    if isinstance(case, (Leaf, Node)):
        return tree(case)
    if isinstance(case, Wrap):
        return {"wrapper": table.wrappers[case.member].name, "inner": tree(case.inner)}
    if isinstance(case, Redir):
        return {
            "redirect": table.redirects[case.member].name,
            "path": table.protected_paths[case.path],
            "host": tree(Leaf(case.host)),
        }
    return {
        "embed": table.embeds[case.member].name,
        "host": tree(Leaf(case.host)),
        "after_word": 0
        if table.embeds[case.member].placement == "prefix"
        else (case.position % max(1, len(pool.word_ends[case.host]))) + 1,
        "inner": tree(Leaf(case.inner)),
    }
