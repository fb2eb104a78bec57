"""Vector operations of the generated ukernels (the backward's and the training
forward's), counted from the template that writes them, and of the driver's ReLU mask
steps.

templates/ukernel_ops.j2 spells each ukernel's arithmetic once, in macros: per row
reduce_load and reduce_add (reduce), dx_train_store, dx_infer_store; per block of
BLOCK_ROWS rows reduce_zero and reduce_fold; the generic NHWC kernel's columns are
templates/nhwc_ukernels.j2's generic_reduce_columns and generic_dx_train. The plan
(generator/plan.py) says which vector widths a kernel writes per row (its segment
loops). The NCHW ukernels (templates/nchw_ukernels.j2) spell a plane's vectors through
the same macros: per vector of the dtype's lanes the row macros, per block of
NCHW_BLOCK_VECTORS vectors (reduce) reduce_zero and reduce_fold, and the plane's last
elements in a vector per set bit of their count (ukernel_ops.j2's tail_steps; on a split
target in one whole vector, merged in the plane's lanes alone); the
training forward's (templates/fwd_nchw_ukernels.j2) likewise through the forward's row
macros and that template's own: a statistics block's four accumulators, and its last
elements in the same steps, each value a block of one into its lane.
Here each macro is rendered for a width and its bng_f32xN_* operations counted by
name, so that a change of the template's arithmetic changes the counts with it.

An operation on N lanes takes ceil(N / vector lanes) issue slots (a target's vector
register holds its f32 lanes); loads and stores go to the load/store units, everything
else to the arithmetic units, and a half load or store is also a conversion (one
arithmetic slot). Per-call set-up (the per-channel vectors a specialized kernel loads
into registers once, the broadcasts of an NCHW kernel's coefficients) is left out.

The fused ReLU's steps (BNG_FLAG_RELU, include/bng_relu.c: a tile's dy masked by
y, its mask kept as bits, a tile's dy masked by its bits) are the driver's, not
generated ukernels. On a gnu-backend target they are GCC vectors of one register
(BNG_RELU_VECTOR_BYTES), costed like the ukernels, at their issue slots per vector
(RELU_VECTOR_SLOTS, counted by hand from the driver's macros), the row's last
elements one at a time (on a split target the kernels' masked loads, whole vectors of
the register's f32 lanes at the same slots, an NCHW plane's keep words turned first:
keep_turn); on the other backends they are plain C, costed at their
operations per element at RELU_SCALAR_OPS_PER_CYCLE, an estimate, until a
measurement on the part replaces it.
"""

import functools
import re
from dataclasses import dataclass
from typing import Callable, Dict, List, Optional, Tuple

from ..order import BLOCK_ROWS, NCHW_BLOCK_VECTORS
from ..plan import FWD_NCHW_OPS, FWD_OPS, OPS, DTypePlan, Kernel, TargetPlan
from ..render import environment, template_context

OPERATION = re.compile(r"bng_f32x(\d+)_(\w+)\(")


@dataclass(frozen=True)
class Slots:
    """Issue slots: vector arithmetic, vector loads and stores."""
    alu: int = 0
    ldst: int = 0

    def __add__(self, other: "Slots") -> "Slots":
        return Slots(self.alu + other.alu, self.ldst + other.ldst)

    def __mul__(self, n: int) -> "Slots":
        return Slots(self.alu * n, self.ldst * n)

    def __sub__(self, other: "Slots") -> "Slots":
        return Slots(self.alu - other.alu, self.ldst - other.ldst)


# The driver's ReLU steps (the kernel hook's op names) on the gnu backend: issue slots
# per vector, counted by hand from include/bng_relu.c's BNG_RELU_VECTOR_STEPS. The
# mask of y's lanes (BNG_RELU_KEEPS_V) is nine: 0 - y, a shift, y's shift, not, and,
# |y|, Inf - |y|, a shift, or. relu_mask: load dy and y, the nine, and; store.
# relu_bits, per row: load y, the nine, and 1, shift, or (a word's store per 32 or 16
# rows left out). relu_by_bits: load dy and the bits, shift, and 1, negate, and; store
# (NCHW's plane step, bng_nchw_relu.c's bng_relu_plane_by_bits, takes its lanes' bits
# from one or two words of the plane's: a scalar load or two and a broadcast a vector
# more, not counted: an estimate).
RELU_VECTOR_SLOTS = {"relu_mask": Slots(alu=10, ldst=3), "relu_bits": Slots(alu=12, ldst=1),
                     "relu_by_bits": Slots(alu=4, ldst=3)}
