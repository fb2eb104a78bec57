"""make vendor: what a firmware tree needs from one target, with a MANIFEST.

The drop is rendered from the same plan as generated/<t> (so --channels gives exactly
the kernels the MANIFEST names), plus the hand-written files it uses from include/:
the headers its sources include and the shared driver. Nothing host-only
(include/host/, build.mk) goes in.
"""

import dataclasses
import hashlib
import json
import os
import re
from typing import Dict, List

from . import VERSION
from .plan import SHARED_SOURCES, TargetPlan
from .render import environment, render_target

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def drop_files(root: str, tp: TargetPlan) -> Dict[str, str]:
    """{file name: text} of the drop: the rendered C sources and headers, and the
    include/ files they use (transitively, following #include "...")."""
    files = {os.path.basename(rel): text for rel, text in render_target(environment(), tp)
             if rel.endswith((".c", ".h"))}
    for rel in SHARED_SOURCES:
        with open(os.path.join(root, rel), encoding="utf-8") as f:
            files[os.path.basename(rel)] = f.read()
    todo = list(files)
    while todo:
        for name in INCLUDE.findall(files[todo.pop()]):
            path = os.path.join(root, "include", name)
            if name not in files and os.path.isfile(path):
                with open(path, encoding="utf-8") as f:
                    files[name] = f.read()
                todo.append(name)
    return files


def write_drop(root: str, tp: TargetPlan, dest: str, command: str) -> List[str]:
    """Write the files flat into dest and dest/MANIFEST; returns the file names."""
    files = drop_files(root, tp)
    os.makedirs(dest, exist_ok=True)
    lines = []
    for name in sorted(files):
        data = files[name].encode("utf-8")
        with open(os.path.join(dest, name), "wb") as f:
            f.write(data)
        lines.append(f"{hashlib.sha256(data).hexdigest()}  {name}")
    config = dataclasses.asdict(tp.target)
    del config["locations"]
    with open(os.path.join(dest, "MANIFEST"), "w", encoding="utf-8") as f:
        f.write(f"batchnormgrad vendor drop for target {tp.name}\n"
                f"generator: {VERSION}\n"
                f"made by: {command}\n"
                f"compile: cc -std=c99 -I. -c *.c (implement the bng_hal_* functions of "
                f"bng_hal.h for the _s entry points)\n\n"
                f"configuration (targets.yaml, resolved):\n"
                f"{json.dumps(config, indent=2, sort_keys=True)}\n\n"
                f"sha256:\n" + "\n".join(lines) + "\n")
    return sorted(files)
