#!/usr/bin/env bash
# New channel sizes as a firmware engineer sets them, as make commands in a scratch copy
# of the project (the Makefile, mk/, the generator, templates, targets.yaml, generated/,
# include/, LICENSE):
#   make generate TARGET=t CHANNELS="48 96 192 384"  says which line of targets.yaml it set
#   make regen-check                                 passes (what CI runs)
#   make generate (plain, as the banners say)        writes nothing: the list stays
#   make vendor TARGET=t DEST=...                    holds exactly those kernels
#   make verify-drop DEST=...                        passes
#   make vendor TARGET=t DEST=... CHANNELS="40 80"   sets the list as generate does
#   an invalid list, and one of 4096 counts          refused in one short line naming
#                                                    CHANNELS=; targets.yaml byte-identical
# Usage: channels_flow.sh BUILD TARGET
set -euo pipefail
build=$1 target=$2
# The commands run as a user types them, not as part of the make that runs this script.
unset MAKEFLAGS MFLAGS MAKELEVEL TARGET CHANNELS DEST HAL CONFIG
R=$PWD
W=$R/$build/channels-flow
P=$W/project
rm -rf "$W"
mkdir -p "$P"
cp -r Makefile mk generator templates targets.yaml generated include LICENSE "$P/"
rm -rf "$P/generator/__pycache__"
cd "$P"

fail() { echo "channels-flow: $*" >&2; exit 1; }
mk() { make --no-print-directory "$@" 2>&1; }
# The kernels a file holds, by channel count: "48 96 ..." (sorted numerically).
kernels() { grep -o "bng_f32_reduce_ukernel__${target}_c[0-9]*_" "$1" | sed 's/.*_c\([0-9]*\)_/\1/' \
  | sort -n | uniq | tr '\n' ' ' | sed 's/ $//'; }

line=$(grep -n '^  '"$target"':' targets.yaml | cut -d: -f1)
line=$(awk -v from="$line" 'NR > from && /^    channels:/ {print NR; exit}' targets.yaml)
old=$(sed -n "${line}p" targets.yaml | sed 's/.*\[\(.*\)\].*/\1/; s/,//g')

out=$(mk generate TARGET="$target" CHANNELS="48 96 192 384") || fail "generate CHANNELS= failed: $out"
said=${out%%$'\n'*}
dropped=$(for c in $old; do case " 48 96 192 384 " in *" $c "*) ;; *) printf '%s ' "$c" ;; esac; done)
dropped=${dropped% }
[ "$said" = "targets.yaml:$line: $target channels: $old -> 48 96 192 384${dropped:+ (dropped $dropped: those counts now run the generic kernel; CHANNELS=\"+48 96 192 384\" adds counts instead)}" ] \
  || fail "generate CHANNELS= did not say what it set: $said"
mk regen-check >/dev/null || fail "regen-check fails after generate CHANNELS="
out=$(mk generate) || fail "plain generate failed: $out"
[ "$out" = "generated: up to date" ] || fail "plain generate changed the tree: $out"
[ "$(kernels "generated/$target/bng_f32_ukernels.c")" = "48 96 192 384" ] || fail "generated/ lost the list"

out=$(mk generate TARGET="$target" CHANNELS="+256") || fail "generate CHANNELS=+ failed: $out"
[ "${out%%$'\n'*}" = "targets.yaml:$line: $target channels: 48 96 192 384 -> 48 96 192 256 384" ] \
  || fail "generate CHANNELS=\"+256\" did not add 256: $out"
out=$(mk generate TARGET="$target" CHANNELS="48 96 192 384") || fail "generate CHANNELS= failed: $out"

mk vendor TARGET="$target" DEST="$W/drop" >/dev/null || fail "vendor failed"
[ "$(kernels "$W/drop/bng_f32_ukernels.c")" = "48 96 192 384" ] \
  || fail "the drop holds kernels $(kernels "$W/drop/bng_f32_ukernels.c")"
out=$(mk verify-drop DEST="$W/drop") || fail "verify-drop failed: $out"

out=$(mk vendor TARGET="$target" DEST="$W/drop" CHANNELS="40 80") || fail "vendor CHANNELS= failed: $out"
case "$out" in *"targets.yaml:$line: $target channels: 48 96 192 384 -> 40 80"*) ;;
  *) fail "vendor CHANNELS= did not say what it set: $out" ;; esac
[ "$(kernels "$W/drop/bng_f32_ukernels.c")" = "40 80" ] || fail "vendor CHANNELS= vendored another list"
mk regen-check >/dev/null || fail "regen-check fails after vendor CHANNELS="

cp targets.yaml "$W/before.yaml"
for bad in "48 96 5000" "48 x" "$(seq 1 4096)"; do
  if out=$(mk generate TARGET="$target" CHANNELS="$bad"); then fail "CHANNELS=\"${bad:0:40}\" was taken"; fi
  cmp -s targets.yaml "$W/before.yaml" || fail "a refused list changed targets.yaml"
  error=$(printf '%s\n' "$out" | grep '^error: ') || fail "no error line: $out"
  [ "$(printf '%s\n' "$error" | wc -l)" = 1 ] && [ "${#error}" -lt 400 ] \
    || fail "error longer than a line: ${#error} characters"
  case "$error" in 'error: CHANNELS='*) ;; *) fail "the error does not name CHANNELS=: $error" ;; esac
done
mk regen-check >/dev/null || fail "regen-check fails after refused lists"
# A drop refused for its HAL or its folder, with a good list: nothing is edited either.
tree_sum() { cat targets.yaml generated/*/* | sha256sum; }
before=$(tree_sum)
for refused in "HAL=bogus DEST=$W/drop2" "DEST=generated/drop"; do
  # shellcheck disable=SC2086
  if out=$(mk vendor TARGET="$target" CHANNELS="56 112" $refused); then
    fail "vendor $refused was taken"; fi
  [ "$(tree_sum)" = "$before" ] || fail "a refused vendor ($refused) changed targets.yaml or generated/"
done
echo "channels-flow: $target: generate CHANNELS= sets targets.yaml:$line, regen-check and a plain generate agree, vendor holds the list, refused lists and refused drops leave targets.yaml and generated/ as they were"
