"""The validated configuration: plain frozen dataclasses, built only by loader.py.

Each target keeps where its settings stood (``Location``), so that a check made after
loading (validate.py) reports the file and line a user must edit.
"""

from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple

DTYPES = ("f32", "f16")
BACKENDS = ("gnu", "portable", "native")
# Entry points beyond the vendor's four a target may ask for (targets.yaml extensions:),
# each fp and hp, _p and _s: the partial sums of this device's rows (reduce), dbias,
# dscale and dx from global sums (apply), dx alone for a frozen batch norm (dx), and the
# vendor-shaped call with an extended parameter block, for its accumulate flag (ext).
# relu and nchw are no families of their own: flags on those calls, BNG_FLAG_RELU (ReLU
# backward fused) and BNG_FLAG_NCHW (channel axis 1, with kernels per spatial extent,
# targets.yaml spatial:). forward is the training forward (batch_norm_fwd.h), an operator
# of its own beside the backward.
EXTENSIONS = ("reduce", "apply", "dx", "ext", "relu", "nchw", "forward")
# The backward's families of entry points (relu and nchw are flags on their calls).
FAMILIES = ("reduce", "apply", "dx", "ext")
# The spatial extents (H*W) the nchw kernels specialize when targets.yaml lists none:
# ResNet's, 112x112 down to 7x7.
DEFAULT_SPATIAL = (49, 196, 784, 3136, 12544)


@dataclass(frozen=True)
class Location:
    """Where a setting came from: a file and line, or a command-line option."""
    source: str
    line: Optional[int] = None

    def __str__(self) -> str:
        return f"{self.source}:{self.line}" if self.line else self.source


@dataclass(frozen=True)
class DTypeConfig:
    name: str                 # "f32" or "f16"
    lanes: int                # vector width in elements of this type
    stats: Optional[str]      # f16 only: "f16" or "f32" per-channel arrays


@dataclass(frozen=True)
class MemoryConfig:
    private_bytes: int
    address_bits: int
    shared_params_address: int
    shared_scratch_address: int
    shared_qualifier: str
    # Which memories a core's private data lives in (targets.yaml memory.spaces):
    # "unified", one memory both the scalar and the vector unit reach (the default), or
    # "split", a scalar memory (SM) of scalar_bytes and a vector memory (AM) of
    # vector_bytes per core, crossed only through registers or DMA (docs/contract.md).
    spaces: str = "unified"
    scalar_bytes: int = 0
    vector_bytes: int = 0
    # Split only: the vector memory _p stages the caller's arrays through (0: the least
    # the plan needs, TargetPlan.p_workspace_bytes).
    p_workspace_bytes: int = 0
    # The part of the cluster's global shared memory (GSM) _s may keep rows in between
    # its passes (targets.yaml memory.gsm): gsm_bytes from gsm_address; 0 bytes: none.
    gsm_address: int = 0
    gsm_bytes: int = 0
    # The shared memory the parameter block, the scratch and the GSM rows must lie in
    # (targets.yaml memory.shared: the cluster's GSM, or the window the firmware gives
    # them); 0 bytes: not stated, only the address space bounds them.
    shared_address: int = 0
    shared_bytes: int = 0

    @property
    def split(self) -> bool:
        return self.spaces == "split"


@dataclass(frozen=True)
class NativeSpellings:
    """How the target compiler spells its vector type and the operations the kernels
    use: C expressions with {ptr}, {value}, {scalar}, {a}, {b} placeholders."""
    header: str               # included for the type and intrinsics ("" for none)
    type: str                 # the float vector type, e.g. "lvector float"
    load: str
    store: str
    broadcast: str
    add: str
    sub: str
    mul: str
    div: str                  # exact lane-wise division (IEEE a / b in every lane)
    half_load: str            # "" : lane-wise conversion through bng_f16.h
    half_store: str


@dataclass(frozen=True)
class PartFigures:
    """The part's figures make model predicts from (targets.yaml part:): public
    figures or estimates, each replaceable by what make calibrate measures on the part.
    Integers in the units their names say (MB: 10^6 bytes)."""
    clock_mhz: int                # core clock
    ddr_mb_per_s: int             # DDR bandwidth one cluster achieves, shared by its cores
    gsm_bytes: int                # the cluster's global shared memory
    gsm_mb_per_s: int             # GSM bandwidth, shared by the cluster's cores
    dma_latency_ns: int           # from a transfer's start to its first byte
    dma_in_flight: int            # transfers one core's DMA engine moves at once
    vector_alu_per_cycle: int     # vector arithmetic operations a core issues per cycle
    vector_ldst_per_cycle: int    # vector loads and stores a core issues per cycle


@dataclass(frozen=True)
class Target:
    name: str
    description: str
    dtypes: Tuple[DTypeConfig, ...]
    cores: int
    vector_backend: str
    memory: MemoryConfig
    channels: Tuple[int, ...]
    max_unroll: int
    native: NativeSpellings
    extensions: Tuple[str, ...] = ()    # in EXTENSIONS order; () : the vendor's four only
    part: Optional[PartFigures] = None  # targets.yaml part: (make model); None without it
    spatial: Tuple[int, ...] = DEFAULT_SPATIAL   # nchw: the spatial extents to specialize
    channels_overridden: bool = False   # True when --channels replaced the YAML list
    # dotted key ("memory.private_bytes") -> where it stood; "" is the target itself
    locations: Dict[str, Location] = field(default_factory=dict, compare=False, repr=False)

    def dtype(self, name: str) -> Optional[DTypeConfig]:
        for d in self.dtypes:
            if d.name == name:
                return d
        return None

    def where(self, key: str) -> Location:
        return self.locations.get(key) or self.locations.get("") or Location("targets.yaml")


@dataclass(frozen=True)
class Config:
    targets: Tuple[Target, ...]

    def target(self, name: str) -> Optional[Target]:
        for t in self.targets:
            if t.name == name:
                return t
        return None
