"""Native campaigns: finding a bug by fuzzing, corpus sync, determinism, and the four bounds."""

from __future__ import annotations

import re
import time

import pytest

from assay.core.errors import CorpusError, NativeError
from assay.core.native_target import native_target
from assay.native.signature import symbolize_report
from assay.store.artifacts import load_artifact, read_seen
from assay.store.corpus import Corpus

DEEP = "native-asan:heap-buffer-overflow:READ:1@parse_body<LLVMFuzzerTestOneInput"


@pytest.mark.campaign
def test_fuzzing_finds_the_planted_bug_behind_a_magic(planted_project, native_run, tmp_path):
    outcome = native_run(planted_project, "deep", cases=400_000, seed=3)
    assert [f.signature for f in outcome.findings] == [DEEP]
    art = load_artifact(outcome.findings[0].artifact)
    assert art.input[:3] == b"FUZ" and art.metadata["determinism"]["same_signature"]
    assert outcome.cases <= 400_000 and outcome.execs_per_sec > 0
    assert outcome.corpus_additions, "libFuzzer's new entries are synced into the store"
    store = Corpus(tmp_path / "corpus", "deep", 64)
    assert store.check() == [] and {d for d, _ in store.load()} == set(outcome.corpus_additions)


def test_same_seed_and_case_cap_give_the_same_corpus(planted_project, native_run, tmp_path):
    a = native_run(planted_project, "deep", cases=20_000, seed=5, corpus=tmp_path / "a")
    b = native_run(planted_project, "deep", cases=20_000, seed=5, corpus=tmp_path / "b")
    assert a.cases == b.cases == 20_000
    assert sorted(a.corpus_additions) == sorted(b.corpus_additions) and a.corpus_additions
    assert a.edges == b.edges and a.features == b.features


def test_second_campaign_starts_from_the_synced_corpus(planted_project, native_run, tmp_path):
    first = native_run(planted_project, "deep", cases=20_000, seed=5)
    again = native_run(planted_project, "deep", cases=5_000, seed=6)
    assert sorted(again.initial_manifest) == sorted(first.corpus_additions)
    assert not set(again.corpus_additions) & set(first.corpus_additions)


def test_report_has_no_schedule_digest_but_says_why(planted_project, native_run):
    from assay.engine.campaign import CampaignResult
    from assay.reports.campaign import build_report

    outcome = native_run(planted_project, "deep", cases=2_000)
    report = build_report(CampaignResult(1, [outcome], 0.0, 1.0), arguments={})
    entry = report["targets"]["deep"]
    assert entry["schedule_digest"] is None and "does not expose" in entry["schedule_note"]
    assert entry["build"]["identity"] == outcome.build["identity"] and entry["build"]["manifest"].endswith(
        "manifest.json"
    )
    assert [p.rsplit("/", 1)[-1] for p in entry["build"]["inputs"]] == ["deep.c"]
    assert "-fsanitize=fuzzer,address,undefined" in entry["build"]["argv"] and entry["build"]["compiler"]["sha256"]
    assert entry["corpus_size"] == len(entry["initial_corpus"]) + len(entry["corpus_additions"]) + 1  # + the seed


def test_a_bad_corpus_entry_refuses_before_anything_runs(planted_project, tmp_path):
    from assay.native.campaign import NativeOptions, run_native_campaign

    folder = tmp_path / "corpus" / "deep"
    folder.mkdir(parents=True)
    (folder / ("0" * 64 + ".input")).write_bytes(b"x")
    options = NativeOptions(
        corpus_root=str(tmp_path / "corpus"),
        artifact_root=str(tmp_path / "a"),
        project_root=str(planted_project.root),
        max_cases=10,
    )
    with pytest.raises(CorpusError, match="name does not match"):
        run_native_campaign([planted_project.native["deep"]], options, master_seed=1)
    assert not (tmp_path / "a").exists()


def test_campaign_time_is_whole_seconds_and_under_one_is_refused(planted_project, native_run):
    from assay.native.campaign import whole_seconds

    assert whole_seconds(2.9) == 2
    with pytest.raises(NativeError, match="at least 1 whole second"):
        native_run(planted_project, "deep", budget=0.9)


def test_campaign_time_bound_holds(planted_project, native_run):
    started = time.monotonic()
    outcome = native_run(planted_project, "deep", budget=1.5)  # rounded down to 1 s
    assert outcome.status in ("clean", "findings") and outcome.cases > 0
    assert time.monotonic() - started < 30


def test_supervising_deadline_kills_the_group_and_is_an_infrastructure_failure(planted_project, native_run, tmp_path):
    harness = tmp_path / "stuck.c"
    harness.write_text(
        "#include <stdint.h>\n#include <stddef.h>\n#include <unistd.h>\n"
        "int LLVMFuzzerInitialize(int *argc, char ***argv) { if (fork() == 0) { sleep(300); } sleep(300); return 0; }\n"
        "int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { return 0; }\n"
    )
    planted_project.native["stuck"] = native_target("stuck", harness=str(harness))
    try:
        started = time.monotonic()
        outcome = native_run(planted_project, "stuck", cases=10, deadline=2.0)
    finally:
        del planted_project.native["stuck"]
    assert time.monotonic() - started < 60
    assert outcome.status == "infrastructure" and "supervising deadline" in outcome.error
    assert outcome.findings == []


