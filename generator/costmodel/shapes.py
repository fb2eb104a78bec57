"""The shapes make model predicts by default: every batch-norm layer of ResNet-50 at
batch 1, 8 and 32, and the bench's shapes (bench/bench.c)."""

import re
from dataclasses import dataclass
from typing import List, Tuple

from ..errors import ConfigError


@dataclass(frozen=True)
class Shape:
    batch: int          # rows: NHWC with N*H*W folded
    channel: int
    label: str          # where it comes from
    layers: int = 1     # how many layers of the network have it


# ResNet-50 as torchvision builds it (v1.5: a bottleneck's stride on its 3x3
# convolution): its 53 batch-norm layers as (height * width, channels, layers).
RESNET50 = (
    (112 * 112, 64, 1),                                  # stem
    (56 * 56, 64, 6), (56 * 56, 256, 4),                 # layer1
    (56 * 56, 128, 1), (28 * 28, 128, 7), (28 * 28, 512, 5),        # layer2
    (28 * 28, 256, 1), (14 * 14, 256, 11), (14 * 14, 1024, 7),      # layer3
    (14 * 14, 512, 1), (7 * 7, 512, 5), (7 * 7, 2048, 4),           # layer4
)
RESNET50_BATCHES = (1, 8, 32)
BENCH = ((4, 64), (4096, 64), (2048, 256), (65536, 64), (16384, 256), (262144, 64))


def default_shapes() -> List[Shape]:
    side = {pixels: int(pixels ** 0.5) for pixels, _, _ in RESNET50}
    out = [Shape(n * pixels, c, f"resnet50 n={n} {side[pixels]}x{side[pixels]}x{c}", layers)
           for n in RESNET50_BATCHES for pixels, c, layers in RESNET50]
    return out + [Shape(b, c, "bench") for b, c in BENCH]


SHAPE = re.compile(r"([1-9][0-9]{0,9})x([1-9][0-9]{0,4})\Z")


def parse_shapes(text: str) -> List[Shape]:
    """SHAPES="BxC ...": batch (rows) x channel."""
    out = []
    for word in text.replace(",", " ").split():
        m = SHAPE.match(word)
        if not m:
            raise ConfigError("SHAPES", word, "not a shape; write BATCHxCHANNEL, e.g. 401408x64")
        out.append(Shape(int(m.group(1)), int(m.group(2)), "SHAPES"))
    if not out:
        raise ConfigError("SHAPES", "", "no shape given")
    return out


def parse_cores(text: str, cores: int) -> Tuple[int, ...]:
    """CORES="1 8": how many cores of the cluster (the lowest ones) run each call."""
    out = []
    for word in text.replace(",", " ").split():
        if not word.isdigit() or not 1 <= int(word) <= cores:
            raise ConfigError("CORES", word, f"not a core count; allowed: 1 to {cores}")
        out.append(int(word))
    if not out:
        raise ConfigError("CORES", "", "no core count given")
    return tuple(sorted(set(out)))
