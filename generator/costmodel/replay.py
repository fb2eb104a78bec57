"""Stage 2: replay a traced call on a model of the cluster, as discrete events.

The model: each core runs its events in order. A transfer starts when its core issues
it, unless the core already has `in_flight` transfers moving (then it queues); it
moves no byte for `latency` seconds, then streams: the transfers streaming through a
shared memory (DDR, GSM) share its bandwidth equally, and a transfer touching both
moves at the lesser of its two shares; a core's private memory limits nothing. A wait
blocks its core until the transfer is complete; a barrier, until every core of the
region arrived with its puts complete; a kernel call keeps its core busy for the time
its vector operations take (opcount.py) at the part's issue rates and clock.

Between two events every rate is constant, so time jumps from one event to the next.
What a core waits for is what bounds it: its blocked time is counted against the
transfer's phase (queued: in_flight, starting: latency, streaming: the memory whose
share limits it) or the barrier, its busy time against compute.
"""

import math
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

from ..model import PartFigures
from .trace import Barrier, Call, KernelCall, Region, Transfer, Wait

SHARED_LEVELS = ("ddr", "gsm")
# What a core's time is spent on; the first five can bound a call.
CATEGORIES = ("compute", "latency", "in_flight", "ddr", "gsm", "barrier")
BOUNDS = CATEGORIES[:5]


@dataclass(frozen=True)
class Machine:
    """The part in the model's units: seconds, bytes per second, operations per cycle."""
    clock_hz: float
    bandwidth: Dict[str, float]        # a SHARED_LEVELS name -> bytes per second
    latency_s: float
    in_flight: int
    alu_per_cycle: float
    ldst_per_cycle: float

    @classmethod
    def from_part(cls, part: PartFigures) -> "Machine":
        return cls(clock_hz=part.clock_mhz * 1e6,
                   bandwidth={"ddr": part.ddr_mb_per_s * 1e6, "gsm": part.gsm_mb_per_s * 1e6},
                   latency_s=part.dma_latency_ns * 1e-9, in_flight=part.dma_in_flight,
                   alu_per_cycle=part.vector_alu_per_cycle,
                   ldst_per_cycle=part.vector_ldst_per_cycle)


@dataclass(eq=False)
class _Flight:
    core: "_Core"
    transfer: Transfer
    levels: tuple                       # the shared memories it touches
    remaining: float
    starts_streaming: float = math.inf  # when its latency is over (inf: queued)
    done: bool = False

    def phase(self, now: float) -> str:
        if self.starts_streaming == math.inf:
            return "in_flight"
        return "latency" if now < self.starts_streaming else "streaming"


@dataclass(eq=False)
class _Core:
    events: tuple
    pc: int = 0
    busy_until: float = 0.0
    waiting_for: Optional[object] = None      # a _Flight, "barrier" or "puts"
    flights: Dict[int, _Flight] = field(default_factory=dict)
    moving: int = 0                           # started and not complete
    queue: List[_Flight] = field(default_factory=list)
    spent: Dict[str, float] = field(default_factory=lambda: dict.fromkeys(CATEGORIES, 0.0))

    @property
    def finished(self) -> bool:
        return self.pc == len(self.events) and self.waiting_for is None

    def open_puts(self) -> List[_Flight]:
        return [f for f in self.flights.values() if f.transfer.put and not f.done]


