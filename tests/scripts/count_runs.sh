#!/usr/bin/env bash
# The closing count of make test (and make check, make test-c): every run named, passed
# or failed as tests/scripts/run_test.sh recorded it in RESULTS; a run without a record
# did not run (its program did not build: make's errors above say why) and counts as
# failed. Prints the failures and skips, the five slowest runs, and last
# "programs: N passed, M failed" (", K skipped" when a run skipped; " in 3m41s" with
# TIER_START, the epoch second the tier began, in the environment). Exits 1 when any
# failed.
# Usage: [TIER_START=S] tests/scripts/count_runs.sh RESULTS RUN...
set -euo pipefail
results=$1
shift
passed=0 failed=0 skipped=0 times=()
for run in "$@"; do
  record=$results/${run//\//_}
  if [ ! -f "$record" ]; then
    echo "FAILED: $run: did not run (make's errors above say why)"
    failed=$((failed + 1))
    continue
  fi
  read -r result seconds < "$record"
  times+=("$seconds $run")
  if [ "$result" = passed ]; then
    passed=$((passed + 1))
  elif [ "$result" = skipped ]; then
    echo "SKIPPED: $run"
    skipped=$((skipped + 1))
  else
    echo "FAILED: $run ($seconds s)"
    failed=$((failed + 1))
  fi
done
if [ ${#times[@]} -gt 0 ]; then
  echo "slowest:"
  # awk keeps the first five and reads the rest (a head here would end the pipe early:
  # sort killed by SIGPIPE, which pipefail turns into this script's failure)
  printf '%s\n' "${times[@]}" | sort -rn | awk 'NR <= 5 { printf "  %6.1f s  %s\n", $1, $2 }'
fi
wall=
if [ -n "${TIER_START:-}" ]; then
  seconds=$(( $(date +%s) - TIER_START ))
  wall=" in $((seconds / 60))m$(printf '%02d' $((seconds % 60)))s"
fi
echo "programs: $passed passed, $failed failed$([ "$skipped" -eq 0 ] || echo ", $skipped skipped")$wall"
[ "$failed" -eq 0 ]
