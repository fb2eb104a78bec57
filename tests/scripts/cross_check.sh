#!/usr/bin/env bash
# make cross-check: the generated C as firmware will build it.
#   1. every source of the plan (generated/<t>/build.mk: the generated files and
#      the driver's rooms), freestanding, -Werror, for bare-metal RISC-V and
#      Cortex-M7; undefined symbols only memcpy, memset and the bng_hal_* functions;
#   2. -std=c99 -pedantic -Wall -Wextra -Werror under gcc and clang, all three backends
#      (native on the host's emulation of the MT-3000 compiler header; GNU also at a
#      DSP's width, the host's vector macros undefined) on the sources the backend
#      reaches (the kernels, the plan's vector rooms), the others on the portable and
#      the GNU lines;
#   3. the portable backend (and portable half) built with tcc passes the Check suite
#      (at its quick size);
#   4. a vendor drop compiles on its own in a scratch folder with a cross compiler;
#   5. the GCC 8-era feature set (tests/scripts/gcc8_features.h poisons what GCC 8 lacks
#      and makes every compiler take a GCC 8's branches): every source, every backend
#      (native with the host's emulation of the MT-3000 spellings) and half, -std=c99
#      -Werror, compiled at -O2 by Debian's oldest gcc and clang ($OLDEST_COMPILERS);
#      without them, checked (-fsyntax-only) by gcc and clang, whose -O2 builds step 2
#      makes; a source the backend does not reach built once, its preprocessed text
#      proven the same under the three backends by the first compiler's preprocessor;
#   6. the native spellings on the host's emulation of the MT-3000 compiler
#      (tests/c/test_native_spelling.c), per target, under gcc and clang; and clang's
#      GNU backend as a DSP's (every width one vector, a split target: make test's
#      test_half_gcc8 under clang), tests/c/test_half.c run: its lane permutes are
#      __builtin_shufflevector there, GCC's __builtin_shuffle;
#   7. shared memory with a real address-space qualifier: a target rendered here with
#      shared_qualifier "__attribute__((address_space(1)))", its sources, the hthreads
#      HAL (both launch models) and the HAL conformance check built by clang as
#      firmware, -pedantic -Werror;
#   8. the HAL conformance check (include/programs/bng_hal_conformance.c) freestanding for
#      RISC-V: it ships beside a vendored HAL;
#   9. split memory spaces (targets.yaml memory.spaces): the split test target of
#      tests/c/targets-test.yaml, rendered here, builds freestanding for RISC-V, and
#      sparse (-Wsparse-error) checks its driver and kernels: no scalar dereference of
#      vector memory (BNG_VMEM, noderef), no vector load or store of another memory;
#      two mutants of the driver (a scalar read of an AM array, a vector load of a
#      stack array) must make sparse fail.
# The compiles of steps 1, 2, 4 to 8 and 9's RISC-V builds (and the hthreads HAL's),
# step 3's suites and step 9's sparse runs go JOBS at a time (default 2), the rest in
# order.
# Usage: tests/scripts/cross_check.sh BUILD_DIR PYTHON TARGET:SOURCE,...:VECTOR_ROOM,... ...
set -euo pipefail
build=$1 python=$2
shift 2
mkdir -p "$build/cross"
queue_file=$build/cross/queue
: > "$queue_file"
# queue COMMAND...: a compile for the next run_queue (one line, each word quoted).
queue() {
  printf '%q ' "$@" >> "$queue_file"
  printf '\n' >> "$queue_file"
}
# run_queue: the queued compiles, JOBS at a time; the first that fails stops the rest
# (xargs stops on a command's exit status 255) and is named. (Its status taken after
# it, not by ||, under which bash would ignore a queued function's set -e.)
run_queue() {
  xargs -P "${JOBS:-2}" -d '\n' -n 1 bash -c \
    'eval "$1"; status=$?; [ "$status" = 0 ] || { echo "cross-check: failed: $1" >&2; exit 255; }' _ \
    < "$queue_file"
  : > "$queue_file"
}
targets=()
declare -A sources neutral
for spec in "$@"; do
  IFS=: read -r t list vector_list <<< "$spec"
  targets+=("$t")
  sources[$t]=${list//,/ }
  # A source the vector backend does not reach: neither a kernels file nor one of the
  # plan's vector rooms (the generated wrappers, the other rooms).
  for f in ${sources[$t]}; do
    case $f in *_ukernels.c) continue ;; esac
    case ",$vector_list," in *",$f,"*) continue ;; esac
    neutral[$t $f]=1
  done