class _Replay:
    def __init__(self, region: Region, machine: Machine,
                 kernel_seconds: Callable[[KernelCall], float]):
        self.machine = machine
        self.kernel_seconds = kernel_seconds
        self.cores = [_Core(events) for _, events in sorted(region.items())]
        self.moving: List[_Flight] = []
        self.at_barrier: List[_Core] = []
        self.now = 0.0
        self.rates: Dict[int, float] = {}
        self.limits: Dict[int, str] = {}

    # ---- transfers ----

    def _start(self, flight: _Flight) -> None:
        flight.starts_streaming = self.now + self.machine.latency_s
        flight.core.moving += 1
        self.moving.append(flight)

    def _issue(self, core: _Core, t: Transfer) -> None:
        levels = tuple(l for l in SHARED_LEVELS if l in (t.source, t.dest))
        flight = _Flight(core, t, levels, float(t.bytes))
        core.flights[t.handle] = flight
        if core.moving < self.machine.in_flight:
            self._start(flight)
        else:
            core.queue.append(flight)

    def _finish(self, flight: _Flight) -> None:
        flight.done = True
        flight.remaining = 0.0
        self.moving.remove(flight)
        core = flight.core
        core.moving -= 1
        if core.queue:
            self._start(core.queue.pop(0))

    def _rates(self) -> None:
        """Each streaming transfer's bytes per second (by id), and the memory that sets
        it: the shared memory whose equal share is the least."""
        streaming = [f for f in self.moving if self.now >= f.starts_streaming]
        users = {l: sum(l in f.levels for f in streaming) for l in SHARED_LEVELS}
        self.rates, self.limits = {}, {}
        for f in streaming:
            shares = {l: self.machine.bandwidth[l] / users[l] for l in f.levels}
            self.limits[id(f)] = min(shares, key=shares.get) if shares else "latency"
            self.rates[id(f)] = min(shares.values(), default=math.inf)

    def _limit(self, flight: _Flight) -> str:
        """What holds a transfer back now: its phase, or the memory that sets its rate."""
        phase = flight.phase(self.now)
        return self.limits[id(flight)] if phase == "streaming" else phase

    def _end(self, flight: _Flight) -> float:
        """When a started transfer next changes: its latency ends, or it completes."""
        if self.now < flight.starts_streaming:
            return flight.starts_streaming
        rate = self.rates[id(flight)]
        return self.now if rate == math.inf else self.now + flight.remaining / rate

    # ---- cores ----

    def _step(self, core: _Core) -> None:
        """Run a core's events at `now` until it blocks, computes or ends."""
        while (core.waiting_for is None and core.busy_until <= self.now
               and core.pc < len(core.events)):
            e = core.events[core.pc]
            if isinstance(e, Transfer):
                self._issue(core, e)
            elif isinstance(e, Wait):
                flight = core.flights.get(e.handle)
                if flight is not None and not flight.done:
                    core.waiting_for = flight
                    return
            elif isinstance(e, Barrier):
                if core.open_puts():
                    core.waiting_for = "puts"
                    return
                core.waiting_for = "barrier"
                self.at_barrier.append(core)
                if len(self.at_barrier) == len(self.cores):
                    for c in self.at_barrier:
                        c.waiting_for = None
                        c.pc += 1
                    self.at_barrier = []
                return
            elif isinstance(e, KernelCall):
                seconds = self.kernel_seconds(e)
                core.busy_until = self.now + seconds
                core.spent["compute"] += seconds
            core.pc += 1

    def _wake(self) -> None:
        """Cores whose transfer completed, or whose puts did, go on."""
        for core in self.cores:
            if isinstance(core.waiting_for, _Flight) and core.waiting_for.done:
                core.waiting_for = None
                core.pc += 1
            elif core.waiting_for == "puts" and not core.open_puts():
                core.waiting_for = None

    def _blame(self, core: _Core, seconds: float) -> None:
        """Count `seconds` of a blocked core against what it waits for."""
        waiting = core.waiting_for
        if waiting == "barrier":
            core.spent["barrier"] += seconds
        elif waiting is not None:
            flight = waiting if isinstance(waiting, _Flight) else core.open_puts()[0]
            core.spent[self._limit(flight)] += seconds

    def _run_cores(self) -> None:
        """Everyone who can go on at `now` does (a barrier or a transfer may free others)."""
        while True:
            before = [(c.pc, c.waiting_for) for c in self.cores]
            for core in self.cores:
                self._step(core)
            self._wake()
            if before == [(c.pc, c.waiting_for) for c in self.cores]:
                return

    def run(self) -> float:
        """The region's time: until every core ended and every transfer completed."""
        while True:
            self._run_cores()
            if all(c.finished for c in self.cores) and not self.moving:
                return max([self.now] + [c.busy_until for c in self.cores])
            self._rates()
            ends = {id(f): self._end(f) for f in self.moving}
            computing = [c.busy_until for c in self.cores if c.busy_until > self.now]
            later = min(list(ends.values()) + computing, default=None)
            if later is None:
                raise RuntimeError("the replay is stuck: a core waits for what never comes")
            for core in self.cores:
                self._blame(core, later - self.now)
            for f in self.moving:
                rate = self.rates.get(id(f), 0.0)
                if rate != math.inf:
                    f.remaining -= rate * (later - self.now)
            self.now = later
            for f in list(self.moving):
                if id(f) in self.rates and ends[id(f)] <= later:
                    self._finish(f)


