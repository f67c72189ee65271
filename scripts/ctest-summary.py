#!/usr/bin/env python3
"""One stage's counts from ctest's JUnit file (ctest --output-junit), for the
summary table of scripts/test-all.sh.

    ctest-summary.py JUNIT.xml [JUNIT.xml ...]

Prints one line "TESTS PASSED FAILED SKIPPED", then one line per skipped test,
"  NAME: REASON" (the first line of its output that says SKIP, else ctest's
message), then "  FAILED NAME" per failed test. Several files (a stage that
runs ctest more than once) are added up."""
import sys
import xml.etree.ElementTree as ET


def main():
    tests = passed = failed = skipped = 0
    skips, fails = [], []
    for path in sys.argv[1:]:
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            print("0 0 0 0")
            print("  (no test results: %s)" % e)
            return 0
        for tc in root.iter("testcase"):
            tests += 1
            name = tc.get("name", "?")
            status = tc.get("status", "")
            out = (tc.findtext("system-out") or "").splitlines()
            if status == "run":
                passed += 1
            elif status == "notrun" or tc.find("skipped") is not None:
                skipped += 1
                why = next((l.strip() for l in out if "SKIP" in l), "")
                if not why:
                    sk = tc.find("skipped")
                    why = sk.get("message", "") if sk is not None else ""
                skips.append("  %s: %s" % (name, why[:200] or "(no reason printed)"))
            else:
                failed += 1
                fails.append("  FAILED %s" % name)
    print("%d %d %d %d" % (tests, passed, failed, skipped))
    for line in skips + fails:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
