"""The plan: every kernel and file the generator emits, derived from the config.

This list is the single source of truth: the templates render exactly these kernels,
the Makefile builds the files listed here, and the tests iterate over the kernel
list that bng_kernels.h (rendered from this plan) spells out.
"""

from dataclasses import dataclass
from typing import Optional, Tuple

from .model import DTypeConfig, Target

# Channels a generic kernel processes per pass, in vectors of the dtype's lanes; it
# bounds the workspace of both drivers.
GENERIC_CHUNK_VECTORS = 8

# Summation order. Sums run over rows in three levels, each from zero in a fixed order:
# a block of BLOCK_ROWS rows in registers, the blocks of a row group into the group's
# partial sum, the groups into the total. The worst-case rounding error grows with
# BLOCK_ROWS + blocks per group + groups instead of with batch. Group boundaries depend
# only on batch, never on which cores run: the unit of work of the shared-storage
# entry points, so that they add exactly what the private ones add.
BLOCK_ROWS = 32
MIN_GROUP_ROWS = 256
MAX_GROUPS = 64

# Private memory a shared-storage call uses per core, beside its tiles: 8 float arrays
# and 5 per-channel stats arrays of the widest chunk, each rounded up to 64 bytes.
WORK_FLOAT_ARRAYS = 8
WORK_STATS_ARRAYS = 5
ALIGN = 64

ELEMENT_BYTES = {"f32": 4, "f16": 2}
API_PREFIX = {"f32": "fp", "f16": "hp"}
C_TYPE = {"f32": "float", "f16": "half"}


def _aligned(n: int) -> int:
    return (n + ALIGN - 1) // ALIGN * ALIGN


@dataclass(frozen=True)
class Segment:
    """A run of channels one vector operation covers in an unrolled kernel."""
    offset: int
    lanes: int


def segments(channels: int, lanes: int) -> Tuple[Segment, ...]:
    """Full vectors, then the tail as descending powers of two (13 -> 8, 4, 1)."""
    out = [Segment(o, lanes) for o in range(0, channels - channels % lanes, lanes)]
    offset = len(out) * lanes
    width = lanes // 2
    while offset < channels:
        if channels - offset >= width:
            out.append(Segment(offset, width))
            offset += width
        width //= 2
    return tuple(out)


@dataclass(frozen=True)
class ColumnGroup:
    """Channels [start, start + repeat * step) as ``repeat`` copies of ``segments``
    (offsets relative to the copy's first channel): straight code when repeat is 1,
    else a loop whose body is the segments."""
    start: int
    repeat: int
    step: int
    segments: Tuple[Segment, ...]


@dataclass(frozen=True)
class Kernel:
    """One registered kernel: a set of row ukernels for one channel count (None: any)."""
    target: str
    dtype: str
    lanes: int
    channels: Optional[int]
    max_unroll: int = 0    # vector operations per row the code may spell out (0: no cap)

    @property
    def variant(self) -> str:
        shape = f"c{self.channels}" if self.channels else "generic"
        return f"{self.target}_{shape}_v{self.lanes}"

    def ukernel(self, op: str) -> str:
        """XNNPACK-style name: dtype, operation, then target, shape and vector width."""
        return f"bng_{self.dtype}_{op}_ukernel__{self.variant}"

    @property
    def table_entry(self) -> str:
        return f"bng_{self.dtype}_kernel__{self.variant}"

    @property
    def segments(self) -> Tuple[Segment, ...]:
        assert self.channels is not None
        return segments(self.channels, self.lanes)

    @property
    def partial(self) -> bool:
        """Above the target's code-size cap: a loop over blocks of max_unroll vectors."""
        return bool(self.max_unroll) and len(self.segments) > self.max_unroll

    @property
    def groups(self) -> Tuple[ColumnGroup, ...]:
        if not self.partial:
            return (ColumnGroup(0, 1, self.channels, self.segments),)
        step = self.max_unroll * self.lanes
        blocks = self.channels // step
        body = tuple(Segment(i * self.lanes, self.lanes) for i in range(self.max_unroll))
        out = [ColumnGroup(0, blocks, step, body)]
        rest = self.channels - blocks * step
        if rest:
            out.append(ColumnGroup(blocks * step, 1, rest, segments(rest, self.lanes)))
        return tuple(out)

    @property
    def vector_ops_per_row(self) -> int:
        return len(self.segments)

    @property
    def vector_ops_in_code(self) -> int:
        """Vector operations per row written out in the source (the unroll)."""
        return sum(len(g.segments) for g in self.groups)


