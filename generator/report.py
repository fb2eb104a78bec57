"""make report: per kernel, what the plan emitted and what it costs in code and memory."""

import os
import subprocess
from typing import Dict, List, Optional

from .errors import ConfigError, setting
from .order import MAX_GROUPS
from .plan import EXT_PARAMS_SLOTS, PARAMS_SLOTS, STACK_FLOAT_ARRAYS, TargetPlan

# Columns of code sizes: label -> {ukernel or other code symbol: size in bytes}.
Columns = Dict[str, Dict[str, int]]
# Per column: label -> {object file name: bytes of its .text sections}.
ObjectTexts = Dict[str, Dict[str, int]]
# Per column: label -> bytes of .text of the image (a firmware's main and the library).
ImageTexts = Dict[str, int]


def symbol_sizes(nm: str, objects: List[str]) -> Dict[str, int]:
    """Defined code symbol -> size in bytes, from ``nm --print-size``."""
    out = subprocess.run([nm, "--print-size", "--defined-only", *objects],
                         check=True, capture_output=True, text=True).stdout
    sizes = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2] in "tT":
            sizes[parts[3]] = int(parts[1], 16)
    return sizes


def columns_from_specs(specs: List[str]) -> Columns:
    """--objects LABEL,NM,OBJECT[,OBJECT...] (one per compiler) -> code sizes."""
    columns = {}
    for spec in specs:
        label, nm, *objects = spec.split(",") + [""]
        objects = [o for o in objects if o]
        if not label or not nm or not objects:
            raise ConfigError("--objects", spec, "expected LABEL,NM,OBJECT[,OBJECT...], "
                              "e.g. host,nm,build/mt7004/obj/batch_norm_grad.o")
        missing = [o for o in objects if not os.path.isfile(o)]
        if missing:
            raise ConfigError("--objects", label, f"no object file {missing[0]}: "
                              "build the target's library first (make report does)")
        try:
            columns[label] = symbol_sizes(nm, objects)
        except (OSError, subprocess.CalledProcessError) as e:
            raise ConfigError("--objects", label, f"{nm} failed: {e}") from None
    return columns


def text_bytes(size: str, path: str) -> int:
    """Bytes of a file's .text sections (.text and, compiled a function per section,
    .text.<function>), from ``size -A``."""
    out = subprocess.run([size, "-A", "-d", path], check=True, capture_output=True,
                         text=True).stdout
    return sum(int(parts[1]) for parts in (line.split() for line in out.splitlines())
               if len(parts) >= 2 and (parts[0] == ".text" or parts[0].startswith(".text."))
               and parts[1].isdigit())


def _size_tool(nm: str) -> str:
    """The size tool beside a compiler's nm (riscv64-unknown-elf-nm -> ...-size)."""
    return nm[:-len("nm")] + "size" if nm.endswith("nm") else "size"


def object_texts_from_specs(specs: List[str]) -> ObjectTexts:
    """The --objects specs (checked by columns_from_specs) -> each object's .text."""
    texts = {}
    for spec in specs:
        label, nm, *objects = spec.split(",")
        try:
            texts[label] = {os.path.basename(o): text_bytes(_size_tool(nm), o) for o in objects if o}
        except (OSError, subprocess.CalledProcessError) as e:
            raise ConfigError("--objects", label, f"{_size_tool(nm)} failed: {e}") from None
    return texts


def image_texts_from_specs(specs: List[str], object_specs: List[str],
                           option: str = "--image") -> ImageTexts:
    """--image (or --forward-image) LABEL,ELF (LABEL one of the --objects columns) -> the
    image's .text."""
    tools = {spec.split(",")[0]: _size_tool(spec.split(",")[1]) for spec in object_specs}
    images = {}
    for spec in specs:
        label, _, path = spec.partition(",")
        if label not in tools or not path:
            raise ConfigError(option, spec, "expected LABEL,ELF with LABEL a column of "
                              f"--objects ({', '.join(tools) or 'none given'})")
        if not os.path.isfile(path):
            raise ConfigError(option, label, f"no image {path}: make report links it")
        try:
            images[label] = text_bytes(tools[label], path)
        except (OSError, subprocess.CalledProcessError) as e:
            raise ConfigError(option, label, f"{tools[label]} failed: {e}") from None
    return images


