#!/usr/bin/env bash
# A vendored drop taken into builds by its own build glue, as a firmware team would:
# the drop (with a file of the team's own in its folder, which no build may pick up)
# through CMake's add_subdirectory with a bare-metal toolchain file (Cortex-M7: built
# and linked into an image; RV64: the library, with the hthreads HAL), through its Make
# fragment bng.mk included by a firmware Makefile (by a relative path), and on the host
# with BNG_HOST (the manual's examples run). Each checks that the flags results
# depend on reached every source of the drop, the bare-metal ones that the library
# references nothing but memcpy, memset and the HAL (with the hthreads HAL, and the
# runtime's functions it calls), and the Cortex-M7 image that it
# links none of the extensions' kernels. Every build compiles without optimization, as
# CMake does without a build type: the glue is what they check. make cross-check
# compiles every library source of a drop at -O2 with warnings as errors for both cores,
# and the drop's two programs (the HAL conformance check, the calibration program) for
# RV64; make report, the library for both (-O2 took three times as long here). Usage:
#   drop_builds.sh BUILD PYTHON TARGET
set -euo pipefail
build=$1 python=$2 target=$3
# The firmware's builds, not the make that runs this script: none of its settings (host
# CFLAGS would reach the cross builds) or its jobserver.
unset MAKEFLAGS MFLAGS MAKELEVEL CC CFLAGS CPPFLAGS LDFLAGS TARGET CHANNELS DEST HAL CONFIG
R=$PWD
projects=$R/tests/scripts/drop_projects
W=$R/$build/drop-builds/$target
rm -rf "$W"
mkdir -p "$W/drop"
# A file of the firmware team's own beside the drop: not C any compiler takes.
echo 'this is not C' > "$W/drop/board_notes.c"
# TARGET's drop with its first channel count only (vendor_first_count.sh says why).
"$R/tests/scripts/vendor_first_count.sh" "$python" "$target" "$W/drop"
"$python" -m generator verify-drop --dest "$W/drop" >/dev/null
sources=$(cd "$W/drop" && ls -- *.c | grep -vx board_notes.c)

fail() { echo "drop-builds: $target: $*" >&2; exit 1; }

