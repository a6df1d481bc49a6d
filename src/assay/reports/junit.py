"""JUnit XML from a report: one ``testcase`` per target, one ``failure`` per bug it hit.

The layout is the common one CI servers read (Jenkins, GitLab, Azure DevOps, the
GitHub test-report actions): ``testsuites > testsuite > testcase``, checked in the
tests against the Jenkins/Surefire ``junit-10.xsd``.  Skipped targets (another
shard's) are ``skipped`` test cases; an interrupted target is an ``error``.
Written with :mod:`xml.etree.ElementTree`: the format is small and a library
would add a dependency for a dozen lines.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from typing import Any

from assay.store.atomic import write_bytes

#: The ``testsuite`` name (and every test case's ``classname`` prefix).
SUITE = "assay.fuzz"


# Characters XML 1.0 cannot carry at all (an exception message may echo raw input bytes).
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def xml_text(text: str) -> str:
    """``text`` with characters XML cannot hold written as ``\\xNN``."""
    return _NOT_XML.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _seconds(value: float) -> str:
    return f"{value:.3f}"


def failure_text(bug: dict[str, Any]) -> str:
    """What a CI page shows under a failed target for one bug."""
    lines = [f"[{bug['oracle']}] {bug['exception'] or bug['key']}: {bug['message']}".rstrip(": ")]
    where = bug.get("project_location") or bug.get("location")
    if where:
        lines.append(f"at {where.get('path') or where.get('file')}:{where['line']} in {where['function']}")
    if bug.get("harness"):
        lines.append("raised in the harness file itself: the fuzz target's mistake, not the library's")
    status = f"{bug['status']}: " if bug.get("status") else ""
    lines.append(f"{status}seen {bug['occurrences']}x this run under {len(bug['signatures'])} signature(s)")
    if bug.get("replay"):
        lines.append(f"replay: {bug['replay']}")
    if bug.get("traceback"):
        lines += ["", bug["traceback"].rstrip()]
    return "\n".join(lines)


def junit_xml(report: dict[str, Any]) -> bytes:
    """The JUnit XML document for ``report`` (a :func:`assay.reports.campaign.build_report` result)."""
    bugs = {b["id"]: b for b in report.get("bugs", [])}
    suites = ET.Element("testsuites", name="assay")
    suite = ET.SubElement(suites, "testsuite", name=SUITE)
    props = ET.SubElement(suite, "properties")
    for name, value in (
        ("master_seed", report.get("master_seed")),
        ("assay_version", report.get("assay_version")),
        ("status", report.get("status")),
    ):
        ET.SubElement(props, "property", name=name, value=str(value))
    failures = errors = skipped = 0
    for name, target in report.get("targets", {}).items():
        case = ET.SubElement(
            suite, "testcase", name=name, classname=f"{SUITE}.{name}", time=_seconds(target["elapsed"])
        )
        seen: list[str] = []
        for finding in target["findings"]:
            bug_id = finding.get("bug")
            if bug_id not in seen:
                seen.append(bug_id)
        for bug_id in seen:
            bug = bugs.get(bug_id)
            if bug is None:
                continue
            status = f" [{bug['status']}]" if bug.get("status") else ""
            message = (
                f"{bug['exception'] or bug['oracle']}: {bug['message']}".rstrip(": ") + f" (bug {bug['id']}){status}"
            )
            el = ET.SubElement(case, "failure", message=xml_text(message), type=bug["oracle"])
            el.text = xml_text(failure_text(bug))
        failures += bool(seen)
        if target["status"] == "interrupted":
            ET.SubElement(
                case, "error", message="interrupted", type="interrupted"
            ).text = "the campaign was interrupted; findings and corpus so far are saved"
            errors += 1
        out = ET.SubElement(case, "system-out")
        out.text = (
            f"seed {target['seed']}: {target['cases']} cases, {target['execs_per_sec']} exec/s, "
            f"{target['coverage']['edges']} edges, corpus {target['corpus_size']}"
        )
    for name, why in report.get("skipped", {}).items():
        case = ET.SubElement(suite, "testcase", name=name, classname=f"{SUITE}.{name}", time=_seconds(0.0))
        ET.SubElement(case, "skipped", message=why)
        skipped += 1
    total = len(report.get("targets", {})) + skipped
    for el in (suites, suite):
        el.set("tests", str(total))
        el.set("failures", str(failures))
        el.set("errors", str(errors))
        el.set("time", _seconds(report.get("elapsed", 0.0)))
    suite.set("skipped", str(skipped))
    suite.set("timestamp", str(report.get("created", "")))
    ET.indent(suites)
    return ET.tostring(suites, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit(path: str, report: dict[str, Any]) -> None:
    """Write :func:`junit_xml` to ``path`` atomically."""
    write_bytes(path, junit_xml(report))