def notes_from_specs(specs: List[str]) -> Dict[str, str]:
    """--note LABEL=TEXT: what a column's compiler is and what its sizes mean."""
    notes = {}
    for spec in specs:
        label, sep, text = spec.partition("=")
        if not sep or not label or not text:
            raise ConfigError("--note", spec, "expected LABEL=TEXT, e.g. host=this machine's build")
        notes[label] = text
    return notes


def _check_columns(tp: TargetPlan, columns: Columns) -> None:
    for label, sizes in columns.items():
        missing = [u for d in tp.dtypes for k in d.kernels for u in k.ukernels
                   if u not in sizes]
        if missing:
            raise ConfigError(f"--objects {label}", "",
                              f"the {label} objects lack {missing[0]} (and {len(missing) - 1} "
                              f"more): they were not built from this plan; make report "
                              f"TARGET={tp.name}"
                              + (f' CHANNELS="{_words(tp.target.channels)}"'
                                 if tp.target.channels_overridden else "")
                              + " renders and builds them")


def _words(channels) -> str:
    return " ".join(map(str, channels))


def _shared_memory(tp: TargetPlan, base: TargetPlan) -> List[str]:
    """The parameter block and the scratch of _s in shared memory, each with what makes
    its size, and the scratch's size with targets.yaml's list when the report's differs."""
    memory = tp.target.memory
    slots = tp.shared_params_slots
    why = (f"{EXT_PARAMS_SLOTS} slots of 8 B (the vendor's {PARAMS_SLOTS}, and "
           f"{EXT_PARAMS_SLOTS - PARAMS_SLOTS} for the extensions)" if slots == EXT_PARAMS_SLOTS
           else f"{PARAMS_SLOTS} slots of 8 B, the vendor's block ({EXT_PARAMS_SLOTS} with "
           f"extensions)")
    scratch = (f"shared scratch {tp.scratch_bytes} B at {memory.shared_scratch_address:#x}: "
               f"2 slots x {MAX_GROUPS} row groups x 2 sums x {tp.max_chunk} channels (the "
               f"widest chunk) x 4 B; it grows with the widest channel count")
    if base.scratch_bytes != tp.scratch_bytes:
        scratch += (f" (with targets.yaml's list, widest chunk {base.max_chunk}: "
                    f"{base.scratch_bytes} B)")
    return [f"shared parameter block {slots * 8} B at {memory.shared_params_address:#x}: {why}",
            scratch]


def _header(tp: TargetPlan, base: TargetPlan, notes: Dict[str, str]) -> List[str]:
    memory = tp.target.memory
    rows = [f"target {tp.name}: channels {_words(tp.target.channels)}, max_unroll "
            f"{tp.target.max_unroll}"]
    if tp.target.channels_overridden:
        rows.append(f"what-if: {setting('--channels', _words(tp.target.channels))} replaces "
                    f"targets.yaml's list "
                    f"({_words(base.target.channels)}) for this report only; nothing outside "
                    f"build/ was written (make generate TARGET={tp.name} CHANNELS=... sets the list)")
    rows.append(f"private memory {memory.private_bytes} B per core: the _s workspace "
                f"({', '.join(f'{d.name} {d.workspace_bytes} B' for d in tp.dtypes)}), the "
                f"rest four tile buffers")
    rows.append(f"memory spaces: split, SM {memory.scalar_bytes} B and AM {memory.vector_bytes} B "
                f"per core; private memory is AM, rows and workspace arrays padded to "
                f"{tp.dtypes[0].pad_lanes}-lane vectors" if memory.split else
                "memory spaces: unified (scalar and vector code reach private memory)")
    rows.append(f"_p: no stack arrays; a workspace of {tp.p_workspace_bytes} B of AM from "
                f"bng_hal_p_workspace" if memory.split else
                f"_p stack: {STACK_FLOAT_ARRAYS} float arrays of the widest chunk = "
                f"{STACK_FLOAT_ARRAYS} x 4 B x {tp.max_chunk} = {tp.stack_bytes} B in "
                f"bng_nhwc_p_run")
    rows += _shared_memory(tp, base)
    rows.append("code sizes: bytes of each kernel's row ukernels (three; eight with relu), from nm")
    rows += [f"  {label}: {text}" for label, text in notes.items()]
    return rows


