"""The plan: every kernel and file the generator emits, derived from a validated target.

This list is the single source of truth: the templates render exactly these kernels
and files; each target's build.mk (rendered from the plan) lists the sources the
Makefile compiles; the tests iterate over the kernel list bng_kernels.h spells out.

Words: a *kernel* is one table entry (the ukernels for one channel count, or the
generic ones); a *chunk* is the span of channels one driver pass handles; a *row
group* is the unit of the summation order and of the _s work split; a *segment* is
the channels one vector operation covers in an unrolled kernel.
"""

import functools
from dataclasses import dataclass, replace
from typing import Dict, Optional, Tuple

from .model import EXTENSIONS, DTypeConfig, Target
from .nhwc_memory import NhwcGsm, NhwcMemory
from .order import BLOCK_ROWS, MAX_GROUPS, MIN_GROUP_ROWS, NCHW_BLOCK_VECTORS
from .staging import (ALIGN, DX_TILE_BUFFERS, RELU_TILE_BUFFERS, STREAM_TILE_BYTES, TILE_BUFFERS,
                      aligned, padded)

# The row ukernels of a kernel, in table order: the C field names and symbol infixes.
OPS = ("reduce", "dx_train", "dx_infer")
# With the relu extension every kernel has these too, after OPS in the table: the same
# arithmetic on dy masked by the forward output y, which an NHWC _p call with
# BNG_FLAG_RELU runs on the caller's arrays (y read beside dy, nothing staged).
RELU_OPS = ("reduce_relu", "dx_train_relu", "dx_infer_relu")
# And, an NHWC kernel's, after those: the same arithmetic on dy masked by keep bits
# (bng_vec.h, "Keep bits"): those the training forward wrote (BNG_FLAG_RELU_BITS, read
# in both passes in place of y), or, in pass 2 of a call that sums its rows and writes a
# dx that is neither x nor dy, those reduce_relu left in dx (y is not read again).
KEEPS_OPS = ("reduce_keeps", "dx_train_keeps", "dx_infer_keeps")
# An NCHW set's _keeps ukernels (the forward's keep bits, a plane's words) are the
# generic set's alone, which every entry of the table names: for no gain on the host
# a set of them per extent would cost every image that calls NCHW with ReLU their code
# (docs/design.md, "Fused ReLU backward").
# The training forward's (the forward extension: batch_norm_fwd.h), in their own table
# (bng_fwd_kernel): the statistics of a row group, and y from them (with ReLU, and its
# keep bits: BNG_FWD_RELU). The ReLU's is the generic kernel's alone, which every entry
# of the table names: a firmware that calls the forward links every entry's ukernels,
# and a specialized ReLU ukernel per count cost a Cortex-M7 image 44 KB (f32) for 0-8%
# of the host's time (docs/design.md, "Training forward").
FWD_OPS = ("fwd_stats", "fwd_norm", "fwd_norm_relu")
# With nchw as well, the forward's plane ukernels (bng_fwd_nchw_kernel): a plane's lane
# statistics, and its y (with ReLU and its bits). The generic set's alone, for every
# extent: specialized per targets.yaml spatial: extent they were no faster on the host
# and cost a Cortex-M7 image that calls the forward 53 KB (docs/design.md, "Training
# forward").
FWD_NCHW_OPS = ("fwd_nchw_stats", "fwd_nchw_norm", "fwd_nchw_norm_relu")
FWD_GENERIC_ONLY_OPS = ("fwd_norm_relu",) + FWD_NCHW_OPS

def fwd_ops_of(ops: Tuple[str, ...], generic: bool) -> Tuple[str, ...]:
    """A forward table entry's own ukernels of ``ops``: all for the generic kernel; a
    specialized one's entry takes the generic-only ones from the generic kernel."""
    return tuple(op for op in ops if generic or op not in FWD_GENERIC_ONLY_OPS)


# Channels a generic kernel processes per pass, in vectors of the dtype's lanes.
GENERIC_CHUNK_VECTORS = 8

# The private-storage driver keeps these float arrays of the target's widest chunk on
# the stack on a unified target (bng_nhwc_p_run's bng_p_stack, whose size the
# driver asserts).
STACK_FLOAT_ARRAYS = 8
# DMA transfers a core may have outstanding at once: the HAL contract (bng_hal.h), the
# host DMA engine's limit, the hthreads HAL's bookkeeping and the driver's most (pass 2:
# the next tile's two gets, this tile's two gets or its put) all assert this number.
MAX_OUTSTANDING_DMA = 4