done
warn="-std=c99 -Wall -Wextra -Werror"

# A target's kernels file that is an earlier target's renamed (ft78ne's f32 kernels are
# mt7004's: tests/generator/test_generator.py holds them to it), token for token but the
# target's name and its banner's description: steps 1, 2 and 5 check it with
# -fsyntax-only, its -O2 builds by those compilers being the earlier target's (renamed
# holds that target's name); step 1 judges its symbols as the earlier target's object's,
# renamed. (Their bare-metal -O2 builds were 71 of the cross-check's 783 compile CPU-s.)
declare -A renamed
for ((i = 0; i < ${#targets[@]}; i++)); do
  t=${targets[i]}
  for f in ${sources[$t]}; do
    case $f in *_ukernels.c) ;; *) continue ;; esac
    for ((j = 0; j < i; j++)); do
      u=${targets[j]} g=generated/${targets[j]}/$(basename "$f")
      if [ -f "$g" ] && cmp -s <(sed "s/$t/$u/g" "$f" | grep -v '^ \* Target:') \
                               <(grep -v '^ \* Target:' "$g"); then
        renamed[$f]=$u
      fi
    done
  done
done
# -O2, or -fsyntax-only for a renamed kernels file
depth_of() { [ -n "${renamed[$1]:-}" ] && echo -fsyntax-only || echo -O2; }
allowed="memcpy memset bng_hal_parallel bng_hal_barrier bng_hal_private bng_hal_dma_get bng_hal_dma_put bng_hal_dma_wait"
declare -A cross=(
  [riscv64-unknown-elf-gcc]=""
  [arm-none-eabi-gcc]="-mcpu=cortex-m7 -mthumb -mfloat-abi=hard -mfpu=fpv5-d16"
)

# Step 3: tcc_suite BUILD TARGET SOURCE...: TARGET's suite on the portable backend built
# by tcc, and run at the quick size (every path still runs: the full sizes run on the
# same C in the portable flavour of make test, built by gcc). Queued first, so that it
# runs beside steps 1, 2, 4 and 5's compiles (run after them, its 40 s on one CPU were
# the step's longest wait); its output is kept (run.log) and shown after the queue.
tcc_suite() (
  set -euo pipefail
  local t=$2 out=$1/tcc/$2 f flags check_libs libtcc1
  shift 2
  rm -rf "$out"        # its objects are linked by glob: none of an older build's
  mkdir -p "$out"
  flags="-DBNG_HOST -DBNG_VEC_BACKEND=BNG_VEC_PORTABLE -DBNG_HALF_PORTABLE -Iinclude -Igenerated/$t -Itests/c"
  for f in "$@" tests/c/test_bng.c tests/c/suite_*.c tests/c/bng_dtypes.c \
    tests/c/bng_test_support.c tests/c/bng_test_data.c tests/c/bng_reference.c; do
    # shellcheck disable=SC2046,SC2086
    tcc -std=c99 -Wall $flags $(pkg-config --cflags check) -c "$f" -o "$out/$(basename "$f" .c).o"
  done
  # The host HAL emulation (threads, TLS) is host tooling, not firmware: built by gcc,
  # as is the link (tcc's linker cannot read Debian's static libcheck).
  for f in include/host/bng_hal_host.c include/host/bng_dma_engine.c; do
    gcc -std=gnu11 -O2 -DBNG_HOST -Iinclude -Iinclude/host -Igenerated/$t -c "$f" -o "$out/$(basename "$f" .c).o"
  done
  check_libs=$(pkg-config --libs check)
  libtcc1=$(find /usr/lib -name libtcc1.a -path '*tcc*' -print -quit)
  # shellcheck disable=SC2086
  gcc -z noexecstack "$out"/*.o "$libtcc1" $check_libs -lpthread -lm -o "$out/test_bng"
  echo "== tcc: $t" > "$out/run.log"
  BNG_TEST_QUICK=1 "$out/test_bng" >> "$out/run.log" 2>&1 || { cat "$out/run.log"; exit 1; }
)
export -f tcc_suite

# Step 5's proofs, same_text WHAT "CC FLAGS" "INCLUDES" SOURCE CHOICE...: SOURCE
# preprocessed by CC with FLAGS (-O2 with its __OPTIMIZE__; no -fsyntax-only) and each
# CHOICE, then INCLUDES, must give the same text under each; else "SOURCE: WHAT".
same_text() (
  set -euo pipefail
  local what=$1 cc_flags=$2 includes=$3 f=$4 choice text first=
  shift 4
  for choice in "$@"; do
    # shellcheck disable=SC2086
    text=$(${cc_flags/-fsyntax-only/} -E $choice $includes "$f" | cksum) || exit 1
    if [ -z "$first" ]; then
      first=$text
    elif [ "$text" != "$first" ]; then
      echo "cross-check: $f: $what" >&2
      exit 1
    fi
  done
)
export -f same_text
for t in "${targets[@]}"; do
  # shellcheck disable=SC2086
  queue tcc_suite "$build" "$t" ${sources[$t]}
done

# Steps 1, 2 and 5 (and 4, 6 and 8, below): their compiles queued, run JOBS at a time,
# then their findings.
for t in "${targets[@]}"; do
  for cc in "${!cross[@]}"; do
    out=$build/cross/$cc/$t
    rm -rf "$out"      # an older build's objects (a renamed room's) would be judged below
    mkdir -p "$out"
    for f in ${sources[$t]}; do
      # shellcheck disable=SC2086
      queue $cc $warn -ffreestanding $(depth_of "$f") ${cross[$cc]} -Iinclude -Igenerated/$t \
        -c "$f" -o "$out/$(basename "$f" .c).o"
    done
  done
done

# A source the backend does not reach (neutral) names no backend, no half conversion
# and no half by value (the generator's DriverLayersTest holds the plan's vector rooms
# to the include graph; step 5 proves its text the same under the three backends):
# built on the portable line and on the GNU one (-march=native, whose vectorizer's
# warnings the portable line's build does not see; the native half), not on the native
# line or at a DSP's width, whose differences from those two (the backend, the host's
# vector macros) it does not reach.
for t in "${targets[@]}"; do
  for cc in gcc clang; do
    for f in ${sources[$t]}; do
      opt=$(depth_of "$f")
      queue $cc $warn -pedantic $opt -DBNG_FIRMWARE -DBNG_VEC_BACKEND=BNG_VEC_PORTABLE -DBNG_HALF_PORTABLE \
        -Iinclude -Igenerated/$t -c "$f" -o /dev/null
      # The native and GNU backends' 64-byte vectors, passed between inline helpers,
      # would be ABI warnings on a host whose vectors are narrower (AVX2): -Wno-psabi,
      # as the library's own builds use (the firmware compiler builds for its DSP).
      queue $cc $warn -pedantic -Wno-psabi $opt -march=native -DBNG_FIRMWARE -DBNG_VEC_BACKEND=BNG_VEC_GNU \
        -Iinclude -Igenerated/$t -c "$f" -o /dev/null
      [ -z "${neutral[$t $f]:-}" ] || continue
      queue $cc $warn -pedantic -Wno-psabi $opt -march=native -DBNG_FIRMWARE -DBNG_VEC_BACKEND=BNG_VEC_NATIVE \
        -DBNG_HALF_PORTABLE -Iinclude -Iinclude/host -Igenerated/$t -c "$f" -o /dev/null
      # ... and as a DSP's GCC sees it, without the host's vector macros: every width one
      # vector of up to 64 lanes (bng_vec_gnu.h BNG_GNU_LANES), never two halves.
      queue $cc $warn -pedantic -Wno-psabi -fsyntax-only -U__AVX512F__ -U__AVX__ -U__SSE2__ -U__SSE__ \
        -DBNG_FIRMWARE -DBNG_VEC_BACKEND=BNG_VEC_GNU -Iinclude -Igenerated/$t -c "$f" -o /dev/null
    done
  done
done

# A GCC 8-era vendor compiler's feature set: no __builtin_convertvector,
# __builtin_shufflevector, _Float16 or __has_builtin. The oldest compilers build at -O2
# (an old optimizer's errors and warnings are what a vendor's compiler would show).
# The header poisons the names and sets the compiler's version for every compiler
# alike, so that today's gcc and clang would find nothing the oldest do not: they check
# the poisoned names (-fsyntax-only; their -O2 builds are step 2's) only without them.
# A neutral source (above) is one compile under the three choices: built once, on the
# first, its text proven the same under the three by the first compiler's preprocessor
# with its build's flags (same_text; the generator's DriverLayersTest holds the rule
# for every compiler: no such source or header it reaches names the backend).
matrix=0 identical=0 neutral_proven=0
proof_cc=${OLDEST_COMPILERS:-gcc clang}
proof_cc=${proof_cc%% *}
choices=("-DBNG_VEC_BACKEND=BNG_VEC_GNU -DBNG_HALF_PORTABLE"
         "-DBNG_VEC_BACKEND=BNG_VEC_PORTABLE -DBNG_HALF_PORTABLE"
         "-DBNG_VEC_BACKEND=BNG_VEC_NATIVE -DBNG_HALF_PORTABLE -Iinclude/host")
for t in "${targets[@]}"; do
  for cc in ${OLDEST_COMPILERS:-gcc clang}; do
    case " ${OLDEST_COMPILERS:-} " in
      *" $cc "*) oldest=1 ;;
      *) oldest=0 ;;
    esac
    for backend in "${choices[@]}"; do
      for f in ${sources[$t]}; do
        depth=-fsyntax-only
        [ "$oldest" = 1 ] && depth=$(depth_of "$f")
        flags="$warn $depth -march=native -Wno-psabi -DBNG_FIRMWARE"
        last="-include tests/scripts/gcc8_features.h -Iinclude -Igenerated/$t"
        if [ -n "${neutral[$t $f]:-}" ]; then
          [ "$backend" = "${choices[0]}" ] || continue
          if [ "$cc" = "$proof_cc" ]; then
            queue same_text "its text depends on the vector backend, but it is not among the plan's vector rooms" \
              "$cc $flags" "$last" "$f" "${choices[@]}"
            neutral_proven=$((neutral_proven + 1))
          fi
        fi
        # shellcheck disable=SC2086
        queue $cc $flags $backend $last -c "$f" -o /dev/null
        matrix=$((matrix + 1))
      done
    done
  done
  # The GNU backend left to choose its half: without _Float16 it must take the portable
  # half by itself, token for token the choice compiled above.
  for f in ${sources[$t]}; do
    queue same_text "the GNU backend on a GCC 8 is not its portable-half build" \
      "gcc -std=c99 -march=native -DBNG_FIRMWARE" \
      "-include tests/scripts/gcc8_features.h -Iinclude -Igenerated/$t" "$f" \
      -DBNG_VEC_BACKEND=BNG_VEC_GNU "${choices[0]}"
    identical=$((identical + 1))
  done
done

# Step 4's drops, rendered now so that their compiles join the queue. A file the drop
# holds byte for byte as step 1 builds it (the generated sources, the driver) is checked
# with -fsyntax-only in the drop (its -O2 build by this compiler is step 1's, or for a
# renamed kernels file the earlier target's); the
# rest (the HAL, the calibration program)
# is built at -O2. The runtime's header is the vendor's; the host mock's copy stands in.
drop=$build/vendor-check
rm -rf "$drop"
for t in "${targets[@]}"; do
  "$python" -m generator vendor --target "$t" --hal hthreads --dest "$drop/$t" >/dev/null
  # (a drop is flat: a source of the plan there under its own name, else none)
  declare -A source_named=()
  for s in ${sources[$t]}; do
    source_named[$(basename "$s")]=$s
  done
  for f in "$drop/$t"/*.c; do
    depth=-O2
    s=${source_named[$(basename "$f")]:-}
    if [ -n "$s" ] && cmp -s "$f" "$s"; then depth=-fsyntax-only; fi
    queue riscv64-unknown-elf-gcc $warn -ffreestanding $depth -I"$drop/$t" -Iinclude/host -c "$f" \
      -o "${f%.c}.o"
  done
done

# The reference HAL for hthreads, both launch models, freestanding for RISC-V (the
# runtime's declarations from the host mock's copy of the public header); step 8; step
# 6's programs, run below.
for t in "${targets[@]}"; do
  for launch in BNG_LAUNCH_FANOUT BNG_LAUNCH_SPMD; do
    queue riscv64-unknown-elf-gcc $warn -ffreestanding -O2 -DBNG_HTHREADS_LAUNCH=$launch -Iinclude -Iinclude/hal \
      -Iinclude/host -Igenerated/$t -c include/hal/bng_hal_hthreads.c -o "$build/cross/bng_hal_hthreads_${t}_$launch.o"
  done
  queue riscv64-unknown-elf-gcc $warn -pedantic -ffreestanding -O2 -Iinclude -Iinclude/programs -Igenerated/$t \
    -c include/programs/bng_hal_conformance.c -o "$build/cross/bng_hal_conformance_$t.o"
  for cc in gcc clang; do
    queue $cc $warn -pedantic -Wno-psabi -O2 -DBNG_HOST -Iinclude -Iinclude/host -Igenerated/$t \
      tests/c/test_native_spelling.c -o "$build/cross/test_native_spelling_${t}_$cc"
  done
done
# shellcheck disable=SC2046
queue clang $warn -pedantic -Wno-psabi -O2 -DBNG_HOST -DBNG_VEC_BACKEND=BNG_VEC_GNU -DBNG_GNU_LANES=64 \
  -DBNG_SPLIT_MEMORY=1 -include tests/scripts/gcc8_features.h -Iinclude $(pkg-config --cflags check) \
  tests/c/test_half.c $(pkg-config --libs check) -lm -o "$build/cross/test_half_clang_dsp"

run_queue

# symbols NM-OPTION: nm's lines for step 1's objects of target t with compiler cc, in
# out, and the objects renamed_from holds (those of the earlier targets that renamed
# files are renamed from, target by target), renamed. One nm a folder: an nm and a sed
# an object took 25 s of the step.
symbols() {
  local u
  $nm "$@" "$out"/*.o || return
  for u in "${!renamed_from[@]}"; do
    # shellcheck disable=SC2086
    $nm "$@" ${renamed_from[$u]} | sed "s/$u/$t/g"
  done
}
for t in "${targets[@]}"; do
  for cc in "${!cross[@]}"; do
    out=$build/cross/$cc/$t
    nm=${cc%gcc}nm
    declare -A renamed_from=()
    for f in ${sources[$t]}; do
      u=${renamed[$f]:-}
      [ -z "$u" ] || renamed_from[$u]+=" $build/cross/$cc/$u/$(basename "$f" .c).o"
    done
    defined=$(symbols --defined-only | awk 'NF == 3 {print $3}' | sort -u)
    undefined=$(symbols -u | awk 'NF == 2 {print $2}' | sort -u \
                | comm -23 - <(printf '%s\n' $defined | sort -u))
    stray=$(printf '%s\n' $undefined | comm -23 - <(printf '%s\n' $allowed | sort -u) | grep . || true)
    if [ -n "$stray" ]; then
      echo "cross-check: $t with $cc references symbols firmware does not have: $stray" >&2
      exit 1
    fi
    echo "cross-check: $t, $cc: freestanding build clean; undefined: $(echo $undefined) "
  done
done

for t in "${targets[@]}"; do
  echo "cross-check: $t: -pedantic -Werror clean under gcc and clang, all three backends where they reach (GNU at the host's width and a DSP's)"
  # A host program that forgets -DBNG_HOST must not compile (it would write to the
  # target's fixed parameter address at its first _s call).
  if echo '#include "batch_norm_grad.h"' | gcc -std=c99 -Iinclude -Igenerated/$t -x c -c - -o /dev/null 2>"$build/nohost.err" \
     || ! grep -q "or BNG_HOST for a host build" "$build/nohost.err"; then
    echo "cross-check: $t: a host build without -DBNG_HOST compiled" >&2
    exit 1
  fi
done
echo "cross-check: GCC 8-era feature set: $matrix compiles clean (targets x ${OLDEST_COMPILERS:-gcc clang -fsyntax-only}${OLDEST_COMPILERS:+ at -O2} x 3 backend and half choices x the sources the backend reaches, and x 1 choice the $neutral_proven it does not reach, whose text is the same under the three); $identical sources' GNU backend choosing its own half preprocess to its portable-half build"
for t in "${targets[@]}"; do
  echo "cross-check: $t: vendor drop ($(ls "$drop/$t" | grep -vc '\.o$') files) compiles on its own"
done

# Step 3's output, from its runs in the queue (tcc_suite).
for t in "${targets[@]}"; do
  cat "$build/tcc/$t/run.log"
done

# Steps 6 and 8 and the hthreads HAL's build, from the queue above.
for t in "${targets[@]}"; do
  echo "cross-check: $t: the hthreads reference HAL builds freestanding in both launch models"
done
for t in "${targets[@]}"; do
  echo "cross-check: $t: the HAL conformance check builds freestanding"
  for cc in gcc clang; do
    "$build/cross/test_native_spelling_${t}_$cc"
  done
done
"$build/cross/test_half_clang_dsp" > "$build/cross/test_half_clang_dsp.log" 2>&1 \
  || { cat "$build/cross/test_half_clang_dsp.log" >&2; exit 1; }
echo "cross-check: the GNU backend as a DSP's under clang (every width one vector, split memory): test_half $(tail -1 "$build/cross/test_half_clang_dsp.log")"

# A target whose shared memory needs an address-space qualifier (clang's
# address_space(1)): every pointer into shared memory must keep it (clang rejects a
# conversion that drops it), through the driver and the HALs.
as_dir=$(mktemp -d)
trap 'rm -rf "$as_dir"' EXIT
"$python" - "$as_dir/targets.yaml" <<'PY'
import sys, yaml
with open("targets.yaml") as f:
    doc = yaml.safe_load(f)
name, target = next(iter(doc["targets"].items()))
target["memory"]["shared_qualifier"] = "__attribute__((address_space(1)))"
target["description"] = f"{name} with an address-space qualifier on shared memory (cross-check only)"
with open(sys.argv[1], "w") as f:
    yaml.safe_dump({"targets": {"as_check": target}}, f)
PY
"$python" -m generator generate --config "$as_dir/targets.yaml" --out "$as_dir/gen" --quiet >/dev/null
as_gen=$as_dir/gen/as_check
grep -q 'define BNG_SHARED __attribute__((address_space(1)))' "$as_gen/batch_norm_grad.h"
as_sources=$(sed -n 's/^BNG_SOURCES_[^ ]* := //p' "$as_gen/build.mk" | sed "s|\$(bng_dir)|$as_gen|g")
[ -n "$as_sources" ]
for f in $as_sources include/programs/bng_hal_conformance.c; do
  # shellcheck disable=SC2086
  queue clang $warn -pedantic -O2 -DBNG_FIRMWARE -DBNG_VEC_BACKEND=BNG_VEC_PORTABLE -DBNG_HALF_PORTABLE \
    -Iinclude -Iinclude/programs -I"$as_gen" -c "$f" -o /dev/null
done
for launch in BNG_LAUNCH_FANOUT BNG_LAUNCH_SPMD; do
  # shellcheck disable=SC2086
  queue clang $warn -O2 -DBNG_FIRMWARE -DBNG_HTHREADS_LAUNCH=$launch -Iinclude -Iinclude/hal -Iinclude/host \
    -I"$as_gen" -c include/hal/bng_hal_hthreads.c -o /dev/null
done
run_queue
echo "cross-check: shared_qualifier address_space(1): sources, hthreads HAL (both launch models) and HAL conformance check build under clang -Werror"

# Split memory spaces: sparse proves that the driver and the kernels of a split target
# keep scalar code off vector memory (BNG_VMEM is a noderef address space under sparse
# there, include/bng_ukernel.h), and the mutants prove that the check bites.
# Each split test target (gnu and native backends): rendered, built freestanding for
# RISC-V with its own backend (the native spellings from the host's copy of the
# compiler header), sparse over its driver and kernels, and its kernels checked to
# spell whole vectors only (rows are padded; a narrower vector or a lane loop would
# touch part of one).
split_dir=$as_dir/split
# sparse parses plain C99: the portable backend (the annotations are the same in all).
split_sparse_flags() {
  echo "-Wsparse-error -std=c99 -DBNG_FIRMWARE -DBNG_VEC_BACKEND=BNG_VEC_PORTABLE -DBNG_HALF_PORTABLE -Iinclude -I$1"
}
check_split_target() {
  local target=$1 gen=$split_dir/$1/$1 sources lanes widths f
  "$python" -m generator generate --config tests/c/targets-test.yaml --target "$target" --out "$split_dir/$target" --quiet >/dev/null
  grep -q 'define BNG_SPLIT_MEMORY 1' "$gen/bng_kernels.h"
  sources=$(sed -n 's/^BNG_SOURCES_[^ ]* := //p' "$gen/build.mk" | sed "s|\$(bng_dir)|$gen|g")
  [ -n "$sources" ]
  for f in $sources; do
    queue riscv64-unknown-elf-gcc $warn -ffreestanding -O2 -Iinclude -Iinclude/host -I"$gen" -c "$f" -o /dev/null
    # shellcheck disable=SC2046
    queue sparse $(split_sparse_flags "$gen") "$f"
  done
  run_queue
  for dtype in f32 f16; do
    [ -f "$gen/bng_${dtype}_ukernels.c" ] || continue
    lanes=$(sed -n "s/^#define BNG_${dtype^^}_LANES //p" "$gen/bng_kernels.h")
    for f in "$gen/bng_${dtype}_ukernels.c" "$gen/bng_${dtype}_fwd_ukernels.c"; do
      [ -f "$f" ] || continue
      widths=$(grep -o 'bng_f32x[0-9]*_' "$f" | sort -u | tr -d '\n')
      if [ "$widths" != "bng_f32x${lanes}_" ]; then
        echo "cross-check: $target $dtype kernels ($(basename "$f")) use vectors $widths, not only bng_f32x${lanes}_" >&2
        exit 1
      fi
    done
  done
  echo "cross-check: $target (split memory spaces): freestanding RISC-V build clean; sparse -Wsparse-error clean on the driver (_p and _s) and kernels; each dtype's kernels use whole vectors of its lanes only"
}
check_split_target mt3000_split
check_split_target mt3000_split_native
sparse_flags=$(split_sparse_flags "$split_dir/mt3000_split/mt3000_split")
# The reference HAL hands AM to the runtime and the driver and never touches it: sparse
# over it too, in both launch models (the runtime's header: the host mock's copy, with
# the public signatures).
hal_sparse_flags="$sparse_flags -Iinclude/hal -Iinclude/programs -Iinclude/host"
for launch in BNG_LAUNCH_FANOUT BNG_LAUNCH_SPMD; do
  # shellcheck disable=SC2086
  sparse $hal_sparse_flags -DBNG_HTHREADS_LAUNCH=$launch include/hal/bng_hal_hthreads.c
done
mutant_dir=$as_dir/mutants
mkdir -p "$mutant_dir"
# mutant NAME SOURCE SED_SCRIPT EXPECTED SPARSE_FLAGS...: SOURCE with SED_SCRIPT applied
# must fail sparse with EXPECTED in its messages.
mutant() {
  local name=$1 source=$2 script=$3 expect=$4
  shift 4
  sed "$script" "$source" > "$mutant_dir/$name.c"
  if cmp -s "$source" "$mutant_dir/$name.c"; then
    echo "cross-check: mutant $name: the injection did not apply" >&2
    exit 1
  fi
  if sparse "$@" "$mutant_dir/$name.c" > "$mutant_dir/$name.log" 2>&1 \
     || ! grep -q "$expect" "$mutant_dir/$name.log"; then
    echo "cross-check: mutant $name: sparse did not fail with '$expect'" >&2
    cat "$mutant_dir/$name.log" >&2
    exit 1
  fi
  echo "cross-check: split mutant $name: sparse fails ($(grep -m1 "$expect" "$mutant_dir/$name.log" | sed 's|.*/||'))"
}
# The HAL writes AM with scalar code (the block it just reserved).
# shellcheck disable=SC2086
mutant hal_scalar_write include/hal/bng_hal_hthreads.c \
  's|^    c->private_memory = block;$|    if (block != NULL) *(BNG_VMEM unsigned char *)block = 0;\n&|' \
  'dereference of noderef expression' $hal_sparse_flags -DBNG_HTHREADS_LAUNCH=BNG_LAUNCH_SPMD
# The HAL conformance check on a split target reaches vector memory by DMA only (its
# scalar code works on a copy in scalar memory): sparse over it, and it must not write
# private memory with scalar code.
# shellcheck disable=SC2086
sparse $hal_sparse_flags include/programs/bng_hal_conformance.c
# shellcheck disable=SC2086
mutant conformance_scalar_write include/programs/bng_hal_conformance.c \
  's|^        failures \|= check_writable(mem, v, bytes, tag);$|&\n    if (mem != NULL) mem[0] = 0;|' \
  'dereference of noderef expression' $hal_sparse_flags
# The driver: the scalar unit reads an AM array (the fold's sums); a vector load from
# scalar memory (a stack array).
# shellcheck disable=SC2086
mutant scalar_read include/bng_nhwc_staged.c \
  's|^    for (g = 0; g < c->slice.groups; g += piece) {$|    if (mem->sum_dy[0] != 0.0f) return;\n&|' \
  'dereference of noderef expression' $sparse_flags
# shellcheck disable=SC2086
mutant vector_load_sm include/bng_steps.c \
  's|^    for (c = 0; c < channels; c += BNG_V) {$|    { float sm[BNG_V] = {0}; (void)bng_vload(sm); }\n&|' \
  'different address spaces' $sparse_flags
echo "cross-check: hthreads HAL and HAL conformance check (split target): sparse clean"
