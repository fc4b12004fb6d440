"""Reports of a `subsum verify` run that CI systems and people read.

- `junit_xml`: JUnit XML, one `<testcase>` per check (classname = claim
  ID, name = kind and check), a `<failure>` holding the counterexample and
  how to replay it; a timeout is a failure of type `timeout`.
- `html_page`: one self-contained HTML page (inline CSS, no script, no
  network): claim, statement, source, kind, status and time per check, the
  counterexample of each failing check, and each claim's spec section.

Both are pure functions of the results and the claims; the CLI writes them.
"""

from __future__ import annotations

import html
import os
import time
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Iterable, Sequence

from subsum.conformance.claims import Claim, CheckResult

#: Characters XML 1.0 cannot hold, even escaped (a counterexample may contain them).
_XML_ILLEGAL = dict.fromkeys([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0xFFFE, 0xFFFF])


def xml_text(text: str) -> str:
    """`text` with the characters XML 1.0 forbids written as `\\xNN`, and
    lone surrogates as `\\udNNN` (a counterexample may hold any string)."""
    out = []
    for ch in text:
        code = ord(ch)
        if code in _XML_ILLEGAL or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


def replay_hint(result: CheckResult) -> str:
    return f"replay: subsum verify --claim {result.claim}  (the ci profile draws the same examples every run)"


def junit_xml(results: Sequence[CheckResult], profile: str, seconds: float) -> str:
    """JUnit XML for the results: one test case per check."""
    failures = sum(r.status != "pass" for r in results)
    suites = ET.Element("testsuites", name="subsum verify", tests=str(len(results)), failures=str(failures),
                        errors="0", time=f"{seconds:.3f}")
    suite = ET.SubElement(suites, "testsuite", name=f"subsum verify (profile {profile})", tests=str(len(results)),
                          failures=str(failures), errors="0", skipped="0", time=f"{seconds:.3f}",
                          timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"))
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="profile", value=profile)
    for r in results:
        case = ET.SubElement(suite, "testcase", classname=r.claim, name=xml_text(f"{r.kind}: {r.check}"), time=f"{r.seconds:.3f}")
        if r.status != "pass":
            first = r.detail.splitlines()[0] if r.detail else r.status
            violated = f"violated {r.violated}\n" if r.violated and r.violated != r.claim else ""
            failure = ET.SubElement(case, "failure", type=r.status, message=xml_text(first[:500]))
            failure.text = xml_text(f"{violated}{r.detail}\n\n{replay_hint(r)}")
        elif r.detail:
            ET.SubElement(case, "system-out").text = xml_text(r.detail)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


