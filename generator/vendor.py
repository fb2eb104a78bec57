"""make vendor: what a firmware tree needs from one target, with a MANIFEST; make
verify-drop: a drop checked against its MANIFEST.

The drop is rendered from the same plan as generated/<t> (the kernels of targets.yaml's
list, which make generate CHANNELS=... sets), plus the hand-written files it uses from
include/: the headers its sources include and the driver's rooms the target needs; with --hal hthreads,
also the reference HAL for NUDT's hthreads runtime (include/hal/); always the HAL
conformance check (include/programs/bng_hal_conformance.c); the build glue a firmware build
takes it with (CMakeLists.txt, bng.mk); and LICENSE. Nothing host-only (include/host/,
build.mk) goes in.
"""

import dataclasses
import hashlib
import json
import os
import re
import subprocess
from typing import Dict, List, Optional, Tuple

from . import COPYRIGHT, LICENSE_ID, VERSION
from .errors import option_error
from .files import FileManager
from .plan import TargetPlan
from .render import environment, render_file, render_target

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
# Reference HALs a drop can carry: name -> sources (their headers follow by #include).
HALS = {"hthreads": ("include/hal/bng_hal_hthreads.c", "include/hal/bng_hal_hthreads.h")}
# Every drop carries the HAL conformance check (freestanding; a firmware team's first
# run on a part, against its own HAL or the reference one) and the calibration program
# (the part's DMA figures for make model). Their headers follow.
HAL_CHECK = ("include/programs/bng_hal_conformance.c",
             "include/programs/bng_calibrate.c")
# The licence text, which every copy of the code must carry.
LICENSE = "LICENSE"
# The build glue: drop file name -> template.
GLUE = {"CMakeLists.txt": "drop_CMakeLists.txt.j2", "bng.mk": "drop_bng.mk.j2"}
# The compiler flags results depend on (contract, section 6): C99, and no FMA
# contraction, so that every kernel and core mask gives the bits the host tests check.
C_STANDARD = "-std=c99"
RESULT_OPTIONS = ("-ffp-contract=off",)
RESULT_FLAGS = (C_STANDARD,) + RESULT_OPTIONS
# What lets a firmware's link keep only what its calls reach (GCC and clang, with
# -Wl,--gc-sections): each function and object in a section of its own.
SECTION_OPTIONS = ("-ffunction-sections", "-fdata-sections")
# What a source pin hashes when the generator is not a git checkout.
SOURCE_FOLDERS = ("generator", "templates")


def check_dest(dest: str, root: str) -> None:
    """A drop goes into a firmware tree: not into the project (its headers would shadow
    the project's own), except under build/; links are resolved first."""
    def fail(message: str):
        raise option_error("--dest", dest, message)
    if not dest:
        fail("is empty: name the folder to write the drop into")
    if any(not c.isprintable() for c in dest):
        fail("contains control characters (a newline would forge a line of the MANIFEST): "
             "name a plain folder")
    if os.path.lexists(dest) and not os.path.isdir(dest):
        fail("exists and is not a folder")
    real, project = os.path.realpath(dest), os.path.realpath(root)

    def inside(folder: str) -> bool:
        return os.path.commonpath([real, folder]) == folder
    advice = "a drop goes into a firmware tree, e.g. ../firmware/third_party/bng"
    if real == project:
        fail(f"is the project: {advice}")
    if inside(os.path.realpath(os.path.join(root, "generated"))):
        fail(f"is inside generated/: {advice}")
    if inside(project) and not inside(os.path.realpath(os.path.join(root, "build"))):
        fail(f"is inside the project ({real}), where its files would shadow the project's "
             f"own: {advice} (or a folder under build/)")


def drop_command(tp: TargetPlan, dest: str, hal: Optional[str]) -> str:
    """The command that makes this drop again (targets.yaml holds the channel list)."""
    return f"make vendor TARGET={tp.name} DEST={dest}" + (f" HAL={hal}" if hal else "")


def _read(root: str, rel: str) -> str:
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        return f.read()


