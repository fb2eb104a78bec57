#!/usr/bin/env bash
# docs/porting.md's shell recipe for a vendored drop on a host, exactly as written
# there: vendor TARGET's drop (its first channel count: vendor_first_count.sh); in a
# folder of its own, compile the drop's .c files and the host HAL from include/host/
# into an archive of every object there; then link each program (the manual's examples
# and the function-library page's, side by side in one folder) with it, and run them.
# Usage:
#   drop_on_host.sh BUILD PYTHON CC TARGET
set -euo pipefail
build=$1 python=$2 cc=$3 target=$4
R=$PWD
W=$R/$build/drop-host/$target
D=$W/drop
rm -rf "$W"
mkdir -p "$W"
"$R/tests/scripts/vendor_first_count.sh" "$python" "$target" "$D"
cd "$W"
# The recipe: the library.
mkdir bng-host && cd bng-host
$cc -std=c99 -O2 -ffp-contract=off -DBNG_HOST -I"$D" -c "$D"/*.c
$cc -std=gnu11 -O2 -DBNG_HOST -I"$D" -I"$R/include/host" \
  -c "$R/include/host/bng_hal_host.c" "$R/include/host/bng_dma_engine.c"
ar rcs libbng_host.a ./*.o
cd ..
# The recipe: each program (here with the examples' shared code from tests/c/).
for example in manual_example_p manual_example_s manual_example_explicit_p manual_example_explicit_s; do
  $cc -std=c99 -O2 -ffp-contract=off -DBNG_HOST -I"$D" -I"$R/tests/c" "$R/tests/c/$example.c" \
    "$R/tests/c/bng_example.c" "$R/tests/c/bng_reference.c" bng-host/libbng_host.a -lpthread -lm -o "$example"
  "./$example"
done
echo "drop-on-host: $target: the recipe of docs/porting.md builds and runs the manual's examples"
