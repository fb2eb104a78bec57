"""python3 -m generator.costmodel --target t --trace PROGRAM [--shapes "BxC BxC:relu NxCxS ..."]
[--cores "1 8"] [--csv FILE]: trace, replay, report (make model runs it)."""

import argparse
import subprocess
import sys
from typing import List, Tuple

from ..errors import ConfigError
from ..loader import load
from ..plan import TargetPlan, plan_target
from ..validate import validate
from . import report
from .opcount import RELU_STEP_OPS, kernel_timer
from .replay import Machine, Prediction, predict
from .shapes import Shape, default_shapes, parse_cores, parse_shapes
from .trace import Call, KernelCall, parse


def record(program: str, calls: List[str]) -> str:
    """The trace program's record of the calls (DTYPE:BATCHxCHANNEL[xSPATIAL]:MASK[:relu
    [:bits]][:acc][:fwd] each)."""
    done = subprocess.run([program, *calls], capture_output=True, text=True)
    if done.returncode != 0:
        raise ConfigError(program, "", "the trace failed: "
                          f"{done.stderr.strip() or done.returncode}")
    return done.stdout


def predictions(args) -> Tuple[TargetPlan, List[Tuple[Shape, Prediction]]]:
    config = validate(load(args.config))
    target = config.target(args.target)
    if target is None:
        raise ConfigError("--target", args.target, "unknown target; known: "
                          + ", ".join(t.name for t in config.targets))
    if target.part is None:
        raise ConfigError(str(target.where("")), f"targets.{target.name}.part",
                          "missing: make model needs the part's figures (targets.yaml's header "
                          "lists the keys)")
    tp = plan_target(target)
    shapes = parse_shapes(args.shapes) if args.shapes else default_shapes(
        tp.extensions + (("forward",) if tp.has("forward") else ()))
    for s in shapes:
        for extension in s.extensions:
            if not tp.has(extension):
                raise ConfigError("SHAPES", s.size, f"{target.name} does not have the "
                                  f"{extension} extension (targets.yaml extensions:)")
    cores = parse_cores(args.cores, target.cores) if args.cores else (target.cores,)
    wanted = [(s, d, n) for d in tp.dtypes for s in shapes for n in cores]
    calls: List[Call] = parse(record(args.trace, [
        f"{d.name}:{s.size}:{(1 << n) - 1:#x}" + (":relu" if s.relu else "")
        + (":bits" if s.bits else "") + (":acc" if s.accumulate_dx else "")
        + (":fwd" if s.forward else "")
        for s, d, n in wanted]))
    machine = Machine.from_part(target.part)
    seconds = kernel_timer(tp, machine.clock_hz, machine.alu_per_cycle, machine.ldst_per_cycle)
    return tp, [(s, predict(c, machine, seconds, d.element_bytes, d.stats_bytes))
                for (s, d, _), c in zip(wanted, calls)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m generator.costmodel", description=__doc__)
    ap.add_argument("--config", default="targets.yaml")
    ap.add_argument("--target", required=True)
    ap.add_argument("--trace", required=True, help="the trace program (make model builds it)")
    ap.add_argument("--shapes", help='"BATCHxCHANNEL ...", BATCHxCHANNEL:relu (fused ReLU; '
                    ':relu:bits from the forward\'s keep bits), '
                    'BATCHxCHANNELxSPATIAL (NCHW), any of those with :acc last (adding into '
                    'dx), BATCHxCHANNEL:fwd (the training forward; '
                    ':fwd:relu with its ReLU; NxCxS:fwd in NCHW) (default: ResNet-50 and the '
                    'bench)')
    ap.add_argument("--cores", help='"1 8": core counts (default: all the target has)')
    ap.add_argument("--csv", help="write one line per call here")
    args = ap.parse_args(argv)
    try:
        tp, rows = predictions(args)
    except ConfigError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    kernel_calls = [e for _, p in rows for r in p.call.regions for events in r.values()
                    for e in events if isinstance(e, KernelCall)]
    used = {(e.entry, e.channels) for e in kernel_calls if e.op not in RELU_STEP_OPS}
    masked = any(e.op in RELU_STEP_OPS for e in kernel_calls)
    print(report.heading(tp))
    print(report.kernel_table(tp, used, masked))
    by_dtype = {d.name: [(s, p) for s, p in rows if p.call.dtype == d.name] for d in tp.dtypes}
    for name, mine in by_dtype.items():
        print(report.table(name, mine))
    print(report.LEGEND)
    totals = [line for name, mine in by_dtype.items()
              for line in report.network_totals(name, mine) + report.training_steps(name, mine)]
    if totals:
        print("all of a network's batch-norm layers, one call each:\n" + "\n".join(totals))
    if args.csv:
        report.write_csv(args.csv, rows)
    return 0


sys.exit(main())
