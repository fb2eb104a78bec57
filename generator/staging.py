"""What both layouts' staged runs share (the twin of include/bng_staging.h's numbers): a
core's private memory in arrays aligned to ALIGN bytes, its tile buffers (x and dy,
double-buffered; one more for y with the fused ReLU), the size of a streamed tile."""

ALIGN = 64
# The tile buffers: x and dy, two each (bng_staging.h's bng_tile_buffers asserts it).
TILE_BUFFERS = 4
# A call with BNG_FLAG_RELU (the relu extension) fetches y into one more tile buffer,
# where each tile's dy is masked before the kernels see it.
RELU_TILE_BUFFERS = 1
# A call with BNG_FLAG_ACCUMULATE_DX (apply, dx, ext) fetches the old dx into two more
# (bng_staging.h's BNG_DX_TILE_BUFFERS), double-buffered as x and dy are.
DX_TILE_BUFFERS = 2
# A call that reads its rows twice (the vendor's) streams tiles of at most this many
# bytes (and at most a sixteenth of what the workspace leaves; whole blocks, at least
# one) and keeps the rest of private memory for the resident area; make model shows
# that the size amortises a transfer's start-up.
STREAM_TILE_BYTES = 16384


def aligned(n: int) -> int:
    """``n`` bytes rounded up to ALIGN."""
    return (n + ALIGN - 1) // ALIGN * ALIGN


def padded(channels: int, pad_lanes: int) -> int:
    """``channels`` rounded up to whole vectors of ``pad_lanes`` (1: unchanged)."""
    return -(-channels // pad_lanes) * pad_lanes
