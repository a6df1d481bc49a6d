"""assay.compose: a fail-open oracle for allow/deny classifiers of commands.

A classifier that allows a compound command must allow every part that executes
(F, the fail-open direction); one that allows every part of a plain sequence must
allow the sequence (R, over-denial); wrapping, redirecting to a protected path or
substituting a denied command can never loosen a verdict (the metamorphic family).
The classifier is its own oracle: trees of clean leaves are drawn from fuzz bytes,
rendered with an operator table, and judged.  See :func:`composition_target` and
``assay compose --help``.

Layer: may import the promoter and everything below; never http, mutant or native.
"""

from assay.compose.classifier import (
    CallableClassifier,
    Classifier,
    ClassifierError,
    CommandClassifier,
    Judgement,
    adapt,
    load_object,
)
from assay.compose.leaves import (
    DEFAULT_STATE_HEADS,
    OVERRIDABLE,
    REASONS,
    LeafEntry,
    exclusions,
    filter_leaves,
    leaf_problem,
    read_leaves_file,
    shell_leaf_check,
)
from assay.compose.operators import (
    SHELL,
    BinaryOp,
    Embed,
    OperatorTable,
    Redirect,
    Wrapper,
    load_table,
)
from assay.compose.oracle import DEFAULT_BOUND, PROTECTED_WRITE, ComposeOptions, Composition
from assay.compose.pool import LeafPool, PoolSummary, build_pool
from assay.compose.target import composition_target
from assay.compose.tree import Embedded, Leaf, Node, Redir, Wrap, decode, encode, render

__all__ = [
    "DEFAULT_BOUND",
    "DEFAULT_STATE_HEADS",
    "OVERRIDABLE",
    "PROTECTED_WRITE",
    "REASONS",
    "SHELL",
    "BinaryOp",
    "CallableClassifier",
    "Classifier",
    "ClassifierError",
    "CommandClassifier",
    "ComposeOptions",
    "Composition",
    "Embed",
    "Embedded",
    "Judgement",
    "Leaf",
    "LeafEntry",
    "LeafPool",
    "Node",
    "OperatorTable",
    "PoolSummary",
    "Redir",
    "Redirect",
    "Wrap",
    "Wrapper",
    "adapt",
    "build_pool",
    "composition_target",
    "decode",
    "encode",
    "exclusions",
    "filter_leaves",
    "leaf_problem",
    "load_object",
    "load_table",
    "read_leaves_file",
    "render",
    "shell_leaf_check",
]
