"""Aiming a survivor's campaign at what the mutant changed.

A survivor knows its mutated line.  Two things steer its differential campaign
towards the input that tells the mutant apart:

* **Reach.**  The mutant's process (the twin) watches the lines of the mutated
  code it runs (``sys.monitoring`` LINE events on those code objects alone) and
  reports them per case; the original's side turns them into semantic features
  (:func:`reach_features`): reaching the mutated function, then each line distance
  to the mutated line not seen before, then the line itself.  An input that gets
  closer joins the corpus and, as one of the newest entries, is a parent more
  often: the search climbs the valid prefix towards the mutation (the spirit of
  AFLGo's distance, measured in lines of the mutated function).
* **Constants.**  The constants of the mutated line, in the original and in the
  mutant (with each integer's neighbours: a boundary is told apart at the bound
  and one past it), go first in the campaign's dictionary, where the comparison
  log's replacements and the dictionary mutations put them at the compared place.
  A size the line compares beyond the target's ``max_len`` raises the campaign's
  ``max_len`` (:func:`reach_len`) and gives the dictionary a run of that length.
"""

from __future__ import annotations

import ast
import io
import tokenize
import types
from collections.abc import Hashable, Iterable

from assay.core import observe
from assay.feedback.sysmon import claim_tool_id, monitoring, release_tool_id
from assay.mutant.model import Mutant

#: Steer survivor campaigns towards the mutated line (off: coverage of the original alone guides them).
DIRECTED = True
#: Line distances at or beyond this are one feature class (a long function's far lines are no nearer).
MAX_DISTANCE = 64
#: Largest ``max_len`` a survivor's campaign raises itself to, to reach a compared size.
MAX_REACH_LEN = 1 << 20
#: Bytes beyond the largest compared size that a raised ``max_len`` leaves room for (a prefix, a terminator).
REACH_SLACK = 64
#: Longest run of filler bytes given to the dictionary for a compared size.
MAX_FILLER = 1 << 16
_TOOL_NAME = "assay-mutant-direct"
_FEATURE = "mutant-reach"


def mutated_line_constants(mutant: Mutant, text: str) -> list[object]:
    """The literal constants of the mutated line(s), in the original text and in the replacement."""
    lines = text.splitlines(keepends=True)
    original = "".join(lines[mutant.edit.line - 1 : mutant.edit.end_line])
    found: list[object] = []
    for source in (original, mutant.edit.replacement):
        for value in _literals(source):
            if value not in found:
                found.append(value)
    return found


def _literals(source: str) -> Iterable[object]:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        tokens = []
    for tok in tokens:
        if tok.type not in (tokenize.NUMBER, tokenize.STRING):
            continue
        try:
            value = ast.literal_eval(tok.string)
        except (ValueError, SyntaxError):
            continue
        if isinstance(value, (int, str, bytes)) and not isinstance(value, bool):
            yield value


def constant_tokens(constants: list[object]) -> list[bytes]:
    """Dictionary tokens for the mutated line's constants: texts, bytes, integers and their neighbours."""
    out: list[bytes] = []
    for value in constants:
        if isinstance(value, int):
            for n in (value, value + 1, value - 1):
                out.append(str(n).encode())
            if 1 < value <= MAX_FILLER:
                out.append(b"A" * (value + 1))  # a compared size: one past the bound
        elif isinstance(value, str):
            out.append(value.encode("utf-8", "surrogatepass"))
        elif isinstance(value, bytes):
            out.append(value)
    return [t for t in dict.fromkeys(out) if t]


def reach_len(max_len: int, constants: list[object]) -> int:
    """``max_len`` raised so that every integer the mutated line compares fits (at most :data:`MAX_REACH_LEN`)."""
    sizes = [c for c in constants if isinstance(c, int) and not isinstance(c, bool) and max_len <= c < MAX_REACH_LEN]
    if not sizes:
        return max_len
    return min(MAX_REACH_LEN, max(sizes) + REACH_SLACK)


def mutated_codes(functions: Iterable[types.FunctionType]) -> list[types.CodeType]:
    """The code objects of the mutated functions, nested ones included."""
    out: list[types.CodeType] = []
    stack = [fn.__code__ for fn in functions]
    while stack:
        code = stack.pop()
        out.append(code)
        stack.extend(c for c in code.co_consts if isinstance(c, types.CodeType))
    return out


class LineProbe:
    """Records which lines of the mutated code run (in the mutant's process only)."""

    def __init__(self, codes: list[types.CodeType]) -> None:
        self.codes = codes
        self.lines: set[int] = set()
        self.tool: int | None = None

    def start(self) -> None:
        mon = monitoring()
        self.tool = claim_tool_id(_TOOL_NAME)
        lines = self.lines

        def on_line(code, line):  # noqa: ARG001
            lines.add(line)
            return mon.DISABLE  # once per case: restart_events() at the next one re-arms it

        mon.register_callback(self.tool, mon.events.LINE, on_line)
        for code in self.codes:
            mon.set_local_events(self.tool, code, mon.events.LINE)

    def begin(self) -> None:
        """Forget the last case's lines and re-arm the disabled events."""
        self.lines.clear()
        monitoring().restart_events()

    def taken(self) -> frozenset[int]:
        return frozenset(self.lines)

    def stop(self) -> None:
        if self.tool is not None:
            release_tool_id(self.tool, self.codes, [monitoring().events.LINE])
            self.tool = None


def reach_features(lines: frozenset[int] | None, line: int) -> list[Hashable]:
    """The features of one case's reach of the mutated ``line`` (nothing when the mutated code did not run)."""
    if not lines:
        return []
    distance = min(MAX_DISTANCE, min(abs(line - n) for n in lines))
    return [observe.feature_key(_FEATURE, "function"), observe.feature_key(_FEATURE, distance)]
