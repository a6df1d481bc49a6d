"""``composition_target``: the composition oracle as an ordinary assay target.

The returned function takes fuzz bytes and carries ``.assay_target`` (so
discovery, ``assay fuzz``, the corpus, artifacts, shrinking, promotion and the
report all apply) and ``.composition`` (the oracle, for decoding artifacts)::

    from assay.compose import composition_target
    shell_compose = composition_target(my_classifier, "fuzz/leaves.txt", name="shell_compose")
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from assay.compose.classifier import USER_MODULE_PREFIX, CallableClassifier, Classifier, CommandClassifier, adapt
from assay.compose.leaves import (
    DEFAULT_STATE_HEADS,
    LeafCheck,
    LeafEntry,
    as_entries,
    read_leaves_file,
    shell_leaf_check,
)
from assay.compose.operators import SHELL, OperatorTable
from assay.compose.oracle import DEFAULT_BOUND, DEFAULT_FAMILIES, ComposeOptions, Composition
from assay.compose.pool import build_pool
from assay.compose.strategy import VERSION, ComposeStrategy
from assay.compose.tree import MAX_LEAVES
from assay.core.target import REGISTRY
from assay.gen.strategy import register_strategy
from assay.harness.define import make_target

#: Largest fuzz input the composition target reads (decoding ignores the rest).
DEFAULT_MAX_LEN = 512
#: Per-input timeout when the classifier runs out of process (one run per new command).
COMMAND_TIMEOUT = 60.0


def composition_target(
    classifier: Any,
    leaves: Sequence[str | LeafEntry] | str | os.PathLike[str],
    *,
    name: str | None = None,
    allowed: Callable[[Any], bool] | None = None,
    rank: Callable[[Any], Any] | None = None,
    table: OperatorTable = SHELL,
    protected_paths: Iterable[str] | None = None,
    bound: int = DEFAULT_BOUND,
    r_families: Iterable[str] | None = None,
    families: Iterable[str] = DEFAULT_FAMILIES,
    state_heads: Iterable[str] = DEFAULT_STATE_HEADS,
    admit: Iterable[str] = (),
    leaf_check: LeafCheck | None = None,
    max_leaves: int = MAX_LEAVES,
    check_levels: bool = True,
    seeds: bool = True,
    structured: bool = True,
    sources: Sequence[str] | None = None,
    timeout: float | None = None,
    max_len: int = DEFAULT_MAX_LEN,
    register: bool = False,
    **target_options: Any,
) -> Callable[[bytes], None]:
    """Build the composition oracle for ``classifier`` over ``leaves`` as a fuzz target.

    ``classifier`` is ``fn(command) -> bool``, ``fn(command) -> level`` with
    ``allowed(level) -> bool`` (and optionally ``rank(level)`` to order levels), or a
    :class:`~assay.compose.classifier.Classifier` such as
    :class:`~assay.compose.classifier.CommandClassifier`.  ``leaves`` is a list of
    commands (``allow:``/``deny:`` prefixes are hints) or the path of a leaves file.
    The pool is filtered and every leaf judged here, once.  ``bound``,
    ``r_families``, ``families``, ``protected_paths`` and ``table`` shape the checks
    (see :class:`~assay.compose.oracle.ComposeOptions`); ``state_heads`` and ``admit``
    (reasons of :data:`~assay.compose.leaves.OVERRIDABLE`) tune the shell leaf filter,
    ``leaf_check`` replaces it (for another language's table).  ``name`` (the corpus
    and artifact folder) defaults to the classifier's import path, ``pkg.mod.func``.  ``structured`` (default) lets
    the engine mutate and shrink the tree itself through a per-target strategy named
    ``compose-<name>``, on top of byte mutations.  ``register=True`` also adds
    the target to the global registry.  Raises :class:`~assay.core.errors.ConfigError`
    for an empty pool or bad options.
    """
    judge = adapt(classifier, allowed=allowed, rank=rank)
    if isinstance(leaves, (str, os.PathLike)):
        entries = read_leaves_file(leaves)
    else:
        entries = as_entries(leaves)
    if protected_paths is not None:
        table = table.with_paths(protected_paths)
    pool = build_pool(entries, judge, leaf_check or shell_leaf_check(state_heads, admit))
    name = name or default_name(judge)
    options = ComposeOptions(
        bound=bound,
        r_families=None if r_families is None else frozenset(r_families),
        families=tuple(families),
        max_leaves=max_leaves,
        check_levels=check_levels,
    )
    composition = Composition(judge, pool, table, options)

    def compose_target(data: bytes) -> None:
        composition.check(data)

    if sources is None:
        source = getattr(judge, "source_file", lambda: None)()
        sources = [source] if source else []
    if timeout is None and isinstance(judge, CommandClassifier):
        timeout = COMMAND_TIMEOUT
    kwargs: dict[str, Any] = dict(target_options)
    if isinstance(judge, CommandClassifier):
        # The classifier program is run (never the classified commands): allow that one process class.
        kwargs["allow"] = sorted({*kwargs.get("allow", ()), "subprocess"})
    if timeout is not None:
        kwargs["timeout"] = timeout
    strategy = None
    if structured:
        strategy = f"compose-{name}@{VERSION}"
        register_strategy(ComposeStrategy(f"compose-{name}", composition))
    tgt = make_target(
        compose_target,
        name=name,
        strategy=strategy,
        sources=list(sources),
        seeds=composition.seeds() if seeds else (),
        max_len=max_len,
        extra={
            "compose": {
                "pool": pool.summary.to_json(),
                "table": table.name,
                "classifier": judge.describe(),
                "bound": bound,
                "r_families": sorted(composition.r_families),
            }
        },
        **kwargs,
    )
    compose_target.assay_target = tgt  # type: ignore[attr-defined]
    compose_target.composition = composition  # type: ignore[attr-defined]
    compose_target.__doc__ = f"Composition oracle for {judge.describe()} ({len(pool)} leaves)."
    if register:
        REGISTRY.add(tgt)
    return compose_target


def default_name(judge: Classifier) -> str:
    """A target name from the classifier's import path (``pkg.policy.is_allowed``).

    A classifier loaded from a file is named after the file (``shell_classifier.is_allowed``);
    an out-of-process one after its program or script (``cmd.judge``).
    """
    if isinstance(judge, CallableClassifier):
        fn = judge.fn
        module = getattr(fn, "__module__", None) or type(fn).__module__
        qualname = getattr(fn, "__qualname__", None) or type(fn).__qualname__
        raw = f"{module.removeprefix(USER_MODULE_PREFIX)}.{qualname}"
    elif isinstance(judge, CommandClassifier):
        script = next((a for a in judge.argv[1:] if a.endswith(".py")), judge.argv[0])
        raw = "cmd." + os.path.splitext(os.path.basename(script))[0]
    else:
        raw = f"{type(judge).__module__}.{type(judge).__qualname__}"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", raw.replace("<locals>", "locals")).strip("._") or "compose"