# The same steps as plain C (the other backends, and a row's last elements): scalar
# operations per element, counted by hand. relu_mask (bng_relu_mask_tile): load dy and y, the
# seven of BNG_RELU_KEEPS, negate, and, store. relu_bits (bng_relu_tile_bits): load y, the
# seven, shift, or. relu_by_bits (bng_relu_tile_by_bits): load dy and the bits' word,
# shift, and 1, negate, and, store.
RELU_STEP_OPS = {"relu_mask": 12, "relu_bits": 10, "relu_by_bits": 7}
# An estimate, not a count: the scalar unit's operations per cycle on these steps. A
# measurement of the steps on the part (the calibration program's, when it times them)
# replaces it.
RELU_SCALAR_OPS_PER_CYCLE = 3.0
# The training forward's NCHW ReLU packs a vector's keep words into the plane's bit
# words (templates/fwd_nchw_ukernels.j2). On a gnu-backend target bng_keepsN_pack_* does
# it in the register (bng_vec_gnu_relu.h), counted by hand as vector slots: an and and a
# shift, then the lanes of a group (a lane type's width of them: 32 of float keeps, 16 of
# half) ORed together half a register at a time, a move and an or a halving; then, as
# plain C, each word's chunk of the packed bits shifted, ORed into the word and the word
# tested (FWD_NCHW_CHUNK_OPS; its store, one a word, left out). On the other backends (the
# portable lane loops, which the native backend's keep words are) each value as plain C,
# its lane's and, shift and or (FWD_NCHW_PACK_OPS), after a load/store slot for the
# vector's keep words. The plain C at RELU_SCALAR_OPS_PER_CYCLE after the vector's own
# slots. Estimates, as that rate is. (make model's ReLU forward writes its bits; one
# without them would skip the packing, which this charges all the same.)
FWD_NCHW_PACK_OPS = 3
FWD_NCHW_CHUNK_OPS = 3
# On a split target a register of keep words is turned (bng_keepsN_turn_*,
# bng_vec_gnu_relu.h): a lane permute where the register holds more lanes than a word
# has bits, and per halving of a word's bits one BNG_TURN_STEP (bng_vec_gnu.h), a lane
# permute and eleven bitwise operations and shifts; counted by hand, on a register of
# the lanes' words (an estimate, as the packing's). The forward's NCHW ReLU marks each
# vector's keeps into such a register (in the masked load the row macro counts) and,
# every word's bits of vectors and at the piece's end, stores it and turns it back into
# the plane's words (a store, a load and a store: FWD_NCHW_TURN_LDST); the backward's
# ReLU by the bits turns each vector of a plane's words in place before it masks the
# plane (bng_nchw_relu.c: a load and a store).
KEEP_TURN_STEP_SLOTS = 12
FWD_NCHW_TURN_LDST = 3
RELU_TURN_LDST = 2
# y's NCHW ukernels, by the row macro each writes a vector (or a last value) with
FWD_NCHW_Y_ROWS = {"fwd_nchw_norm": "fwd_norm_row", "fwd_nchw_norm_relu": "fwd_norm_relu_row"}


