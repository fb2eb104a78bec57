#!/usr/bin/env bash
# docs/porting.md's recipe for a drop with the hthreads HAL on a host, taken from the
# document itself (section "A drop with the hthreads HAL": its sh block and its C
# program), so that the two cannot drift: vendor TARGET's drop with HAL=hthreads (its
# first channel count: vendor_first_count.sh), then for each launch model run the sh
# block as written (its first line, which names the drop, the repository and the
# model, set to this run's) and the program it builds. A hang fails by timeout. Usage:
#   hthreads_on_host.sh BUILD PYTHON CC TARGET
set -euo pipefail
build=$1 python=$2 cc=$3 target=$4
R=$PWD
doc=$R/docs/porting.md
work=$R/$build/hthreads-host/$target
D=$work/drop
rm -rf "$work"
mkdir -p "$work"

# The fenced block of kind $1 (sh, c) in the recipe's section, without its fences.
recipe_block() {
  awk -v kind="$1" '
    /^#+ / { inside = ($0 ~ /^### A drop with the hthreads HAL$/) }
    inside && !block && $0 == "```" kind { block = 1; next }
    inside && block && $0 == "```" { exit }
    inside && block { print }
  ' "$doc"
}
commands=$(recipe_block sh)
program=$(recipe_block c)
first=$(head -n1 <<<"$commands")
if [[ -z $program || ! $first =~ ^D=.*R=.*MODEL= ]]; then
  echo "hthreads-on-host: docs/porting.md has no recipe (a sh block starting D=... R=... MODEL=, a C program) under '### A drop with the hthreads HAL'" >&2
  exit 1
fi

"$R/tests/scripts/vendor_first_count.sh" "$python" "$target" "$D" --hal hthreads
for model in BNG_LAUNCH_SPMD BNG_LAUNCH_FANOUT; do
  obj=$work/$model
  mkdir -p "$obj"
  printf '%s\n' "$program" > "$obj/my_program.c"
  # The block as written, with this run's drop, repository and model, and its cc the
  # build's compiler.
  (cd "$obj" && cc() { command $cc "$@"; } && D=$D R=$R MODEL=$model \
     && eval "$(tail -n +2 <<<"$commands")")
  status=0
  timeout 120 "$obj/my_program" || status=$?
  if [[ $status != 0 ]]; then
    echo "hthreads-on-host: $target, $model: the recipe's program failed (exit status $status; 124: hung)" >&2
    exit 1
  fi
done
echo "hthreads-on-host: $target: the hthreads recipe of docs/porting.md builds and runs in both launch models"