# Every source of the drop (SOURCES, by default the drop's above) compiled once, with
# -std=c99 and -ffp-contract=off (CMake's compile_commands.json, or make's echoed
# commands), in one pass over the log.
flags_reached() {
  local log=$1 what=$2 problem
  problem=$(printf '%s\n' ${3:-$sources} | awk '
    NR == FNR { order[++n] = $0; next }
    / -c / { for (i = 1; i <= n; i++) if (index($0, "/drop/" order[i])) { count[i]++; line[i] = $0 } }
    END {
      for (i = 1; i <= n; i++) {
        if (count[i] != 1) { print order[i] " compiled " count[i] + 0 " times"; exit }
        if (line[i] !~ /-std=c99/ || line[i] !~ /-ffp-contract=off/) {
          print order[i] " compiled without -std=c99 -ffp-contract=off: " line[i]; exit }
      }
    }' - "$log")
  [ -z "$problem" ] || fail "$what: $problem"
}

# What the library needs from outside itself: memcpy, memset and the HAL's functions only
# (and RUNTIME, the names of the runtime a HAL calls, where the drop holds one).
references_ok() {
  local nm=$1 archive=$2 what=$3 runtime=${4:-} other
  [ -f "$archive" ] || fail "$what: no $archive"
  other=$(comm -23 <("$nm" -u "$archive" | awk 'NF && $NF !~ /:$/ {print $NF}' | sort -u) \
                   <("$nm" --defined-only "$archive" | awk 'NF == 3 {print $3}' | sort -u) \
    | grep -vxE "memcpy|memset|bng_hal_[a-z_]+${runtime:+|$runtime}" || true)
  [ -z "$other" ] || fail "$what: the library references $(echo $other)"
}

cmake_build() {   # name toolchain
  local B=$W/cmake-$1
  cmake -S "$projects/firmware" -B "$B" -DBNG_DROP="$W/drop" -DCMAKE_TOOLCHAIN_FILE="$projects/$2" \
    -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$B.log" 2>&1 \
    || { cat "$B.log" >&2; fail "cmake $1 configure failed"; }
  cmake --build "$B" >>"$B.log" 2>&1 || { cat "$B.log" >&2; fail "cmake $1 build failed"; }
  flags_reached "$B/compile_commands.json" "cmake $1"
}

cmake_build arm arm-none-eabi.cmake
arm-none-eabi-nm "$W/cmake-arm/firmware.elf" | grep -w fp_batch_norm_grad_p >/dev/null || fail "no fp_batch_norm_grad_p in the image"
# The image calls only the vendor's fp calls and links with --gc-sections: it carries
# none of the extensions' kernels (their ukernels: _relu_, _keeps_, _nchw_) or driver
# code (bng_relu.c, bng_nchw_*.c) and no half
# code (their tables are the extended calls' own: bng_<dtype>_base_config).
extra=$(arm-none-eabi-nm "$W/cmake-arm/firmware.elf" | awk '{print $NF}' \
  | grep -E '_(relu|keeps)_ukernel__|^bng_[a-z0-9]+_nchw_|^bng_nchw_|^bng_relu_|^bng_f16_|^hp_' \
  | head -3 || true)
[ -z "$extra" ] || fail "the image of the vendor's fp calls links $(echo $extra) (and maybe more)"
references_ok arm-none-eabi-nm "$W/cmake-arm/bng/libbatchnormgrad.a" "cmake arm"
echo "drop-builds: $target: CMake add_subdirectory, Cortex-M7 toolchain file: firmware.elf linked ($(arm-none-eabi-size -B "$W/cmake-arm/firmware.elf" | awk 'NR == 2 {print $1}') bytes of text)"

# The Make fragment, included by a path relative to the firmware's folder.
mkdir -p "$W/make-arm"
cp "$projects/firmware/Makefile" "$projects/firmware/main.c" "$projects/firmware/hal_stubs.c" "$W/make-arm/"
make -C "$W/make-arm" --no-print-directory BNG_DROP=../drop CC=arm-none-eabi-gcc OPT=-O0 >"$W/make-arm.log" 2>&1 \
  || { cat "$W/make-arm.log" >&2; fail "the Make fragment build failed"; }
sed 's|\.\./drop/|/drop/|g' "$W/make-arm.log" > "$W/make-arm.commands"
flags_reached "$W/make-arm.commands" "bng.mk"
echo "drop-builds: $target: Make fragment bng.mk, Cortex-M7: firmware.elf linked"

# On the host: the drop as a CMake library with BNG_HOST, the repository's host HAL,
# the manual's examples and the function-library page's run (tests/scripts/
# drop_on_host.sh runs the shell recipe).
cmake -S "$projects/host" -B "$W/cmake-host" -DBNG_DROP="$W/drop" -DBNG_REPO="$R" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$W/cmake-host.log" 2>&1 \
  && cmake --build "$W/cmake-host" >>"$W/cmake-host.log" 2>&1 \
  || { cat "$W/cmake-host.log" >&2; fail "the host CMake build failed"; }
flags_reached "$W/cmake-host/compile_commands.json" "cmake host"
for example in manual_example_p manual_example_s manual_example_explicit_p manual_example_explicit_s; do
  "$W/cmake-host/$example" >/dev/null || fail "host CMake build: $example failed"
done
echo "drop-builds: $target: CMake add_subdirectory on the host (BNG_HOST=ON): the manual's examples pass"

# RV64 through its toolchain file, with the hthreads HAL: the runtime's header from the
# firmware's SDK (the host mock's stands in for it), given to the library target from
# the firmware's side. Its library references nothing but memcpy, memset, the HAL's
# functions and the runtime's (the drop without a HAL: the Cortex-M7 builds above; the
# same sources, so the RV64 compiler meets every one of them here).
mkdir -p "$W/hthreads"
"$R/tests/scripts/vendor_first_count.sh" "$python" "$target" "$W/hthreads/drop" --hal hthreads
cat > "$W/hthreads/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.13)
project(firmware_hthreads C)
add_subdirectory(drop bng)
target_include_directories(batchnormgrad PRIVATE "$R/include/host")
EOF
cmake -S "$W/hthreads" -B "$W/hthreads/build" -DCMAKE_TOOLCHAIN_FILE="$projects/riscv64-unknown-elf.cmake" \
  -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$W/hthreads.log" 2>&1 \
  && cmake --build "$W/hthreads/build" >>"$W/hthreads.log" 2>&1 \
  || { cat "$W/hthreads.log" >&2; fail "the hthreads drop's CMake build failed"; }
flags_reached "$W/hthreads/build/compile_commands.json" "cmake rv64 hthreads" \
  "$(cd "$W/hthreads/drop" && ls -- *.c)"
references_ok riscv64-unknown-elf-nm "$W/hthreads/build/bng/libbatchnormgrad.a" "cmake rv64 hthreads" \
  'core_barrier|dma_p2p|dma_wait|get_thread_id|vector_malloc|vector_free'
echo "drop-builds: $target: CMake add_subdirectory with HAL=hthreads, RV64 toolchain file: libbatchnormgrad.a built"
