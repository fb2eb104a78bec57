#!/usr/bin/env bash
# docs/porting.md's recipe for a vendored drop on a host, exactly as written there:
# vendor TARGET's drop, compile its .c files with the manual's two examples as the
# program, add the host HAL from include/host/, link, run. Usage:
#   drop_on_host.sh BUILD PYTHON CC TARGET
set -euo pipefail
build=$1 python=$2 cc=$3 target=$4
R=$PWD
D=$R/$build/drop-host/$target
obj=$R/$build/drop-host/$target-objects
rm -rf "$D" "$obj"
mkdir -p "$obj"
"$python" -m generator vendor --target "$target" --dest "$D" >/dev/null
cd "$obj"
# The drop and the program (the examples also take the test's reference from tests/c/).
$cc -std=c99 -O2 -ffp-contract=off -DBNG_HOST -I"$D" -I"$R/tests/c" -c "$D"/*.c \
  "$R/tests/c/bng_example.c" "$R/tests/c/bng_reference.c"
# The host HAL and its DMA engine model.
$cc -std=gnu11 -O2 -DBNG_HOST -I"$D" -I"$R/include/host" \
  -c "$R/include/host/bng_hal_host.c" "$R/include/host/bng_dma_engine.c"
for example in manual_example_p manual_example_s; do
  $cc -std=c99 -O2 -ffp-contract=off -DBNG_HOST -I"$D" -I"$R/tests/c" -c "$R/tests/c/$example.c" -o "$example.obj"
  $cc ./*.o "$example.obj" -lpthread -lm -o "$example"
  ./"$example"
done
echo "drop-on-host: $target: the recipe of docs/porting.md builds and runs the manual's examples"
