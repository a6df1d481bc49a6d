"""The operator table, as data: how parts are joined, wrapped, redirected and embedded.

Templates are plain strings with placeholders ``{A}``, ``{B}`` (the two operands of
a binary operator), ``{C}`` (the command a wrapper or redirect applies to), ``{P}``
(a protected path) and ``{D}`` (the command an embedding places in a substitution).
A placeholder may name a quoting filter, ``{C|single}``, that escapes the operand
so it arrives *exactly as written* inside that quoting context (see
:data:`QUOTERS`).  Any other brace is literal (``{ {A}; {B}; }`` is a group).

:data:`SHELL` is the built-in POSIX-shell/bash table.  Add operators with
:meth:`OperatorTable.extend`, or build a table for another language from scratch
(and pass a matching ``leaf_check``); :func:`load_table` reads one from JSON or TOML.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from assay.core.errors import ConfigError

_PLACEHOLDER = re.compile(r"\{([A-Z])(?:\|([a-z0-9-]+))?\}")


def _escape(chars: str) -> Callable[[str], str]:
    return lambda s: "".join("\\" + c if c in chars else c for c in s)


def _unparen(s: str) -> str:
    """Pad an operand placed right inside parentheses, so that ``$( (a; b) )`` never
    reads as the arithmetic ``$((a; b))`` (which would run neither part)."""
    return (" " if s.startswith("(") else "") + s + (" " if s.endswith(")") else "")


#: Quoting filters: each returns its operand escaped so that, inside the named
#: context, the shell reads back the operand unchanged.
QUOTERS: dict[str, Callable[[str], str]] = {
    "raw": lambda s: s,
    "single": lambda s: s.replace("'", "'\\''"),  # inside '…'
    "double": _escape('\\"$`'),  # inside "…"
    "backtick": _escape("\\`$"),  # inside `…`
    # inside "`…`": bash and dash read a nested "…" there as quotes of the inner
    # command, so only the backtick rules apply (escaping " would change it for
    # parsers such as bashlex that keep the backslash)
    "backtick-dq": _escape("\\`$"),
    "paren": _unparen,  # right after "(" / before ")": never form "((" or "))"
}


def placeholders(template: str) -> list[tuple[str, str]]:
    """The ``(name, filter)`` placeholders of ``template``, in order."""
    return [(m.group(1), m.group(2) or "raw") for m in _PLACEHOLDER.finditer(template)]


def fill(template: str, values: Mapping[str, str]) -> str:
    """Substitute every placeholder of ``template`` in one pass (operands may hold braces)."""

    def sub(m: re.Match[str]) -> str:
        return QUOTERS[m.group(2) or "raw"](values[m.group(1)])

    return _PLACEHOLDER.sub(sub, template)


def _check_template(kind: str, name: str, template: str, required: Iterable[str]) -> None:
    if not name or not re.fullmatch(r"[A-Za-z0-9_.+-]+", name):
        raise ConfigError(f"{kind} operator name {name!r} may hold only letters, digits and '_.+-'")
    found = placeholders(template)
    names = [n for n, _ in found]
    for need in required:
        if names.count(need) != 1:
            raise ConfigError(f"{kind} operator {name!r}: template {template!r} must hold {{{need}}} exactly once")
    for n, filt in found:
        if n not in required:
            raise ConfigError(f"{kind} operator {name!r}: unknown placeholder {{{n}}} (use {', '.join(required)})")
        if filt not in QUOTERS:
            raise ConfigError(
                f"{kind} operator {name!r}: unknown quoting filter {filt!r} (known: {', '.join(QUOTERS)})"
            )


@dataclass(frozen=True)
class BinaryOp:
    """Joins two parts so that both execute: ``{A} && {B}``.

    ``family`` groups spellings of one operator (``and`` and ``and-tight``); the
    over-denial check R names the families it applies to.
    """

    name: str
    template: str
    family: str

    def __post_init__(self) -> None:
        _check_template("binary", self.name, self.template, ("A", "B"))


@dataclass(frozen=True)
class Wrapper:
    """Runs ``{C}`` through another command: ``sudo {C}``, ``sh -c '{C|single}'``.

    ``compound`` wrappers take a whole command line as one string, so their inner
    part may be a composed tree; the others wrap a single leaf.  ``family`` groups
    spellings of one wrapper in the findings summary (default: the name).
    """

    name: str
    template: str
    compound: bool = False
    family: str = ""

    def __post_init__(self) -> None:
        _check_template("wrapper", self.name, self.template, ("C",))


@dataclass(frozen=True)
class Redirect:
    """Writes to protected path ``{P}`` from command ``{C}``: ``{C} >> {P}`` (``family`` as for wrappers)."""

    name: str
    template: str
    family: str = ""

    def __post_init__(self) -> None:
        _check_template("redirect", self.name, self.template, ("C", "P"))


@dataclass(frozen=True)
class Embed:
    """Places ``{D}`` in a substitution inside another command.

    ``placement`` is ``argument`` (inserted as a new word after one of the host's
    words) or ``prefix`` (an assignment before the host command).  ``family`` as
    for wrappers.
    """

    name: str
    fragment: str
    placement: str = "argument"
    family: str = ""

    def __post_init__(self) -> None:
        _check_template("embed", self.name, self.fragment, ("D",))
        if self.placement not in ("argument", "prefix"):
            raise ConfigError(f"embed operator {self.name!r}: placement must be 'argument' or 'prefix'")


@dataclass(frozen=True)
class OperatorTable:
    """Every way the oracle builds a whole from parts, for one command language."""

    name: str
    binary: tuple[BinaryOp, ...]
    wrappers: tuple[Wrapper, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    embeds: tuple[Embed, ...] = ()
    protected_paths: tuple[str, ...] = ()
    #: Binary families that are pure sequencing (the default scope of R).
    sequencing: frozenset[str] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        if not self.binary:
            raise ConfigError(f"operator table {self.name!r} has no binary operator")
        for group in (self.binary, self.wrappers, self.redirects, self.embeds):
            names = [op.name for op in group]
            dup = sorted({n for n in names if names.count(n) > 1})
            if dup:
                raise ConfigError(f"operator table {self.name!r}: duplicate operator name(s) {', '.join(dup)}")
        families = {op.family for op in self.binary}
        unknown = sorted(set(self.sequencing) - families)
        if unknown:
            raise ConfigError(f"operator table {self.name!r}: sequencing names unknown families {', '.join(unknown)}")

    @property
    def families(self) -> list[str]:
        """Binary families in table order."""
        return list(dict.fromkeys(op.family for op in self.binary))

    def extend(
        self,
        *,
        binary: Iterable[BinaryOp] = (),
        wrappers: Iterable[Wrapper] = (),
        redirects: Iterable[Redirect] = (),
        embeds: Iterable[Embed] = (),
        protected_paths: Iterable[str] = (),
        sequencing: Iterable[str] = (),
        name: str | None = None,
    ) -> OperatorTable:
        """A copy with more operators (appended, so existing fuzz inputs keep their meaning)."""
        return replace(
            self,
            name=name or self.name,
            binary=self.binary + tuple(binary),
            wrappers=self.wrappers + tuple(wrappers),
            redirects=self.redirects + tuple(redirects),
            embeds=self.embeds + tuple(embeds),
            protected_paths=tuple(dict.fromkeys(self.protected_paths + tuple(protected_paths))),
            sequencing=self.sequencing | frozenset(sequencing),
        )

    def with_paths(self, paths: Iterable[str]) -> OperatorTable:
        """A copy whose protected paths are exactly ``paths``."""
        return replace(self, protected_paths=tuple(dict.fromkeys(paths)))

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "binary": [{"name": o.name, "template": o.template, "family": o.family} for o in self.binary],
            "wrappers": [
                {"name": o.name, "template": o.template, "compound": o.compound, "family": o.family}
                for o in self.wrappers
            ],
            "redirects": [{"name": o.name, "template": o.template, "family": o.family} for o in self.redirects],
            "embeds": [
                {"name": o.name, "fragment": o.fragment, "placement": o.placement, "family": o.family}
                for o in self.embeds
            ],
            "protected_paths": list(self.protected_paths),
            "sequencing": sorted(self.sequencing),
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any], base: OperatorTable | None = None) -> OperatorTable:
        """A table from plain data; with ``base`` (and ``"extend": true``) it adds to ``base``."""
        try:
            parts: dict[str, Any] = dict(
                binary=tuple(BinaryOp(**o) for o in data.get("binary", ())),
                wrappers=tuple(Wrapper(**o) for o in data.get("wrappers", ())),
                redirects=tuple(Redirect(**o) for o in data.get("redirects", ())),
                embeds=tuple(Embed(**o) for o in data.get("embeds", ())),
            )
        except TypeError as exc:
            raise ConfigError(f"operator table entry is malformed ({exc}); see assay.compose.operators") from None
        paths = tuple(data.get("protected_paths", ()))
        sequencing = frozenset(data.get("sequencing", ()))
        if base is not None and data.get("extend", False):
            return base.extend(protected_paths=paths, sequencing=sequencing, name=data.get("name"), **parts)
        return cls(name=data.get("name", "custom"), protected_paths=paths, sequencing=sequencing, **parts)


def operator_family(op: BinaryOp | Wrapper | Redirect | Embed) -> str:
    """The family that groups an operator's findings (its name when it declares none)."""
    return op.family or op.name


