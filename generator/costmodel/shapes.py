"""The shapes make model predicts by default: every batch-norm layer of ResNet-50 at
batch 1, 8 and 32, and the bench's shapes (bench/bench.c); at batch 32, where the
target has the extensions, its layers followed by a ReLU with the fused ReLU backward,
every layer in NCHW (those followed by a ReLU also fused), and every layer's training
forward (in NCHW too where the target has both); with relu and forward, the layers a
ReLU follows fused from the forward's keep bits too (in NCHW too where it has nchw);
with ext, every layer's ext call adding into dx (MXNet's grad_req='add')."""

import re
from dataclasses import dataclass, replace
from typing import List, Tuple

from ..errors import ConfigError


@dataclass(frozen=True)
class Shape:
    batch: int          # rows: NHWC with N*H*W folded; NCHW: N
    channel: int
    label: str          # where it comes from
    layers: int = 1     # how many layers of the network have it
    spatial: int = 0    # NCHW (the nchw extension): H*W; 0: NHWC
    relu: bool = False  # the fused ReLU backward (the relu extension); with forward, the
                        # forward's fused ReLU and its keep bits (BNG_FWD_RELU)
    forward: bool = False   # the training forward's _s (the forward extension)
    bits: bool = False      # with relu: the backward from the forward's keep bits
                            # (BNG_FLAG_RELU_BITS)
    accumulate_dx: bool = False     # the ext call adding into dx (BNG_FLAG_ACCUMULATE_DX)

    @property
    def size(self) -> str:
        """batch x channel, x spatial for NCHW: as the trace program and the table spell it."""
        return f"{self.batch}x{self.channel}" + (f"x{self.spatial}" if self.spatial else "")

    @property
    def extensions(self) -> Tuple[str, ...]:
        """The extensions the call uses: nchw, relu, both, ext (adding into dx), forward
        (its ReLU is its own; with nchw in NCHW), or none (the vendor's call)."""
        if self.forward:
            return ("forward",) + (("nchw",) if self.spatial else ())
        return tuple(name for name, used in (("nchw", bool(self.spatial)), ("relu", self.relu),
                                             ("ext", self.accumulate_dx)) if used)

    @property
    def extension(self) -> str:
        """The call as a label: its extensions ("nchw", "relu", "nchw relu", "forward",
        "forward relu", "forward nchw", "forward nchw relu"), "bits" from the keep bits,
        "acc" adding into dx; or "" (the vendor's)."""
        named = tuple(e for e in self.extensions if e != "ext")
        return " ".join(named + (("relu",) if self.forward and self.relu else ())
                        + (("bits",) if self.bits else ())
                        + (("acc",) if self.accumulate_dx else ()))


# ResNet-50 as torchvision builds it (v1.5: a bottleneck's stride on its 3x3
# convolution): its 53 batch-norm layers as (height * width, channels, layers, whether
# a ReLU follows them). A ReLU follows the stem's and each bottleneck's first two (its
# width's channels); the third's and the downsampling ones' output goes to the
# residual sum first.
RESNET50 = (
    (112 * 112, 64, 1, True),                                               # stem
    (56 * 56, 64, 6, True), (56 * 56, 256, 4, False),                       # layer1
    (56 * 56, 128, 1, True), (28 * 28, 128, 7, True), (28 * 28, 512, 5, False),     # layer2
    (28 * 28, 256, 1, True), (14 * 14, 256, 11, True), (14 * 14, 1024, 7, False),   # layer3
    (14 * 14, 512, 1, True), (7 * 7, 512, 5, True), (7 * 7, 2048, 4, False),        # layer4
)
RESNET50_BATCHES = (1, 8, 32)
# The batch of the extensions' default shapes (one: make model stays quick).
EXTENSION_BATCH = 32
BENCH = ((4, 64), (4096, 64), (2048, 256), (65536, 64), (16384, 256), (262144, 64))


def _layer(n: int, pixels: int, c: int) -> str:
    side = int(pixels ** 0.5)
    return f"resnet50 n={n} {side}x{side}x{c}"


def _extended(pixels: int, c: int, layers: int, nchw: bool = False, **flags) -> Shape:
    """A ResNet-50 layer at EXTENSION_BATCH in NHWC (rows N*H*W) or NCHW (N x C x H*W),
    with the extensions `flags` names, labelled by them."""
    n = EXTENSION_BATCH
    shape = Shape(n if nchw else n * pixels, c, "", layers, spatial=pixels if nchw else 0,
                  **flags)
    return replace(shape, label=f"{_layer(n, pixels, c)} {shape.extension}")