_CSS = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 2em; }
table { border-collapse: collapse; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f3f3f3; position: sticky; top: 0; }
td.time { text-align: right; font-variant-numeric: tabular-nums; }
.pass { color: #176f2c; font-weight: 600; } .fail, .timeout { color: #b00020; font-weight: 700; }
tr.bad { background: #fff3f3; }
pre { white-space: pre-wrap; word-break: break-word; background: #f7f7f7; padding: 8px; margin: 4px 0; }
.summary span { margin-right: 1.5em; } .dim { color: #666; }
dl.claim { margin: 0 0 1.2em 0; } dl.claim dt { font-weight: 600; } dl.claim dd { margin-left: 1.5em; }
"""


def _spec_link(spec: str, out_dir: Path | None) -> str:
    """An href for a claim's spec section: relative to the page when the
    spec file is found from the current directory, else the path as is."""
    path, _, anchor = spec.partition("#")
    if out_dir is not None and Path(path).is_file():
        path = os.path.relpath(Path(path).resolve(), out_dir.resolve())
    return f"{path}#{anchor}" if anchor else path


def html_page(results: Sequence[CheckResult], claims: Iterable[Claim], profile: str, seconds: float,
              out_dir: Path | None = None) -> str:
    """One self-contained HTML page of the results (no script, no network)."""
    e = html.escape
    claims = list(claims)
    by_id = {c.id: c for c in claims}
    counts = {s: sum(r.status == s for r in results) for s in ("pass", "fail", "timeout")}
    rows = []
    for r in results:
        claim = by_id.get(r.claim)
        statement = claim.statement if claim else ""
        source = claim.source if claim else ""
        bad = r.status != "pass"
        detail = ""
        if bad:
            violated = f"<div>violated <a href='#{e(r.violated)}'>{e(r.violated)}</a></div>" if r.violated and r.violated != r.claim else ""
            detail = f"{violated}<pre>{e(r.detail)}</pre><div class='dim'>{e(replay_hint(r))}</div>"
        elif r.detail:
            detail = f"<span class='dim'>{e(r.detail)}</span>"
        rows.append(
            f"<tr class='{'bad' if bad else ''}'><td><a href='#{e(r.claim)}'>{e(r.claim)}</a></td><td>{e(statement)}</td>"
            f"<td>{e(source)}</td><td>{e(r.kind)}</td><td>{e(r.check)}{detail}</td>"
            f"<td class='{e(r.status)}'>{e(r.status)}</td><td class='time'>{r.seconds:.2f}</td></tr>")
    sections = []
    for c in claims:
        sections.append(
            f"<dl class='claim' id='{e(c.id)}'><dt>{e(c.id)}</dt><dd>{e(c.statement)}</dd>"
            f"<dd class='dim'>source: {e(c.source)}; spec: <a href='{e(_spec_link(c.spec, out_dir))}'>{e(c.spec)}</a></dd>"
            f"<dd class='dim'>model: {e(', '.join(c.model) or 'none')}; impl: {e(', '.join(c.impl) or 'none')}</dd></dl>")
    summary = "".join(f"<span class='{s}'>{counts[s]} {s}</span>" for s in counts)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>subsum verify (profile {e(profile)})</title>
<style>{_CSS}</style></head>
<body>
<h1>subsum verify (profile {e(profile)})</h1>
<p class="summary">{summary}<span class="dim">{len(results)} checks of {len({r.claim for r in results})} claims, {seconds:.1f} s</span></p>
<table>
<thead><tr><th>claim</th><th>statement</th><th>source</th><th>kind</th><th>check</th><th>status</th><th>time (s)</th></tr></thead>
<tbody>
{chr(10).join(rows)}
</tbody></table>
<h2>Claims and their spec sections</h2>
{chr(10).join(sections)}
</body></html>
"""


def kit_junit_xml(report: dict, title: str) -> str:
    """JUnit XML for a run of `subsum conform matching` or `subsum conform broker` (DEF-PLUG-7, DEF-PLUG-8): one
    test case for the run, one failing test case per distinct failure (its replay in the text), and one skipped
    test case per type, operator and feature the run did not check, so that a dashboard never shows a gap as a
    pass. The suite's properties hold the headline and the seed."""
    findings = report.get("findings", report.get("violations", []))
    left_out = [(kind, name) for kind, names in report["not_checked"].items() for name in names]
    tests = 1 + len(findings) + len(left_out)
    errors = str(int(bool(report.get("interrupted"))))
    suites = ET.Element("testsuites", name=title, tests=str(tests), failures=str(len(findings)), errors=errors,
                        time=f"{report['seconds']:.3f}")
    suite = ET.SubElement(suites, "testsuite", name=title, tests=str(tests), failures=str(len(findings)), errors=errors,
                          skipped=str(len(left_out)), time=f"{report['seconds']:.3f}", timestamp=time.strftime("%Y-%m-%dT%H:%M:%S"))
    properties = ET.SubElement(suite, "properties")
    for name in ("headline", "seed"):
        ET.SubElement(properties, "property", name=name, value=xml_text(str(report[name])))
    runs = f"{report.get('workloads', report.get('schedules'))} {'workloads' if 'workloads' in report else 'schedules'}"
    run = ET.SubElement(suite, "testcase", classname=title, name=xml_text(f"the run: {runs}"))
    if report.get("interrupted"):  # a run Ctrl-C cut short is not a pass
        ET.SubElement(run, "error", type="interrupted", message=xml_text(f"interrupted (Ctrl-C) after {runs}"))
    for k, f in enumerate(findings, 1):
        what = f.get("kind", f.get("claim"))
        case = ET.SubElement(suite, "testcase", classname=title, name=xml_text(f"failure {k}: {what}, found at {f['found_at']}"))
        failure = ET.SubElement(case, "failure", type=xml_text(str(what)),
                                message=xml_text(str(f.get("message", f"{what}, found at {f['found_at']}"))[:500]))
        failure.text = xml_text(f"replay: {f.get('replay_command') or f.get('replay')}")
    for kind, name in left_out:
        case = ET.SubElement(suite, "testcase", classname=f"{title}: not checked", name=xml_text(f"{kind[:-1]} {name}"))
        ET.SubElement(case, "skipped", message="not checked in this run (--unsupported, or never sent by this kit)")
    ET.indent(suites)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"
