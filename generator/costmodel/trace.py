"""Stage 1: load the trace bench/model/trace.c writes (include/host/bng_hal_trace.h
describes the record): per call, per parallel region, each core's events in order."""

from dataclasses import dataclass
from typing import Dict, List, Tuple, Union

# Memories a transfer moves between: a core's private (array) memory, the cluster's
# global shared memory, DDR.
LEVELS = ("am", "gsm", "ddr")


@dataclass(frozen=True)
class Transfer:
    put: bool                 # private -> shared (else a get)
    handle: int
    source: str               # a LEVELS name
    dest: str
    rows: int
    row_bytes: int

    @property
    def bytes(self) -> int:
        return self.rows * self.row_bytes


@dataclass(frozen=True)
class Wait:
    handle: int


@dataclass(frozen=True)
class Barrier:
    pass


@dataclass(frozen=True)
class KernelCall:
    entry: str                # the kernel table entry, e.g. bng_f32_kernel__mt7004_c64_v16,
                              # or an NCHW set's, e.g. bng_f32_nchw_kernel__mt7004_s49_v16
    op: str                   # reduce, dx_train, dx_infer; relu_mask, relu_bits,
                              # relu_by_bits (the driver's ReLU steps on a tile, entry
                              # the call's row kernel)
    rows: int                 # NCHW: planes
    channels: int             # NCHW: elements of each plane


@dataclass(frozen=True)
class Keep:
    """The schedule's choice for one chunk on one core of a call that reads its rows
    twice: of its `rows`, how many stay in its private memory and in GSM between the
    passes (the rest are read from DDR again). It costs nothing."""
    rows: int
    am_rows: int
    gsm_rows: int


Event = Union[Transfer, Wait, Barrier, KernelCall, Keep]
Region = Dict[int, Tuple[Event, ...]]     # core -> its events


@dataclass(frozen=True)
class Call:
    """One traced _s call: its shape and what the driver did. An NCHW call (ext _s with
    BNG_FLAG_NCHW) has a spatial extent, batch then counts images; a plain or ReLU call
    is NHWC, batch counts rows."""
    dtype: str
    batch: int
    channel: int
    mask: int
    is_train: bool
    regions: Tuple[Region, ...]
    spatial: int = 0          # NCHW's H*W; 0: NHWC
    relu: bool = False        # BNG_FLAG_RELU: y read beside x and dy (the forward's:
                              # BNG_FWD_RELU, its keep bits out beside y)
    forward: bool = False     # the training forward's _s: x in, y out
    bits: bool = False        # with relu, BNG_FLAG_RELU_BITS: the forward's keep bits
                              # read in y's place
    accumulate_dx: bool = False   # BNG_FLAG_ACCUMULATE_DX: the old dx read as well

    @property
    def cores(self) -> int:
        return bin(self.mask).count("1")

    @property
    def elements(self) -> int:
        """Elements of each of x, dy, dx (and y); the forward's x and y."""
        return self.batch * self.channel * (self.spatial or 1)

    def transfers(self):
        for region in self.regions:
            for events in region.values():
                for e in events:
                    if isinstance(e, Transfer):
                        yield e

    def kept(self) -> Tuple[int, int, int]:
        """Rows (summed over cores and chunks) of the passes that read them twice, and
        how many of those stay in private memory and in GSM: all 0 for a one-pass call."""
        keeps = [e for region in self.regions for events in region.values() for e in events
                 if isinstance(e, Keep)]
        return (sum(k.rows for k in keeps), sum(k.am_rows for k in keeps),
                sum(k.gsm_rows for k in keeps))

    def bytes_by_level(self) -> Dict[str, int]:
        """Bytes the call's transfers move to or from each memory."""
        out = dict.fromkeys(LEVELS, 0)
        for t in self.transfers():
            out[t.source] += t.bytes
            if t.dest != t.source:
                out[t.dest] += t.bytes
        return out


class TraceError(Exception):
    """The record does not parse: the line number and what was wrong."""


def _event(words: List[str], line: int) -> Tuple[int, Event]:
    core, kind, args = int(words[0]), words[1], words[2:]
    if kind in ("get", "put") and len(args) == 5 and args[1] in LEVELS and args[2] in LEVELS:
        return core, Transfer(kind == "put", int(args[0]), args[1], args[2], int(args[3]),
                              int(args[4]))
    if kind == "wait" and len(args) == 1:
        return core, Wait(int(args[0]))
    if kind == "barrier" and not args:
        return core, Barrier()
    if kind == "kernel" and len(args) == 4:
        return core, KernelCall(args[0], args[1], int(args[2]), int(args[3]))
    if kind == "keep" and len(args) == 3:
        return core, Keep(int(args[0]), int(args[1]), int(args[2]))
    raise TraceError(f"line {line}: not an event: {' '.join(words)}")


# The words after a call's shape, in the trace program's order: the backward's fused
# ReLU (from the keep bits), adding into dx; or the forward, with its ReLU.
BACKWARD_MODES = ("relu", "bits", "acc")
FORWARD_MODES = ("relu", "fwd")


def _modes(words: List[str], number: int, line: str) -> Dict[str, bool]:
    forward = "fwd" in words
    known = FORWARD_MODES if forward else BACKWARD_MODES
    if words != [w for w in known if w in words] or ("bits" in words and "relu" not in words):
        raise TraceError(f"line {number}: not a call: {line}")
    return {"relu": "relu" in words, "bits": "bits" in words,
            "accumulate_dx": "acc" in words, "forward": forward}


def parse(text: str) -> List[Call]:
    """Every call of a record, in order."""
    calls: List[Call] = []
    head = None
    regions: List[Region] = []
    region: Dict[int, List[Event]] = {}
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split()
        try:
            if words[:1] == ["call"]:
                dtype, shape, _, mask, _, train = words[1:7]
                batch, channel, *spatial = map(int, shape.split("x"))
                extra = {"spatial": spatial[0]} if spatial else {}
                extra.update(_modes(words[7:], number, line))
                head = (dtype, batch, channel, int(mask, 16), train == "1", extra)
                regions = []
            elif words[:1] == ["parallel"]:
                region = {}
            elif words[:1] == ["done"]:
                regions.append({c: tuple(events) for c, events in sorted(region.items())})
            elif words[:1] == ["end"]:
                if head is None:
                    raise TraceError(f"line {number}: end without a call")
                calls.append(Call(*head[:5], regions=tuple(regions), **head[5]))
                head = None
            elif words:
                core, event = _event(words, number)
                region.setdefault(core, []).append(event)
        except (ValueError, IndexError):
            raise TraceError(f"line {number}: cannot read: {line}") from None
    if head is not None:
        raise TraceError("the record ends inside a call")
    return calls