def test_per_input_timeout_is_the_targets_timeout(planted_project, native_run, tmp_path):
    Corpus(tmp_path / "corpus", "planted", 4096).add(b"Tx")
    outcome = native_run(planted_project, "planted", replay_only=True)
    art = load_artifact(outcome.findings[0].artifact)
    assert "-timeout=1" in art.metadata["libfuzzer_args"] and "-rss_limit_mb=256" in art.metadata["libfuzzer_args"]
    # libFuzzer's alarm ticks once a second and reports the whole seconds it measured, so a
    # 1-second timeout reads "after 1 seconds" or, when the tick lands late, "after 2 seconds".
    assert re.search(r"timeout after [12] seconds", art.metadata["sanitizer_report"]), art.metadata["sanitizer_report"]


SHALLOW = "native-asan:heap-buffer-overflow:READ:1@shallow<LLVMFuzzerTestOneInput"
BEHIND_MAGIC = "native-asan:heap-buffer-overflow:READ:4@behind_magic<LLVMFuzzerTestOneInput"


def test_a_known_crash_found_again_does_not_end_the_campaign(planted_project, native_run, monkeypatch):
    import assay.native.campaign as campaign
    from assay.native.campaign import MAX_RESTARTS

    symbolized: list[str] = []

    def counted(text, symbolizer):
        symbolized.append(text)
        return symbolize_report(text, symbolizer)

    monkeypatch.setattr(campaign, "symbolize_report", counted)
    # "two" has a shallow bug libFuzzer hits within a few hundred cases of every start, and a
    # second one behind a magic that seed 1 reaches after about 13,000 cases.
    outcome = native_run(planted_project, "two", cases=20_000, seed=1)
    # a known bug is known by its stack offsets: only reports never seen before are symbolized
    assert outcome.refound_restarts > MAX_RESTARTS and len(symbolized) <= 4
    found = {f.signature: f for f in outcome.findings}
    assert set(found) == {SHALLOW, BEHIND_MAGIC}
    assert found[SHALLOW].occurrences > MAX_RESTARTS + 1, "re-found more often than the cap on new bugs"
    assert outcome.refound_restarts == sum(f.occurrences - 1 for f in outcome.findings)
    assert outcome.restarts == 2 and outcome.cases == 20_000  # restarted after each new bug; the cap used up
    assert outcome.stopped_early is None and outcome.libfuzzer_seed == 1
    # time-to-find, as for Python artifacts: when, after how many cases and how many seconds of fuzzing
    metas = {sig: load_artifact(f.artifact).metadata for sig, f in found.items()}
    for sig, meta in metas.items():
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", meta["first_seen"])
        assert meta["first_seen_case"] == found[sig].first_seen_case
        assert meta["first_seen_seconds"] == found[sig].first_seen_seconds
    assert 0 < metas[SHALLOW]["first_seen_case"] < 2_000 < metas[BEHIND_MAGIC]["first_seen_case"] <= outcome.cases
    assert 0 < metas[SHALLOW]["first_seen_seconds"] < metas[BEHIND_MAGIC]["first_seen_seconds"] <= outcome.elapsed
    seen = read_seen(found[SHALLOW].artifact)
    assert seen["runs"] == 1 and seen["occurrences"] == found[SHALLOW].occurrences


def test_without_restarts_past_known_crashes_the_second_bug_is_missed_and_said(
    planted_project, native_run, monkeypatch
):
    import assay.native.campaign as campaign

    monkeypatch.setattr(campaign, "MAX_REFOUND_RESTARTS", 0)  # the old behaviour: a re-found crash ends it
    outcome = native_run(planted_project, "two", cases=20_000, seed=1)
    assert [f.signature for f in outcome.findings] == [SHALLOW]
    assert outcome.stopped_early and "found again 0 times" in outcome.stopped_early
    assert "of 20,000 cases left" in outcome.stopped_early and outcome.cases < 20_000


def test_the_cap_on_new_bugs_stops_early_and_says_so(planted_project, native_run, monkeypatch):
    import assay.native.campaign as campaign

    monkeypatch.setattr(campaign, "MAX_RESTARTS", 0)
    outcome = native_run(planted_project, "two", cases=20_000, seed=1)
    assert [f.signature for f in outcome.findings] == [SHALLOW] and outcome.restarts == 0
    assert outcome.stopped_early.startswith("1 bugs found, and libFuzzer is restarted after at most 0 new bugs")
    assert outcome.stopped_early.endswith(f"with {20_000 - outcome.cases:,} of 20,000 cases left")


def test_fuzz_seed_n_is_libfuzzers_seed_n():
    from assay.native.campaign import libfuzzer_seed

    assert [libfuzzer_seed(1, run) for run in range(3)] == [1, 2, 3]  # --fuzz-seed 1: -seed=1, then 2, 3
    assert libfuzzer_seed(12345, 0) == 12345
    for master in (0, -5, 2**31 - 1, 2**31, 2**63 - 1):  # folded into libFuzzer's 1 .. 2**31-1 (0 is random)
        assert 1 <= libfuzzer_seed(master, 0) <= 2**31 - 1
