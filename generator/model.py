"""The validated configuration: plain frozen dataclasses, built only by loader.py."""

from dataclasses import dataclass
from typing import Optional, Tuple

DTYPES = ("f32", "f16")
BACKENDS = ("gnu", "portable")


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
    channels_overridden: bool = False   # True when --channels replaced the YAML list

    def dtype(self, name: str) -> Optional[DTypeConfig]:
        for d in self.dtypes:
            if d.name == name:
                return d
        return None


@dataclass(frozen=True)
class Config:
    path: str                 # as given (relative), for messages
    targets: Tuple[Target, ...]

    def target(self, name: str) -> Optional[Target]:
        for t in self.targets:
            if t.name == name:
                return t
        return None