def load_table(path: str | os.PathLike[str], base: OperatorTable | None = None) -> OperatorTable:
    """Read an operator table from a ``.json`` or ``.toml`` file (``extend = true`` adds to ``base``)."""
    p = os.fspath(path)
    try:
        with open(p, "rb") as fh:
            raw = fh.read()
        data = tomllib.loads(raw.decode("utf-8")) if p.endswith(".toml") else json.loads(raw)
    except FileNotFoundError:
        raise ConfigError(f"operator table {p} does not exist; pass an existing .json or .toml file") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ConfigError(f"operator table {p} cannot be read ({exc}); fix the file") from None
    if not isinstance(data, dict):
        raise ConfigError(f"operator table {p} must hold an object/table at the top")
    return OperatorTable.from_json(data, base if base is not None else SHELL)


def _b(name: str, template: str, family: str) -> BinaryOp:
    return BinaryOp(name, template, family)


#: Every construct of the shell that executes both of its operands, spaced and tight.
#: Substitutions are placed in an argument of ``echo`` after the first part, so they
#: can never change another part's arguments.
SHELL_BINARY: tuple[BinaryOp, ...] = (
    _b("and", "{A} && {B}", "and"),
    _b("and-tight", "{A}&&{B}", "and"),
    _b("or", "{A} || {B}", "or"),
    _b("or-tight", "{A}||{B}", "or"),
    _b("seq", "{A}; {B}", "seq"),
    _b("seq-tight", "{A};{B}", "seq"),
    _b("pipe", "{A} | {B}", "pipe"),
    _b("pipe-tight", "{A}|{B}", "pipe"),
    _b("pipe-stderr", "{A} |& {B}", "pipe"),
    _b("background", "{A} & {B}", "background"),
    _b("background-tight", "{A}&{B}", "background"),
    _b("newline", "{A}\n{B}", "newline"),
    _b("newline-spaced", "{A} \n {B}", "newline"),
    _b("subst", '{A}; echo "$({B|paren})"', "subst"),
    _b("subst-tight", '{A};echo "$({B|paren})"', "subst"),
    _b("subst-unquoted", "{A}; echo $({B|paren})", "subst"),
    _b("backtick", '{A}; echo "`{B|backtick-dq}`"', "backtick"),
    _b("backtick-tight", '{A};echo "`{B|backtick-dq}`"', "backtick"),
    _b("backtick-unquoted", "{A}; echo `{B|backtick}`", "backtick"),
    _b("subshell", "( {A}; {B} )", "subshell"),
    _b("subshell-tight", "({A|paren};{B|paren})", "subshell"),
    _b("group", "{ {A}; {B}; }", "group"),
    _b("group-tight", "{ {A};{B};}", "group"),
)

