"""A structure-aware strategy for composition targets: mutate and shrink the tree itself.

The fuzz input stays the byte encoding of :mod:`assay.compose.tree` (so byte
mutations, the corpus and artifacts all work as for any target); this strategy
adds tree-level moves on top: change a leaf or an operator, graft or replace a
subtree, grow the tree, switch family member; and, for the shrinker, the
candidates "replace a node by one of its children" and "use a lower leaf index"
(every lower one, lowest first), so a minimized artifact holds the fewest, and
(the pool being ordered shortest first) the shortest, leaves that still violate.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

from assay.compose.tree import Case, Embedded, Leaf, Node, Redir, Tree, Wrap, count_leaves, families

#: Version of the moves below; bump when the same RNG draws produce other cases.
VERSION = 2
#: Most shrink candidates offered per round.
MAX_CANDIDATES = 96
#: Leaves of a freshly generated tree are drawn from this range (capped by max_leaves).
FRESH_LEAVES = (2, 4)


def _nodes(tree: Tree, path: tuple[int, ...] = ()) -> Iterator[tuple[tuple[int, ...], Tree]]:
    """Every subtree with its path (0 = left, 1 = right), root first."""
    yield path, tree
    if isinstance(tree, Node):
        yield from _nodes(tree.left, path + (0,))
        yield from _nodes(tree.right, path + (1,))


def _replace(tree: Tree, path: tuple[int, ...], new: Tree) -> Tree:
    if not path:
        return new
    assert isinstance(tree, Node)
    if path[0] == 0:
        return Node(_replace(tree.left, path[1:], new), tree.op, tree.right)
    return Node(tree.left, tree.op, _replace(tree.right, path[1:], new))


class ComposeStrategy:
    """Generation, mutation, crossover and shrinking of composition cases (see module docstring)."""

    version = VERSION

    def __init__(self, name: str, composition: Any) -> None:
        self.name = name
        self.c = composition

    # -- the protocol --------------------------------------------------------------------------
    def parse(self, data: bytes) -> Case:
        return self.c.case(data)

    def render(self, value: Case) -> bytes:
        return self.c.encode(value)

    def tokens(self, value: Case) -> list[bytes]:
        return []

    def generate(self, rng: random.Random) -> Case:
        fams = families(self.c.table, self.c.enabled)
        kind = rng.choice(["tree", "tree"] + fams)
        if kind == "tree":
            return self._tree(rng, rng.randint(*FRESH_LEAVES))
        return self._member(kind, rng)

    def mutate(self, value: Case, rng: random.Random) -> Case:
        if isinstance(value, (Leaf, Node)):
            return self._mutate_tree(value, rng)
        if rng.random() < 0.5:
            return self._member(self._family(value), rng, like=value)
        if isinstance(value, Wrap) and rng.random() < 0.5:
            return Wrap(
                value.member, self._mutate_tree(value.inner, rng) if self._compound(value.member) else self._leaf(rng)
            )
        return self._member(self._family(value), rng)

    def crossover(self, a: Case, b: Case, rng: random.Random) -> Case:
        if isinstance(a, (Leaf, Node)) and isinstance(b, (Leaf, Node)):
            path, _ = rng.choice(list(_nodes(a)))
            _, graft = rng.choice(list(_nodes(b)))
            out = _replace(a, path, graft)
            return out if count_leaves(out) <= self.c.options.max_leaves else a
        return self.mutate(rng.choice((a, b)), rng)

    def shrink_candidates(self, value: Case) -> Iterator[Case]:
        out: list[Case] = []
        if isinstance(value, (Leaf, Node)):
            out.extend(self._shrink_tree(value))
        elif isinstance(value, Wrap):
            out.extend(Wrap(value.member, t) for t in self._shrink_tree(value.inner))
        elif isinstance(value, Redir):
            out.extend(Redir(value.member, p, value.host) for p in range(value.path))
            out.extend(Redir(value.member, value.path, h) for h in range(value.host))
        else:
            if value.position:
                out.append(Embedded(value.member, value.host, 0, value.inner))
            out.extend(Embedded(value.member, h, value.position, value.inner) for h in range(value.host))
            out.extend(Embedded(value.member, value.host, value.position, i) for i in range(value.inner))
        return iter(out[:MAX_CANDIDATES])

    # -- helpers ---------------------------------------------------------------------------------
    def _leaf(self, rng: random.Random) -> Leaf:
        return Leaf(rng.randrange(len(self.c.pool)))

    def _op(self, rng: random.Random) -> int:
        return rng.randrange(len(self.c.table.binary))

    def _tree(self, rng: random.Random, leaves: int) -> Tree:
        leaves = max(1, min(leaves, self.c.options.max_leaves))
        if leaves == 1:
            return self._leaf(rng)
        left = rng.randint(1, leaves - 1)
        return Node(self._tree(rng, left), self._op(rng), self._tree(rng, leaves - left))

    def _compound(self, member: int) -> bool:
        return self.c.table.wrappers[member].compound

    def _family(self, value: Case) -> str:
        return {Wrap: "wrapper", Redir: "redirect", Embedded: "embed"}[type(value)]

    def _member(self, family: str, rng: random.Random, like: Case | None = None) -> Case:
        """A random member of ``family`` (keeping the operands of ``like`` where they fit)."""
        table, n = self.c.table, len(self.c.pool)
        if family == "wrapper":
            member = rng.randrange(len(table.wrappers))
            inner = like.inner if isinstance(like, Wrap) else self._leaf(rng)
            if not self._compound(member) and not isinstance(inner, Leaf):
                inner = Leaf(rng.choice(_leaf_indices(inner)))
            return Wrap(member, inner)
        if family == "redirect":
            host = like.host if isinstance(like, Redir) else rng.randrange(n)
            return Redir(rng.randrange(len(table.redirects)), rng.randrange(len(table.protected_paths)), host)
        if isinstance(like, Embedded):
            return Embedded(rng.randrange(len(table.embeds)), like.host, like.position, like.inner)
        return Embedded(rng.randrange(len(table.embeds)), rng.randrange(n), rng.randrange(256), rng.randrange(n))

    def _mutate_tree(self, tree: Tree, rng: random.Random) -> Tree:
        nodes = list(_nodes(tree))
        leaves = [(p, t) for p, t in nodes if isinstance(t, Leaf)]
        inner = [(p, t) for p, t in nodes if isinstance(t, Node)]
        move = rng.choice(("leaf", "op", "replace", "grow", "cut") if inner else ("leaf", "replace", "grow"))
        if move == "leaf":
            path, _ = rng.choice(leaves)
            return _replace(tree, path, self._leaf(rng))
        if move == "op":
            path, node = rng.choice(inner)
            assert isinstance(node, Node)
            return _replace(tree, path, Node(node.left, self._op(rng), node.right))
        if move == "cut":
            path, node = rng.choice(inner)
            assert isinstance(node, Node)
            return _replace(tree, path, node.left if rng.random() < 0.5 else node.right)
        path, sub = rng.choice(nodes)
        if move == "replace":
            out = _replace(tree, path, self._tree(rng, rng.randint(1, 3)))
        else:  # grow: join the subtree with a fresh leaf, on either side
            leaf = self._leaf(rng)
            out = _replace(
                tree, path, Node(sub, self._op(rng), leaf) if rng.random() < 0.5 else Node(leaf, self._op(rng), sub)
            )
        return out if count_leaves(out) <= self.c.options.max_leaves else tree

    def _shrink_tree(self, tree: Tree) -> list[Tree]:
        out: list[Tree] = []
        for path, sub in _nodes(tree):
            if isinstance(sub, Node):
                out.append(_replace(tree, path, sub.left))
                out.append(_replace(tree, path, sub.right))
        # Every lower index, lowest first and round-robin over the leaves: the pool is
        # ordered shortest first, so the first accepted candidate is the shortest leaf
        # that keeps the failure (stepping one index at a time would stall at the first
        # neighbour of another command word).
        leaves = [(path, sub.index) for path, sub in _nodes(tree) if isinstance(sub, Leaf) and sub.index]
        for j in range(max((i for _, i in leaves), default=0)):
            out.extend(_replace(tree, path, Leaf(j)) for path, i in leaves if j < i)
        return out


def _leaf_indices(tree: Tree) -> list[int]:
    return [t.index for _, t in _nodes(tree) if isinstance(t, Leaf)]
