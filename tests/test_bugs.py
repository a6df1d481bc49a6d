"""Grouping findings into bugs: innermost project frame and exception type."""

import json
import os
import textwrap

from assay.core.verdict import classify
from assay.findings.identity import group, identify


def _raise_in(tmp_path, name, body):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body))
    ns = {"__name__": name}
    exec(compile(path.read_text(), str(path), "exec"), ns)
    return str(path), ns


def _verdict(fn, *args):
    try:
        fn(*args)
    except Exception as exc:  # noqa: BLE001
        return classify(exc, ())
    raise AssertionError("did not raise")


def test_two_signatures_of_one_raise_site_are_one_bug(tmp_path):
    lib, ns = _raise_in(
        tmp_path,
        "lib",
        """
        def parse(x):
            return int(x) // 0
        def via_a(x):
            return parse(x)
        def via_b(x):
            return parse(x)
    """,
    )
    a, b = _verdict(ns["via_a"], "1"), _verdict(ns["via_b"], "2")
    assert a.signature != b.signature  # three frames tell them apart
    ia, ib = identify(a, [lib]), identify(b, [lib])
    assert ia.key == ib.key and ia.id == ib.id
    assert ia.frame.qualname == "parse" and ia.location.endswith("lib.py:3")
    assert len(group([a, b], lambda v: identify(v, [lib]))) == 1


def test_different_exception_types_at_one_frame_are_two_bugs(tmp_path):
    lib, ns = _raise_in(
        tmp_path,
        "lib2",
        """
        def f(x):
            if x:
                raise KeyError(x)
            raise IndexError(x)
    """,
    )
    bugs = group([_verdict(ns["f"], 1), _verdict(ns["f"], 0)], lambda v: identify(v, [lib]))
    assert len(bugs) == 2


def test_raise_in_harness_outside_sources_is_labelled_harness(tmp_path):
    lib, ns = _raise_in(
        tmp_path,
        "lib3",
        """
        import json
        def harness(data):
            return json.loads(data)["key"]
    """,
    )
    v = _verdict(ns["harness"], b"[]")  # TypeError raised by the harness's own indexing
    other = tmp_path / "pkg"
    other.mkdir()
    assert identify(v, [str(other)], harness=lib).harness
    assert not identify(v, [lib], harness=lib).harness  # the harness file is itself in scope


def test_stdlib_frames_are_skipped_for_the_project_frame(tmp_path):
    lib, ns = _raise_in(
        tmp_path,
        "lib4",
        """
        import json
        def load(data):
            return json.loads(data)
    """,
    )
    v = _verdict(ns["load"], b"{")
    ident = identify(v, [lib])
    assert ident.frame.qualname == "load" and os.path.samefile(ident.frame.file, lib)
    assert ident.exception == "json.decoder.JSONDecodeError"


def test_finding_without_exception_is_its_own_signature():
    from assay.core.verdict import Verdict

    ident = identify(Verdict("wedge", "timeout@x"))
    assert ident.key == "wedge:timeout@x" and ident.frame is None and not ident.harness
    json.dumps(ident.key)


def test_an_assert_in_the_harness_is_its_check_not_a_harness_mistake(tmp_path):
    lib, ns = _raise_in(
        tmp_path,
        "lib7",
        """
        def harness(data):
            assert data == data[::-1], "round trip"
    """,
    )
    v = _verdict(ns["harness"], b"ab")
    assert v.oracle == "invariant"
    assert not identify(v, [str(tmp_path / "elsewhere")], harness=lib).harness


def test_two_bare_asserts_of_one_function_are_two_signatures_and_two_bugs(tmp_path):
    lib, ns = _raise_in(
        tmp_path,
        "lib5",
        """
        def check(n):
            assert n >= 0
            assert n < 10
    """,
    )
    low, high = _verdict(ns["check"], -1), _verdict(ns["check"], 99)
    assert low.signature != high.signature and low.signature.startswith("invariant:assert@lib5:check#")
    assert identify(low, [lib]).key != identify(high, [lib]).key
    again = _verdict(ns["check"], -5)  # another input, the same assert: the same signature
    assert again.signature == low.signature


def test_named_oracle_failures_are_bugs_by_name(tmp_path):
    lib, ns = _raise_in(
        tmp_path,
        "lib6",
        """
        from assay import OracleFailure
        def check(n):
            if n < 0:
                raise OracleFailure("non-negative", "n < 0", oracle="invariant")
            raise OracleFailure("small", "n >= 10", oracle="invariant")
    """,
    )
    a, b = _verdict(ns["check"], -1), _verdict(ns["check"], 99)
    assert identify(a, [lib]).key != identify(b, [lib]).key


def test_default_sources_harness_plus_imports_still_label_harness_mistakes(tmp_path):
    lib, ns = _raise_in(
        tmp_path,
        "lib8",
        """
        import json
        def harness(data):
            return json.loads(data)["key"]
    """,
    )
    v = _verdict(ns["harness"], b"[]")
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    assert identify(v, [lib, str(pkg)], harness=lib).harness  # harness + an imported package
    assert not identify(v, [lib], harness=lib).harness  # the harness is the code under test
