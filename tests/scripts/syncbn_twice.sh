#!/usr/bin/env bash
# make test's MPI run: the synchronized step on RANKS ranks, twice (the second with
# --repeat 1); both must pass and give the same hash.
# Usage: tests/scripts/syncbn_twice.sh RANKS MPIRUN-COMMAND...
set -euo pipefail
ranks=$1
shift
first=$("$@")
echo "$first"
second=$("$@" --repeat 1)
hash_of() { grep -o 'hash [0-9a-f]*' <<<"$1"; }
[ "$(hash_of "$first")" = "$(hash_of "$second")" ] \
  || { echo "syncbn: $ranks rank(s): a second run gave other bits" >&2; exit 1; }