#: Commands that run another command: wrapping a denied command must stay denied.
SHELL_WRAPPERS: tuple[Wrapper, ...] = (
    Wrapper("xargs", "xargs {C}"),
    Wrapper("sudo", "sudo {C}"),
    Wrapper("sudo-user", "sudo -u root {C}", family="sudo"),
    Wrapper("env", "env {C}"),
    Wrapper("env-assign", "env LC_ALL=C {C}", family="env"),
    Wrapper("timeout", "timeout 10 {C}"),
    Wrapper("nohup", "nohup {C}"),
    Wrapper("nice", "nice {C}"),
    Wrapper("nice-n", "nice -n 10 {C}", family="nice"),
    Wrapper("command", "command {C}"),
    Wrapper("exec", "exec {C}"),
    Wrapper("find-exec", "find . -exec {C} \\;"),
    Wrapper("sh-c", "sh -c '{C|single}'", compound=True),
    Wrapper("bash-c", 'bash -c "{C|double}"', compound=True),
    Wrapper("eval", "eval '{C|single}'", compound=True),
)

#: Ways to write to a file: appended to an allowed command, each must deny it.
SHELL_REDIRECTS: tuple[Redirect, ...] = (
    Redirect("write", "{C} > {P}", family="write"),
    Redirect("write-tight", "{C}>{P}", family="write"),
    Redirect("append", "{C} >> {P}", family="write"),
    Redirect("stderr", "{C} 2> {P}", family="write"),
    Redirect("both", "{C} &> {P}", family="write"),
    Redirect("clobber", "{C} >| {P}", family="write"),
    Redirect("tee", "{C} | tee {P}", family="tee"),
    Redirect("tee-append", "{C} | tee -a {P}", family="tee"),
)

