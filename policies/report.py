"""Reports of a policy run: text for people, JSON for tools, SARIF 2.1.0 for code scanning and
JUnit XML for CI dashboards. ``trainstack check`` and ``trainstack preview`` share them.

Each format takes ``{stack: (violations, number of objects checked)}``; violations include notes
(level ``note``: what a rule could not check), which never fail a run.
"""
from __future__ import annotations

import json
import re
import urllib.parse
from pathlib import Path

from .framework import ADVISORY, MANDATORY, NOTE, Violation, kind_of_id
from .rules import RULES
from .runner import summary

Results = dict[str, tuple[list[Violation], int]]
TOOL = "trainstack"
DOCS = "docs/policies.md"
VERSION = "0.1.0"


def _inside(path: Path) -> Path | None:
    """``path`` relative to the working folder (%SRCROOT%), or None when it lies outside."""
    try:
        return path.resolve().relative_to(Path.cwd().resolve())
    except (OSError, RuntimeError, ValueError):   # outside, or a symlink loop
        return None


def shown(path: Path | str) -> str:
    """A path as reports name it: relative to the working folder when inside it, else as given."""
    inside = _inside(Path(path))
    return str(inside) if inside is not None else str(path)


def text(results: Results) -> str:
    lines = []
    for name, (violations, count) in results.items():
        for v in violations:
            source = f" [{v.source}:{v.line}:{v.column}]" if v.source and v.line else \
                (f" [{v.source}]" if v.source else "")
            lines.append(f"{v.level.upper():9} {v.rule}: {v.message}{source}")
        lines.append(summary(name, violations, count))
    return "\n".join(lines) + "\n"


def as_json(results: Results) -> str:
    doc = {"stacks": {name: {"objects": count,
                             "mandatory": sum(v.level == MANDATORY for v in violations),
                             "advisory": sum(v.level == ADVISORY for v in violations),
                             "violations": [v.as_dict() for v in violations if v.level != NOTE],
                             "notChecked": [v.as_dict() for v in violations if v.level == NOTE]}
                      for name, (violations, count) in results.items()}}
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"


# --- SARIF 2.1.0 ------------------------------------------------------------------------------

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
_SARIF_LEVEL = {MANDATORY: "error", ADVISORY: "warning", NOTE: "note"}
_SECURITY_SEVERITY = {"low": "3.0", "medium": "5.5", "high": "8.0", "critical": "9.5"}


SRCROOT = "%SRCROOT%"


def _artifact(source: str) -> dict:
    """A URI relative to %SRCROOT% where the file is inside the working folder; an absolute file
    URI otherwise (``../x.yaml`` too: a relative URI must not climb out of its base)."""
    inside = _inside(Path(source))
    if inside is None:
        return {"uri": Path(source).resolve().as_uri()}
    return {"uri": urllib.parse.quote(inside.as_posix(), safe="/"), "uriBaseId": SRCROOT}


def _physical(source: str, line: int | None, column: int | None) -> dict:
    region = {"startLine": line or 1, **({"startColumn": column} if column else {})}
    return {"artifactLocation": _artifact(source), "region": region}


def sarif_rules() -> list[dict]:
    out = []
    for rule in RULES:
        help_text = f"{rule.description}\n\nWhy: {rule.why}\n\nFix: {rule.fix}\n\nSee {DOCS}#{rule.id}."
        help_md = (f"{rule.description}\n\n**Why.** {rule.why}\n\n**Fix.** {rule.fix}\n\n"
                   f"See [{DOCS}]({DOCS}#{rule.id}).")
        out.append({
            "id": rule.id,
            "name": "".join(part.capitalize() for part in rule.id.split("-")),
            "shortDescription": {"text": rule.description},
            "fullDescription": {"text": rule.why},
            "help": {"text": help_text, "markdown": help_md},
            "defaultConfiguration": {"level": _SARIF_LEVEL[rule.enforcement]},
            "properties": {"tags": ["kubernetes", "trainstack", rule.enforcement],
                           "security-severity": _SECURITY_SEVERITY.get(rule.severity, "5.0"),
                           "problem.severity": "error" if rule.enforcement == MANDATORY else "warning"},
        })
    return out


def _fingerprint(v: Violation) -> str:
    import hashlib   # SARIF only; OpenSSL's load costs every command 3 ms

    return hashlib.sha256(f"{v.rule}\0{v.resource}\0{v.path}".encode()).hexdigest()[:32]


def _sarif_result(v: Violation, index: dict[str, int]) -> dict:
    kind, name = kind_of_id(v.resource)
    logical = {"name": name,
               "fullyQualifiedName": f"{v.resource}:{v.path}" if v.path else v.resource,
               "kind": "resource", "decoratedName": kind}
    location: dict = {"logicalLocations": [logical]}
    if v.source:
        location["physicalLocation"] = _physical(v.source, v.line, v.column)
    result = {"ruleId": v.rule, "level": _SARIF_LEVEL[v.level], "message": {"text": v.message},
              "locations": [location], "partialFingerprints": {"trainstackViolation/v1": _fingerprint(v)},
              "properties": {"resource": v.resource, "path": v.path, "enforcementLevel": v.level,
                             "severity": v.severity}}
    if v.origin:   # the stack file key that renders the object: where to change it
        file, line, column = (v.origin.rsplit(":", 2) + ["1", "1"])[:3]
        result["relatedLocations"] = [{"id": 1, "physicalLocation": _physical(file, int(line), int(column)),
                                       "message": {"text": "the stack setting that renders this object"}}]
    if v.rule in index:
        result["ruleIndex"] = index[v.rule]
    return result


