"""make report: per kernel, what the plan emitted and what it costs in code and memory."""

import subprocess
from typing import Dict, List

from .plan import BLOCK_ROWS, TargetPlan


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


def tile_plan(tp: TargetPlan, d, width: int) -> str:
    """Rows per double-buffered _s tile for a channel run of ``width``."""
    quarter = (tp.target.memory.private_bytes - d.private_work_bytes) // 4 // 64 * 64
    rows = quarter // (width * d.element_bytes) // BLOCK_ROWS * BLOCK_ROWS
    return f"{rows} rows x {width} ch / tile"


def report(tp: TargetPlan, columns: Dict[str, Dict[str, int]]) -> str:
    """columns: compiler label -> symbol sizes."""
    labels = list(columns)
    head = (f"{'kernel':<38} {'ch':>5} {'dtype':<5} {'lanes':>5} {'vec/row':>7} "
            f"{'unroll':>6}  {'_s tile plan':<26}" + "".join(f" {l:>10}" for l in labels))
    rows = [f"target {tp.name}: private memory {tp.target.memory.private_bytes} B/core, "
            f"max_unroll {tp.target.max_unroll}, shared scratch {tp.scratch_bytes} B", head]
    totals = {l: 0 for l in labels}
    for d in tp.dtypes:
        for k in d.kernels:
            width = k.channels or d.generic_chunk
            sizes = []
            for l in labels:
                size = sum(columns[l].get(k.ukernel(op), 0)
                           for op in ("reduce", "dxtrain", "dxinfer"))
                totals[l] += size
                sizes.append(size)
            if k.channels is None:
                vec, unroll = "-", "loop"
            else:
                vec = str(k.vector_ops_per_row)
                unroll = f"{k.vector_ops_in_code}" + (" (partial)" if k.partial else "")
            rows.append(f"{k.table_entry:<38} {str(k.channels or 'any'):>5} {d.name:<5} "
                        f"{k.lanes:>5} {vec:>7} {unroll:>6}  {tile_plan(tp, d, width):<26}"
                        + "".join(f" {s:>10}" for s in sizes))
    whole = {l: sum(columns[l].values()) for l in labels}
    rows.append(f"{'kernels total':<38} {'':>5} {'':<5} {'':>5} {'':>7} {'':>6}  {'':<26}"
                + "".join(f" {totals[l]:>10}" for l in labels))
    rows.append(f"{'library code total':<38} {'':>5} {'':<5} {'':>5} {'':>7} "
                f"{'':>6}  {'':<26}" + "".join(f" {whole[l]:>10}" for l in labels))
    return "\n".join(rows)
