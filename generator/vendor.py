"""make vendor: what a firmware tree needs from one target, with a MANIFEST."""

import dataclasses
import hashlib
import json
import os
import re
import shutil
from typing import List

from . import VERSION
from .model import Target

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def _includes(path: str) -> List[str]:
    with open(path, encoding="utf-8") as f:
        return INCLUDE.findall(f.read())


def vendor_files(root: str, target: str) -> List[str]:
    """The target's generated sources and headers, and the include/ headers they use
    (transitively), as paths relative to root."""
    gen = f"generated/{target}"
    files = sorted(f"{gen}/{n}" for n in os.listdir(os.path.join(root, gen))
                   if n.endswith((".c", ".h")))
    todo, seen = list(files), set(files)
    while todo:
        for name in _includes(os.path.join(root, todo.pop())):
            for candidate in (f"{gen}/{name}", f"include/{name}"):
                if os.path.isfile(os.path.join(root, candidate)) and candidate not in seen:
                    seen.add(candidate)
                    todo.append(candidate)
    return sorted(seen)


def write_drop(root: str, target: Target, dest: str, command: str) -> List[str]:
    """Copy the files flat into dest and write dest/MANIFEST; returns the file names."""
    os.makedirs(dest, exist_ok=True)
    names = []
    lines = []
    for rel in vendor_files(root, target.name):
        name = os.path.basename(rel)
        shutil.copyfile(os.path.join(root, rel), os.path.join(dest, name))
        with open(os.path.join(dest, name), "rb") as f:
            lines.append(f"{hashlib.sha256(f.read()).hexdigest()}  {name}")
        names.append(name)
    config = json.dumps(dataclasses.asdict(target), indent=2, sort_keys=True)
    with open(os.path.join(dest, "MANIFEST"), "w", encoding="utf-8") as f:
        f.write(f"batchnormgrad vendor drop for target {target.name}\n"
                f"generator: {VERSION}\n"
                f"made by: {command}\n"
                f"compile: cc -std=c99 -I. -c *.c (implement the bng_hal_* functions of "
                f"bng_hal.h for the _s entry points)\n\n"
                f"configuration (targets.yaml, resolved):\n{config}\n\n"
                f"sha256:\n" + "\n".join(lines) + "\n")
    return names
