"""Stage 3: the report: a table per storage type (a row per shape and core count), the
kernels' operation counts, and a CSV for the plot (bench/model/plot.gp)."""

import csv
import io
from typing import Dict, List, Set, Tuple

from ..model import PartFigures
from ..plan import FWD_OPS, OPS, TargetPlan
from .opcount import RELU_STEP_OPS, RELU_VECTOR_SLOTS, KernelCosts, nchw_entry, relu_step_cycles
from .replay import BOUNDS, Prediction
from .shapes import Shape

MB = 1e6


def heading(tp: TargetPlan) -> str:
    p: PartFigures = tp.target.part
    return (f"make model: {tp.name}, a prediction (not a measurement) from targets.yaml part: "
            f"{p.clock_mhz} MHz, DDR {p.ddr_mb_per_s} MB/s and GSM {p.gsm_mb_per_s} MB/s per "
            f"cluster, DMA latency {p.dma_latency_ns} ns, {p.dma_in_flight} transfers in flight "
            f"per core, {p.vector_alu_per_cycle} vector ALU + {p.vector_ldst_per_cycle} load/store "
            f"issues per cycle (docs/performance.md, \"The DSP cost model\")")


def kernel_table(tp: TargetPlan, used: Set[Tuple[str, int]], masked: bool = False) -> str:
    """Issue slots per row (ALU + load/store), and per block of rows where the op adds
    some, of each kernel the calls used (table entry, channels); per plane of an NCHW
    ukernel set's (entry, elements); the ReLU steps' costs when a call masked."""
    costs = {d.name: KernelCosts(tp, d) for d in tp.dtypes}
    by_entry = {k.table_entry: (d, k, OPS) for d in tp.dtypes for k in d.kernels}
    by_entry.update({k.fwd_table_entry: (d, k, FWD_OPS) for d in tp.dtypes for k in d.kernels
                     if tp.fwd_ops})     # the ReLU's: the generic kernel's (KernelCosts.cost)
    lines = ["kernel issue slots (ALU + load/store) per row, [per 32-row block]:"]
    for entry, channels in sorted(used):
        if entry not in by_entry:
            d, nchw_ops = nchw_entry(tp, entry)
            parts = [f"{op} {c.alu}+{c.ldst}" for op in nchw_ops
                     for c in [costs[d.name].nchw_cost(op, channels)]]
            lines.append(f"  {entry} (NCHW, per plane of {channels}): " + ", ".join(parts))
            continue
        d, k, ops = by_entry[entry]
        parts = []
        for op in ops:
            c = costs[d.name].cost(k, op, channels)
            block = f" [{c.block.alu}+{c.block.ldst}]" if c.block.alu or c.block.ldst else ""
            parts.append(f"{op} {c.row.alu}+{c.row.ldst}{block}")
        lines.append(f"  {entry} ({channels} ch): " + ", ".join(parts))
    if masked:
        lines.append(relu_steps_line(tp))
    return "\n".join(lines)


def relu_steps_line(tp: TargetPlan) -> str:
    """How the driver's ReLU steps are costed: vector slots (gnu backend) and the
    plain-C estimate per element."""
    steps = ", ".join(f"{op} {n}" for op, n in RELU_STEP_OPS.items())
    cycles = ", ".join(f"{relu_step_cycles(op):.2f}" for op in RELU_STEP_OPS)
    plain = f"operations per element {steps}, an estimate of {cycles} cycles"
    if tp.target.vector_backend != "gnu":
        return f"  the ReLU steps (the driver's plain C, not ukernels): {plain}"
    slots = ", ".join(f"{op} {c.alu}+{c.ldst}" for op, c in RELU_VECTOR_SLOTS.items())
    if tp.target.memory.split:
        return (f"  the ReLU steps (the driver's masked loads, whole vectors of {tp.vector_lanes} "
                f"lanes over the padded rows, not ukernels): issue slots per vector {slots}, "
                f"an estimate")
    return (f"  the ReLU steps (the driver's GCC vectors of one register, not ukernels): "
            f"issue slots per vector {slots}; a row's last elements as plain C, {plain}")


