"""How a generated target builds each argument of a function, from its annotation or, without one, its name and use.

Each parameter becomes one expression over an :class:`assay.harness.arguments.Arguments`
named ``args`` (``args.text(rest=True)``, ``args.integer()``, ...), with a note
saying where the choice came from; an unannotated parameter's note states the
guess, and the generated target shows it as a comment.  Parameters with defaults
are left to their defaults; ``Optional`` ones are sometimes ``None``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from assay.scaffold.api import Function, Module, Project

#: Kinds that carry untrusted input (a function with none of these gets no target).
INPUT_KINDS = frozenset(
    {"bytes", "text", "path", "path_text", "binary_stream", "text_stream", "mapping", "listing", "value", "record"}
)
#: Kinds that take ``rest=True`` when they are the last of a call's input parameters.
REST_KINDS = frozenset({"bytes", "text", "path", "path_text", "binary_stream", "text_stream"})
#: The expression of each simple kind (``{rest}`` becomes ``rest=True`` for the last input parameter).
EXPRESSIONS = {
    "bytes": "args.bytes({rest})",
    "bytearray": "bytearray(args.bytes({rest}))",
    "text": "args.text({rest})",
    "path": "args.path({rest})",
    "path_text": "str(args.path({rest}))",
    "binary_stream": "args.binary_stream({rest})",
    "text_stream": "args.text_stream({rest})",
    "integer": "args.integer()",
    "number": "args.number()",
    "flag": "args.flag()",
    "complex": "complex(args.number(), args.number())",
    "mapping": "args.mapping()",
    "listing": "args.listing()",
    "value": "args.value()",
    "none": "None",
}
#: Annotation names (the last dotted part) and the kind each gets.
ANNOTATIONS = {
    "bytes": "bytes",
    "ByteString": "bytes",
    "Buffer": "bytes",
    "memoryview": "bytes",
    "bytearray": "bytearray",
    "str": "text",
    "Text": "text",
    "AnyStr": "text",
    "Path": "path",
    "PurePath": "path",
    "PathLike": "path",
    "StrPath": "path",
    "StrOrBytesPath": "path",
    "BinaryIO": "binary_stream",
    "BufferedReader": "binary_stream",
    "BufferedIOBase": "binary_stream",
    "RawIOBase": "binary_stream",
    "BytesIO": "binary_stream",
    "IO": "text_stream",
    "TextIO": "text_stream",
    "TextIOBase": "text_stream",
    "TextIOWrapper": "text_stream",
    "StringIO": "text_stream",
    "int": "integer",
    "float": "number",
    "bool": "flag",
    "complex": "complex",
    "dict": "mapping",
    "Dict": "mapping",
    "Mapping": "mapping",
    "MutableMapping": "mapping",
    "OrderedDict": "mapping",
    "list": "listing",
    "List": "listing",
    "Sequence": "listing",
    "MutableSequence": "listing",
    "Iterable": "listing",
    "Collection": "listing",
    "tuple": "listing",
    "Tuple": "listing",
    "set": "listing",
    "Any": "value",
    "object": "value",
    "JSON": "value",
    "None": "none",
}
#: Parameter names (without annotation) and the kind each suggests.
NAMES = {
    **dict.fromkeys(
        ("data", "blob", "buf", "buffer", "raw", "payload", "packet", "chunk", "octets", "b", "bs"), "bytes"
    ),
    **dict.fromkeys(
        ("path", "filename", "file_path", "filepath", "fname", "pathname", "file_name", "infile_path"), "path_text"
    ),
    **dict.fromkeys(
        ("fp", "fh", "stream", "fileobj", "file_obj", "infile", "reader", "f", "file", "io"), "text_stream"
    ),
    **dict.fromkeys(("obj", "o", "mapping", "d", "dct", "record", "config", "tree", "node", "value", "item"), "value"),
    **dict.fromkeys(
        ("n", "count", "size", "length", "width", "indent", "level", "offset", "index", "num", "i"), "integer"
    ),
    **dict.fromkeys(("strict", "verbose", "lenient", "relaxed", "pretty"), "flag"),
}
#: Methods called on a parameter and the kind each suggests.
USES = {
    "decode": "bytes",
    "hex": "bytes",
    "read": "text_stream",
    "readline": "text_stream",
    "readlines": "text_stream",
    "items": "mapping",
    "keys": "mapping",
    "values": "mapping",
    "get": "mapping",
    "encode": "text",
    "split": "text",
    "splitlines": "text",
    "strip": "text",
    "startswith": "text",
    "lower": "text",
    "append": "listing",
}


#: Unannotated parameter names that stand for an object init cannot build (a callback, a parser, a date).
OBJECT_NAMES = frozenset(
    {"self", "cls", "callback", "func", "fn", "function", "handler", "ctx", "context", "parser", "lexer", "visitor"}
    | {"p", "t", "tok", "token", "date", "time", "datetime", "dt", "tz", "tzinfo", "timedelta", "loop", "logger"}
)
#: Name endings of the same.
OBJECT_SUFFIXES = ("date", "time", "_node", "_fn", "_func", "callback", "_cls", "_class", "_type", "_parser")
_STR_METHODS = frozenset(dir(str)) | frozenset(dir(bytes))


@dataclass(frozen=True)
class Argument:
    """One argument of a generated call."""

    name: str
    kind: str  # a key of EXPRESSIONS, "optional", "choice", "record"
    expr: str  # the expression, with "{rest}" where rest=True may go
    note: str  # where the choice came from
    keyword: bool  # passed as name=value
    guessed: bool  # no annotation: chosen from the name or use

    def source(self, rest: bool) -> str:
        return self.expr.replace("{rest}", "rest=True" if rest else "")


@dataclass(frozen=True)
class Unbuildable:
    """A required parameter init cannot build a value for."""

    name: str
    why: str


def arguments(project: Project, fn: Function) -> list[Argument] | Unbuildable:
    """The arguments a target passes to ``fn``: its required parameters, or its first input-like optional one."""
    a = fn.node.args
    positional = a.posonlyargs + a.args
    if positional and positional[0].arg in ("self", "cls"):
        positional = positional[1:]
    required = positional[: len(positional) - len(a.defaults)] if a.defaults else positional
    optional = positional[len(required) :]
    kwonly_required = [p for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is None]
    out: list[Argument] = []
    for param, keyword in [(p, False) for p in required] + [(p, True) for p in kwonly_required]:
        arg = argument(project, fn.module, fn.node, param, keyword)
        if isinstance(arg, Unbuildable):
            return arg
        out.append(arg)
    if not any(x.kind in INPUT_KINDS or x.kind == "optional" and _inner_input(x) for x in out):
        for param in optional + [p for p, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None]:
            arg = argument(project, fn.module, fn.node, param, True)
            if not isinstance(arg, Unbuildable) and arg.kind in REST_KINDS and not arg.guessed:
                out.append(arg)
                break
    return out


def _inner_input(arg: Argument) -> bool:
    return any(f"args.{k}(" in arg.expr for k in ("bytes", "text", "path", "binary_stream", "text_stream", "mapping"))


def is_input(args: list[Argument]) -> bool:
    """Whether any argument carries untrusted input (else the function gets no target)."""
    return any(a.kind in INPUT_KINDS or (a.kind == "optional" and _inner_input(a)) for a in args)


def with_rest(args: list[Argument]) -> list[str]:
    """Each argument's source; the last input-like one takes all the bytes left."""
    last = max((i for i, a in enumerate(args) if a.kind in REST_KINDS), default=-1)
    return [a.source(i == last) for i, a in enumerate(args)]


