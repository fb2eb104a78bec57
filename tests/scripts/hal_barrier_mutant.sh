#!/usr/bin/env bash
# make hal-conformance's mutant: the hthreads HAL whose barrier does not wait for the
# calling core's puts. Prints HAL_SOURCE without the statement bng_complete_puts(...);
# in the body of bng_hal_barrier (found by the code: the function's definition up to its
# closing brace, the call in it); fails unless exactly one such statement goes.
# Usage: tests/scripts/hal_barrier_mutant.sh HAL_SOURCE > MUTANT_SOURCE
set -euo pipefail
awk '
  /^void bng_hal_barrier\(void\)/ { in_barrier = 1 }
  in_barrier && /^}/ { in_barrier = 0 }
  in_barrier && /^[ \t]*bng_complete_puts\([^()]*\);/ { removed++; next }
  { print }
  END {
    if (removed != 1) {
      printf "hal_barrier_mutant: %d calls of bng_complete_puts in bng_hal_barrier, not 1\n",
        removed > "/dev/stderr"
      exit 1
    }
  }' "$1"