@dataclass(frozen=True)
class OpCost:
    """One ukernel call's slots: per row, and per block of BLOCK_ROWS rows."""
    row: Slots
    block: Slots = Slots()

    def slots(self, rows: int) -> Slots:
        return self.row * rows + self.block * -(-rows // BLOCK_ROWS)


def count(text: str, vector_lanes: int) -> Slots:
    """The issue slots of the vector operations in rendered C."""
    total = Slots()
    for lanes, name in OPERATION.findall(text):
        width = -(-int(lanes) // vector_lanes)
        memory = name.startswith(("load", "store"))
        convert = memory and name.endswith("f16")
        total += Slots(alu=width * convert, ldst=width) if memory else Slots(alu=width)
    return total


def keep_turn(lanes: int, element_bytes: int, vector_lanes: int, ldst: int) -> Slots:
    """One turn of a register of `lanes` keep words of `element_bytes` each (its
    KEEP_TURN_STEP_SLOTS steps, its permute), with `ldst` loads and stores of it."""
    word_bits = 8 * element_bytes
    width = -(-lanes * element_bytes // (4 * vector_lanes))
    alu = KEEP_TURN_STEP_SLOTS * (min(lanes, word_bits).bit_length() - 1) + (lanes > word_bits)
    return Slots(alu=alu * width, ldst=ldst * width)


class KernelCosts:
    """The ukernels' costs of one storage type of a target."""

    def __init__(self, tp: TargetPlan, dtype: DTypePlan):
        self.dtype = dtype
        self.vector_lanes = tp.vector_lanes
        self.packs_in_register = tp.target.vector_backend == "gnu"
        self.split = tp.target.memory.split
        env, context = environment(), template_context(tp, "ukernels.c.j2", dtype=dtype,
                                                       command=tp.command)
        self.ops = env.get_template("ukernel_ops.j2").make_module(context)
        self.nhwc = env.get_template("nhwc_ukernels.j2").make_module(context)
        self.fwd = (env.get_template("fwd_nhwc_ukernels.j2").make_module(context)
                    if tp.fwd_ops else None)
        self.fwd_nchw = (env.get_template("fwd_nchw_ukernels.j2").make_module(context)
                         if tp.fwd_nchw else None)

    @functools.lru_cache(maxsize=None)
    def _macro(self, name: str, lanes: int) -> Slots:
        """One vector of `lanes`: the macro rendered with placeholder operands."""
        m, nhwc, fwd, fwd_nchw = self.ops, self.nhwc, self.fwd, self.fwd_nchw
        text = {
            "reduce_row": lambda: str(m.reduce_load(lanes, 0, "x", "dy", "mean"))
            + str(m.reduce_add(lanes, 0)),
            "reduce_block": lambda: str(m.reduce_zero(lanes, 0))
            + str(m.reduce_fold(lanes, 0, "sum_dy + c", "sum_dyxm + c")),
            "dx_train_row": lambda: str(m.dx_train_store(lanes, "x", "dy", "dx", "mean", "gain",
                                                         "dy_mean", "slope")),
            "dx_infer_row": lambda: str(m.dx_infer_store(lanes, "dy", "dx", "gain")),
            # The generic kernel's columns: its per-channel operands loaded with each vector.
            "generic_reduce": lambda: str(nhwc.generic_reduce_columns(lanes)),
            "generic_dx_train_row": lambda: str(nhwc.generic_dx_train(lanes)),
            # (the generic dx_infer passes the gain as a load, inline in the template)
            "generic_dx_infer_row": lambda: str(m.dx_infer_store(
                lanes, "dy", "dx", f"{m.f32x(lanes)}_load_f32(gain + c)")),
            # the training forward's (fwd_nhwc_ukernels.j2): a row's two sweeps, a block's
            # mean and merge; y's row; the generic kernel's columns and row
            "fwd_stats_row": lambda: str(m.fwd_block_sum(lanes, 0, "x", "shift"))
            + str(m.fwd_block_m2(lanes, 0, "x", "shift")),
            "fwd_stats_block": lambda: str(m.fwd_block_mean(lanes, 0))
            + str(m.fwd_block_merge(lanes, 0, "gm", "gq")),
            "fwd_norm_row": lambda: str(m.fwd_norm_store(lanes, "x", "y", "shift", "mean", "gain",
                                                         "bias")),
            "generic_fwd_stats": lambda: str(fwd.generic_stats_columns(lanes)),
            "generic_fwd_norm_row": lambda: str(fwd.generic_norm(lanes)),
            # with ReLU (the generic kernel's alone): the value through the stack and
            # the masked load (its keep bit)
            "generic_fwd_norm_relu_row": lambda: str(m.fwd_norm_relu_store(
                lanes, "held", "keep", "x", "y", *(f"{m.f32x(lanes)}_load_f32({a} + c)"
                                                   for a in ("shift", "mean", "gain", "bias")))),
            # the forward's NCHW ukernels (fwd_nchw_ukernels.j2, at the dtype's lanes):
            # y with the ReLU, its coefficients in registers; a statistics block's four
            # accumulators of the deviations and of their squares, from zero and added;
            # a step of a plane's last values, each a block of one into its lane's
            # statistics
            "fwd_norm_relu_row": lambda: str(m.fwd_norm_relu_store(
                lanes, "held", "keep", "x", "y", "shift", "mean", "gain", "bias")),
            "fwd_nchw_accumulators": lambda: "".join(
                str(fwd_nchw.accumulators(a)) + str(fwd_nchw.accumulated(a)) for a in "sq"),
            "fwd_nchw_tail_value": lambda: str(fwd_nchw.tail_value(lanes)),
            # a split target's plane tail, one whole vector merged in the plane's lanes
            # alone (`kept` of them): reduce's block folded so, y with the ReLU zeroed
            # past them, the statistics' last values between loads and selects
            "reduce_block_kept": lambda: str(m.reduce_zero(lanes, 0))
            + str(m.reduce_fold(lanes, 0, "sum_dy + c", "sum_dyxm + c", "kept")),
            "fwd_norm_relu_row_kept": lambda: str(m.fwd_norm_relu_store(
                lanes, "held", "keep", "x", "y", "shift", "mean", "gain", "bias", kept="kept")),
            "fwd_nchw_tail_value_kept": lambda: "".join(
                f"{m.f32x(lanes)}_load_f32(lane_{a}) {m.f32x(lanes)}_store_f32(lane_{a}, "
                f"{m.f32x(lanes)}_select_first({g}, old_{a}, kept)) "
                for a, g in (("mean", "gmt"), ("m2", "gqt")))
            + str(fwd_nchw.tail_value(lanes, "x", "shift_vec", "old_mean", "old_m2")),
        }[name]()
        return count(text, self.vector_lanes)

    def _widths(self, kernel: Kernel, channels: int) -> Dict[int, int]:
        """Vector width -> how many vectors of it one row takes."""
        if kernel.channels is not None:
            out: Dict[int, int] = {}
            for loop in kernel.loops:
                for s in loop.segments:
                    out[s.lanes] = out.get(s.lanes, 0) + loop.repeat
            return out
        lanes = self.dtype.config.lanes
        vectors, tail = divmod(channels, lanes)
        return {w: n for w, n in ((lanes, vectors), (1, tail)) if n}

    def cost(self, kernel: Kernel, op: str, channels: int) -> OpCost:
        """A call of `op` of `kernel` over rows of `channels` (the count the driver passes:
        padded on a split target)."""
        assert op in OPS + FWD_OPS, op
        if op in FWD_OPS and op not in kernel.fwd_ops:
            kernel = self.dtype.generic      # its table entry takes the generic ukernel
        row, block = Slots(), Slots()
        generic = kernel.channels is None
        for lanes, n in self._widths(kernel, channels).items():
            if op == "fwd_stats":
                per_row = self._macro("fwd_stats_row", lanes)
                row += per_row * n
                block += (self._macro("generic_fwd_stats", lanes) - per_row if generic
                          else self._macro("fwd_stats_block", lanes)) * n
            elif op == "reduce":
                per_row = self._macro("reduce_row", lanes)
                row += per_row * n
                block += (self._macro("generic_reduce", lanes) - per_row if generic
                          else self._macro("reduce_block", lanes)) * n
            else:
                row += self._macro(("generic_" if generic else "") + op + "_row", lanes) * n
        return OpCost(row, block)

    def _plane(self, n: int) -> Tuple[int, List[int]]:
        """A plane of `n` elements as the NCHW ukernels take it: its whole vectors of
        the dtype's lanes, and the widths of the steps of its last n % lanes (a step per
        set bit: ukernel_ops.j2, tail_steps; on a split target one whole vector of the
        padded plane, its lanes past the plane computed on too)."""
        lanes = self.dtype.config.lanes
        vectors, tail = divmod(n, lanes)
        if self.split:
            return vectors, [lanes] if tail else []
        return vectors, [w for w in (1 << b for b in range(lanes.bit_length())) if tail & w]

    def _group(self) -> int:
        """The values of a keep-bit word: a lane type's width of bits."""
        return 8 * self.dtype.element_bytes

    def _pack(self, lanes: int) -> Slots:
        """The vector slots of packing one vector's keep bits (the estimate above
        FWD_NCHW_PACK_OPS)."""
        if not self.packs_in_register:
            return Slots(ldst=1)
        group = min(lanes, self._group())
        return Slots(alu=2 + 2 * (group.bit_length() - 1) * -(-lanes // group))

    def _turns(self, vectors: int) -> Slots:
        """A split target's keep words of a piece's `vectors` vectors turned back into
        the plane's words: once a word's bits of vectors and at the piece's end."""
        per_turn = keep_turn(self.dtype.config.lanes, self.dtype.element_bytes,
                             self.vector_lanes, FWD_NCHW_TURN_LDST)
        return per_turn * -(-vectors // self._group())

    def fwd_nchw_pack_ops(self, n: int) -> int:
        """The plain-C operations of packing a plane's `n` keep bits into its words
        (FWD_NCHW_CHUNK_OPS a word's chunk of a vector, or FWD_NCHW_PACK_OPS a value)."""
        if self.split:
            return 0        # the words turn in the register (_turns)
        if not self.packs_in_register:
            return n * FWD_NCHW_PACK_OPS
        vectors, steps = self._plane(n)
        chunks = sum(-(-w // self._group()) for w in [self.dtype.config.lanes] * vectors + steps)
        return chunks * FWD_NCHW_CHUNK_OPS

    def nchw_cost(self, op: str, n: int) -> Slots:
        """One plane's `n` elements through an NCHW ukernel (any of a dtype's sets: the
        specialized ones are the generic code with n constant): the dtype's vectors,
        reduce's (and the forward's statistics') blocks of them, the last n % lanes
        elements in a vector per set bit of n % lanes (ukernel_ops.j2, tail_steps); on a
        split target in one whole vector, its reduce block, statistics and y with the
        ReLU merged or zeroed in the plane's lanes alone (the `kept` macros)."""
        assert op in OPS + FWD_NCHW_OPS, op
        lanes = self.dtype.config.lanes
        vectors, steps = self._plane(n)
        kept = "_kept" if self.split else ""

        def tail(name: str) -> Slots:
            return sum((self._macro(name, w) for w in steps), Slots())
        if op == "fwd_nchw_stats":
            blocks = -(-vectors // NCHW_BLOCK_VECTORS)
            return (self._macro("fwd_stats_row", lanes) * vectors
                    + (self._macro("fwd_stats_block", lanes)
                       + self._macro("fwd_nchw_accumulators", lanes)) * blocks
                    + tail("fwd_nchw_tail_value" + kept))
        if op in FWD_NCHW_Y_ROWS:
            row = FWD_NCHW_Y_ROWS[op]
            keeps = Slots()
            if op == "fwd_nchw_norm_relu":
                keeps = (self._turns(vectors + len(steps)) if self.split
                         else sum((self._pack(w) for w in [lanes] * vectors + steps), Slots()))
            return (self._macro(row, lanes) * vectors + keeps
                    + tail(row + (kept if op == "fwd_nchw_norm_relu" else "")))
        if op == "reduce":
            blocks = -(-vectors // NCHW_BLOCK_VECTORS)
            return (self._macro("reduce_row", lanes) * vectors
                    + self._macro("reduce_block", lanes) * blocks
                    + tail("reduce_row") + tail("reduce_block" + kept))
        return (self._macro(op + "_row", lanes) * vectors
                + sum((self._macro(op + "_row", w) for w in steps), Slots()))


def relu_step_cycles(op: str) -> float:
    """Core cycles per element of a ReLU step of the driver as plain C: an estimate."""
    return RELU_STEP_OPS[op] / RELU_SCALAR_OPS_PER_CYCLE


def relu_step_seconds(tp: TargetPlan, dtype: DTypePlan, op: str, rows: int, channels: int,
                      clock_hz: float, alu_per_cycle: float, ldst_per_cycle: float,
                      planes: bool = False) -> float:
    """Seconds of a traced ReLU step of `rows` rows of `channels`: on a gnu-backend
    target whole vectors of one register at their slots (the mask by y works on the
    tile's rows as one run: they follow each other in private memory), the rest one
    element at a time at the plain-C estimate; on the other backends all of it at the
    estimate. On a split target (gnu only: the generator refuses relu on the others)
    the steps are the kernels' masked loads, BNG_V lanes (the f32 lanes) of either type
    at a time over whole vectors (a row padded, an NCHW plane's last vector whole),
    costed at the same slots per vector (an estimate); by the bits, an NCHW tile's
    (`planes`) each plane's words first turned a register of BNG_V words at a time
    (keep_turn: a keep word per 8 * element_bytes of its values, its words padded to
    whole vectors)."""
    if tp.target.vector_backend != "gnu":
        return rows * channels * relu_step_cycles(op) / clock_hz
    split = tp.target.memory.split
    lanes = tp.vector_lanes if split else 4 * tp.vector_lanes // dtype.element_bytes
    runs, run = (1, rows * channels) if op == "relu_mask" else (rows, channels)
    vectors, tail = (-(-run // lanes), 0) if split else divmod(run, lanes)
    slots = RELU_VECTOR_SLOTS[op] * (vectors * runs)
    if split and planes and op == "relu_by_bits":
        words = -(-channels // (8 * dtype.element_bytes))
        slots += keep_turn(lanes, dtype.element_bytes, tp.vector_lanes,
                           RELU_TURN_LDST) * (rows * -(-words // lanes))
    cycles = max(slots.alu / alu_per_cycle, slots.ldst / ldst_per_cycle)
    return (cycles + runs * tail * relu_step_cycles(op)) / clock_hz


def kernel_by_entry(tp: TargetPlan, entry: str) -> Optional[Tuple[DTypePlan, Kernel]]:
    """The plan's kernel whose table entry, or training forward's table entry, is
    `entry` (a trace names them so)."""
    for d in tp.dtypes:
        for k in d.kernels:
            if entry == k.table_entry or (tp.fwd_ops and entry == k.fwd_table_entry):
                return d, k
    return None


def nchw_entry(tp: TargetPlan, entry: str) -> Optional[Tuple[DTypePlan, Tuple[str, ...]]]:
    """The dtype and the ops of the NCHW kernel table entry `entry` (the backward's set,
    or the training forward's), if it is one of the plan's."""
    if not tp.has("nchw"):
        return None
    for d in tp.dtypes:
        for k in tp.nchw_kernels(d):
            if entry == k.table_entry:
                return d, OPS
            if tp.fwd_nchw and k.fwd_ops and entry == k.fwd_table_entry:
                return d, FWD_NCHW_OPS
    return None


def kernel_timer(tp: TargetPlan, clock_hz: float, alu_per_cycle: float,
                 ldst_per_cycle: float) -> Callable[[object], float]:
    """Seconds of a traced kernel call (entry, op, rows, channels): its slots at the
    issue rates, the busier kind of unit deciding, at the clock; the ReLU steps as
    relu_step_seconds costs them."""
    costs = {d.name: KernelCosts(tp, d) for d in tp.dtypes}

    @functools.lru_cache(maxsize=None)
    def seconds(entry: str, op: str, rows: int, channels: int) -> float:
        nchw = (nchw_entry(tp, entry) or (None,))[0]
        found = kernel_by_entry(tp, entry)
        if op in RELU_STEP_OPS and (found is not None or nchw is not None):
            # an NCHW tile's mask: its planes' elements (padded on a split target), one
            # run as NHWC's; by the bits, its planes' words turned first there
            return relu_step_seconds(tp, found[0] if found is not None else nchw, op, rows,
                                     channels, clock_hz, alu_per_cycle, ldst_per_cycle,
                                     planes=found is None)
        scalar = 0.0
        if nchw is not None:
            slots = costs[nchw.name].nchw_cost(op, channels) * rows
            if op == "fwd_nchw_norm_relu":
                scalar = (rows * costs[nchw.name].fwd_nchw_pack_ops(channels)
                          / RELU_SCALAR_OPS_PER_CYCLE)
        elif found is not None:
            dtype, kernel = found
            slots = costs[dtype.name].cost(kernel, op, channels).slots(rows)
        else:
            raise KeyError(f"the trace names {entry}, which the plan of {tp.name} does not have")
        return (max(slots.alu / alu_per_cycle, slots.ldst / ldst_per_cycle) + scalar) / clock_hz
    return lambda call: seconds(call.entry, call.op, call.rows, call.channels)