def argument(project: Project, module: Module, fn: ast.AST, param: ast.arg, keyword: bool) -> Argument | Unbuildable:
    """How to build one parameter."""
    if param.annotation is not None:
        ann = _annotation(param.annotation)
        built = _from_annotation(project, module, ann, 0)
        text = ast.unparse(param.annotation)
        if built is None:
            return Unbuildable(param.arg, f"its parameter {param.arg}: {text} is a type init cannot build")
        kind, expr = built
        return Argument(param.arg, kind, expr, f"{param.arg}: {text}", keyword, False)
    guess = _guess(fn, param.arg)
    if isinstance(guess, Unbuildable):
        return guess
    kind, why = guess
    note = f"{param.arg}: no annotation; {kind_label(kind)} guessed from {why}"
    return Argument(param.arg, kind, EXPRESSIONS[kind], note, keyword, True)


def kind_label(kind: str) -> str:
    """A word for a kind, for notes and init's output."""
    return {
        "path_text": "a file path",
        "path": "a file path",
        "binary_stream": "a binary stream",
        "text_stream": "a text stream",
        "value": "a JSON-like value",
        "mapping": "a mapping",
        "listing": "a list",
        "integer": "an int",
        "number": "a float",
        "flag": "a bool",
    }.get(kind, kind)


def _annotation(expr: ast.expr) -> ast.expr:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):  # "Foo" forward reference
        try:
            return ast.parse(expr.value, mode="eval").body
        except SyntaxError:
            return expr
    return expr


def _last(expr: ast.expr) -> str:
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Constant) and expr.value is None:
        return "None"
    return ""