#: Substitutions that run ``{D}`` from inside another command.
SHELL_EMBEDS: tuple[Embed, ...] = (
    Embed("arg-subst", "$({D|paren})", family="subst"),
    Embed("arg-subst-quoted", '"$({D|paren})"', family="subst"),
    Embed("arg-backtick", "`{D|backtick}`", family="backtick"),
    Embed("arg-backtick-quoted", '"`{D|backtick-dq}`"', family="backtick"),
    Embed("arg-option", "--x=$({D|paren})", family="subst"),
    Embed("arg-procsub", "<({D|paren})", family="procsub"),
    Embed("prefix-subst", "X=$({D|paren})", "prefix", family="prefix-subst"),
    Embed("prefix-subst-quoted", 'X="$({D|paren})"', "prefix", family="prefix-subst"),
)

#: Files no allowed command may write (override with ``protected_paths=...``).
DEFAULT_PROTECTED_PATHS: tuple[str, ...] = (
    "/etc/passwd",
    "/etc/sudoers",
    "~/.ssh/authorized_keys",
    "~/.bashrc",
    "$HOME/.bashrc",
    "~/.profile",
)

#: Pure sequencing families (R's default scope): no output is re-interpreted.
SHELL_SEQUENCING: frozenset[str] = frozenset({"and", "or", "seq", "background", "newline"})

#: The built-in table for POSIX shell and bash.
SHELL = OperatorTable(
    name="shell",
    binary=SHELL_BINARY,
    wrappers=SHELL_WRAPPERS,
    redirects=SHELL_REDIRECTS,
    embeds=SHELL_EMBEDS,
    protected_paths=DEFAULT_PROTECTED_PATHS,
    sequencing=SHELL_SEQUENCING,
)