COLUMNS = ("shape", "batch x ch", "layers", "cores", "predicted_us", "floor_us", "floor%",
           "own%", "DDR_MB", "min_MB", "xmin", "GSM_MB", "kept_am/gsm%", "bound")


# What each column of the table is (docs/performance.md, "The DSP cost model").
LEGEND = (
    "columns: layers how many layers of the network have the shape; cores the cores the "
    "call runs on; predicted_us the predicted time of one call; floor_us the DDR floor, the "
    "least bytes the call can move (x, dy read once, dx written once, the per-channel "
    "arrays once; y too with the fused ReLU, its keep bits instead from the forward's bits; "
    "dx read too adding into it (acc); "
    "the training forward: x read once, y written once) at ddr_mb_per_s; floor% the floor as a share "
    "of the prediction (100: as fast as the memory allows); own% the time the call's own "
    "DDR bytes take, as a share (how busy the schedule keeps DDR); DDR_MB, min_MB the "
    "bytes moved to and from DDR and the least, xmin their ratio; GSM_MB the bytes to and "
    "from GSM; kept_am/gsm% of the rows read in both passes, the share kept in private "
    "memory / in GSM between them (- for a one-pass call or NCHW); bound what the cores "
    "spent the most time on (compute, latency, in_flight, ddr, gsm, barrier)")


def kept_share(p: Prediction) -> str:
    """The schedule's choice: the share of the rows read in both passes that stay in
    private memory and in GSM between them ("-": a one-pass call)."""
    rows, am, gsm = p.call.kept()
    return f"{100 * am / rows:.0f}/{100 * gsm / rows:.0f}" if rows else "-"


def _row(shape: Shape, p: Prediction) -> Tuple[str, ...]:
    return (shape.label, shape.size, str(shape.layers), str(p.call.cores),
            f"{p.seconds * 1e6:.1f}", f"{p.floor_seconds * 1e6:.1f}",
            f"{100 * p.floor_seconds / p.seconds:.0f}", f"{100 * p.own_seconds / p.seconds:.0f}",
            f"{p.bytes['ddr'] / MB:.2f}", f"{p.min_ddr_bytes / MB:.2f}",
            f"{p.bytes['ddr'] / p.min_ddr_bytes:.2f}", f"{p.bytes['gsm'] / MB:.3f}",
            kept_share(p), p.bound)


def table(dtype: str, rows: List[Tuple[Shape, Prediction]]) -> str:
    cells = [COLUMNS] + [_row(s, p) for s, p in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(COLUMNS))]
    out = [f"{dtype}:"]
    for r in cells:
        first, *rest = zip(r, widths)
        out.append("  " + "  ".join([first[0].ljust(first[1])] + [c.rjust(w) for c, w in rest]))
    return "\n".join(out)


def network_totals(dtype: str, rows: List[Tuple[Shape, Prediction]]) -> List[str]:
    """Per network batch, extension and core count: all its batch-norm layers (with the
    fused ReLU, those a ReLU follows), one after the other."""
    totals: Dict[Tuple[str, int], List[float]] = {}
    for s, p in rows:
        if s.label.startswith("resnet50"):
            key = (s.label.split()[1] + (f" {s.extension}" if s.extension else ""), p.call.cores)
            t = totals.setdefault(key, [0, 0.0, 0.0])
            t[0] += s.layers
            t[1] += s.layers * p.seconds
            t[2] += s.layers * p.floor_seconds
    return [f"  {dtype} resnet50 {n}, {cores} cores: {t[0]} layers {t[1] * 1e3:.2f} ms "
            f"(DDR floor {t[2] * 1e3:.2f} ms, {100 * t[2] / t[1]:.0f}%)"
            for (n, cores), t in totals.items()]