@dataclass(frozen=True)
class DTypePlan:
    config: DTypeConfig
    specialized: Tuple[Kernel, ...]
    generic: Kernel

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
        if self.name == "f32":
            return "float"
        return "bng_hp_stats_t"

    @property
    def stats_dtype(self) -> str:
        return self.config.stats or "f32"

    @property
    def generic_chunk(self) -> int:
        return GENERIC_CHUNK_VECTORS * self.config.lanes

    @property
    def max_chunk(self) -> int:
        """Widest channel run one driver pass handles: sizes the stack workspace."""
        return max([self.generic_chunk] + [k.channels for k in self.specialized])

    @property
    def element_bytes(self) -> int:
        return ELEMENT_BYTES[self.name]

    @property
    def element_shift(self) -> int:
        """log2 of the element size, for address checks without division."""
        return self.element_bytes.bit_length() - 1

    @property
    def stats_bytes(self) -> int:
        return ELEMENT_BYTES[self.stats_dtype]

    @property
    def private_work_bytes(self) -> int:
        """Private memory per core for the _s workspace, tiles excluded."""
        return (WORK_FLOAT_ARRAYS * _aligned(4 * self.max_chunk)
                + WORK_STATS_ARRAYS * _aligned(self.stats_bytes * self.max_chunk))

    @property
    def min_tile_bytes(self) -> int:
        """The smallest tile set: x and dy, double-buffered, BLOCK_ROWS rows each."""
        return 4 * BLOCK_ROWS * self.max_chunk * self.element_bytes

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
class TargetPlan:
    target: Target
    dtypes: Tuple[DTypePlan, ...]

    @property
    def name(self) -> str:
        return self.target.name

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
            OutputFile(f"{base}/bng_kernels.h", "bng_kernels.h.j2"),
            OutputFile(f"{base}/batch_norm_grad.c", "batch_norm_grad.c.j2"),
        ]
        out += [OutputFile(f"{base}/bng_{d.name}_ukernels.c", "ukernels.c.j2", d.name)
                for d in self.dtypes]
        return tuple(out)

    @property
    def private_bytes_needed(self) -> int:
        return max(d.private_work_bytes + d.min_tile_bytes for d in self.dtypes)

    @property
    def scratch_bytes(self) -> int:
        return max(d.scratch_bytes for d in self.dtypes)

    @property
    def constants(self):
        return {"BLOCK_ROWS": BLOCK_ROWS, "MIN_GROUP_ROWS": MIN_GROUP_ROWS,
                "MAX_GROUPS": MAX_GROUPS, "ALIGN": ALIGN}

    @property
    def command(self) -> str:
        """The command that reproduces this target's files, for the banner."""
        cmd = f"make generate TARGET={self.name}"
        if self.target.channels_overridden:
            cmd += ' CHANNELS="' + " ".join(str(c) for c in self.target.channels) + '"'
        return cmd


def plan_target(target: Target) -> TargetPlan:
    dtypes = []
    for d in target.dtypes:
        spec = tuple(Kernel(target.name, d.name, d.lanes, c, target.max_unroll)
                     for c in target.channels)
        dtypes.append(DTypePlan(d, spec, Kernel(target.name, d.name, d.lanes, None)))
    return TargetPlan(target, tuple(dtypes))
