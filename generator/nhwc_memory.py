"""Where an NHWC staged call keeps its rows: a core's private memory for one chunk (the
workspace, the tile buffers, with the fused ReLU y's buffer and the mask's bits, or
from the forward's keep bits a buffer of a tile's words, the resident rows) and its share of the GSM rows. The twin of include/bng_nhwc_memory.c,
number for number: the generator checks targets.yaml and make report and make model
count with these, the driver lays out memory with those; the model's trace tests
(tests/model/test_trace.py) hold the driver's run to these numbers.

DTypePlan takes NhwcMemory's methods and TargetPlan NhwcGsm's (generator/plan.py); a
storage type's plan gives them workspace_chunk, element_bytes, stats_bytes, pad_lanes
and relu, a target's plan its target.
"""

from .order import BLOCK_ROWS
from .staging import ALIGN, RELU_TILE_BUFFERS, STREAM_TILE_BYTES, TILE_BUFFERS, aligned, padded

# The one description of a core's private memory in a shared-storage call: these
# arrays of max_chunk elements (float, or the dtype's per-channel type), each rounded
# up to ALIGN bytes, in this order; the rest is split in four tile buffers (x and dy,
# double-buffered). Rendered into bng_kernels.h as BNG_WORKSPACE for the driver, used
# here for the private_bytes check and by make report.
WORKSPACE = (
    ("mean", "float"), ("sum_dy", "float"), ("sum_dyxm", "float"),
    ("part_dy", "float"), ("part_dyxm", "float"),
    ("gain", "float"), ("dy_mean", "float"), ("slope", "float"),
    ("stats_mean", "stats"), ("invar", "stats"), ("scale", "stats"),
    ("dbias", "stats"), ("dscale", "stats"),
)
# The GSM bandwidth's share of GSM and DDR together (NhwcGsm.gsm_share) is rendered in
# units of 1 / GSM_SHARE_ONE, so that the driver scales a row count by it in size_t
# arithmetic of 32 bits.
GSM_SHARE_ONE = 2**16