@dataclass(frozen=True)
class RegionTimes:
    seconds: float
    spent: Dict[str, float]     # summed over the cores


def replay_region(region: Region, machine: Machine,
                  kernel_seconds: Callable[[KernelCall], float]) -> RegionTimes:
    r = _Replay(region, machine, kernel_seconds)
    seconds = r.run()
    spent = {k: sum(c.spent[k] for c in r.cores) for k in CATEGORIES}
    return RegionTimes(seconds, spent)


@dataclass(frozen=True)
class Prediction:
    """One call on the part: its time, where the time went, what it moved."""
    call: Call
    seconds: float
    spent: Dict[str, float]
    bytes: Dict[str, int]           # per memory (trace.LEVELS)
    min_ddr_bytes: int
    floor_seconds: float            # min_ddr_bytes at the DDR bandwidth
    own_seconds: float              # the call's own DDR bytes at the DDR bandwidth

    @property
    def bound(self) -> str:
        """What the cores spent the most time on, of what can bound a call."""
        if not any(self.spent[k] for k in BOUNDS):
            return "-"
        return max(BOUNDS, key=lambda k: self.spent[k])


def predict(call: Call, machine: Machine, kernel_seconds: Callable[[KernelCall], float],
            element_bytes: int, stats_bytes: int) -> Prediction:
    seconds, spent = 0.0, dict.fromkeys(CATEGORIES, 0.0)
    for region in call.regions:
        times = replay_region(region, machine, kernel_seconds)
        seconds += times.seconds
        for k in CATEGORIES:
            spent[k] += times.spent[k]
    least = minimum_ddr_bytes(call, element_bytes, stats_bytes)
    moved = call.bytes_by_level()
    return Prediction(call, seconds, spent, moved, least, least / machine.bandwidth["ddr"],
                      moved["ddr"] / machine.bandwidth["ddr"])


def minimum_ddr_bytes(call: Call, element_bytes: int, stats_bytes: int) -> int:
    """The least the call can move to and from DDR: x and dy read once (and y, with the
    fused ReLU), dx written once, mean, invar and scale read once, dbias and dscale
    written once (in inference too: dbias and dscale need x and dy). NCHW moves what
    NHWC does: the same elements in another order. The training forward: x read once, y
    written once; scale, bias and the moving statistics read, the saved and the moving
    statistics written (eight per-channel arrays); with its fused ReLU, its keep bits
    written too (a word of x's type per channel per 8 * element_bytes rows; in NCHW per
    plane per 8 * element_bytes of its values, a plane's last word its own). The
    backward from those bits reads them in y's place: once. Adding into dx
    (BNG_FLAG_ACCUMULATE_DX) reads the old dx once more."""
    per_word = 8 * element_bytes
    words = (0 if not call.relu or not (call.forward or call.bits)
             else call.batch * call.channel * -(-call.spatial // per_word) if call.spatial
             else -(-call.batch // per_word) * call.channel)
    if call.forward:
        return (2 * call.elements + words) * element_bytes + 8 * call.channel * stats_bytes
    arrays = (4 if call.relu and not call.bits else 3) + call.accumulate_dx
    return (arrays * call.elements + words) * element_bytes + 5 * call.channel * stats_bytes
