#!/usr/bin/env python3
"""The outcomes of repeated runs of the failure tests (bench/recovery/soak.sh).

Reads each test target's logs under a bazel-testlogs directory (one
test.log per run: run_K_of_N/test.log with --runs_per_test, else test.log)
and prints, per test case: the runs, how many passed and failed, and, for
the partition cases (their report: "job JOB_STATE_X at +T s after the heal;
... restarts R"), how the job ended - SUCCEEDED with 0 restarts, SUCCEEDED
with restarts, FAILED or not ended - and the time from the heal to its end
(median / max). With --jsonl PATH, appends one JSON line per case there.

    soak_summary.py [--jsonl PATH] TESTLOGS TARGET...
TARGET is a label's path (tests/partition/coordinator_partition_test).
"""
import argparse
import json
import pathlib
import re
import statistics
import sys
import time

CASE_RE = re.compile(r"^\[\s+(OK|FAILED|SKIPPED)\s+\] (\S+)\.(\S+) \((\d+) ms\)")
HEADER_RE = re.compile(r"^=== (\S+): ")
JOB_RE = re.compile(
    r"^  job (JOB_STATE_\w+) at \+([\d.]+) s after the heal;.*restarts (\d+)")
NO_END_RE = re.compile(r"^  job did not end")


def run_logs(testlogs: pathlib.Path, target: str) -> list:
    base = testlogs / target
    # Bazel leaves the run_K_of_M folders of an earlier --runs_per_test=M
    # beside this one's: only the newest series is this soak's.
    runs = list(base.glob("run_*_of_*/test.log"))
    if runs:
        newest = max(runs, key=lambda p: p.stat().st_mtime)
        series = newest.parent.name.rsplit("_", 1)[1]
        runs = [p for p in runs if p.parent.name.endswith("_of_" + series)]
        return sorted(runs, key=lambda p: int(p.parent.name.split("_")[1]))
    single = base / "test.log"
    return [single] if single.exists() else []


def parse(log: pathlib.Path) -> dict:
    """Per case: its gtest outcome, wall ms, and the partition report."""
    cases = {}
    report = None
    for line in log.read_text(errors="replace").splitlines():
        m = HEADER_RE.match(line)
        if m:
            report = cases.setdefault(m.group(1), {})
            continue
        m = JOB_RE.match(line)
        if m and report is not None:
            report["state"] = m.group(1).replace("JOB_STATE_", "")
            report["after_heal_s"] = float(m.group(2))
            report["restarts"] = int(m.group(3))
            continue
        if NO_END_RE.match(line) and report is not None:
            report["state"] = "NOT ENDED"
            continue
        m = CASE_RE.match(line)
        if m:
            c = cases.setdefault(m.group(3), {})
            c["result"] = m.group(1)
            c["ms"] = int(m.group(4))
    return cases


def summarize(target: str, logs: list) -> list:
    by_case = {}
    for log in logs:
        for name, c in parse(log).items():
            by_case.setdefault(name, []).append(c)
    rows = []
    for name, runs in sorted(by_case.items()):
        row = {"target": target, "case": name, "runs": len(runs),
               "passed": sum(r.get("result") == "OK" for r in runs),
               "failed": sum(r.get("result") == "FAILED" for r in runs),
               "skipped": sum(r.get("result") == "SKIPPED" for r in runs)}
        ends = [r for r in runs if "state" in r]
        if ends:
            row["succeeded_0_restarts"] = sum(
                r["state"] == "SUCCEEDED" and r.get("restarts") == 0
                for r in ends)
            row["succeeded_restarted"] = sum(
                r["state"] == "SUCCEEDED" and r.get("restarts", 0) > 0
                for r in ends)
            row["failed_or_not_ended"] = sum(
                r["state"] != "SUCCEEDED" for r in ends)
            heal = [r["after_heal_s"] for r in ends if "after_heal_s" in r]
            if heal:
                row["after_heal_s_median"] = statistics.median(heal)
                row["after_heal_s_max"] = max(heal)
        ms = [r["ms"] for r in runs if "ms" in r]
        if ms:
            row["case_s_median"] = statistics.median(ms) / 1000
        rows.append(row)
    return rows


def table(rows: list) -> str:
    out = ["| case | runs | passed | failed | SUCCEEDED, 0 restarts | "
           "SUCCEEDED, restarted | FAILED / not ended | heal to end, s "
           "(median / max) | case, s (median) |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        heal = ("-" if "after_heal_s_median" not in r else
                f"{r['after_heal_s_median']:.1f} / {r['after_heal_s_max']:.1f}")
        out.append(
            f"| {r['case']} | {r['runs']} | {r['passed']} | {r['failed']} | "
            f"{r.get('succeeded_0_restarts', '-')} | "
            f"{r.get('succeeded_restarted', '-')} | "
            f"{r.get('failed_or_not_ended', '-')} | {heal} | "
            f"{r.get('case_s_median', 0):.0f} |")
    return "\n".join(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jsonl")
    ap.add_argument("testlogs", type=pathlib.Path)
    ap.add_argument("targets", nargs="+")
    a = ap.parse_args()
    rows = []
    for t in a.targets:
        logs = run_logs(a.testlogs, t)
        if not logs:
            print(f"no logs for {t} under {a.testlogs}", file=sys.stderr)
            continue
        rows += summarize(t, logs)
    print(table(rows))
    if a.jsonl:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        with open(a.jsonl, "a") as f:
            for r in rows:
                f.write(json.dumps({"time": stamp, **r}) + "\n")
    return 1 if any(r["failed"] for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
