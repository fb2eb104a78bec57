#!/usr/bin/env bash
# Vendor TARGET's drop with its first channel count only, for the checks of a drop's
# glue and of porting.md's recipes (drop_builds.sh, drop_on_host.sh, hthreads_on_host.sh):
# what they check is the same whatever the channels, and one count's kernels compile in
# seconds where the whole list's take tens (every count's kernels are built and run by
# the suites, and bare-metal by make cross-check). The count is set in a copy of the
# repository's targets.yaml beside the drop's folder by the generator's own edit, as
# make generate CHANNELS= sets it. From any folder; DEST absolute or relative to it.
# Usage:
#   vendor_first_count.sh PYTHON TARGET DEST [vendor options: --hal hthreads]
set -euo pipefail
python=$1 target=$2 dest=$3
shift 3
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$(dirname "$dest")"
config=$(dirname "$dest")/targets.yaml
cp "$root/targets.yaml" "$config"
PYTHONPATH=$root "$python" - "$config" "$target" <<'PY'
import sys
from generator.edit import set_channels
from generator.files import holding
from generator.loader import load
path, name = sys.argv[1:]
first = next(t for t in load(path).targets if t.name == name).channels[0]
with holding(path):
    set_channels(path, name, str(first))
PY
PYTHONPATH=$root "$python" -m generator vendor --config "$config" --target "$target" \
  --dest "$dest" "$@" >/dev/null