def last_rows(rows: int, most: int) -> int:
    """How many of ``rows`` rows (from a block boundary) stay where ``most`` fit: all, or
    the last ones from a block boundary, or none (bng_nhwc_memory_last_rows)."""
    before = -(-max(0, rows - most) // BLOCK_ROWS) * BLOCK_ROWS
    return rows - min(before, rows)


class NhwcMemory:
    """A storage type's chunk in a core's private memory (DTypePlan's)."""

    @property
    def workspace_bytes(self) -> int:
        """Private memory per core for the _s workspace, tiles excluded."""
        element = {"float": 4, "stats": self.stats_bytes}
        return sum(aligned(element[kind] * self.workspace_chunk) for _, kind in WORKSPACE)

    def tile_bytes(self, private_bytes: int) -> int:
        """One tile buffer: what the workspace leaves, split in TILE_BUFFERS."""
        return (private_bytes - self.workspace_bytes) // TILE_BUFFERS // ALIGN * ALIGN

    def row_pitch(self, channels: int) -> int:
        """Bytes of a row of a chunk of ``channels`` in private memory (padded on a split
        target)."""
        return padded(channels, self.pad_lanes) * self.element_bytes

    def tile_rows(self, private_bytes: int, channels: int, keeps: bool = False) -> int:
        """Rows per streamed tile for a chunk of ``channels``: whole blocks of a tile
        buffer; in a call that keeps rows between its passes (``keeps``, the vendor's) no
        more than STREAM_TILE_BYTES nor a quarter of a tile buffer, at least one block
        (bng_nhwc_memory_tile_rows)."""
        quarter = self.tile_bytes(private_bytes)
        rows = quarter // self.row_pitch(channels) // BLOCK_ROWS * BLOCK_ROWS
        if not keeps:
            return rows
        small = min(STREAM_TILE_BYTES, quarter // TILE_BUFFERS)
        small = small // self.row_pitch(channels) // BLOCK_ROWS * BLOCK_ROWS
        return min(rows, max(small, BLOCK_ROWS))

    def _after_tiles(self, private_bytes: int, channels: int, relu: bool) -> int:
        """Private memory the workspace and the streamed tiles (and y's, with ``relu``)
        leave in a call that keeps rows (bng_nhwc_memory_lay_out)."""
        tile = aligned(self.tile_rows(private_bytes, channels, keeps=True)
                       * self.row_pitch(channels))
        return (private_bytes - self.workspace_bytes
                - (TILE_BUFFERS + RELU_TILE_BUFFERS * relu) * tile)

    def relu_bits_block_bytes(self, channels: int) -> int:
        """A block's ReLU mask as bits: a row of float words, two of half words."""
        return self.row_pitch(channels) * (4 // self.element_bytes)

    def relu_bits_blocks(self, private_bytes: int, channels: int, slice_rows: int) -> int:
        """Blocks of a core's slice whose ReLU mask a relu call keeps as bits from pass 1
        to pass 2 (bng_nhwc_memory_bits_blocks): the slice's first ones, as many as the
        memory after the tiles holds, none when the resident area would hold the whole
        slice."""
        rest = self._after_tiles(private_bytes, channels, True) // ALIGN * ALIGN
        whole = rest // 2 // ALIGN * ALIGN // self.row_pitch(channels)
        if last_rows(slice_rows, whole) == slice_rows:
            return 0
        return min(-(-slice_rows // BLOCK_ROWS), rest // self.relu_bits_block_bytes(channels))

    def relu_bits_tile_bytes(self, private_bytes: int, channels: int) -> int:
        """The buffer of a streamed tile's words of the forward's keep bits (a fused ReLU
        call from them, BNG_FLAG_RELU_BITS): a block's bits per block of a tile."""
        return (self.tile_rows(private_bytes, channels, keeps=True) // BLOCK_ROWS
                * self.relu_bits_block_bytes(channels))

    def resident_rows(self, private_bytes: int, channels: int, slice_rows: int,
                      relu: bool = False, bits: bool = False) -> int:
        """Rows of a core's slice of ``slice_rows`` that the vendor's call (with
        ``relu``, the fused ReLU's; with ``bits`` too, from the forward's keep bits) keeps
        in private memory from pass 1 to pass 2 (bng_nhwc_memory_lay_out): x and dy of the
        slice's last rows, from a block boundary, as many as the resident area (what the
        workspace and four streamed tiles, and with ``relu`` y's tile and the mask's
        bits, or with ``bits`` the buffer of a tile's words, leave, halved) holds."""
        rest = self._after_tiles(private_bytes, channels, relu and not bits)
        if relu and bits:
            rest -= aligned(self.relu_bits_tile_bytes(private_bytes, channels))
        elif relu:
            rest -= aligned(self.relu_bits_blocks(private_bytes, channels, slice_rows)
                            * self.relu_bits_block_bytes(channels))
        return last_rows(slice_rows, rest // 2 // ALIGN * ALIGN // self.row_pitch(channels))

    @property
    def min_private_bytes(self) -> int:
        """The workspace and tiles of one block of rows of the widest chunk: what the
        _s private memory (and on a split target _p's workspace) must hold at least."""
        tile = aligned(BLOCK_ROWS * self.workspace_chunk * self.element_bytes)
        return self.workspace_bytes + (TILE_BUFFERS + RELU_TILE_BUFFERS * self.relu) * tile


class NhwcGsm:
    """A core's share of the GSM rows (TargetPlan's)."""

    @property
    def gsm_share(self) -> int:
        """G / (G + D) in units of 2^-16, rounded down, G and D the part's GSM and DDR
        bandwidths: the driver keeps no more rows in GSM than make pass 2's GSM traffic
        take as long as its DDR traffic (bng_nhwc_memory_gsm_rows); 2^16 (no bound)
        without part:."""
        part = self.target.part
        if part is None:
            return GSM_SHARE_ONE
        return GSM_SHARE_ONE * part.gsm_mb_per_s // (part.gsm_mb_per_s + part.ddr_mb_per_s)

    def gsm_rows(self, dtype: NhwcMemory, channels: int, cores: int, slice_rows: int,
                 is_train: bool, relu: bool = False, bits: bool = False) -> int:
        """Rows of a core's slice the vendor's call (with ``relu``, the fused ReLU's;
        ``bits``, from the forward's keep bits) keeps in GSM between its passes with ``cores`` cores selected
        (bng_nhwc_memory_gsm): the streamed rows just before the resident ones, from a
        block boundary, as many as the core's share of memory.gsm holds and the
        bandwidths' share G / (G + D) pays for."""
        memory = self.target.memory
        if not memory.gsm_bytes or not slice_rows:
            return 0
        streamed = slice_rows - dtype.resident_rows(memory.private_bytes, channels, slice_rows,
                                                    relu, bits)
        share = memory.gsm_bytes // cores // ALIGN * ALIGN
        fit = share // 2 // ALIGN * ALIGN // (channels * dtype.element_bytes)
        arrays = 2 if is_train else 1
        pays = (slice_rows // arrays + streamed) * self.gsm_share // GSM_SHARE_ONE
        return last_rows(streamed, min(fit, pays))