def default_shapes(extensions: Tuple[str, ...] = ()) -> List[Shape]:
    """The vendor's call's shapes; then, for the extensions named, ResNet-50 at
    EXTENSION_BATCH: the layers a ReLU follows fused (relu), every layer in NCHW (nchw;
    with relu as well, the layers a ReLU follows fused in NCHW too, the backward of
    NCHW's training step), every layer's training forward, with the ReLU fused where one
    follows (forward), and with nchw as well in NCHW too."""
    out = [Shape(n * pixels, c, _layer(n, pixels, c), layers)
           for n in RESNET50_BATCHES for pixels, c, layers, _ in RESNET50]
    out += [Shape(b, c, "bench") for b, c in BENCH]
    has = set(extensions)
    layouts = (False, True) if "nchw" in has else (False,)
    if "relu" in has:
        out += [_extended(pixels, c, layers, relu=True)
                for pixels, c, layers, relu in RESNET50 if relu]
    if "nchw" in has:
        out += [_extended(pixels, c, layers, nchw=True) for pixels, c, layers, _ in RESNET50]
    if {"nchw", "relu"} <= has:
        out += [_extended(pixels, c, layers, nchw=True, relu=True)
                for pixels, c, layers, relu in RESNET50 if relu]
    if "forward" in has:     # with its ReLU and keep bits where a ReLU follows
        out += [_extended(pixels, c, layers, nchw=nchw, forward=True, relu=relu)
                for nchw in layouts for pixels, c, layers, relu in RESNET50]
    if {"relu", "forward"} <= has:     # the backward from those keep bits
        out += [_extended(pixels, c, layers, nchw=nchw, relu=True, bits=True)
                for nchw in layouts for pixels, c, layers, relu in RESNET50 if relu]
    if "ext" in has:        # grad_req='add' on the data
        out += [_extended(pixels, c, layers, accumulate_dx=True)
                for pixels, c, layers, _ in RESNET50]
    return out


SHAPE = re.compile(r"([1-9][0-9]{0,9})x([1-9][0-9]{0,4})(?:x([1-9][0-9]{0,9}))?(:relu(:bits)?)?"
                   r"(:acc)?\Z")
FORWARD = re.compile(r"([1-9][0-9]{0,9})x([1-9][0-9]{0,4})(?:x([1-9][0-9]{0,9}))?:fwd(:relu)?\Z")


def parse_shapes(text: str) -> List[Shape]:
    """SHAPES="BxC ...": batch (rows) x channel; BxC:relu with the fused ReLU backward,
    BxC:relu:bits from the forward's keep bits; NxCxS in NCHW (NxCxS:relu:bits too) (batch x channel x spatial), NxCxS:relu with the fused ReLU; any of
    those with :acc last, the ext call adding into dx; BxC:fwd the training forward,
    BxC:fwd:relu with its fused ReLU and keep bits, NxCxS:fwd in NCHW."""
    out = []
    for word in text.replace(",", " ").split():
        m, f = SHAPE.match(word), FORWARD.match(word)
        if not m and not f:
            raise ConfigError("SHAPES", word, "not a shape; write BATCHxCHANNEL, e.g. 401408x64, "
                              "BATCHxCHANNEL:relu (fused ReLU; :relu:bits from the forward's "
                              "keep bits), BATCHxCHANNELxSPATIAL (NCHW), any of those with "
                              ":acc (adding into dx) or "
                              "BATCHxCHANNEL:fwd (the training forward; :fwd:relu with its ReLU; "
                              "NxCxS:fwd in NCHW)")
        shape = (Shape(int(f.group(1)), int(f.group(2)), "SHAPES", spatial=int(f.group(3) or 0),
                       forward=True, relu=bool(f.group(4))) if f else
                 Shape(int(m.group(1)), int(m.group(2)), "SHAPES",
                       spatial=int(m.group(3) or 0), relu=bool(m.group(4)),
                       bits=bool(m.group(5)), accumulate_dx=bool(m.group(6))))
        out.append(replace(shape, label=f"SHAPES {shape.extension}".rstrip()))
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