def _object_rows(labels: List[str], objects: ObjectTexts, images: ImageTexts,
                 forward_images: Optional[ImageTexts] = None) -> List[str]:
    """Each object's .text per column, their total, the image's, and the forward image's
    where the target has the training forward."""
    heads = [f"{label} B" for label in labels]
    width = max([10] + [len(h) for h in heads])
    names = sorted({n for texts in objects.values() for n in texts})
    cell = lambda value: f" {value:>{width}}" if value is not None else f" {'-':>{width}}"
    rows = ["", ".text of each object (size -A), and of a firmware image calling "
            "fp_batch_norm_grad_p and _s" + (" (and one calling fp_batch_norm_forward_p and _s)"
                                             if forward_images else ""),
            f"{'object':<38}" + "".join(f" {h:>{width}}" for h in heads)]
    rows += [f"{n:<38}" + "".join(cell(objects.get(l, {}).get(n)) for l in labels) for n in names]
    rows.append(f"{'objects total':<38}"
                + "".join(cell(sum(objects[l].values()) if l in objects else None) for l in labels))
    if images:
        rows.append(f"{'image (fp _p and _s, --gc-sections)':<38}"
                    + "".join(cell(images.get(l)) for l in labels))
    if forward_images:
        rows.append(f"{'image (fp forward _p and _s)':<38}"
                    + "".join(cell(forward_images.get(l)) for l in labels))
    return rows


def report(tp: TargetPlan, columns: Columns, notes: Optional[Dict[str, str]] = None,
           base: Optional[TargetPlan] = None, objects: Optional[ObjectTexts] = None,
           images: Optional[ImageTexts] = None,
           forward_images: Optional[ImageTexts] = None) -> str:
    """columns: compiler label -> symbol sizes of the objects built from tp's files;
    notes: label -> what the column is; base: the plan of targets.yaml's own list (the
    report's plan is a what-if when the command line replaced it); objects, images: each
    object's and the images' .text per column (the backward's calls', the forward's)."""
    _check_columns(tp, columns)
    memory = tp.target.memory
    labels = list(columns)
    heads = [f"{label} B" for label in labels]
    width = max([10] + [len(h) for h in heads])
    head = (f"{'kernel':<38} {'ch':>5} {'dtype':<5} {'lanes':>5} {'vec/row':>7} "
            f"{'unroll':>12}  {'_s tile plan':<26}" + "".join(f" {h:>{width}}" for h in heads))
    rows = _header(tp, base or tp, notes or {}) + [head]
    totals = {l: 0 for l in labels}
    for d in tp.dtypes:
        for k in d.kernels:
            chunk = k.channels or d.generic_chunk
            sizes = []
            for l in labels:
                size = sum(columns[l][u] for u in k.ukernels)
                totals[l] += size
                sizes.append(size)
            if k.channels is None:
                vec, unroll = "-", "loop"
            else:
                vec = str(k.vector_ops_per_row)
                unroll = f"{k.vector_ops_in_code}" + (" (partial)" if k.partial else "")
            tiles = f"{d.tile_rows(memory.private_bytes, chunk)} rows x {chunk} ch / tile"
            rows.append(f"{k.table_entry:<38} {str(k.channels or 'any'):>5} {d.name:<5} "
                        f"{k.lanes:>5} {vec:>7} {unroll:>12}  {tiles:<26}"
                        + "".join(f" {s:>{width}}" for s in sizes))
    whole = {l: sum(columns[l].values()) for l in labels}
    for name, values in (("kernels total", totals), ("library code total", whole)):
        rows.append(f"{name:<38} {'':>5} {'':<5} {'':>5} {'':>7} {'':>12}  {'':<26}"
                    + "".join(f" {values[l]:>{width}}" for l in labels))
    if objects:
        rows += _object_rows(labels, objects, images or {}, forward_images)
    return "\n".join(rows)

