"""make vendor: what a firmware tree needs from one target, with a MANIFEST.

The drop is rendered from the same plan as generated/<t> (so --channels gives exactly
the kernels the MANIFEST names), plus the hand-written files it uses from include/:
the headers its sources include and the shared driver; with --hal hthreads, also the
reference HAL for NUDT's hthreads runtime (include/hal/). Nothing host-only
(include/host/, build.mk) goes in.
"""

import dataclasses
import hashlib
import json
import os
import re
from typing import Dict, List, Optional

from . import VERSION
from .plan import SHARED_SOURCES, TargetPlan
from .render import environment, render_target

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Reference HALs a drop can carry: name -> sources (their headers follow by #include).
HALS = {"hthreads": ("include/hal/bng_hal_hthreads.c", "include/hal/bng_hal_hthreads.h")}


def drop_files(root: str, tp: TargetPlan, hal: Optional[str] = None) -> Dict[str, str]:
    """{file name: text} of the drop: the rendered C sources and headers, and the
    include/ files they use (transitively, following #include "...")."""
    files = {os.path.basename(rel): text for rel, text in render_target(environment(), tp)
             if rel.endswith((".c", ".h"))}
    for rel in SHARED_SOURCES + (HALS[hal] if hal else ()):
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            files[os.path.basename(rel)] = f.read()
    todo = list(files)
    while todo:
        for name in INCLUDE.findall(files[todo.pop()]):
            for folder in ("include", "include/hal"):
                path = os.path.join(root, folder, name)
                if name not in files and os.path.isfile(path):
                    with open(path, encoding="utf-8") as f:
                        files[name] = f.read()
                    todo.append(name)
    return files


def write_drop(root: str, tp: TargetPlan, dest: str, command: str,
               hal: Optional[str] = None) -> List[str]:
    """Write the files flat into dest and dest/MANIFEST; returns the file names."""
    files = drop_files(root, tp, hal)
    os.makedirs(dest, exist_ok=True)
    lines = []
    for name in sorted(files):
        data = files[name].encode("utf-8")
        with open(os.path.join(dest, name), "wb") as f:
            f.write(data)
        lines.append(f"{hashlib.sha256(data).hexdigest()}  {name}")
    config = dataclasses.asdict(tp.target)
    del config["locations"]
    hal_note = (f"the {hal} reference HAL: check bng_hal_{hal}_config.h against your runtime"
                if hal else "implement the bng_hal_* functions of bng_hal.h for the _s entry points")
    with open(os.path.join(dest, "MANIFEST"), "w", encoding="utf-8") as f:
        f.write(f"batchnormgrad vendor drop for target {tp.name}\n"
                f"generator: {VERSION}\n"
                f"made by: {command}\n"
                f"compile: cc -std=c99 -I. -c *.c ({hal_note})\n\n"
                f"configuration (targets.yaml, resolved):\n"
                f"{json.dumps(config, indent=2, sort_keys=True)}\n\n"
                f"sha256:\n" + "\n".join(lines) + "\n")
    return sorted(files)
