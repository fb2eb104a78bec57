#!/usr/bin/env python3
"""make coverage's report: the driver's line and branch coverage by the fast tier (make
check) and by the full one (make test); then the lines only the full tier runs, and the
lines neither runs (each one fails the report).

  coverage_report.py collect --build DIR --filter RE --exclude RE --jobs N OUT
      gcov's JSON (gcov --json-format, GCC 9 and later) of every counter file (.gcda)
      under --build, read from the folder the objects were compiled in (this one), the
      files the filters select merged: a line's count summed over every build of it,
      its branches the most any one build has and takes. OUT: JSON
      {file: {line: [count, branches taken, branches]}}.
  coverage_report.py report --check CHECK.json --test TEST.json
"""
import argparse
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor


def gcov_json(data_file):
    out = subprocess.run(["gcov", "--branch-probabilities", "--json-format", "--stdout", data_file],
                         check=True, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         text=True).stdout
    return [json.loads(line) for line in out.splitlines() if line.strip()]


def collect(args):
    data_files = sorted(os.path.join(d, n) for d, _, names in os.walk(args.build)
                        for n in names if n.endswith(".gcda"))
    keep, drop = re.compile(args.filter), re.compile(args.exclude)
    files = {}
    with ThreadPoolExecutor(args.jobs) as pool:
        for reports in pool.map(gcov_json, data_files):
            for report in reports:
                for entry in report["files"]:
                    name = os.path.normpath(entry["file"])
                    if not keep.search(name) or drop.search(name):
                        continue
                    lines = files.setdefault(name, {})
                    for line in entry["lines"]:
                        taken = sum(1 for b in line["branches"] if b["count"] > 0)
                        old = lines.get(str(line["line_number"]), [0, 0, 0])
                        lines[str(line["line_number"])] = [old[0] + line["count"],
                                                           max(old[1], taken),
                                                           max(old[2], len(line["branches"]))]
    with open(args.out, "w") as f:
        json.dump(files, f, sort_keys=True)
    return 0


def load(path):
    """{file: {line: (count, branches taken, branches)}}"""
    with open(path) as f:
        return {name: {int(n): tuple(v) for n, v in lines.items()}
                for name, lines in json.load(f).items()}


def totals(lines):
    run = sum(1 for c, _, _ in lines.values() if c > 0)
    taken = sum(t for _, t, _ in lines.values())
    branches = sum(b for _, _, b in lines.values())
    return run, len(lines), taken, branches


def percent(part, whole):
    return f"{100.0 * part / whole:5.1f}%" if whole else "    -"


def ranges(numbers):
    """[3, 4, 5, 9] -> '3-5, 9'"""
    spans = []
    for n in sorted(numbers):
        if spans and n == spans[-1][1] + 1:
            spans[-1][1] = n
        else:
            spans.append([n, n])
    return ", ".join(f"{a}-{b}" if b != a else f"{a}" for a, b in spans)


def cells(run, lines, taken, branches):
    """One tier's columns of a row: lines run of lines, branches taken of branches."""
    return (f"{run:>6}/{lines:<6}{percent(run, lines):>8}  "
            f"{taken:>6}/{branches:<6}{percent(taken, branches):>8}  ")


def table(title, tiers):
    names = sorted(set().union(*(t.keys() for t in tiers.values())))
    print(title)
    print(f"  {'file':<26}" + "".join(f"{t + ' lines':>22}{t + ' branches':>22}"
                                      for t in tiers))
    sums = {t: [0, 0, 0, 0] for t in tiers}
    for name in names:
        row = f"  {name:<26}"
        for tier, files in tiers.items():
            counts = totals(files.get(name, {}))
            sums[tier] = [a + b for a, b in zip(sums[tier], counts)]
            row += cells(*counts)
        print(row)
    print(f"  {'driver':<26}" + "".join(cells(*sums[tier]) for tier in tiers))


def report(args):
    check = load(args.check)
    test = load(args.test)
    if not test:
        print("coverage: no driver file in the full tier's report (no counters read)")
        return 1
    table("driver coverage (lines run / lines, branches taken / branches):",
          {"check": check, "test": test})
    print("lines only make test runs:")
    for name in sorted(test):
        only = [n for n, (c, _, _) in test[name].items()
                if c > 0 and check.get(name, {}).get(n, (0,))[0] == 0]
        if only:
            print(f"  {name}: {ranges(only)}")
    never = {name: [n for n, (c, _, _) in lines.items() if c == 0]
             for name, lines in sorted(test.items())}
    never = {name: lines for name, lines in never.items() if lines}
    if never:
        print("FAILED: driver lines make test never runs:")
        for name, lines in never.items():
            print(f"  {name}: {ranges(lines)}")
        return 1
    print("coverage: every driver line runs in make test")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    verbs = parser.add_subparsers(dest="verb", required=True)
    c = verbs.add_parser("collect")
    c.add_argument("--build", required=True)
    c.add_argument("--filter", required=True)
    c.add_argument("--exclude", required=True)
    c.add_argument("--jobs", type=int, default=2)
    c.add_argument("out")
    r = verbs.add_parser("report")
    r.add_argument("--check", required=True)
    r.add_argument("--test", required=True)
    args = parser.parse_args()
    return collect(args) if args.verb == "collect" else report(args)


if __name__ == "__main__":
    sys.exit(main())
