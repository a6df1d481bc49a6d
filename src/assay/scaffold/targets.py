"""The text of the target file ``assay init`` writes: one target per picked function, plus round trips and twins."""

from __future__ import annotations

from assay.scaffold.arguments import REST_KINDS, with_rest
from assay.scaffold.contract import Expected
from assay.scaffold.pairs import RoundTrip, Twins
from assay.scaffold.selection import Picked

HEADER = '''"""Fuzz targets for {package}, written by `assay init`.

One target per public function of {package} that takes untrusted input. Each
builds the function's arguments from the fuzzer's bytes (assay.Arguments; a
parameter without annotation says what was guessed) and lists in expected=(...)
what the project promises for bad input, one comment each saying where it came
from; any other exception is a finding. expected_from="project" (on a function
that converts a library's errors into its own): a built-in exception of those
classes counts only when the project's own code raised it, so a ValueError
leaking out of the library it wraps is a finding.
Edit freely: `assay init` keeps this file (--force rewrites it).
Run them with `{command}`; `assay targets` shows what each watches.
"""
'''


def render(
    package: str,
    picked: list[Picked],
    trips: list[RoundTrip],
    pairs: list[Twins],
    command: str,
    seeds: str = "",
) -> str:
    """The whole target file; ``seeds``: the lines defining ``SEEDS`` (see :mod:`assay.scaffold.samples`), if any."""
    imports = {"assay"} | {p.fn.public.rsplit(".", 1)[0] for p in picked}
    imports |= {e.import_from for p in picked for e in p.expected if e.import_from}
    oracles = (["Allow", "AllowList"] if any(t.kind == "strict-lax" for t in pairs) else []) + (
        (["differential"] if pairs else []) + (["round_trip"] if trips else [])
    )
    lines = [HEADER.format(package=package, command=command)] + (["import pathlib", ""] if seeds else [])
    lines += [f"import {name}" for name in sorted(imports, key=lambda n: (n != "assay", n))]
    if oracles:
        lines.append(f"from assay.oracles import {', '.join(oracles)}")
    if seeds:
        lines += ["", "", seeds.rstrip("\n")]
    body = [_target(p, bool(seeds)) for p in picked] + [_round_trip(t) for t in trips] + [_twins(t) for t in pairs]
    return "\n".join(lines) + "\n\n\n" + "\n\n".join(body)


def _decorator(expected: list[Expected], converts: str, seeded: bool = False) -> list[str]:
    seeds = ["    seeds=SEEDS,"] if seeded else []
    if not expected:
        return [
            "# Nothing promised (no raise, Raises: section or re-raise found): every exception is a finding;",
            "# add the exceptions the function documents for bad input.",
            *(["@assay.target(expected=(), seeds=SEEDS)"] if seeded else ["@assay.target(expected=())"]),
        ]
    lines = ["@assay.target(", "    expected=("]
    lines += [f"        {e.dotted},  # {e.note}" for e in expected]
    lines.append("    ),")
    if converts:
        lines.append(f'    expected_from="project",  # it converts library errors ({converts})')
    return lines + seeds + [")"]


def takes_one_input(p: Picked) -> bool:
    """Whether the function's one parameter is the input itself (so a sample file is a whole input to it)."""
    return len(p.args) == 1 and p.args[0].kind in REST_KINDS


def _call(p: Picked) -> list[str]:
    """The call's lines: one argument inline, else each argument bound first (its note beside it), the one
    taking the bytes left last of all, so that the others are cut from the input before it."""
    sources = with_rest(p.args)
    call = p.fn.public
    if len(p.args) == 1:
        arg = p.args[0]
        value = f"{arg.name}={sources[0]}" if arg.keyword else sources[0]
        text = f"{call}({value})"
        return [f"    {'list(' + text + ')' if p.generator else text}  # {arg.note}"]
    local = {arg.name: f"{arg.name}_" if arg.name in ("args", "data", "assay") else arg.name for arg in p.args}
    order = sorted(zip(p.args, sources), key=lambda pair: "rest=True" in pair[1])
    lines = [f"    {local[arg.name]} = {source}  # {arg.note}" for arg, source in order]
    values = ", ".join(f"{a.name}={local[a.name]}" if a.keyword else local[a.name] for a in p.args)
    text = f"{call}({values})"
    lines.append(f"    {'list(' + text + ')' if p.generator else text}")
    return lines


def _target(p: Picked, seeds: bool = False) -> str:
    lines = _decorator(p.expected, p.converts, seeds and takes_one_input(p))
    lines.append(f"def {p.target_name}(data: bytes) -> None:")
    lines.append("    args = assay.Arguments(data)")
    lines += _call(p)
    return "\n".join(lines) + "\n"


def _round_trip(t: RoundTrip) -> str:
    d, e = t.decode, t.encode
    source = with_rest(d.args)[0]
    lines = [f"# Round trip: {e.fn.public} undoes {d.fn.public}; decoding what it wrote must give the same value."]
    lines += _decorator(d.expected, d.converts)
    lines.append(f"def {d.target_name}_round_trip(data: bytes) -> None:")
    lines.append("    args = assay.Arguments(data)")
    lines.append(f'    round_trip({d.fn.public}, {e.fn.public}, {source}, name="{d.fn.public}~{e.fn.public}")')
    return "\n".join(lines) + "\n"


def _twins(t: Twins) -> str:
    a, b = t.first, t.second
    expected = list({e.dotted: e for e in a.expected + b.expected}.values())
    catch = "(" + ", ".join(e.dotted for e in expected) + ",)" if expected else "(Exception,)"
    name = f"{a.target_name}_vs_{b.fn.name}"
    if t.kind == "bytes-text":
        why = f"# Twins: {a.fn.public} and {b.fn.public} read the same input as bytes and as text; they must agree."
        impls = {
            p.target_name: p.fn.public
            if p.args[0].kind == "bytes"
            else f'lambda raw: {p.fn.public}(raw.decode("utf-8"))'
            for p in (a, b)
        }
        lines = [why, *_decorator(expected, ""), f"def {name}(data: bytes) -> None:"]
        lines += [
            "    try:",
            '        data.decode("utf-8")',
            "    except UnicodeDecodeError:",
            "        return  # the text twin cannot be given these bytes",
        ]
        source, allow = "data", ""
    else:
        why = f"# Twins: {a.fn.public} (strict) and {b.fn.public} (lax) do one job; only strict may refuse more."
        impls = {"strict": a.fn.public, "lax": b.fn.public}
        lines = [why, *_decorator(expected, ""), f"def {name}(data: bytes) -> None:"]
        lines += [
            "    refuses = Allow(",
            '        "strict-refuses",',
            '        "the strict entry point may refuse what the lax one accepts",',
            "        lambda _, strict, lax: strict.is_error and lax.ok,",
            '        pair=("strict", "lax"),',
            "    )",
        ]
        source = "data" if a.args[0].kind == "bytes" else 'data.decode("utf-8", errors="replace")'
        allow = "        allow=AllowList(refuses),"
    lines += ["    differential(", "        {"]
    lines += [f'            "{k}": {v},' for k, v in impls.items()]
    lines += ["        },", f"        {source},", f"        catch={catch},"]
    lines += [allow] if allow else []
    lines.append("    )")
    return "\n".join(lines) + "\n"