def training_steps(dtype: str, rows: List[Tuple[Shape, Prediction]]) -> List[str]:
    """Per layout, network batch and core count where the rows have the training
    forward: each layer's whole training step, its forward (with the fused ReLU and its
    bits where a ReLU follows) and its backward (the fused ReLU backward there, the
    vendor's call, or in NCHW the plain NCHW call, elsewhere), summed over the network's
    layers; none unless every layer has both. Where the rows have the fused backward
    from the forward's keep bits, the step with it as well."""
    calls: Dict[Tuple[str, str, str, int, str], Tuple[Shape, Prediction]] = {}
    for s, p in rows:
        if s.label.startswith("resnet50"):
            kind = ("acc" if s.accumulate_dx else "forward" if s.forward else "bits" if s.bits
                    else "relu" if s.relu else "plain")
            layout = "NCHW" if s.spatial else "NHWC"
            calls[(layout, s.label.split()[1], s.size, p.call.cores, kind)] = (s, p)
    with_bits = {(layout, n, cores) for (layout, n, _, cores, kind) in calls if kind == "bits"}
    steps: Dict[Tuple[str, str, int, bool], List[float]] = {}
    for (layout, n, size, cores, kind), (s, p) in calls.items():
        if kind != "forward":
            continue
        for from_bits in (False, True):
            if from_bits and (layout, n, cores) not in with_bits:
                continue
            relu_kind = "bits" if from_bits else "relu"
            backward = calls.get((layout, n, size, cores, relu_kind if s.relu else "plain"))
            t = steps.setdefault((layout, n, cores, from_bits), [0, 0.0, 0.0, 0])
            if backward is None:
                t[3] += 1       # a layer without its backward's row: no total
                continue
            t[0] += s.layers
            t[1] += s.layers * (p.seconds + backward[1].seconds)
            t[2] += s.layers * (p.floor_seconds + backward[1].floor_seconds)
    for (layout, n, size, cores, kind) in calls:     # a layer's backward without its forward
        for from_bits in (False, True):
            if kind == "plain" and (layout, n, cores, from_bits) in steps \
                    and (layout, n, size, cores, "forward") not in calls:
                steps[(layout, n, cores, from_bits)][3] += 1
    return [f"  {dtype} resnet50 {n} training step{' in NCHW' if layout == 'NCHW' else ''} "
            f"(forward, ReLU, backward{' from the keep bits' if from_bits else ''}), "
            f"{cores} cores: "
            f"{t[0]} layers {t[1] * 1e3:.2f} ms (DDR floor {t[2] * 1e3:.2f} ms, "
            f"{100 * t[2] / t[1]:.0f}%)"
            for (layout, n, cores, from_bits), t in steps.items() if not t[3] and t[0]]


def write_csv(path: str, rows: List[Tuple[Shape, Prediction]]) -> None:
    """One line per call; a first comment line lists the channel counts of the vendor's
    calls (the plot's lines: it draws those, the last five columns, spatial, relu,
    forward, bits and accumulate_dx, 0)."""
    out = io.StringIO()
    channels = sorted({s.channel for s, _ in rows if not s.extension})
    out.write("# channels: " + " ".join(map(str, channels)) + "\n")
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["label", "dtype", "batch", "channel", "cores", "layers", "predicted_us", "floor_us",
                "ddr_bytes", "min_ddr_bytes", "gsm_bytes", "am_bytes", "bound"]
               + [f"{k}_us" for k in BOUNDS]
               + ["barrier_us", "spatial", "relu", "forward", "bits", "accumulate_dx"])
    for s, p in rows:
        w.writerow([s.label, p.call.dtype, s.batch, s.channel, p.call.cores, s.layers,
                    f"{p.seconds * 1e6:.3f}", f"{p.floor_seconds * 1e6:.3f}", p.bytes["ddr"],
                    p.min_ddr_bytes, p.bytes["gsm"], p.bytes["am"], p.bound]
                   + [f"{p.spent[k] * 1e6:.3f}" for k in BOUNDS + ("barrier",)]
                   + [s.spatial, int(s.relu), int(s.forward), int(s.bits), int(s.accumulate_dx)])
    with open(path, "w", encoding="utf-8") as f:
        f.write(out.getvalue())
