#!/usr/bin/env bash
# A flavour's run that would repeat its twin's: when every object of the flavour's
# own (FOLDER/obj/*.o: its kernels and the rooms that compute with vectors; it links the
# twin's of the rest) is byte for byte the twin's object of the same name, the two
# programs are one program and the twin's runs already ran it; say so and pass. Any
# object that differs (or that the twin lacks): run COMMAND, the flavour's own run.
# (gnu_softhalf and gnu: the GNU backend converts halves on their bits, never through
# the half type, so with a compiler that has _Float16 the portable half changes no
# object; a kernel or a vector room that computed in half would change some, and its
# suite would run again.)
# Usage: tests/scripts/unless_same_objects.sh TWIN_FOLDER FOLDER COMMAND...
set -uo pipefail
twin=$1 own=$2
shift 2
for object in "$own"/obj/*.o; do
  if ! cmp -s "$object" "$twin/obj/$(basename "$object")"; then
    echo "$own: obj/$(basename "$object") is not $twin's: the flavour's own run"
    exec "$@"
  fi
done
echo "$own: every object is $twin's, byte for byte: one program, whose runs $twin's are"
