"""make vendor: what a firmware tree needs from one target, with a MANIFEST.

The drop is rendered from the same plan as generated/<t> (so --channels gives exactly
the kernels the MANIFEST names), plus the hand-written files it uses from include/:
the headers its sources include and the shared driver; with --hal hthreads, also the
reference HAL for NUDT's hthreads runtime (include/hal/); always the HAL conformance
check (include/hal/bng_hal_conformance.c). Nothing host-only
(include/host/, build.mk) goes in.
"""

import dataclasses
import hashlib
import json
import os
import re
from typing import Dict, List, Optional, Tuple

from . import VERSION
from .files import FileManager
from .plan import SHARED_SOURCES, TargetPlan
from .render import environment, render_target

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Reference HALs a drop can carry: name -> sources (their headers follow by #include).
HALS = {"hthreads": ("include/hal/bng_hal_hthreads.c", "include/hal/bng_hal_hthreads.h")}
# Every drop carries the HAL conformance check (freestanding; a firmware team's first
# run on a part, against its own HAL or the reference one) and the calibration program
# (the part's DMA figures for make model). Their headers follow.
HAL_CHECK = ("include/hal/bng_hal_conformance.c",
             "include/hal/bng_calibrate.c")


def drop_files(root: str, tp: TargetPlan, hal: Optional[str] = None) -> Dict[str, str]:
    """{file name: text} of the drop: the rendered C sources and headers, and the
    include/ files they use (transitively, following #include "...")."""
    files = {os.path.basename(rel): text for rel, text in render_target(environment(), tp)
             if rel.endswith((".c", ".h"))}
    for rel in SHARED_SOURCES + HAL_CHECK + (HALS[hal] if hal else ()):
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


MANIFEST = "MANIFEST"
MANIFEST_LINE = re.compile(r"([0-9a-f]{64})  (\S.*)\Z")


def _previous_drop(dest: str) -> Dict[str, str]:
    """{file name: sha256} of the drop the MANIFEST in dest lists ({} without one)."""
    try:
        with open(os.path.join(dest, MANIFEST), encoding="utf-8", errors="replace") as f:
            text = f.read(1 << 20)
    except OSError:
        return {}
    if not text.startswith("batchnormgrad vendor drop") or "\nsha256:\n" not in text:
        return {}
    listed = text.split("\nsha256:\n", 1)[1].split("\n\n", 1)[0]
    return {m.group(2): m.group(1) for m in map(MANIFEST_LINE.match, listed.splitlines()) if m}


def _sha256_of(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def manifest(tp: TargetPlan, files: Dict[str, str], command: str, hal: Optional[str],
             kept: List[str]) -> str:
    """The MANIFEST: what the drop is, how to build it, and every file in the folder."""
    lines = [f"{hashlib.sha256(files[n].encode('utf-8')).hexdigest()}  {n}" for n in sorted(files)]
    config = dataclasses.asdict(tp.target)
    del config["locations"]
    hal_note = (f"the {hal} reference HAL: check bng_hal_{hal}_config.h against your runtime"
                if hal else "implement the bng_hal_* functions of bng_hal.h for the _s entry points")
    # *.c would also compile a .c file of the folder's own: then the drop's are named.
    sources = (" ".join(n for n in sorted(files) if n.endswith(".c"))
               if any(k.endswith(".c") for k in kept) else "*.c")
    text = (f"batchnormgrad vendor drop for target {tp.name}\n"
            f"generator: {VERSION}\n"
            f"made by: {command}\n"
            f"compile: cc -std=c99 -I. -c {sources} ({hal_note})\n\n"
            f"configuration (targets.yaml, resolved):\n"
            f"{json.dumps(config, indent=2, sort_keys=True)}\n\n"
            f"sha256:\n" + "\n".join(lines) + "\n")
    if kept:
        text += ("\nnot part of the drop (files of this folder's own, kept as they were):\n"
                 + "\n".join(kept) + "\n")
    return text


def write_drop(root: str, tp: TargetPlan, dest: str, command: str,
               hal: Optional[str] = None) -> List[Tuple[str, str]]:
    """Write the files flat into dest with dest/MANIFEST, all or nothing (files.py):
    files the previous drop wrote (its MANIFEST lists them, unchanged since) and this
    one does not are removed; other files are kept and listed. Returns (verb, name)."""
    files = drop_files(root, tp, hal)
    fm = FileManager(dest)
    for name in sorted(files):
        fm.add(name, files[name])
    fm.add(MANIFEST, "")                    # its text once the folder's other files are known
    previous: Dict[str, str] = {}

    def owns(name: str, path: str) -> bool:
        return name in previous and _sha256_of(path) == previous[name]

    def owned_dirs() -> List[str]:          # under the lock: the MANIFEST as it is now
        previous.update(_previous_drop(dest))
        return [""]

    def finish(kept: List[str]) -> None:
        fm.pending[MANIFEST] = manifest(tp, files, command, hal, kept)
    return fm.commit(owned_dirs, owns=owns, finish=finish)
