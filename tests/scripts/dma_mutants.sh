#!/usr/bin/env bash
# make dma-mutants: the asynchronous host HAL must catch every missing DMA wait.
# For each bng_hal_dma_wait(...) in the driver's rooms (include/*.c) in turn, turn it
# into (void)(...) (the transfer issued, never waited for), rebuild that room and run the
# target's Check suite (its _s tests compare with _p bit for bit; on a unified target
# its shared cases, the ones that move data by DMA); the mutant must fail.
# A wait in a room the target does not compile (an extension it does not list: the plan
# leaves the room out of its sources), or in code its preprocessor drops, is skipped on
# that target, and said so.
# The mutants run JOBS at a time (default 2).
# Usage: tests/scripts/dma_mutants.sh BUILD_DIR CC "CFLAGS" ROOT:LIBRARY:OBJECTS...
#   ROOT the generated folder, LIBRARY its gnu flavour's libbatchnormgrad.a, OBJECTS the
#   objects its suite links but the library, by commas (make builds them all, and names
#   each where its build keeps it): each mutant links the mutated room, the suite's
#   objects and the library, whose copy of the room the mutant's definitions leave
#   unlinked. Never a glob of a folder: an older build's object of a renamed room would
#   link beside its new one.
set -euo pipefail
build=$1 cc=$2 cflags=$3
shift 3
check_libs=$(pkg-config --libs check)
export cc cflags check_libs

# The mutants, one per wait: the k-th call of a room only (awk counting occurrences
# across the file), named <room>_<k>, the line it changed beside it.
mkdir -p "$build/mutants"
rm -f "$build"/mutants/*.c "$build"/mutants/where_*
mutants=()
for room in $(grep -l 'bng_hal_dma_wait(' include/*.c); do
  name=$(basename "$room" .c)
  count=$(grep -o 'bng_hal_dma_wait(' "$room" | wc -l)
  for k in $(seq 1 "$count"); do
    awk -v k="$k" '{ line = $0; out = "";
        while ((i = index(line, "bng_hal_dma_wait(")) > 0) {
          n++; out = out substr(line, 1, i - 1) (n == k ? "(void)(" : "bng_hal_dma_wait(");
          line = substr(line, i + 17) }
        print out line }' "$room" > "$build/mutants/${name}_$k.c"
    (diff "$room" "$build/mutants/${name}_$k.c" || true) | sed -n 's/^> *//p' | head -1 \
      > "$build/mutants/where_${name}_$k"
    mutants+=("${name}_$k")
  done
done

# One mutant on one target: build, run quick, record whether the suite caught it.
# $1 ROOT:LIBRARY:OBJECTS, $2 the mutant (<room>_<k>), $3 the mutants' folder
mutant() {
  local root=${1%%:*} rest=${1#*:} m=$2 mutants=$3
  local library=${rest%%:*} objects=${rest#*:}
  local room=${2%_*} out why tags
  out=$mutants/$(basename "$root")
  mkdir -p "$out"
  # shellcheck disable=SC2086
  if ! grep -q "include/$room\.c" "$root/build.mk" \
     || cmp -s <($cc $cflags -I"$root" -Iinclude -E -P "include/$room.c") \
               <($cc $cflags -I"$root" -Iinclude -E -P "$mutants/$m.c"); then
    echo "dma-mutants: $(basename "$root"): skipped $m (not compiled for this target)" \
      | tee "$out/result_$m"
    return 0
  fi
  # shellcheck disable=SC2086
  $cc $cflags -I"$root" -Iinclude -c "$mutants/$m.c" -o "$out/$m.o"
  # shellcheck disable=SC2046,SC2086
  $cc $cflags "$out/$m.o" ${objects//,/ } "$library" \
    $check_libs -lpthread -lm -o "$out/test_$m"
  # On a unified target only the suite's shared cases move data by DMA (its private
  # cases run _p on the caller's memory, as make test's hthreads flavours and
  # ThreadSanitizer take them); on a split target _p stages by DMA and every case runs.
  # A wait in the forward's own rooms (bng_fwd_*) is run against the forward's shared
  # cases (tag "forward"), a wait in the backward's own rooms against every case but
  # those: each mutant meets the cases that reach its room, not the backward's 1.5 s of
  # cases before the forward's. The staging room, which both use, runs them all.
  if grep -q 'define BNG_SPLIT_MEMORY 1' "$root/bng_kernels.h"; then
    tags=
  else
    tags=shared
  fi
  local only= skip=
  case $room in
    bng_fwd_*) only=forward ;;
    bng_staging) ;;
    *) skip=forward ;;
  esac
  # sh (not bash) runs it, so an aborting mutant is not announced by the shell. The
  # cases run in the suite's one process (CK_FORK=no): the first wait the host HAL finds
  # missing aborts the run, rather than every later case meeting it again in a child.
  # shellcheck disable=SC2086
  if env BNG_TEST_QUICK=1 CK_FORK=no ${tags:+CK_INCLUDE_TAGS=${only:-$tags}} \
      ${skip:+CK_EXCLUDE_TAGS=$skip} \
      sh -c 'timeout 600 "$0" > "$1" 2>&1; exit $?' "$out/test_$m" "$out/test_$m.log"; then
    echo "dma-mutants: $(basename "$root"): NOT CAUGHT: $m: $(cat "$mutants/where_$m")" \
      | tee "$out/result_$m" >&2
  else
    why=$(grep -m1 -oE "$caught_by" "$out/test_$m.log" || true)
    echo "dma-mutants: $(basename "$root"): caught $m ($why)" | tee "$out/result_$m"
  fi
}
# what the log says when the suite catches a mutant
caught_by='bng_hal_host: .*|_s [^:]*differs from _p|[0-9]+%: Checks: [0-9]+, Failures: [0-9]+'
export -f mutant
export caught_by

rm -f "$build"/mutants/*/result_*
for spec in "$@"; do
  for m in "${mutants[@]}"; do echo "$spec $m $build/mutants"; done
done | xargs -P "${JOBS:-2}" -n 3 bash -c 'set -euo pipefail; mutant "$@"' _

total=$(cat "$build"/mutants/*/result_* | wc -l)
caught=$(cat "$build"/mutants/*/result_* | grep -c ': caught ' || true)
skipped=$(cat "$build"/mutants/*/result_* | grep -c ': skipped ' || true)
echo "dma-mutants: $caught of $((total - skipped)) mutants caught ($skipped not compiled for their target; ${#mutants[@]} waits in the driver's rooms)"
[ "$total" -eq $(($# * ${#mutants[@]})) ] && [ "$((caught + skipped))" -eq "$total" ]