def drop_files(root: str, tp: TargetPlan, hal: Optional[str] = None) -> Dict[str, str]:
    """{file name: text} of the drop: the rendered C sources and headers, the include/
    files they use (transitively, following #include "..."), the build glue that lists
    them, and the licence."""
    env = environment()
    files = {os.path.basename(rel): text for rel, text in render_target(env, tp)
             if rel.endswith((".c", ".h"))}
    for rel in tp.driver_sources + HAL_CHECK + (HALS[hal] if hal else ()):
        files[os.path.basename(rel)] = _read(root, rel)
    todo = list(files)
    while todo:
        for name in INCLUDE.findall(files[todo.pop()]):
            for folder in ("include", "include/hal", "include/programs"):
                if name not in files and os.path.isfile(os.path.join(root, folder, name)):
                    files[name] = _read(root, os.path.join(folder, name))
                    todo.append(name)
    sources = sorted(n for n in files if n.endswith(".c"))
    headers = sorted(n for n in files if n.endswith(".h"))
    for name, template in GLUE.items():
        files[name] = render_file(env, template, tp, sources=sources, headers=headers, hal=hal,
                                  result_flags=RESULT_FLAGS, result_options=RESULT_OPTIONS,
                                  section_options=SECTION_OPTIONS)
    files[LICENSE] = _read(root, LICENSE)
    return files


def _git(root: str, *argv: str) -> str:
    return subprocess.run(["git", "-C", root, *argv], check=True, capture_output=True,
                          text=True, timeout=60).stdout.strip()


def source_pin(root: str) -> str:
    """The generator's source the drop was made with: the git commit of the project
    (with -dirty when generator/ or templates/ differ from it), or outside a git
    checkout of it a sha256 over those two folders."""
    try:
        if os.path.realpath(_git(root, "rev-parse", "--show-toplevel")) == os.path.realpath(root):
            dirty = _git(root, "status", "--porcelain", "--", *SOURCE_FOLDERS)
            return f"git {_git(root, 'rev-parse', 'HEAD')}{'-dirty' if dirty else ''}"
    except (OSError, subprocess.SubprocessError):
        pass
    digest = hashlib.sha256()
    for folder in SOURCE_FOLDERS:
        for dirpath, dirnames, names in sorted(os.walk(os.path.join(root, folder))):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(names):
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, "rb") as f:
                    digest.update(rel.encode() + b"\0" + f.read() + b"\0")
    return f"sha256 {digest.hexdigest()} of {' and '.join(f + '/' for f in SOURCE_FOLDERS)}"


MANIFEST = "MANIFEST"
MANIFEST_HEADER = "batchnormgrad vendor drop"
MANIFEST_LINE = re.compile(r"([0-9a-f]{64})  (\S.*)\Z")
KEPT_HEADING = "not part of the drop (files of this folder's own, kept as they were):"


def _manifest_lists(text: str) -> Tuple[Dict[str, str], List[str]]:
    """({file name: sha256} of the drop, [the folder's own files]) a MANIFEST lists."""
    if not text.startswith(MANIFEST_HEADER) or "\nsha256:\n" not in text:
        return {}, []
    listed = text.split("\nsha256:\n", 1)[1]
    drop = {m.group(2): m.group(1) for m in map(MANIFEST_LINE.match, listed.split("\n\n", 1)[0]
                                               .splitlines()) if m}
    own = listed.split(KEPT_HEADING + "\n", 1)[1].split("\n\n", 1)[0].splitlines() \
        if KEPT_HEADING in listed else []
    return drop, own


def _read_manifest(dest: str) -> Optional[str]:
    try:
        with open(os.path.join(dest, MANIFEST), encoding="utf-8", errors="replace") as f:
            return f.read(1 << 20)
    except OSError:
        return None


def _sha256_of(path: str) -> Optional[str]:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


