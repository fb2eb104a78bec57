#!/usr/bin/env bash
# A run that must fail, and fail the way that shows the check caught the defect: COMMAND
# must exit non-zero with at least one output line matching PATTERN, an extended regular
# expression (grep -E, so that a defect two checks can catch may name both). Prints how many.
# Usage: tests/scripts/must_fail.sh PATTERN COMMAND...
set -uo pipefail
pattern=$1
shift
out=$("$@" 2>&1)
status=$?
count=$(grep -cE -- "$pattern" <<<"$out")
if [ "$status" -eq 0 ] || [ "$count" -eq 0 ]; then
  echo "$out" | tail -20
  echo "must_fail: $* exited with $status, $count lines of \"$pattern\": not caught" >&2
  exit 1
fi
echo "must_fail: $* fails, as it must (status $status, $count lines of \"$pattern\")"