# The partial-sums buffer of the reduce and apply entry points (extensions): float32
# sum of dy [channel], sum of dy*(x - mean) [channel], then the row count as
# SUMS_COUNT_LIMBS floats of SUMS_LIMB_BITS bits each, least significant first. A
# communication library adds buffers element-wise as floats: each limb is below
# 2^SUMS_LIMB_BITS, so the limbs of up to SUMS_MAX_BUFFERS buffers add up exactly (below
# 2^24) in any order, and the count is carried exactly up to 2^(bits x limbs) - 1 rows.
SUMS_COUNT_LIMBS = 6
SUMS_LIMB_BITS = 12
SUMS_MAX_BUFFERS = 4096
# NCHW _s's per-channel area at the start of private memory (the driver's
# bng_nchw_area): mean, invar, scale, dbias, dscale, two sums, each a slot (a float; on a
# split target a vector of the widest lanes), the count's limbs (a vector each on a
# split target); there also the channel's six coefficients (bng_nchw_channel, slots)
# and its sums (bng_nchw_sum_area: two arrays of the widest lanes bng_vec.h has, and
# six vectors), which scalar code keeps on the stack elsewhere.
NCHW_AREA_SLOTS = 5 + 2
NCHW_CHANNEL_SLOTS = 6
NCHW_MAX_LANES = 64
NCHW_SUM_VECTORS = 6
# The training forward's NCHW _s at the start of private memory (bng_fwd_nchw_layout):
# the channel's copies (bng_fwd_copies: BNG_FWD_FLOAT_ARRAYS floats and
# BNG_FWD_STATS_ARRAYS of the stats type, a slot each), and the statistics' area's
# vectors past the lanes' two arrays (bng_fwd_nchw_sum_area).
FWD_NCHW_COPIES = 7 + 6
FWD_NCHW_SUM_VECTORS = 8
# The vendor's parameter block (12 slots) and the extended one of the extensions (16:
# the vendor's slots, then the sums pointer and the flags; 9-11, 14 and 15 reserved).
PARAMS_SLOTS = 12
EXT_PARAMS_SLOTS = 16

ELEMENT_BYTES = {"f32": 4, "f16": 2}
API_PREFIX = {"f32": "fp", "f16": "hp"}
C_TYPE = {"f32": "float", "f16": "half"}


@dataclass(frozen=True)
class Segment:
    """The channels one vector operation covers in an unrolled kernel."""
    offset: int
    lanes: int


