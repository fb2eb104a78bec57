"""make report: per kernel, what the plan emitted and what it costs in code and memory."""

import subprocess
from typing import Dict, List

from .errors import ConfigError
from .plan import OPS, STACK_FLOAT_ARRAYS, TargetPlan


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


def report(tp: TargetPlan, columns: Dict[str, Dict[str, int]]) -> str:
    """columns: compiler label -> symbol sizes of the objects built from generated/<t>."""
    for label, sizes in columns.items():
        missing = [k.ukernel(op) for d in tp.dtypes for k in d.kernels for op in OPS
                   if k.ukernel(op) not in sizes]
        if missing:
            raise ConfigError(f"--objects {label}", "",
                              f"the {label} objects lack {missing[0]} (and {len(missing) - 1} "
                              f"more): they were not built from this plan; "
                              f"{tp.command.replace('make generate', 'make report')} "
                              f"renders and builds them")
    memory = tp.target.memory
    labels = list(columns)
    head = (f"{'kernel':<38} {'ch':>5} {'dtype':<5} {'lanes':>5} {'vec/row':>7} "
            f"{'unroll':>12}  {'_s tile plan':<26}" + "".join(f" {l:>10}" for l in labels))
    rows = [f"target {tp.name}: private memory {memory.private_bytes} B/core "
            f"(_s workspace {', '.join(f'{d.name} {d.workspace_bytes} B' for d in tp.dtypes)}), "
            f"max_unroll {tp.target.max_unroll}, shared scratch {tp.scratch_bytes} B",
            (f"memory spaces: split, SM {memory.scalar_bytes} B and AM {memory.vector_bytes} B "
             f"per core; private memory is AM, rows and workspace arrays padded to "
             f"{tp.dtypes[0].pad_lanes}-lane vectors" if memory.split else
             "memory spaces: unified (scalar and vector code reach private memory)"),
            (f"_p: no stack arrays; a workspace of {tp.p_workspace_bytes} B of AM from "
             f"bng_hal_p_workspace" if memory.split else
             f"_p stack: {STACK_FLOAT_ARRAYS} float arrays of the widest chunk = "
             f"{STACK_FLOAT_ARRAYS} x 4 x {tp.max_chunk} = {tp.stack_bytes} B in bng_p_run"),
            head]
    totals = {l: 0 for l in labels}
    for d in tp.dtypes:
        for k in d.kernels:
            chunk = k.channels or d.generic_chunk
            sizes = []
            for l in labels:
                size = sum(columns[l][k.ukernel(op)] for op in OPS)
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
                        + "".join(f" {s:>10}" for s in sizes))
    whole = {l: sum(columns[l].values()) for l in labels}
    rows.append(f"{'kernels total':<38} {'':>5} {'':<5} {'':>5} {'':>7} {'':>12}  {'':<26}"
                + "".join(f" {totals[l]:>10}" for l in labels))
    rows.append(f"{'library code total':<38} {'':>5} {'':<5} {'':>5} {'':>7} "
                f"{'':>12}  {'':<26}" + "".join(f" {whole[l]:>10}" for l in labels))
    return "\n".join(rows)
