#!/usr/bin/env bash
# make dma-mutants: the asynchronous host HAL must catch every missing DMA wait.
# For each bng_hal_dma_wait(...) in include/bng_driver.c in turn, turn it into
# (void)(...) (the transfer issued, never waited for), rebuild the driver and run the
# target's Check suite (its _s tests compare with _p bit for bit); the mutant must fail.
# Usage: tests/scripts/dma_mutants.sh BUILD_DIR CC "CFLAGS" ROOT:OBJDIR...
#   ROOT the generated folder, OBJDIR the built objects of its library (gnu flavour).
set -euo pipefail
build=$1 cc=$2 cflags=$3
shift 3
driver=include/bng_driver.c
count=$(grep -o 'bng_hal_dma_wait(' "$driver" | wc -l)
check_cflags=$(pkg-config --cflags check)
check_libs=$(pkg-config --libs check)
caught=0 total=0
for spec in "$@"; do
  root=${spec%%:*} objs=${spec#*:}
  t=$(basename "$root")
  out=$build/mutants/$t
  mkdir -p "$out"
  others=$(ls "$objs"/*.o | grep -v '/bng_driver\.o$')
  for k in $(seq 1 "$count"); do
    # the k-th call only: awk counts occurrences across the file
    awk -v k="$k" '{ line = $0; out = "";
        while ((i = index(line, "bng_hal_dma_wait(")) > 0) {
          n++; out = out substr(line, 1, i - 1) (n == k ? "(void)(" : "bng_hal_dma_wait(");
          line = substr(line, i + 17) }
        print out line }' "$driver" > "$out/bng_driver_$k.c"
    where=$( (diff "$driver" "$out/bng_driver_$k.c" || true) | sed -n 's/^> *//p' | head -1)
    # shellcheck disable=SC2086
    $cc $cflags -I"$root" -Iinclude -c "$out/bng_driver_$k.c" -o "$out/bng_driver_$k.o"
    # shellcheck disable=SC2086
    $cc $cflags -I"$root" -Iinclude -Itests/c $check_cflags tests/c/test_bng.c tests/c/bng_dtypes.c \
      tests/c/bng_test_support.c tests/c/bng_reference.c "$out/bng_driver_$k.o" $others \
      $check_libs -lpthread -lm -o "$out/test_$k"
    total=$((total + 1))
    # sh (not bash) runs it, so an aborting mutant is not announced by the shell
    if BNG_TEST_QUICK=1 sh -c 'timeout 600 "$0" > "$1" 2>&1; exit $?' "$out/test_$k" "$out/test_$k.log"; then
      echo "dma-mutants: $t: NOT CAUGHT: wait $k: $where" >&2
    else
      caught=$((caught + 1))
      why=$(grep -m1 -oE 'bng_hal_host: .*|_s [^:]*differs from _p|[0-9]+%: Checks: [0-9]+, Failures: [0-9]+' "$out/test_$k.log" || true)
      echo "dma-mutants: $t: caught wait $k ($why)"
    fi
  done
done
echo "dma-mutants: $caught of $total mutants caught"
[ "$caught" -eq "$total" ]
