"""Value profile: new (site, value) pairs are features, within their bounds."""

from __future__ import annotations

from assay.feedback import valueprofile
from assay.feedback.valueprofile import PER_SITE, ValueProfile


def test_program_state_is_a_feature_once_and_the_inputs_own_bytes_never():
    profile = ValueProfile()
    data = b"LOGIN alice"
    records = [(1, b"LOGIN", b"SELECT"), (2, "alice", "root")]
    new = profile.observe(data, records)
    # b"LOGIN" and "alice" are the input's own bytes; b"SELECT" and "root" are state.
    assert [(kind, site) for kind, site, _h in new] == [("vp", 1), ("vp", 2)]
    assert profile.observe(data, records) == []
    assert ValueProfile(new).observe(data, records) == [], "a restarted worker knows what was seen"


def test_operands_that_are_no_state_give_nothing_and_do_not_fail():
    profile = ValueProfile()
    records = [(1, [1, 2], {"a": 1}), (2, 3.5, None), (3, 1 << 40, -(1 << 40)), (4, "x" * 100, b"y" * 100)]
    assert profile.observe(b"", records) == []


def test_an_int_and_a_bool_are_different_values():
    profile = ValueProfile()
    one = profile.observe(b"", [(1, 7, 1)])
    true = profile.observe(b"", [(1, 7, True)])
    assert len(one) == 2 and true == []  # bools are never values (True == 1 must not hide 1)
    assert ValueProfile().observe(b"", [(1, 7, 1)]) == one, "the same digests on every run"


def test_a_site_takes_at_most_per_site_values(monkeypatch):
    profile = ValueProfile()
    new = profile.observe(b"", [(5, 1000 + k, 2000 + k) for k in range(PER_SITE * 2)])
    assert len(new) == PER_SITE
    monkeypatch.setattr(valueprofile, "MAX_FEATURES", PER_SITE + 1)
    assert len(profile.observe(b"", [(6, 1, 2), (7, 3, 4)])) == 1
    assert profile.observe(b"", [(8, 5, 6)]) == []