def as_sarif(results: Results) -> str:
    rules = sarif_rules()
    index = {r["id"]: i for i, r in enumerate(rules)}
    runs = []
    for name, (violations, count) in results.items():
        notes = [{"level": "note", "message": {"text": v.message},
                  "descriptor": {"id": "not-checked"},
                  **({"locations": [{"physicalLocation": _physical(v.source, v.line, v.column)}]} if v.source else {}),
                  **({"associatedRule": {"id": v.rule, "index": index[v.rule]}} if v.rule in index else {})}
                 for v in violations if v.level == NOTE]
        runs.append({
            "tool": {"driver": {"name": TOOL, "version": VERSION, "semanticVersion": VERSION, "rules": rules}},
            "automationDetails": {"id": f"{TOOL}/{name}/"},
            "originalUriBaseIds": {SRCROOT: {"uri": Path.cwd().resolve().as_uri() + "/"}},
            "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notes}],
            "results": [_sarif_result(v, index) for v in violations if v.level != NOTE],
            "properties": {"stack": name, "objects": count},
        })
    doc = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": runs}
    return json.dumps(doc, indent=2) + "\n"


def failure(fmt: str, stacks: list[str], message: str, code: int = 2) -> str:
    """A valid document for a run that stopped (exit ``code``: 2 on its input, 3 when `preview`'s
    pack failed): the failure, no results."""
    if fmt == "sarif":
        runs = [{"tool": {"driver": {"name": TOOL, "version": VERSION, "semanticVersion": VERSION,
                                     "rules": sarif_rules()}},
                 "automationDetails": {"id": f"{TOOL}/{name}/"},
                 "invocations": [{"executionSuccessful": False, "exitCode": code,
                                  "toolExecutionNotifications": [{"level": "error", "message": {"text": message}}]}],
                 "results": [], "properties": {"stack": name, "objects": 0}} for name in stacks]
        return json.dumps({"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": runs}, indent=2) + "\n"
    if fmt == "json":
        return json.dumps({"error": message, "exitCode": code, "stacks": {}}, indent=2, sort_keys=True) + "\n"
    if fmt == "junit":
        import xml.etree.ElementTree as ET   # only JUnit reports need it

        root = ET.Element("testsuites", name="trainstack policies", tests="1", failures="0", errors="1")
        for name in stacks:
            suite = ET.SubElement(root, "testsuite", name=name, tests="1", failures="0", errors="1", skipped="0")
            case = ET.SubElement(suite, "testcase", classname=f"{TOOL}.{name}", name="input")
            ET.SubElement(case, "error", type="input" if code == 2 else "tool", message=message).text = message
        ET.indent(root)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
    return ""


# --- JUnit XML --------------------------------------------------------------------------------

def as_junit(results: Results) -> str:
    """One testsuite per stack, one testcase per rule, one <failure> per violation; notes go to the
    testcase's system-out."""
    import xml.etree.ElementTree as ET   # only JUnit reports need it

    root = ET.Element("testsuites", name="trainstack policies")
    total = failed = 0
    for name, (violations, count) in results.items():
        suite = ET.SubElement(root, "testsuite", name=name)
        props = ET.SubElement(suite, "properties")
        ET.SubElement(props, "property", name="objects", value=str(count))
        suite_failed = 0
        for rule in RULES:
            case = ET.SubElement(suite, "testcase", classname=f"{TOOL}.{name}", name=rule.id)
            mine = [v for v in violations if v.rule == rule.id]
            for v in mine:
                if v.level == NOTE:
                    continue
                where = f"{v.resource} at {v.path}" if v.path else v.resource
                failure = ET.SubElement(case, "failure", type=v.level, message=f"{v.level}: {where}")
                at = f":{v.line}:{v.column}" if v.line else ""
                failure.text = v.message + (f"\nsource: {v.source}{at}" if v.source else "") + \
                    (f"\nstack setting: {v.origin}" if v.origin else "")
            if any(v.level != NOTE for v in mine):
                suite_failed += 1
            notes = [v.message for v in mine if v.level == NOTE]
            if notes:
                ET.SubElement(case, "system-out").text = "\n".join(f"not checked: {n}" for n in notes)
        suite.set("tests", str(len(RULES)))
        suite.set("failures", str(suite_failed))
        suite.set("errors", "0")
        suite.set("skipped", "0")
        total += len(RULES)
        failed += suite_failed
    root.set("tests", str(total))
    root.set("failures", str(failed))
    root.set("errors", "0")
    for element in root.iter():   # names and messages come from user input: keep the XML valid
        element.text = _xml_safe(element.text)
        for key, value in element.attrib.items():
            element.set(key, _xml_safe(value))
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# Characters XML 1.0 forbids (C0 controls but tab and newlines, surrogates, U+FFFE/U+FFFF);
# ElementTree writes them as they are, which no parser accepts.
# A pattern, compiled (and kept by `re`) on the first junit report, not by every command.
_XML_INVALID = "[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]"


def _xml_safe(value: str | None) -> str | None:
    return re.sub(_XML_INVALID, lambda m: f"\\x{ord(m.group()):02x}", value) if value else value


FORMATS = {"text": text, "json": as_json, "sarif": as_sarif, "junit": as_junit}
