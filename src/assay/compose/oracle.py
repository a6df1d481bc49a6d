"""The composition oracle: F (fail-open), R (over-denial) and the metamorphic family.

For a case decoded from fuzz bytes (see :mod:`assay.compose.tree`) the classifier
judges the rendered whole once; the leaves were judged at start-up.

* **F**, every binary operator: if the whole is allowed, every executed leaf is
  allowed (and, with ordered levels, none is at a higher level than the whole).
* **R**, sequencing families only, trees of at most ``bound`` leaves: if every leaf
  is allowed, so is the whole (and not at a higher level than its highest part).
* **wrapper**: a wrapper of a denied command is denied.
* **redirect**: a write to a protected path appended to a command is denied.
* **embed**: a denied command in a substitution inside an allowed command is denied.

A violation raises :class:`~assay.core.observe.OracleFailure` with tag ``fail-open``,
``over-denial`` or, for the redirect family, ``protected-write`` (an allowed command
writing a protected path is a different bug class from a denied part laundered
through an operator); its name is the shape (operator or family member) of the
smallest part of the case that still violates, its kind the culprit's command word
(or the path), so the signature ``fail-open:<shape>/<word>`` names one bug however
many pairs show it.  The artifact's data also carries ``group``: the operator family
and the denied leaf (or path), which the CLI uses to fold spellings of one bug.

Known limitation: danger that *emerges* from allowed parts (``echo evil | sh``)
is out of scope; R excludes pipes and substitutions because composing allowed
parts there can correctly give a denied whole.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from assay.compose.classifier import Classifier, Judgement
from assay.compose.operators import OperatorTable, operator_family
from assay.compose.pool import LeafPool
from assay.compose.tree import (
    MAX_LEAVES,
    Case,
    Embedded,
    Leaf,
    Node,
    Redir,
    Tree,
    Wrap,
    decode,
    encode,
    executed_leaves,
    families,
    render,
    render_tree,
    shape,
    subtrees_postorder,
    to_json,
    tree_leaves,
    tree_ops,
)
from assay.core.errors import ConfigError
from assay.core.observe import OracleFailure, feature

#: Default largest tree (in leaves) that the over-denial check R judges.
DEFAULT_BOUND = 4
#: Metamorphic families drawn by default.
DEFAULT_FAMILIES: tuple[str, ...] = ("wrapper", "redirect", "embed")
#: Tag of redirect-family findings (an allowed command writing a protected path).
PROTECTED_WRITE = "protected-write"


@dataclass(frozen=True)
class ComposeOptions:
    """How the oracle draws and judges cases.

    ``r_families`` is the set of binary families R applies to (``None``: the
    table's sequencing families; empty: R off).  A classifier that refuses, say,
    background jobs on purpose should leave ``background`` out.
    """

    bound: int = DEFAULT_BOUND
    r_families: frozenset[str] | None = None
    families: tuple[str, ...] = DEFAULT_FAMILIES
    max_leaves: int = MAX_LEAVES
    check_levels: bool = True


def path_slug(path: str) -> str:
    """A protected path as a signature token (``~/.bashrc`` -> ``tilde_.bashrc``)."""
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", path.replace("~", "tilde")).strip("_") or "_"


class Composition:
    """One classifier, its judged leaf pool and an operator table: the oracle itself."""

    def __init__(self, classifier: Classifier, pool: LeafPool, table: OperatorTable, options: ComposeOptions) -> None:
        if options.bound < 1:
            raise ConfigError(f"bound must be at least 1, not {options.bound}")
        if options.max_leaves < 1:
            raise ConfigError(f"max_leaves must be at least 1, not {options.max_leaves}")
        unknown = sorted(set(options.families) - set(DEFAULT_FAMILIES))
        if unknown:
            raise ConfigError(
                f"unknown metamorphic families {', '.join(unknown)}; known: {', '.join(DEFAULT_FAMILIES)}"
            )
        r = table.sequencing if options.r_families is None else frozenset(options.r_families)
        bad = sorted(r - set(table.families))
        if bad:
            raise ConfigError(
                f"R operator families {', '.join(bad)} are not in table {table.name!r}; known: {', '.join(table.families)}"
            )
        self.classifier = classifier
        self.pool = pool
        self.table = table
        self.options = options
        self.r_families = r
        self._r_ops = frozenset(i for i, op in enumerate(table.binary) if op.family in r)
        self.enabled = tuple(options.families)
        #: shape name (as in signatures) -> "<case family>:<operator family>", for grouping
        self.groups: dict[str, str] = {op.name: f"binary:{op.family}" for op in table.binary}
        for prefix, family, ops in (
            ("wrap-", "wrapper", table.wrappers),
            ("redirect-", "redirect", table.redirects),
            ("embed-", "embed", table.embeds),
        ):
            self.groups.update({prefix + op.name: f"{family}:{operator_family(op)}" for op in ops})

    # -- decoding ---------------------------------------------------------------------------
    def case(self, data: bytes) -> Case:
        return decode(data, len(self.pool), self.table, self.enabled, self.options.max_leaves)

    def encode(self, case: Case) -> bytes:
        return encode(case, len(self.pool), self.table, self.enabled, self.options.max_leaves)

    def render(self, case: Case) -> str:
        return render(case, self.pool.view, self.table)

    def explain(self, data: bytes) -> dict[str, Any]:
        """What fuzz input ``data`` stands for: the case and its rendered command."""
        case = self.case(data)
        return {
            "command": self.render(case),
            "case": to_json(case, self.pool.view, self.table),
            "shape": shape(case, self.table)[1],
        }

    # -- the check ------------------------------------------------------------------------------
    def check(self, data: bytes) -> None:
        """The target body: decode, render, judge, and raise on a violated relation."""
        case = self.case(data)
        _, member = shape(case, self.table)
        whole = self.render(case)
        verdict = self.classifier.judge(whole)
        feature("compose.shape", f"{member}:{'allow' if verdict.allowed else 'deny'}")
        if isinstance(case, Leaf):
            return
        if isinstance(case, Node):
            self._check_tree(case, case, whole, verdict)
        elif isinstance(case, Wrap):
            self._check_wrap(case, whole, verdict)
        elif isinstance(case, Redir):
            self._check_redirect(case, whole, verdict)
        else:
            self._check_embed(case, whole, verdict)

    def _leaf(self, i: int) -> Judgement:
        return self.pool.leaves[i].judgement

    def _higher(self, part: Judgement, whole: Judgement) -> bool:
        """True if ``part`` is at a strictly higher level than ``whole`` (both allowed, ranked)."""
        if not self.options.check_levels or part.rank is None or whole.rank is None:
            return False
        try:
            return bool(part.rank > whole.rank)
        except TypeError:
            return False

    def _culprit(self, leaves: Sequence[int], whole: Judgement) -> tuple[str, int] | None:
        """``("deny", i)`` for the first denied leaf, ``("level", i)`` for one above the whole."""
        for i in leaves:
            if not self._leaf(i).allowed:
                return "deny", i
        for i in leaves:
            if self._higher(self._leaf(i), whole):
                return "level", i
        return None

    def _minimal(
        self, tree: Node, verdict: Judgement, violates: Callable[[Node, Judgement], bool]
    ) -> tuple[Node, str, Judgement]:
        """The first subtree (children before parents) that still violates; the root by default."""
        for sub in subtrees_postorder(tree):
            if sub is tree:
                return sub, render_tree(sub, self.pool.view, self.table), verdict
            text = render_tree(sub, self.pool.view, self.table)
            j = self.classifier.judge(text)
            if violates(sub, j):
                return sub, text, j
        return tree, render_tree(tree, self.pool.view, self.table), verdict

    def _check_tree(self, case: Case, tree: Node, whole: str, verdict: Judgement) -> None:
        leaves = tree_leaves(tree)
        if verdict.allowed:
            culprit = self._culprit(leaves, verdict)
            if culprit is not None:
                kind = culprit[0]

                def still(sub: Node, j: Judgement) -> bool:
                    c = self._culprit(tree_leaves(sub), j) if j.allowed else None
                    return c is not None and c[0] == kind

                sub, text, j = self._minimal(tree, verdict, still)
                _, leaf = self._culprit(tree_leaves(sub), j)  # type: ignore[misc]
                op = self.table.binary[sub.op].name
                self._fail_open(case, whole, verdict, op, leaf, kind, text, j)
        if not self._r_applies(tree, leaves):
            return
        if not all(self._leaf(i).allowed for i in leaves):
            return
        if not verdict.allowed:
            sub, text, j = self._minimal(tree, verdict, lambda s, j: not j.allowed)
            self._over_denial(case, whole, verdict, self.table.binary[sub.op].name, "deny", text, j, tree_leaves(sub))
        top = self._top(leaves)
        if top is not None and self._higher(verdict, self._leaf(top)):

            def above(s: Node, j: Judgement) -> bool:
                t = self._top(tree_leaves(s))
                return j.allowed and t is not None and self._higher(j, self._leaf(t))

            sub, text, j = self._minimal(tree, verdict, above)
            self._over_denial(case, whole, verdict, self.table.binary[sub.op].name, "level", text, j, tree_leaves(sub))

    def _top(self, leaves: Iterable[int]) -> int | None:
        """The leaf with the highest rank (``None`` if any is unranked)."""
        best = None
        for i in leaves:
            if self._leaf(i).rank is None:
                return None
            if best is None or self._higher(self._leaf(i), self._leaf(best)):
                best = i
        return best

    def _r_applies(self, tree: Tree, leaves: list[int]) -> bool:
        return len(leaves) <= self.options.bound and all(op in self._r_ops for op in tree_ops(tree))

    def _check_wrap(self, case: Wrap, whole: str, verdict: Judgement) -> None:
        if not verdict.allowed:
            return
        culprit = self._culprit(tree_leaves(case.inner), verdict)
        if culprit is None:
            return
        if isinstance(case.inner, Node):
            inner_text = render_tree(case.inner, self.pool.view, self.table)
            inner_verdict = self.classifier.judge(inner_text)
            if inner_verdict.allowed and self._culprit(tree_leaves(case.inner), inner_verdict):
                self._check_tree(case, case.inner, whole, inner_verdict)  # the inner tree alone launders
        name = "wrap-" + self.table.wrappers[case.member].name
        self._fail_open(case, whole, verdict, name, culprit[1], culprit[0], whole, verdict)

    def _check_redirect(self, case: Redir, whole: str, verdict: Judgement) -> None:
        if not verdict.allowed:
            return
        path = self.table.protected_paths[case.path]
        name = "redirect-" + self.table.redirects[case.member].name
        host = self.pool.leaves[case.host]
        raise OracleFailure(
            name,
            f"{whole!r} is allowed although it writes to protected path {path!r}",
            kind=path_slug(path),
            oracle=PROTECTED_WRITE,
            data=self._data(
                case,
                whole,
                verdict,
                "redirect",
                name,
                whole,
                verdict,
                culprit={"path": path, "host": host.text, "host_verdict": host.judgement.to_json()},
            ),
        )

    def _check_embed(self, case: Embedded, whole: str, verdict: Judgement) -> None:
        if not verdict.allowed or not self._leaf(case.host).allowed:
            return
        culprit = self._culprit([case.inner], verdict)
        if culprit is None:
            return
        name = "embed-" + self.table.embeds[case.member].name
        self._fail_open(case, whole, verdict, name, case.inner, culprit[0], whole, verdict)

    # -- findings -------------------------------------------------------------------------------
    def _fail_open(
        self,
        case: Case,
        whole: str,
        verdict: Judgement,
        shape_name: str,
        leaf: int,
        kind: str,
        witness: str,
        witness_verdict: Judgement,
    ) -> None:
        part = self.pool.leaves[leaf]
        name = shape_name if kind == "deny" else f"level-{shape_name}"
        if kind == "deny":
            detail = f"{witness!r} is allowed although its part {part.text!r} is denied"
        else:
            detail = (
                f"{witness!r} is {witness_verdict.describe()} although its part {part.text!r} "
                f"is at a higher level, {part.judgement.describe()}"
            )
        raise OracleFailure(
            name,
            detail,
            kind=part.word,
            oracle="fail-open",
            data=self._data(
                case,
                whole,
                verdict,
                "F",
                shape_name,
                witness,
                witness_verdict,
                culprit={"index": leaf, "text": part.text, "verdict": part.judgement.to_json()},
                level=kind == "level",
            ),
        )

    def _over_denial(
        self,
        case: Case,
        whole: str,
        verdict: Judgement,
        shape_name: str,
        kind: str,
        witness: str,
        witness_verdict: Judgement,
        parts: list[int],
    ) -> None:
        name = shape_name if kind == "deny" else f"level-{shape_name}"
        if kind == "deny":
            detail = f"{witness!r} is denied although every part is allowed"
        else:
            detail = f"{witness!r} is {witness_verdict.describe()}, above every one of its allowed parts"
        raise OracleFailure(
            name,
            detail,
            kind="",
            oracle="over-denial",
            data=self._data(
                case,
                whole,
                verdict,
                "R",
                shape_name,
                witness,
                witness_verdict,
                culprit={"parts": [self.pool.leaves[i].text for i in parts]},
                level=kind == "level",
            ),
        )

    def _data(
        self,
        case: Case,
        whole: str,
        verdict: Judgement,
        prop: str,
        shape_name: str,
        witness: str,
        witness_verdict: Judgement,
        culprit: dict[str, Any],
        level: bool = False,
    ) -> dict[str, Any]:
        family = ("level-" if level else "") + self.groups.get(shape_name, shape_name)
        leaves = []
        for i in dict.fromkeys(executed_leaves(case)):
            leaf = self.pool.leaves[i]
            leaves.append({"index": i, "text": leaf.text, "verdict": leaf.judgement.to_json(), "label": leaf.label})
        return {
            "property": prop,
            "family": shape(case, self.table)[0],
            "shape": shape_name,
            "group": {"family": family, "leaf": culprit.get("text", culprit.get("path", ""))},
            "command": whole,
            "verdict": verdict.to_json(),
            "witness": witness,
            "witness_verdict": witness_verdict.to_json(),
            "culprit": culprit,
            "case": to_json(case, self.pool.view, self.table),
            "leaves": leaves,
        }

    # -- seeds ------------------------------------------------------------------------------------
    def seeds(self) -> list[bytes]:
        """One small input per operator and family member, pairing the first allowed and denied leaves."""
        allowed, denied = self.pool.allowed_indices, self.pool.denied_indices
        a = allowed[0] if allowed else None
        a2 = allowed[1] if len(allowed) > 1 else a
        d = denied[0] if denied else None
        cases: list[Case] = []
        fams = families(self.table, self.enabled)
        for op in range(len(self.table.binary)):
            if a is not None and d is not None and self.options.max_leaves >= 2:
                cases.append(Node(Leaf(a), op, Leaf(d)))
            if a is not None and op in self._r_ops and self.options.max_leaves >= 2:
                cases.append(Node(Leaf(a), op, Leaf(a2)))  # type: ignore[arg-type]
        if "wrapper" in fams and d is not None:
            cases += [Wrap(m, Leaf(d)) for m in range(len(self.table.wrappers))]
        if "redirect" in fams and a is not None:
            cases += [Redir(m, 0, a) for m in range(len(self.table.redirects))]
        if "embed" in fams and a is not None and d is not None:
            cases += [Embedded(m, a, 0, d) for m in range(len(self.table.embeds))]
        return list(dict.fromkeys(self.encode(c) for c in cases))