def segments(channels: int, lanes: int) -> Tuple[Segment, ...]:
    """Full vectors, then the tail as descending powers of two (13 -> 8, 4, 1)."""
    out = list(_vectors(channels // lanes, lanes))
    offset = len(out) * lanes
    width = lanes // 2
    while offset < channels:
        if channels - offset >= width:
            out.append(Segment(offset, width))
            offset += width
        width //= 2
    return tuple(out)


@dataclass(frozen=True)
class SegmentLoop:
    """Channels [start, start + repeat * step) as ``repeat`` copies of ``segments``
    (offsets relative to the copy's first channel, covering [0, step)): straight code
    when repeat is 1, else a loop whose body is the segments."""
    start: int
    repeat: int
    step: int
    segments: Tuple[Segment, ...]

    @property
    def end(self) -> int:
        return self.start + self.repeat * self.step


# Per lane count, the full vectors from channel 0 as far as any plan has asked: a plan's
# full vectors are a slice of it (the plan's exhaustive test asks for 1.3 million).
_VECTOR_ROWS: Dict[int, Tuple[Segment, ...]] = {}


def _vectors(count: int, lanes: int) -> Tuple[Segment, ...]:
    """The first ``count`` full vectors of ``lanes`` lanes from channel 0."""
    row = _VECTOR_ROWS.get(lanes, ())
    if len(row) < count:
        row = tuple(Segment(i * lanes, lanes) for i in range(max(count, 2 * len(row))))
        _VECTOR_ROWS[lanes] = row
    return row[:count]


def _full_vector_loops(vectors: int, lanes: int, budget: int) -> Tuple[SegmentLoop, ...]:
    """``vectors`` full vectors from channel 0 in at most ``budget`` (>= 1) operations
    of code: straight when they fit, else a loop over blocks of B vectors and, for the
    vectors left over, a loop of one vector (B chosen so that the two fit the budget)."""
    if vectors <= budget:
        return (SegmentLoop(0, 1, vectors * lanes, _vectors(vectors, lanes)),)
    block = budget if budget == 1 or vectors % budget == 0 else budget - 1
    repeat, left = divmod(vectors, block)
    out = [SegmentLoop(0, repeat, block * lanes, _vectors(block, lanes))]
    if left:
        out.append(SegmentLoop(repeat * block * lanes, left, lanes, _vectors(1, lanes)))
    return tuple(out)


@functools.lru_cache(maxsize=4096)
def plan_loops(channels: int, lanes: int, cap: int) -> Tuple[SegmentLoop, ...]:
    """How a specialized kernel spells out ``channels``: fully unrolled when its
    segments fit ``cap`` vector operations (0: no cap), else partially unrolled within
    the cap: the full vectors as above, then the tail (narrower than a vector) either
    unrolled in descending powers of two or, when the cap leaves no room for those, as
    a loop of one lane. A cap of 1 with both full vectors and a tail leaves room for
    neither: then every channel is a one-lane loop. Every plan covers [0, channels)
    once, in order; tests/generator/test_plan_properties.py proves it over every
    configuration the loader accepts."""
    vectors, tail = divmod(channels, lanes)
    if not cap or vectors + bin(tail).count("1") <= cap:
        return (SegmentLoop(0, 1, channels, segments(channels, lanes)),)
    tail_segments = segments(tail, lanes)
    tail_start = vectors * lanes
    if len(tail_segments) + (1 if vectors else 0) <= cap:
        tail_loops = (SegmentLoop(tail_start, 1, tail, tail_segments),) if tail else ()
    else:
        tail_loops = (SegmentLoop(tail_start, tail, 1, _vectors(1, 1)),)
    budget = cap - sum(len(g.segments) for g in tail_loops)
    if vectors == 0:
        return tail_loops
    if budget < 1:
        return (SegmentLoop(0, channels, 1, _vectors(1, 1)),)
    return _full_vector_loops(vectors, lanes, budget) + tail_loops


def ukernel_name(dtype: str, op: str, target: str, shape: Optional[str], lanes: int) -> str:
    """Every generated ukernel's name, in one scheme (XNNPACK's):
    bng_<dtype>_<op>_ukernel__<target>_<shape>_v<lanes>. ``op`` is the operation, as its
    C type says (bng_<op>_ukernel in bng_ukernel.h: reduce, dx_train, ..., and NCHW's
    nchw_reduce, ...); ``shape`` the specialization: c<channels> (an NHWC count),
    s<spatial> (an NCHW extent), generic, or None for a ukernel every shape shares."""
    return f"bng_{dtype}_{op}_ukernel__{target}_{shape + '_' if shape else ''}v{lanes}"


def table_entry_name(dtype: str, table: str, target: str, shape: str, lanes: int) -> str:
    """A kernel table entry's name, in the ukernels' scheme: bng_<dtype>_<table>kernel__
    <target>_<shape>_v<lanes>, ``table`` "" for the extended calls' NHWC table, "base_"
    for the vendor's calls' (TargetPlan.base_tables_apart), "nchw_" for NCHW's, "fwd_"
    for the training forward's."""
    return f"bng_{dtype}_{table}kernel__{target}_{shape}_v{lanes}"


@dataclass(frozen=True)
class Kernel:
    """One kernel table entry: the row ukernels for one channel count (None: any)."""
    target: str
    dtype: str
    lanes: int
    channels: Optional[int]
    max_unroll: int = 0    # vector operations per row the code may spell out (0: no cap)
    # Split memory spaces: rows are padded to whole vectors of this many lanes (a
    # multiple of ``lanes``) and the kernel runs over the padding too, whole vectors
    # only, no narrower tail; 1 on a unified target.
    pad_lanes: int = 1
    relu: bool = False     # the relu extension: RELU_OPS and KEEPS_OPS as well

    @property
    def shape(self) -> str:
        return f"c{self.channels}" if self.channels else "generic"

    @property
    def ops(self) -> Tuple[str, ...]:
        """The row ukernels this kernel has, in table order."""
        return OPS + (RELU_OPS + KEEPS_OPS if self.relu else ())

    def ukernel(self, op: str) -> str:
        assert op in self.ops, op
        return ukernel_name(self.dtype, op, self.target, self.shape, self.lanes)

    @property
    def fwd_ops(self) -> Tuple[str, ...]:
        """The training forward's ukernels this kernel has (FWD_OPS; a specialized one
        not the generic-only ones, which its table entry takes from the generic)."""
        return fwd_ops_of(FWD_OPS, self.channels is None)

    def fwd_ukernel(self, op: str) -> str:
        """A training forward ukernel of this kernel's shape (FWD_OPS)."""
        assert op in self.fwd_ops, op
        return ukernel_name(self.dtype, op, self.target, self.shape, self.lanes)

    @property
    def fwd_table_entry(self) -> str:
        """The entry's name in the forward's table (bng_fwd_kernel)."""
        return table_entry_name(self.dtype, "fwd_", self.target, self.shape, self.lanes)

    @property
    def ukernels(self) -> Tuple[str, ...]:
        """The ukernel symbols, in table order (ops)."""
        return tuple(self.ukernel(op) for op in self.ops)

    @property
    def table_fields(self) -> Tuple[str, ...]:
        """The table entry's ukernel fields (bng_kernel, every op of OPS, RELU_OPS and
        KEEPS_OPS): a symbol, or NULL for an op of an extension the target lacks."""
        return tuple(self.ukernel(op) if op in self.ops else "NULL"
                     for op in OPS + RELU_OPS + KEEPS_OPS)

    @property
    def base_table_fields(self) -> Tuple[str, ...]:
        """The entry the vendor's and the explicit-argument calls look up: OPS' symbols,
        NULL for the extensions' ops, so that a firmware image that links only those
        calls carries none of the extensions' ukernels (TargetPlan.base_tables_apart)."""
        return tuple(self.ukernel(op) if op in OPS else "NULL"
                     for op in OPS + RELU_OPS + KEEPS_OPS)

    @property
    def table_entry(self) -> str:
        return self.table_entry_in("")

    def table_entry_in(self, table: str) -> str:
        """The entry's name in the extended calls' table ("") or the vendor's ("base_")."""
        return table_entry_name(self.dtype, table, self.target, self.shape, self.lanes)

    @property
    def row_channels(self) -> int:
        """The channels of a row the kernel covers: the count, padded on a split target."""
        assert self.channels is not None
        return padded(self.channels, self.pad_lanes)

    @property
    def loops(self) -> Tuple[SegmentLoop, ...]:
        return plan_loops(self.row_channels, self.lanes, self.max_unroll)

    @property
    def layout(self) -> str:
        """The loops in words, for the comment above the kernel in the generated C."""
        def lanes(g: SegmentLoop) -> str:
            return " + ".join(str(s.lanes) for s in g.segments) + " lanes"
        loops = self.loops
        pad = (f", rows padded to {self.row_channels} channels"
               if self.row_channels != self.channels else "")
        if len(loops) == 1 and loops[0].repeat == 1:
            return f"({lanes(loops[0])}){pad}"
        parts = [f"[{g.start}, {g.end}) {g.repeat} x ({lanes(g)})" if g.repeat > 1
                 else f"[{g.start}, {g.end}) ({lanes(g)})" for g in loops]
        return (f"partially unrolled, {self.vector_ops_in_code} written out (the target's "
                f"max_unroll {self.max_unroll}){pad}:\n *      " + ";\n *      ".join(parts))

    @property
    def partial(self) -> bool:
        """Above the target's code-size cap: some channels run in a loop."""
        return any(g.repeat > 1 for g in self.loops)

    @property
    def vector_ops_per_row(self) -> int:
        """Vector operations one row takes (executed)."""
        return sum(g.repeat * len(g.segments) for g in self.loops)

    @property
    def vector_ops_in_code(self) -> int:
        """Vector operations per row written out in the source (the unroll)."""
        return sum(len(g.segments) for g in self.loops)


@dataclass(frozen=True)
class NchwKernel:
    """One NCHW kernel table entry: the plane ukernels for one spatial extent (None: the
    generic set, any piece of a plane)."""
    target: str
    dtype: str
    lanes: int
    spatial: Optional[int]
    relu: bool = False     # the relu extension: RELU_OPS as well (and the generic set KEEPS_OPS)

    @property
    def shape(self) -> str:
        return f"s{self.spatial}" if self.spatial else "generic"

    @property
    def ops(self) -> Tuple[str, ...]:
        """The plane ukernels this set has, by the row ukernels' ops, in table order."""
        keeps = KEEPS_OPS if self.spatial is None else ()
        return OPS + (RELU_OPS + keeps if self.relu else ())

    def ukernel(self, op: str) -> str:
        assert op in self.ops, op
        return ukernel_name(self.dtype, "nchw_" + op, self.target, self.shape, self.lanes)

    @property
    def table_fields(self) -> Tuple[str, ...]:
        """The entry's ukernel fields (bng_nchw_kernel, after its dx_end: OPS, RELU_OPS,
        then KEEPS_OPS, the generic set's), NULL for the relu ones without relu."""
        generic = replace(self, spatial=None)
        return tuple(self.ukernel(op) if op in self.ops
                     else generic.ukernel(op) if self.relu and op in KEEPS_OPS else "NULL"
                     for op in OPS + RELU_OPS + KEEPS_OPS)

    @property
    def table_entry(self) -> str:
        return table_entry_name(self.dtype, "nchw_", self.target, self.shape, self.lanes)

    @property
    def dx_end(self) -> str:
        """The end of a run of dx calls (their streaming stores fenced), one a storage
        type, which every set's entry points at."""
        return ukernel_name(self.dtype, "nchw_dx_end", self.target, None, self.lanes)

    @property
    def fwd_ops(self) -> Tuple[str, ...]:
        """The training forward's plane ukernels this set has (FWD_NCHW_OPS, as
        Kernel.fwd_ops)."""
        return fwd_ops_of(FWD_NCHW_OPS, self.spatial is None)

    def fwd_ukernel(self, op: str) -> str:
        assert op in self.fwd_ops, op
        return ukernel_name(self.dtype, op, self.target, self.shape, self.lanes)

    @property
    def fwd_table_entry(self) -> str:
        """The forward's NCHW set's name (bng_fwd_nchw_kernel: the generic set's)."""
        return table_entry_name(self.dtype, "fwd_nchw_", self.target, self.shape, self.lanes)

    @property
    def fwd_end(self) -> str:
        """The forward's end of a run of y's planes (their streaming stores fenced), in
        the forward's ukernel file: one a storage type."""
        return ukernel_name(self.dtype, "fwd_nchw_end", self.target, None, self.lanes)


@dataclass(frozen=True)
class DTypePlan(NhwcMemory):
    config: DTypeConfig
    specialized: Tuple[Kernel, ...]
    generic: Kernel
    # Split memory spaces: every row of a tile and every per-channel array of the
    # workspace holds whole vectors of this many lanes (the widest dtype's: the kernels
    # and the driver's per-channel steps work on them with whole vectors only, padding
    # lanes included); 1 on a unified target.
    pad_lanes: int = 1
    # The target has the relu extension: a call with BNG_FLAG_RELU stages the forward
    # output y through one more tile buffer (bng_nhwc_memory_lay_out).
    relu: bool = False

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def api(self) -> str:
        return API_PREFIX[self.name]

    @property
    def ctype(self) -> str:
        return C_TYPE[self.name]

    @property
    def stats_ctype(self) -> str:
        """C type of mean/invar/scale/dbias/dscale for this dtype's entry points."""
        return "float" if self.name == "f32" else "bng_hp_stats_t"

    @property
    def stats_dtype(self) -> str:
        return self.config.stats or "f32"

    @property
    def generic_chunk(self) -> int:
        return GENERIC_CHUNK_VECTORS * self.config.lanes

    @property
    def max_chunk(self) -> int:
        """Widest chunk one driver pass handles: sizes the workspace."""
        return max([self.generic_chunk] + [k.channels for k in self.specialized])

    @property
    def workspace_chunk(self) -> int:
        """Elements of each workspace array: max_chunk, whole vectors on a split target."""
        return padded(self.max_chunk, self.pad_lanes)

    @property
    def element_bytes(self) -> int:
        return ELEMENT_BYTES[self.name]

    @property
    def stats_bytes(self) -> int:
        return ELEMENT_BYTES[self.stats_dtype]

    @property
    def scratch_bytes(self) -> int:
        """Shared scratch: two slots of per-group partial sums (dbias, dscale)."""
        return 2 * MAX_GROUPS * 2 * self.max_chunk * 4

    @property
    def kernels(self) -> Tuple[Kernel, ...]:
        return self.specialized + (self.generic,)


@dataclass(frozen=True)
class OutputFile:
    path: str          # relative to the output root, '/'-separated
    template: str
    dtype: Optional[str] = None   # the dtype a per-dtype file renders


@dataclass(frozen=True)
class Room:
    """A file of the hand-written driver (include/), and which targets compile it: every
    target, or only one that lists ``extension`` (and ``also``, where a room serves two
    extensions together), or only one whose memory is unified. ``vectors``: it computes
    with the vector backend (it includes bng_steps_vec.h), so that its object depends on
    the backend and the half type; every other room's is the same under any (the
    suites' arithmetic flavours link one object of it: mk/build.mk)."""
    name: str
    extension: Optional[str] = None
    unified_only: bool = False
    also: Optional[str] = None
    vectors: bool = False

    def compiled_for(self, extensions: Tuple[str, ...]) -> bool:
        """Whether a target listing ``extensions`` compiles the room (its memory aside)."""
        return all(e is None or e in extensions for e in (self.extension, self.also))

    @property
    def source(self) -> str:
        return f"include/{self.name}"


# The driver's rooms, listed once: the build (build.mk), a drop (vendor.py: its files,
# CMakeLists.txt, bng.mk, MANIFEST) and the tests read this list; docs/design.md's map
# says what each holds and gives the naming rule (a test holds it to this list). Named
# bng_[layout_]<part>.c: `nhwc_` or `nchw_` for a room of one layout, none for what both
# share; the part is `direct` (a layout's run on the caller's memory where it lies),
# `staged` (its run through a core's private memory by DMA), `steps` (what the runs
# compute alike), `memory` (where a staged run keeps its data), `relu` (its part of the
# fused ReLU), or the concern's noun.
DRIVER_ROOMS = (
    Room("bng_entry.c"), Room("bng_status.c"), Room("bng_params.c"),
    Room("bng_steps.c", vectors=True), Room("bng_staging.c"),
    Room("bng_nhwc_direct.c", unified_only=True), Room("bng_nhwc_staged.c", vectors=True),
    Room("bng_nhwc_memory.c"),
    Room("bng_nchw_steps.c", "nchw", vectors=True),
    Room("bng_nchw_direct.c", "nchw", unified_only=True), Room("bng_nchw_staged.c", "nchw"),
    Room("bng_relu.c", "relu", vectors=True),
    Room("bng_nchw_relu.c", "relu", also="nchw", vectors=True),
    Room("bng_fwd_params.c", "forward"), Room("bng_fwd_entry.c", "forward"),
    Room("bng_fwd_steps.c", "forward", vectors=True),
    Room("bng_fwd_nhwc_direct.c", "forward", unified_only=True),
    Room("bng_fwd_nhwc_staged.c", "forward"), Room("bng_fwd_staging.c", "forward"),
    Room("bng_fwd_nchw_steps.c", "forward", also="nchw", vectors=True),
    Room("bng_fwd_nchw_direct.c", "forward", also="nchw", unified_only=True),
    Room("bng_fwd_nchw_staged.c", "forward", also="nchw"),
)


@dataclass(frozen=True)
class TargetPlan(NhwcGsm):
    target: Target
    dtypes: Tuple[DTypePlan, ...]

    @property
    def name(self) -> str:
        return self.target.name

    @property
    def rooms(self) -> Tuple[Room, ...]:
        """The driver's rooms this target's library compiles (DRIVER_ROOMS): an
        extension's only where targets.yaml lists it, the direct runs only on unified
        memory (a split target stages _p)."""
        return tuple(room for room in DRIVER_ROOMS
                     if room.compiled_for(self.target.extensions)
                     and not (room.unified_only and self.target.memory.split))

    @property
    def driver_sources(self) -> Tuple[str, ...]:
        return tuple(room.source for room in self.rooms)

    @property
    def vector_sources(self) -> Tuple[str, ...]:
        """The driver's rooms of this target that compute with the vector backend."""
        return tuple(room.source for room in self.rooms if room.vectors)

    def dtype(self, name: str) -> Optional[DTypePlan]:
        for d in self.dtypes:
            if d.name == name:
                return d
        return None

    @property
    def files(self) -> Tuple[OutputFile, ...]:
        base = self.name
        out = [
            OutputFile(f"{base}/batch_norm_grad.h", "batch_norm_grad.h.j2"),
            OutputFile(f"{base}/batchnormgrad.h", "batchnormgrad.h.j2"),
            OutputFile(f"{base}/bng_kernels.h", "bng_kernels.h.j2"),
            OutputFile(f"{base}/batch_norm_grad.c", "batch_norm_grad.c.j2"),
            OutputFile(f"{base}/batchnormgrad.c", "batchnormgrad.c.j2"),
        ]
        if self.extensions:
            out += [OutputFile(f"{base}/batch_norm_grad_ext.h", "batch_norm_grad_ext.h.j2"),
                    OutputFile(f"{base}/batch_norm_grad_ext.c", "batch_norm_grad_ext.c.j2")]
        if self.has("forward"):
            out += [OutputFile(f"{base}/batch_norm_fwd.h", "batch_norm_fwd.h.j2"),
                    OutputFile(f"{base}/batch_norm_fwd.c", "batch_norm_fwd.c.j2")]
        out += [OutputFile(f"{base}/bng_{d.name}_ukernels.c", "ukernels.c.j2", d.name)
                for d in self.dtypes]
        if self.has("forward"):
            out += [OutputFile(f"{base}/bng_{d.name}_fwd_ukernels.c", "fwd_ukernels.c.j2", d.name)
                    for d in self.dtypes]
        out.append(OutputFile(f"{base}/bng_native.h", "bng_native.h.j2"))
        out.append(OutputFile(f"{base}/build.mk", "build.mk.j2"))
        return tuple(out)

    @property
    def generated_sources(self) -> Tuple[str, ...]:
        """The generated C files, relative to the target's folder."""
        return tuple(f.path.split("/", 1)[1] for f in self.files if f.path.endswith(".c"))

    @property
    def max_chunk(self) -> int:
        return max(d.max_chunk for d in self.dtypes)

    @property
    def min_private_bytes(self) -> int:
        return max(d.min_private_bytes for d in self.dtypes)

    @property
    def scratch_bytes(self) -> int:
        return max(d.scratch_bytes for d in self.dtypes)

    @property
    def stack_bytes(self) -> int:
        """The float arrays _p keeps on the stack (none on a split target, where _p
        stages through its workspace in vector memory)."""
        return 0 if self.target.memory.split else STACK_FLOAT_ARRAYS * 4 * self.max_chunk

    @property
    def p_workspace_bytes(self) -> int:
        """Split targets: the vector memory _p asks the HAL for (targets.yaml
        memory.spaces.p_workspace_bytes, else the least the plan needs); 0 otherwise."""
        if not self.target.memory.split:
            return 0
        return self.target.memory.p_workspace_bytes or max(self.min_private_bytes,
                                                           self.nchw_min_private_bytes)

    @property
    def vector_lanes(self) -> int:
        """Floats in one vector register: the f32 lanes (else the f16 lanes, which the
        kernels hold as floats)."""
        return self.dtypes[0].config.lanes

    @property
    def constants(self):
        return {"BLOCK_ROWS": BLOCK_ROWS, "MIN_GROUP_ROWS": MIN_GROUP_ROWS,
                "MAX_GROUPS": MAX_GROUPS, "ALIGN": ALIGN}

    @property
    def shared_constants(self):
        """The numbers the driver uses and Python sums, each asserted in C but
        STREAM_TILE_BYTES, which only sizes the layout both compute."""
        return {"TILE_BUFFERS": TILE_BUFFERS, "DX_TILE_BUFFERS": DX_TILE_BUFFERS,
                "STREAM_TILE_BYTES": STREAM_TILE_BYTES,
                "STACK_FLOAT_ARRAYS": STACK_FLOAT_ARRAYS,
                "MAX_OUTSTANDING_DMA": MAX_OUTSTANDING_DMA,
                "SUMS_COUNT_LIMBS": SUMS_COUNT_LIMBS, "SUMS_LIMB_BITS": SUMS_LIMB_BITS,
                "SUMS_MAX_BUFFERS": SUMS_MAX_BUFFERS}

    @property
    def extensions(self) -> Tuple[str, ...]:
        """The backward's extensions (batch_norm_grad_ext.h's families and flags); the
        training forward, which has a header of its own, is has("forward")."""
        return tuple(e for e in self.target.extensions if e != "forward")

    @property
    def fwd_ops(self) -> Tuple[str, ...]:
        """The training forward's ukernels of each kernel (FWD_OPS), with the forward."""
        return FWD_OPS if self.has("forward") else ()

    @property
    def fwd_nchw(self) -> bool:
        """The training forward takes NCHW (BNG_FWD_NCHW): forward and nchw both."""
        return self.has("forward") and self.has("nchw")

    def has(self, extension: str) -> bool:
        assert extension in EXTENSIONS, extension
        return extension in self.target.extensions

    @property
    def base_tables_apart(self) -> bool:
        """Whether the vendor's calls and the explicit-argument calls get kernel tables
        of their own (bng_<dtype>_base_config): where relu or nchw gives the extended
        calls' tables ukernels those calls never run. Else both share one config."""
        return self.has("relu") or self.has("nchw")

    @property
    def nchw_block_vectors(self) -> int:
        return NCHW_BLOCK_VECTORS

    def nchw_layout(self, dtype: "DTypePlan", batch: int, spatial: int,
                    keeps: bool, relu: bool = False) -> "NchwLayout":
        """How NCHW _s lays out a core's private memory for a channel of ``batch``
        planes of ``spatial`` (the driver's bng_nchw_layout): the per-channel area,
        four tile buffers of whole planes or of a piece of a plane in whole blocks; in
        a call that reads a channel twice (``keeps``) buffers of at most
        STREAM_TILE_BYTES (one block at least) and, in what they leave halved, x and dy
        of the channel's last tiles, from ``resident_from`` (an element of the channel
        in plane order; batch * spatial for none) on. A call with the fused ReLU
        (``relu``) takes a fifth buffer, for y. (One that adds into dx takes two more,
        for the old dx: nothing here counts that layout, which make model traces in
        the C.)"""
        e = dtype.element_bytes
        block = NCHW_BLOCK_VECTORS * dtype.config.lanes
        rest = self.target.memory.private_bytes - aligned(self.nchw_area_bytes)
        buffers = TILE_BUFFERS + RELU_TILE_BUFFERS * relu
        quarter = rest // buffers // ALIGN * ALIGN
        if keeps:
            quarter = min(quarter, aligned(max(STREAM_TILE_BYTES, block * e)))
        fit = quarter // e
        # a plane at its pitch in private memory: whole vectors on a split target
        pitch = padded(spatial, pad_lanes(self.target))
        whole = pitch <= fit
        tile_planes, piece = (fit // pitch, spatial) if whole else (1, fit // block * block)
        half = (rest - buffers * quarter) // 2 // ALIGN * ALIGN
        total = batch * pitch
        need = max(0, total - (half // e if keeps else 0))
        if whole:
            tile = tile_planes * pitch
            start = min(-(-need // tile) * tile, total)
        else:
            offset = -(-(need % pitch) // piece) * piece
            start = need // pitch * pitch + offset if offset < pitch \
                else (need // pitch + 1) * pitch
        return NchwLayout(tile_planes, piece, start)

    @property
    def nchw_area_bytes(self) -> int:
        """NCHW _s's per-channel area (NCHW_AREA_SLOTS above), which bng_nchw_staged.c
        asserts sizeof(bng_nchw_area) is."""
        split = self.target.memory.split
        slot, vector = pad_lanes(self.target), self.vector_lanes if split else 1
        floats = NCHW_AREA_SLOTS * slot + SUMS_COUNT_LIMBS * vector
        if split:
            floats += NCHW_CHANNEL_SLOTS * slot + 2 * NCHW_MAX_LANES + NCHW_SUM_VECTORS * vector
        return 4 * floats

    @property
    def nchw_min_private_bytes(self) -> int:
        """The least private memory NCHW _s lays out (bng_nchw_layout): the area, and a
        block (NCHW_BLOCK_VECTORS vectors) in each tile buffer: four, a fifth for y with
        the fused ReLU, two for the old dx where a call writes dx
        (BNG_FLAG_ACCUMULATE_DX); the training forward's NCHW layout where it has one,
        if larger; 0 without nchw."""
        if not self.has("nchw"):
            return 0
        return max(aligned(self.nchw_area_bytes) + self.nchw_tile_buffers * self.nchw_block_bytes,
                   self.fwd_nchw_min_private_bytes)

    @property
    def nchw_block_bytes(self) -> int:
        """The widest storage type's block of NCHW_BLOCK_VECTORS vectors."""
        return max(NCHW_BLOCK_VECTORS * d.config.lanes * d.element_bytes for d in self.dtypes)

    @property
    def fwd_nchw_min_private_bytes(self) -> int:
        """The least private memory the forward's NCHW _s lays out (bng_fwd_nchw_layout):
        the channel's copies (FWD_NCHW_COPIES arrays of a slot, floats or the stats type),
        the count's two limbs (a vector each), the statistics' area (the lanes'
        statistics, two arrays of NCHW_MAX_LANES, and FWD_NCHW_SUM_VECTORS vectors), and a
        block in each of its two tile buffers and, with the ReLU's bits, its two buffers
        of their words (each no larger than x's: a word holds a value's bit); 0 without
        the forward's NCHW."""
        if not self.fwd_nchw:
            return 0
        split = self.target.memory.split
        slot, vector = (pad_lanes(self.target), self.vector_lanes) if split else (1, 1)
        floats = 2 * NCHW_MAX_LANES + FWD_NCHW_SUM_VECTORS * vector
        return (FWD_NCHW_COPIES * aligned(4 * slot) + aligned(4 * 2 * vector) + aligned(4 * floats)
                + 4 * self.nchw_block_bytes)

    @property
    def nchw_tile_buffers(self) -> int:
        """NCHW _s's most tile buffers in a call (nchw_min_private_bytes)."""
        writes_dx = bool({"apply", "dx", "ext"} & set(self.target.extensions))
        return TILE_BUFFERS + RELU_TILE_BUFFERS * self.has("relu") + DX_TILE_BUFFERS * writes_dx

    def nchw_kernels(self, dtype: "DTypePlan") -> Tuple[NchwKernel, ...]:
        """A storage type's NCHW kernel sets: one per targets.yaml spatial: extent, then
        the generic one."""
        return tuple(NchwKernel(self.name, dtype.name, dtype.config.lanes, spatial,
                                self.has("relu") and not self.target.memory.split)
                     for spatial in self.target.spatial + (None,))

    @property
    def shared_params_slots(self) -> int:
        """Slots of the _s parameter block at shared_params_address: the extended
        block's with the backward's extensions or the forward."""
        return EXT_PARAMS_SLOTS if self.extensions or self.has("forward") else PARAMS_SLOTS

    @property
    def command(self) -> str:
        """The command that reproduces this target's files, for the banner."""
        cmd = f"make generate TARGET={self.name}"
        if self.target.channels_overridden:
            cmd += ' CHANNELS="' + " ".join(str(c) for c in self.target.channels) + '"'
        return cmd


@dataclass(frozen=True)
class NchwLayout:
    """A core's NCHW _s layout for one shape (TargetPlan.nchw_layout)."""
    tile_planes: int        # planes of a tile of whole planes (1 for pieces)
    piece: int              # elements of a plane a tile holds (spatial: whole planes)
    resident_from: int      # the channel's element from which its tiles stay on chip


def plan_target(target: Target) -> TargetPlan:
    pad = pad_lanes(target)
    dtypes = []
    relu = "relu" in target.extensions
    # The ReLU ukernels mask dy as they load it from the caller's arrays: _p's on a
    # unified target. A split target stages _p, whose tiles the driver masks in place
    # (bng_relu.c), and needs none of them.
    relu_ukernels = relu and not target.memory.split
    for d in target.dtypes:
        spec = tuple(Kernel(target.name, d.name, d.lanes, c, target.max_unroll, pad,
                            relu_ukernels)
                     for c in target.channels)
        generic = Kernel(target.name, d.name, d.lanes, None, pad_lanes=pad, relu=relu_ukernels)
        dtypes.append(DTypePlan(d, spec, generic, pad, relu))
    return TargetPlan(target, tuple(dtypes))


def pad_lanes(target: Target) -> int:
    """Split memory spaces: rows and per-channel arrays in vector memory are whole
    vectors of the widest dtype's lanes (a multiple of every dtype's, all powers of
    two), so that no kernel and no per-channel step touches part of a vector there."""
    return max(d.lanes for d in target.dtypes) if target.memory.split else 1
