"""Print "PASSED FAILED" for one test runner's report: junit XML, jest JSON or Playwright JSON.

Used by scripts/test.sh to sum the counts of every runner into one line.
"""

from __future__ import annotations

import json
import sys
import xml.etree.ElementTree as ET


def junit(path: str) -> tuple[int, int]:
    root = ET.parse(path).getroot()
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    total = failed = skipped = 0
    for suite in suites:
        total += int(suite.get("tests", 0))
        failed += int(suite.get("failures", 0)) + int(suite.get("errors", 0))
        skipped += int(suite.get("skipped", 0))
    return total - failed - skipped, failed


def jest(path: str) -> tuple[int, int]:
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    # A suite that fails to compile has no failed tests but still fails the run.
    broken = sum(
        1
        for s in data["testResults"]
        if s.get("status") == "failed"
        and not any(a["status"] == "failed" for a in s.get("assertionResults", []))
    )
    return data["numPassedTests"], data["numFailedTests"] + broken


def playwright(path: str) -> tuple[int, int]:
    with open(path, encoding="utf-8") as f:
        stats = json.load(f)["stats"]
    # "flaky" passed on a retry; "unexpected" failed every attempt.
    return stats.get("expected", 0) + stats.get("flaky", 0), stats.get("unexpected", 0)


if __name__ == "__main__":
    kind, report = sys.argv[1], sys.argv[2]
    passed, failed = {"junit": junit, "jest": jest, "playwright": playwright}[kind](report)
    print(passed, failed)