def manifest(tp: TargetPlan, files: Dict[str, str], command: str, hal: Optional[str],
             kept: List[str], source: str) -> str:
    """The MANIFEST: what the drop is, where it came from, how to build and verify it,
    and every file in the folder."""
    lines = [f"{hashlib.sha256(files[n].encode('utf-8')).hexdigest()}  {n}" for n in sorted(files)]
    config = dataclasses.asdict(tp.target)
    del config["locations"], config["channels_overridden"]
    hal_note = (f"the {hal} reference HAL: check bng_hal_{hal}_config.h against your "
                "runtime, and put the runtime's headers on the include path" if hal else
                "your HAL: the bng_hal_* functions of bng_hal.h")
    sources = " ".join(n for n in sorted(files) if n.endswith(".c"))
    text = (f"{MANIFEST_HEADER} for target {tp.name}\n"
            f"licence: {LICENSE_ID} (SPDX-License-Identifier: {LICENSE_ID}, the text in "
            f"{LICENSE}); {COPYRIGHT}\n"
            f"generator: {VERSION}, {source}\n"
            f"made by: {command}\n"
            f"compile: cc {' '.join(RESULT_FLAGS)} -I. -c {sources}\n"
            f"  (the flags results depend on; add the part's own, e.g. -ffreestanding -O2, "
            f"never -ffast-math; a toolchain for an operating system building firmware adds "
            f"-DBNG_FIRMWARE)\n"
            f"build glue: CMakeLists.txt (add_subdirectory; library batchnormgrad), bng.mk "
            f"(include; BNG_SOURCES, BNG_CFLAGS, BNG_INCLUDES)\n"
            f"link with: {hal_note}\n"
            f"verify: make verify-drop DEST=<this folder> in the batchnormgrad repository, or "
            f"sha256sum -c on the lines under sha256: below\n\n"
            f"configuration (targets.yaml, resolved):\n"
            f"{json.dumps(config, indent=2, sort_keys=True)}\n\n"
            f"sha256:\n" + "\n".join(lines) + "\n")
    if kept:
        text += f"\n{KEPT_HEADING}\n" + "\n".join(kept) + "\n"
    return text


def check_drop_options(root: str, dest: str, hal: Optional[str]) -> None:
    """What write_drop refuses before it writes: a folder it may not write into, a HAL
    the project does not ship. vendor --channels asks first, before it edits the
    configuration, so that a refused command leaves the tree as it was."""
    check_dest(dest, root)
    if hal is not None and hal not in HALS:
        raise option_error("--hal", hal, f"not a reference HAL of this project; known: "
                           f"{', '.join(HALS)} (without it, the drop is for your own HAL)")


def write_drop(root: str, tp: TargetPlan, dest: str, hal: Optional[str] = None
               ) -> List[Tuple[str, str]]:
    """Write the files flat into dest with dest/MANIFEST, all or nothing (files.py):
    files the previous drop wrote (its MANIFEST lists them, unchanged since) and this
    one does not are removed; other files are kept and listed. Returns (verb, name)."""
    check_drop_options(root, dest, hal)
    files = drop_files(root, tp, hal)
    command, source = drop_command(tp, dest, hal), source_pin(root)
    fm = FileManager(dest)
    for name in sorted(files):
        fm.add(name, files[name])
    fm.add(MANIFEST, "")                    # its text once the folder's other files are known
    previous: Dict[str, str] = {}

    def owns(name: str, path: str) -> bool:
        return name in previous and _sha256_of(path) == previous[name]

    def owned_dirs() -> List[str]:          # under the lock: the MANIFEST as it is now
        previous.update(_manifest_lists(_read_manifest(dest) or "")[0])
        return [""]

    def finish(kept: List[str]) -> None:
        fm.pending[MANIFEST] = manifest(tp, files, command, hal, kept, source)
    return fm.commit(owned_dirs, owns=owns, finish=finish)


def verify_drop(dest: str) -> Tuple[List[str], List[str], int]:
    """A drop against its MANIFEST: (problems: each listed file missing or not matching
    its sha256; notes: each entry of the folder the MANIFEST does not list; the number
    of files that match)."""
    text = _read_manifest(dest)
    if text is None:
        raise option_error("--dest", dest, f"holds no readable {MANIFEST}: not a drop")
    drop, own = _manifest_lists(text)
    if not drop:
        raise option_error("--dest", dest, f"its {MANIFEST} lists no file: not a drop's")
    problems, matched = [], 0
    for name, digest in sorted(drop.items()):
        actual = _sha256_of(os.path.join(dest, name))
        if actual is None:
            problems.append(f"{name}: missing")
        elif actual != digest:
            problems.append(f"{name}: differs from its sha256 in the {MANIFEST}")
        else:
            matched += 1
    notes = [f"{name}{'/' if os.path.isdir(os.path.join(dest, name)) else ''}: not in the "
             f"{MANIFEST}" for name in sorted(os.listdir(dest))
             if name not in drop and name not in own and name != MANIFEST]
    return problems, notes, matched