def _from_annotation(project: Project, module: Module, ann: ast.expr, depth: int) -> tuple[str, str] | None:
    """``(kind, expression)`` for an annotation, or ``None`` when init cannot build the type."""
    members = _union(ann)
    if members is not None:
        optional = any(_last(m) == "None" for m in members)
        rest = [m for m in members if _last(m) != "None"]
        for member in sorted(rest, key=lambda m: _rank(project, module, m)):
            built = _from_annotation(project, module, member, depth)
            if built is not None:
                if optional:
                    return "optional", f"({built[1]} if args.present() else None)"
                return built
        return ("none", "None") if optional else None
    if isinstance(ann, ast.Subscript):
        base = _last(ann.value)
        if base == "Optional":
            inner = _from_annotation(project, module, ann.slice, depth)
            return ("optional", f"({inner[1]} if args.present() else None)") if inner else ("none", "None")
        if base == "Annotated" and isinstance(ann.slice, ast.Tuple) and ann.slice.elts:
            return _from_annotation(project, module, ann.slice.elts[0], depth)
        if base == "Literal":
            values = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            return "choice", f"args.choice([{', '.join(ast.unparse(v) for v in values)}])"
        if base == "IO":
            return (
                ("binary_stream", EXPRESSIONS["binary_stream"])
                if _last(ann.slice) == "bytes"
                else ("text_stream", EXPRESSIONS["text_stream"])
            )
        return _from_annotation(project, module, ann.value, depth)
    name = _last(ann)
    if name in ANNOTATIONS:
        kind = ANNOTATIONS[name]
        return kind, EXPRESSIONS[kind]
    found = project.expression(module, ann) if isinstance(ann, (ast.Name, ast.Attribute)) else None
    if found is not None and found.kind == "class" and found.module is not None and depth < 2:
        return _record(project, found.module, found.node, found.dotted, depth)  # type: ignore[arg-type]
    return None


def _rank(project: Project, module: Module, member: ast.expr) -> int:
    """Order of preference among a union's members: input kinds first (bytes, text, ...)."""
    order = ["bytes", "text", "path", "binary_stream", "text_stream", "mapping", "listing", "value"]
    kind = ANNOTATIONS.get(_last(member), "")
    return order.index(kind) if kind in order else len(order)


def _union(ann: ast.expr) -> list[ast.expr] | None:
    if isinstance(ann, ast.BinOp) and isinstance(ann.op, ast.BitOr):
        return (_union(ann.left) or [ann.left]) + (_union(ann.right) or [ann.right])
    if isinstance(ann, ast.Subscript) and _last(ann.value) == "Union":
        return list(ann.slice.elts) if isinstance(ann.slice, ast.Tuple) else [ann.slice]
    return None


def _record(project: Project, module: Module, cls: ast.ClassDef, dotted: str, depth: int) -> tuple[str, str] | None:
    """A dataclass built field by field, a TypedDict as a dict literal, an Enum as one of its members."""
    bases = {_last(b) for b in cls.bases}
    if bases & {"Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"}:
        return "choice", f"args.choice(list({dotted}))"
    is_dataclass = any(_last(d.func if isinstance(d, ast.Call) else d) == "dataclass" for d in cls.decorator_list)
    if not (is_dataclass or "TypedDict" in bases or "NamedTuple" in bases):
        return None
    fields = []
    for stmt in cls.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is None:
            if _last(stmt.annotation) == "ClassVar":
                continue
            built = _from_annotation(project, module, _annotation(stmt.annotation), depth + 1)
            if built is None:
                return None
            fields.append((stmt.target.id, built[1].replace("{rest}", "")))
    if "TypedDict" in bases:
        return "record", "{" + ", ".join(f"{name!r}: {expr}" for name, expr in fields) + "}"
    return "record", f"{dotted}(" + ", ".join(f"{name}={expr}" for name, expr in fields) + ")"


def _guess(fn: ast.AST, name: str) -> tuple[str, str] | Unbuildable:
    """(kind, why) for an unannotated parameter: its use in the body, then its name, else text;
    :class:`Unbuildable` when its name or use shows an object (``node.kind``, ``callback``, ``p[0] = x``)."""
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id == name
            and node.func.attr in USES
        ):
            return USES[node.func.attr], f"its use ({name}.{node.func.attr}(...))"
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "open"
            and node.args
            and isinstance(node.args[0], ast.Name)
            and node.args[0].id == name
        ):
            return "path_text", f"its use (open({name}))"
    lowered = name.lower()
    if lowered in OBJECT_NAMES or lowered.endswith(OBJECT_SUFFIXES):
        return Unbuildable(name, f"its parameter {name} (no annotation) names an object, not input")
    used = _object_use(fn, name)
    if used:
        return Unbuildable(name, f"its parameter {name} (no annotation) is used as an object ({used})")
    if lowered in NAMES:
        return NAMES[lowered], f"its name ({name})"
    for suffix, kind in (("_bytes", "bytes"), ("_path", "path_text"), ("_file", "text_stream"), ("_dict", "mapping")):
        if lowered.endswith(suffix):
            return kind, f"its name ({name})"
    return "text", "nothing in its name or use (text is the default)"


def _object_use(fn: ast.AST, name: str) -> str:
    """How the body uses parameter ``name`` as an object: an attribute no str or bytes has, or an item assigned."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == name:
            if node.attr not in _STR_METHODS and node.attr not in USES:
                return f"{name}.{node.attr}"
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) and t.value.id == name:
                    return f"{name}[...] = ..."
    return ""
