"""The trace of the shipped driver (bench/model/trace.c under the tracing HAL): a HAL
that gives _p's bits, and byte counts equal to the schedule's formula, exactly: the
vendor's call, the fused ReLU's and NCHW's."""

import dataclasses
import subprocess
import unittest

from programs import program, target_plan

from generator.costmodel.replay import minimum_ddr_bytes
from generator.costmodel.trace import parse
from generator.order import BLOCK_ROWS, MAX_GROUPS, MIN_GROUP_ROWS
from generator.plan import plan_target
from generator.staging import ALIGN, STREAM_TILE_BYTES


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def aligned(n: int) -> int:
    return ceil_div(n, ALIGN) * ALIGN


def group_rows(batch: int) -> int:
    """Rows of a row group (docs/design.md): whole blocks, at most MAX_GROUPS groups."""
    groups = min(MAX_GROUPS, ceil_div(batch, MIN_GROUP_ROWS))
    return ceil_div(ceil_div(batch, groups), BLOCK_ROWS) * BLOCK_ROWS


def slices(batch: int, cores: int):
    """Each rank's rows (begin, end): the k-th run of row groups (docs/design.md)."""
    rows = group_rows(batch)
    groups = ceil_div(batch, rows)
    return groups, [(min(groups * rank // cores * rows, batch),
                     min(groups * (rank + 1) // cores * rows, batch))
                    for rank in range(cores)]


def relu_again(dtype: str, batch: int, width: int, cores: int, is_train: bool):
    """Of the rows the fused ReLU's pass 2 fetches from DDR again (each slice's first
    ones, before those kept in GSM and private memory), those whose tile fetches y
    again and those whose tile pass 1 kept the mask of as bits (a tile whose blocks are
    all among the slice's first relu_bits_blocks), summed over the cores. Tiles run
    from the slice's start, cut at row groups and where the rows kept in GSM begin."""
    tp = target_plan()
    d = tp.dtype(dtype)
    private = tp.target.memory.private_bytes
    tile_rows = d.tile_rows(private, width, keeps=True)
    by_y = by_bits = 0
    for begin, end in slices(batch, cores)[1]:
        rows = end - begin
        stay = d.resident_rows(private, width, rows, True)
        gsm_from = end - stay - tp.gsm_rows(d, width, cores, rows, is_train, True)
        bits = d.relu_bits_blocks(private, width, rows)
        row = begin
        while row < gsm_from:
            n = min(tile_rows, min((row // group_rows(batch) + 1) * group_rows(batch),
                                   gsm_from) - row)
            if ceil_div(row - begin + n, BLOCK_ROWS) <= bits:
                by_bits += n
            else:
                by_y += n
            row += n
    return by_y, by_bits


def expected_bytes(dtype: str, batch: int, channel: int, cores: int, is_train: bool,
                   relu: bool = False, bits: bool = False):
    """What _s moves, from the schedule (docs/design.md). Per chunk: every core with
    rows, and the lowest (which writes dbias and dscale), fetches mean, invar and scale
    and reads every group's partial sums back for the fold; a core fetches its rows of x
    and dy and puts each of its row groups' two partial sums; in pass 2 it fetches again
    those of its rows that did not stay in private memory (x only in training), from GSM
    those it put there in pass 1, the others from DDR, and puts its rows of dx; the
    lowest core puts dbias and dscale. In DDR terms, per chunk of N bytes an array:
    3N + 2 (N - R) in training (N - R in inference), R the bytes of the rows that stayed
    in private memory or GSM, plus the per-channel arrays. With the fused ReLU y's tile
    and the mask's bits take room from the resident area, and y comes with each tile of
    dy fetched from DDR: N in pass 1, in pass 2 N - R - B (the rows kept on chip hold
    the masked dy, B those of the rows fetched again whose mask pass 1 kept as bits).
    From the forward's keep bits (``bits``), no y's tile and no bits area but a tile's
    words, and the words of each tile of dy fetched from DDR: every row's in pass 1
    (ceil(batch / W) word rows, tiles cut at blocks), in pass 2 each slice's refetched
    rows' (W the rows of a word)."""
    tp = target_plan()
    d = tp.dtype(dtype)
    e, s, f = d.element_bytes, d.stats_bytes, 4
    chunk = channel if channel in tp.target.channels else d.generic_chunk
    groups, ranks = slices(batch, cores)
    private = tp.target.memory.private_bytes
    again = 2 if is_train else 1        # the arrays pass 2 reads
    active = sum(1 for rank, (begin, end) in enumerate(ranks) if end > begin or rank == 0)
    ddr = gsm = 0
    for first in range(0, channel, chunk):
        width = min(chunk, channel - first)
        n = batch * width * e
        stays = [d.resident_rows(private, width, end - begin, relu, bits)
                 + tp.gsm_rows(d, width, cores, end - begin, is_train, relu, bits)
                 for begin, end in ranks]
        stayed = sum(d.resident_rows(private, width, end - begin, relu, bits)
                     for begin, end in ranks)
        kept = sum(stays) - stayed
        refetched = n - (stayed + kept) * width * e
        ddr += 3 * n + again * refetched
        if bits:
            word = 8 * e
            ddr += (ceil_div(batch, word) + sum(ceil_div(end - begin - stay, word) for
                                                 (begin, end), stay in zip(ranks, stays))) * width * e
        elif relu:
            ddr += n + relu_again(dtype, batch, width, cores, is_train)[0] * width * e
        ddr += active * 3 * width * s + 2 * width * s
        gsm += 2 * again * kept * width * e         # put in pass 1, fetched in pass 2
        gsm += groups * 2 * width * f + active * groups * 2 * width * f
    return {"ddr": ddr, "gsm": gsm, "am": ddr + gsm}


def expected_kept(dtype: str, batch: int, channel: int, cores: int, is_train: bool,
                  relu: bool = False, bits: bool = False):
    """The schedule's choice from the plan: rows read in both passes (every chunk's
    batch), and of those the ones that stay in private memory and in GSM."""
    tp = target_plan()
    d = tp.dtype(dtype)
    chunk = channel if channel in tp.target.channels else d.generic_chunk
    private = tp.target.memory.private_bytes
    _, ranks = slices(batch, cores)
    rows = am = gsm = 0
    for first in range(0, channel, chunk):
        width = min(chunk, channel - first)
        rows += batch
        am += sum(d.resident_rows(private, width, end - begin, relu, bits)
                  for begin, end in ranks)
        gsm += sum(tp.gsm_rows(d, width, cores, end - begin, is_train, relu, bits)
                   for begin, end in ranks)
    return rows, am, gsm


def expected_nchw_bytes(dtype: str, batch: int, channel: int, spatial: int, is_train: bool,
                        relu: bool = False, bits: bool = False):
    """What NCHW _s moves (include/bng_nchw_staged.c): each channel on the core that owns
    it fetches its mean, invar and scale, its planes of x and dy, puts dbias and dscale,
    fetches again the tiles that did not stay in private memory (x only in training;
    the plan's nchw_layout says from where they stay) and puts dx; nothing goes through
    GSM: 3N + 2(N - R) in training, 3N + (N - R) in inference, N the bytes of an array,
    R those that stayed. With the fused ReLU y comes with every tile fetched, in both
    passes: N + (N - R) more; from the forward's keep bits (``bits``, y's buffer holding
    them) a tile's planes' words instead: every plane's in pass 1, in pass 2 those of the
    values fetched again (whole planes' words, a piece's rounded up)."""
    tp = target_plan()
    d = tp.dtype(dtype)
    from_ = tp.nchw_layout(d, batch, spatial, True, relu).resident_from
    again = from_ * channel * d.element_bytes
    n = batch * channel * spatial * d.element_bytes
    ddr = 3 * n + (2 if is_train else 1) * again + 5 * channel * d.stats_bytes
    if bits:
        word, plane_words = 8 * d.element_bytes, ceil_div(spatial, 8 * d.element_bytes)
        words = batch * plane_words + from_ // spatial * plane_words \
            + ceil_div(from_ % spatial, word)
        ddr += channel * words * d.element_bytes
    elif relu:
        ddr += n + again
    return {"ddr": ddr, "gsm": 0, "am": ddr}


def chunk_widths(dtype: str, channel: int):
    """The channels of each chunk of a call (specialized: one chunk, else the generic
    kernel's)."""
    tp = target_plan()
    chunk = channel if channel in tp.target.channels else tp.dtype(dtype).generic_chunk
    return [min(chunk, channel - first) for first in range(0, channel, chunk)]


def masked_elements(call) -> int:
    """The elements the ReLU mask steps of a traced call covered (NCHW: planes x n)."""
    return sum(e.rows * e.channels for region in call.regions for events in region.values()
               for e in events if getattr(e, "op", None) == "relu_mask")


def kernel_rows(call, op: str) -> int:
    """The rows (NCHW: planes) of every kernel call of `op` in a traced call."""
    return sum(e.rows for region in call.regions for events in region.values()
               for e in events if getattr(e, "op", None) == op)


def trace(*calls: str, copy: bool = False) -> str:
    done = subprocess.run([program("trace"), *(["--copy"] if copy else []), *calls],
                          capture_output=True, text=True)
    if done.returncode:
        raise AssertionError(f"trace failed ({done.returncode}): {done.stderr}{done.stdout[-300:]}")
    return done.stdout


class TraceHalTest(unittest.TestCase):
    def test_copying_trace_gives_the_bits_of_p(self):
        """With data moved for real, _s under the tracing HAL gives _p's dx, dbias and
        dscale bit for bit (the program compares them): the trace HAL is a HAL."""
        calls = ["f32:1000x64:0xff", "f32:3000x256:0x1", "f16:777x100:0x25",
                 "f32:300x300:0xff:infer", "f16:5000x64:0x7", "f32:3x2048:0xff"]
        ends = [line for line in trace(*calls, copy=True).splitlines() if line.startswith("end")]
        self.assertEqual(ends, ["end identical"] * len(calls))

    def test_extended_calls_give_the_bits_of_ext_p(self):
        """The fused ReLU (rows resident, kept in GSM and streamed: a tile's dy masked
        once, in the pass that fetches it from DDR), from y and from the forward's keep
        bits, NCHW with and without it (whole planes in a tile, and planes in pieces),
        against ext _p with the same flags."""
        calls = ["f32:1000x64:0xff:relu", "f16:777x100:0x25:relu", "f32:300x300:0xff:infer:relu",
                 "f32:20000x64:0x7:relu", "f16:30000x256:0x3:relu",
                 "f32:1000x64:0xff:relu:bits", "f16:777x100:0x25:relu:bits",
                 "f32:300x300:0xff:infer:relu:bits", "f32:20000x64:0x7:relu:bits",
                 "f16:30000x256:0x3:relu:bits", "f32:2x5x3136:0xff:relu:bits",
                 "f16:2x3x100003:0x3:infer:relu:bits", "f16:32x17x49:0xff:relu:bits",
                 "f32:2x5x3136:0xff",
                 "f16:3x100x200:0x7:infer", "f32:2x3x100003:0x3", "f16:32x17x49:0xff",
                 "f32:2x5x3136:0xff:relu", "f16:2x3x100003:0x3:infer:relu"]
        ends = [line for line in trace(*calls, copy=True).splitlines() if line.startswith("end")]
        self.assertEqual(ends, ["end identical"] * len(calls))

    def test_accumulating_calls_give_the_bits_of_ext_p(self):
        """Adding into dx (BNG_FLAG_ACCUMULATE_DX): the old dx fetched into its own tile
        buffers beside every tile of pass 2 (rows resident, kept in GSM and streamed,
        one core and several, training and inference, apply's and dx-only's one pass
        too in ext's), plain, with the fused ReLU from y and from the keep bits, NCHW,
        against ext _p with the same flags on the same old dx."""
        calls = ["f32:1000x64:0xff:acc", "f16:777x100:0x25:acc", "f32:300x300:0xff:infer:acc",
                 "f32:20000x64:0x7:acc", "f16:30000x256:0x3:acc", "f32:70000x32:0xff:acc",
                 "f32:20000x64:0x7:relu:acc", "f16:777x100:0x25:relu:bits:acc",
                 "f32:2x5x3136:0xff:acc", "f16:2x3x100003:0x3:infer:relu:acc",
                 "f32:32x17x49:0xff:relu:bits:acc"]
        ends = [line for line in trace(*calls, copy=True).splitlines() if line.startswith("end")]
        self.assertEqual(ends, ["end identical"] * len(calls))

    def test_accumulating_calls_read_the_old_dx_once(self):
        """Adding into dx reads dx once beside the same call's traffic: its DDR bytes
        are at least the minimum, which counts one stream more than the call's without
        the flag, and no more than that call's with the rows the old dx's buffers take
        from the resident area read again (x and dy once more each, at most)."""
        tp = target_plan()
        specs = ["f32:20000x64:0x7", "f16:30000x256:0x3", "f32:300x300:0xff:infer",
                 "f32:20000x64:0xff:relu", "f32:2x5x3136:0xff"]
        plain = parse(trace(*specs))
        added = parse(trace(*[s + ":acc" for s in specs]))
        for spec, p, a in zip(specs, plain, added):
            with self.subTest(spec=spec):
                d = tp.dtype(a.dtype)
                stream = a.elements * d.element_bytes
                self.assertTrue(a.accumulate_dx and not p.accumulate_dx)
                self.assertEqual(minimum_ddr_bytes(a, d.element_bytes, d.stats_bytes),
                                 minimum_ddr_bytes(p, d.element_bytes, d.stats_bytes) + stream)
                ddr = a.bytes_by_level()["ddr"]
                self.assertGreaterEqual(ddr, p.bytes_by_level()["ddr"] + stream)
                self.assertLessEqual(ddr, p.bytes_by_level()["ddr"] + 3 * stream)

    def test_forward_calls_give_the_bits_of_forward_p(self):
        """The training forward's _s (rows resident and streamed, specialized and
        generic, one core and several) against its _p on the same inputs, the moving
        statistics as they were before either."""
        calls = ["f32:1000x64:0xff:fwd", "f16:777x100:0x25:fwd", "f32:20000x256:0x7:fwd",
                 "f16:30000x64:0x1:fwd"]
        record = trace(*calls, copy=True)
        ends = [line for line in record.splitlines() if line.startswith("end")]
        self.assertEqual(ends, ["end identical"] * len(calls))
        # the two large ones keep rows in private memory and in GSM between the passes
        self.assertTrue(all(c.kept()[1] > 0 and c.kept()[2] > 0 for c in parse(record)[2:]))
        (call,) = parse(trace("f32:4x64:0x1:fwd"))
        self.assertTrue(call.forward)
        ops = {e.op for r in call.regions for events in r.values() for e in events
               if getattr(e, "op", None)}
        self.assertEqual(ops, {"fwd_stats", "fwd_norm"})

    def test_forward_relu_calls_give_the_bits_of_forward_p(self):
        """The forward's fused ReLU and its keep bits: _s's y and bits those of _p (a
        partial last word, resident and streamed rows, half's 16-row words)."""
        calls = ["f32:1000x64:0xff:fwd:relu", "f16:777x100:0x25:relu:fwd",
                 "f32:20000x256:0x7:fwd:relu"]
        ends = [line for line in trace(*calls, copy=True).splitlines() if line.startswith("end")]
        self.assertEqual(ends, ["end identical"] * len(calls))
        (call,) = parse(trace("f32:40x64:0x1:fwd:relu"))
        self.assertTrue(call.forward and call.relu)
        ops = {e.op for r in call.regions for events in r.values() for e in events
               if getattr(e, "op", None)}
        self.assertEqual(ops, {"fwd_stats", "fwd_norm_relu"})

    def test_nchw_forward_calls_give_the_bits_of_forward_p(self):
        """The training forward in NCHW (BNG_FWD_NCHW): _s's statistics, y and keep bits
        those of _p (planes whole and in pieces: 100003 values are more than a tile
        buffer; channels kept in private memory and streamed twice; more cores than
        channels; a plane narrower than a word); every value through the statistics'
        ukernel and y's once (the kernel hook: rows are planes); x read at most twice and
        y written once (with the ReLU, its bits once)."""
        calls = ["f32:2x16x49:0xff:fwd", "f16:3x20x100:0x3:fwd:relu", "f32:2x3x100003:0x7:fwd",
                 "f16:2x3x100003:0x1:fwd:relu", "f32:16x64x3136:0xff:fwd:relu",
                 "f32:5x1x7:0xff:fwd:relu"]
        record = trace(*calls, copy=True)
        ends = [line for line in record.splitlines() if line.startswith("end")]
        self.assertEqual(ends, ["end identical"] * len(calls))
        tp = target_plan()
        for spec, call in zip(calls, parse(record)):
            with self.subTest(spec=spec):
                self.assertTrue(call.forward and call.spatial)
                y_op = "fwd_nchw_norm_relu" if call.relu else "fwd_nchw_norm"
                values = {op: sum(e.rows * e.channels for r in call.regions
                                  for events in r.values() for e in events
                                  if getattr(e, "op", None) == op)
                          for op in ("fwd_nchw_stats", y_op)}
                self.assertEqual(values, dict.fromkeys(values, call.elements))
                d = tp.dtype(call.dtype)
                least = minimum_ddr_bytes(call, d.element_bytes, d.stats_bytes)
                ddr = call.bytes_by_level()["ddr"]
                self.assertGreaterEqual(ddr, least)
                self.assertLessEqual(ddr, least + call.elements * d.element_bytes)

    def test_the_header_says_what_was_called(self):
        """A plain call's header is the vendor's; the ext ones name the flag's input."""
        heads = [line for line in trace("f32:4x64:0x1", "f32:4x64:0x1:relu", "f16:2x3x49:0x1:infer",
                                        "f32:4x64:0x1:relu:bits", "f32:4x64:0x1:relu:bits:acc")
                 .splitlines() if line.startswith("call")]
        self.assertEqual(heads, ["call f32 4x64 mask 0x1 train 1",
                                 "call f32 4x64 mask 0x1 train 1 relu",
                                 "call f16 2x3x49 mask 0x1 train 0",
                                 "call f32 4x64 mask 0x1 train 1 relu bits",
                                 "call f32 4x64 mask 0x1 train 1 relu bits acc"])
        (plain, relu, nchw) = parse(trace("f32:4x64:0x1", "f32:4x64:0x1:relu", "f16:2x3x49:0x1"))
        self.assertEqual((plain.relu, plain.spatial, relu.relu, nchw.spatial), (False, 0, True, 49))

    def test_calls_it_cannot_make_are_refused(self):
        """A mode twice, a shape or mode that is not one."""
        for spec in ("f32:4x64:0x1:relu:relu", "f32:4x64:0x1:infer:infer", "f32:4x64:0x1:bits",
                     "f32:4x64:0x1:relu:bits:bits", "f32:2x3x49:0x1:bits",
                     "f32:4x64:0x1:fwd:relu:bits", "f32:4x64:0x1:acc:acc", "f32:4x64:0x1:fwd:acc",
                     "f32:4x64x:0x1", "f32:4x64:0x1:fast", "f32:4x64:0x1:fwd:fwd",
                     "f32:4x64:0x1:infer:fwd", "f32:4x64x49:0x1:infer:fwd"):
            with self.subTest(spec=spec):
                done = subprocess.run([program("trace"), spec], capture_output=True, text=True)
                self.assertEqual(done.returncode, 2)
                self.assertIn("not a call", done.stderr)

    def test_every_core_of_the_mask_and_no_other(self):
        (call,) = parse(trace("f32:4096x64:0x25"))
        self.assertEqual([sorted(r) for r in call.regions], [[0, 2, 5]])

    def test_kernel_calls_cover_every_row(self):
        """Each pass's kernel calls cover the batch once per chunk."""
        (call,) = parse(trace("f32:5000x300:0xff"))
        rows = {}
        for events in call.regions[0].values():
            for e in events:
                if hasattr(e, "op"):
                    rows[e.op] = rows.get(e.op, 0) + e.rows
        chunks = ceil_div(300, target_plan().dtype("f32").generic_chunk)
        self.assertEqual(rows, {"reduce": 5000 * chunks, "dx_train": 5000 * chunks})


class TraceBytesTest(unittest.TestCase):
    SHAPES = ((1, 1), (5, 13), (31, 64), (256, 100), (1000, 256), (3000, 256), (2049, 300),
              (100352, 64), (7, 2048))

    def test_bytes_per_level_equal_the_formula(self):
        """A sweep of shapes, core counts, both dtypes and both modes: the bytes the trace
        records per memory are the formula's, exactly (resident and streamed slices,
        specialized and generic kernels, cores without rows)."""
        cases = [(dtype, b, c, n, train) for dtype in ("f32", "f16") for b, c in self.SHAPES
                 for n in (1, 3, 8) for train in (True, False)]
        calls = parse(trace(*[f"{d}:{b}x{c}:{(1 << n) - 1:#x}" + ("" if t else ":infer")
                              for d, b, c, n, t in cases]))
        self.assertEqual(len(calls), len(cases))
        for (dtype, b, c, n, train), call in zip(cases, calls):
            with self.subTest(dtype=dtype, shape=f"{b}x{c}", cores=n, train=train):
                self.assertEqual(call.bytes_by_level(), expected_bytes(dtype, b, c, n, train))
                self.assertEqual(call.kept(), expected_kept(dtype, b, c, n, train))

    def test_relu_bytes_equal_the_formula(self):
        """The fused ReLU over the same sweep: the vendor's bytes with y's tile and the
        mask's bits in private memory, and y with every tile of dy fetched from DDR
        whose mask was not kept as bits; the driver masks by y exactly the rows of the
        tiles that fetched it, keeps and uses the bits of the others (the kernel hook's
        relu_mask, relu_bits and relu_by_bits calls)."""
        cases = [(dtype, b, c, n, train) for dtype in ("f32", "f16") for b, c in self.SHAPES
                 for n in (1, 3, 8) for train in (True, False)]
        calls = parse(trace(*[f"{d}:{b}x{c}:{(1 << n) - 1:#x}" + ("" if t else ":infer") + ":relu"
                              for d, b, c, n, t in cases]))
        self.assertEqual(len(calls), len(cases))
        for (dtype, b, c, n, train), call in zip(cases, calls):
            with self.subTest(dtype=dtype, shape=f"{b}x{c}", cores=n, train=train):
                self.assertTrue(call.relu)
                self.assertEqual(call.bytes_by_level(), expected_bytes(dtype, b, c, n, train, True))
                self.assertEqual(call.kept(), expected_kept(dtype, b, c, n, train, True))
                by_y = by_bits = 0
                for width in chunk_widths(dtype, c):
                    again = relu_again(dtype, b, width, n, train)
                    by_y += b + again[0]
                    by_bits += again[1]
                self.assertEqual(kernel_rows(call, "relu_mask"), by_y)
                self.assertEqual(kernel_rows(call, "relu_bits"), by_bits)
                self.assertEqual(kernel_rows(call, "relu_by_bits"), by_bits)

    def test_relu_from_bits_bytes_equal_the_formula(self):
        """The fused ReLU from the forward's keep bits over the same sweep: no y's tile
        and no bits area but a tile's words, which come from DDR with every tile of dy
        fetched from there; the driver masks every tile so fetched by them (relu_by_bits
        over every row in pass 1, the refetched ones in pass 2) and by nothing else."""
        cases = [(dtype, b, c, n, train) for dtype in ("f32", "f16") for b, c in self.SHAPES
                 for n in (1, 3, 8) for train in (True, False)]
        calls = parse(trace(*[f"{d}:{b}x{c}:{(1 << n) - 1:#x}" + ("" if t else ":infer")
                              + ":relu:bits" for d, b, c, n, t in cases]))
        self.assertEqual(len(calls), len(cases))
        tp = target_plan()
        for (dtype, b, c, n, train), call in zip(cases, calls):
            with self.subTest(dtype=dtype, shape=f"{b}x{c}", cores=n, train=train):
                self.assertTrue(call.relu and call.bits)
                self.assertEqual(call.bytes_by_level(),
                                 expected_bytes(dtype, b, c, n, train, True, True))
                rows, am, gsm = expected_kept(dtype, b, c, n, train, True, True)
                self.assertEqual(call.kept(), (rows, am, gsm))
                self.assertEqual(kernel_rows(call, "relu_mask"), 0)
                self.assertEqual(kernel_rows(call, "relu_bits"), 0)
                self.assertEqual(kernel_rows(call, "relu_by_bits"), 2 * rows - am - gsm)
                d = tp.dtype(dtype)
                # the least: x, dy, dx once, the words once, the per-channel arrays once
                self.assertEqual(minimum_ddr_bytes(call, d.element_bytes, d.stats_bytes),
                                 (3 * b * c + ceil_div(b, 8 * d.element_bytes) * c)
                                 * d.element_bytes + 5 * c * d.stats_bytes)

    def test_the_relu_sweep_reaches_bits_and_y_again(self):
        """The sweep has slices whose resident rows y's tile and the bits reduce, tiles
        masked by their bits in pass 2 and tiles that fetch y again (else the relu
        parts of the formula would prove nothing)."""
        tp = target_plan()
        d = tp.dtype("f32")
        private = tp.target.memory.private_bytes
        self.assertLess(d.resident_rows(private, 64, 100352 // 8, True),
                        d.resident_rows(private, 64, 100352 // 8))
        by_y, by_bits = relu_again("f32", 100352, 64, 1, True)
        self.assertGreater(by_y, 0)
        self.assertGreater(by_bits, 0)

    def test_nchw_bytes_equal_the_formula(self):
        """NCHW: planes whole in a tile and in pieces (100003 f32 elements: more than a
        tile buffer), channels kept whole in private memory between the passes and in
        part (their last tiles), more cores than channels, both dtypes and modes; each
        plane goes through the ukernels once a pass (the kernel hook: rows are
        planes)."""
        shapes = ((1, 1, 1), (2, 3, 49), (5, 13, 200), (16, 64, 3136), (2, 3, 100003),
                  (32, 100, 49))
        cases = [(dtype, b, c, s, n, train) for dtype in ("f32", "f16") for b, c, s in shapes
                 for n in (1, 3, 8) for train in (True, False)]
        calls = parse(trace(*[f"{d}:{b}x{c}x{s}:{(1 << n) - 1:#x}" + ("" if t else ":infer")
                              for d, b, c, s, n, t in cases]))
        self.assertEqual(len(calls), len(cases))
        tp = target_plan()
        kinds = {"whole" if start == 0 else "part" for d, b, _, s, _, _ in cases
                 for start in [tp.nchw_layout(tp.dtype(d), b, s, True).resident_from]
                 if start < b * s}
        self.assertEqual(kinds, {"whole", "part"})     # channels kept whole and in part
        for (dtype, b, c, s, n, train), call in zip(cases, calls):
            with self.subTest(dtype=dtype, shape=f"{b}x{c}x{s}", cores=n, train=train):
                self.assertEqual(call.spatial, s)
                self.assertEqual(call.bytes_by_level(), expected_nchw_bytes(dtype, b, c, s, train))
                pieces = ceil_div(s, self.plane_piece(dtype, s))
                self.assertEqual(kernel_rows(call, "reduce"), b * c * pieces)
                self.assertEqual(kernel_rows(call, "dx_train" if train else "dx_infer"),
                                 b * c * pieces)

    def nchw_relu_calls(self, modes: str):
        """The NCHW ReLU sweep (channels kept whole and in part, planes in pieces, both
        dtypes and modes, one core and eight) traced with `modes`: its cases and calls."""
        shapes = ((2, 3, 49), (16, 64, 3136), (2, 3, 100003), (32, 100, 49))
        cases = [(dtype, b, c, s, n, train) for dtype in ("f32", "f16") for b, c, s in shapes
                 for n in (1, 8) for train in (True, False)]
        calls = parse(trace(*[f"{d}:{b}x{c}x{s}:{(1 << n) - 1:#x}" + ("" if t else ":infer")
                              + modes for d, b, c, s, n, t in cases]))
        self.assertEqual(len(calls), len(cases))
        return cases, calls

    def test_nchw_with_relu_bytes_equal_the_formula(self):
        """NCHW with the fused ReLU: y with every tile fetched, kept channels keep the
        masked dy (channels kept whole and in part, planes in pieces, both dtypes and
        modes); each tile masked once a pass that fetches it."""
        cases, calls = self.nchw_relu_calls(":relu")
        tp = target_plan()
        for (dtype, b, c, s, n, train), call in zip(cases, calls):
            with self.subTest(dtype=dtype, shape=f"{b}x{c}x{s}", cores=n, train=train):
                self.assertTrue(call.relu)
                self.assertEqual(call.bytes_by_level(),
                                 expected_nchw_bytes(dtype, b, c, s, train, relu=True))
                again = tp.nchw_layout(tp.dtype(dtype), b, s, True, True).resident_from
                self.assertEqual(masked_elements(call),
                                 c * (b * s + again))

    def test_nchw_with_relu_from_bits_bytes_equal_the_formula(self):
        """NCHW from the forward's keep bits: y's place and layout, but a tile's planes'
        words fetched with it instead of y; each tile masked by them once a pass that
        fetches it (relu_by_bits), none by y."""
        cases, calls = self.nchw_relu_calls(":relu:bits")
        tp = target_plan()
        for (dtype, b, c, s, n, train), call in zip(cases, calls):
            with self.subTest(dtype=dtype, shape=f"{b}x{c}x{s}", cores=n, train=train):
                self.assertTrue(call.relu and call.bits)
                self.assertEqual(call.bytes_by_level(),
                                 expected_nchw_bytes(dtype, b, c, s, train, True, True))
                again = tp.nchw_layout(tp.dtype(dtype), b, s, True, True).resident_from
                self.assertEqual(masked_elements(call), 0)
                self.assertEqual(sum(e.rows * e.channels for r in call.regions
                                     for events in r.values() for e in events
                                     if getattr(e, "op", None) == "relu_by_bits"),
                                 c * (b * s + again))

    @staticmethod
    def plane_piece(dtype: str, spatial: int) -> int:
        """The elements of a plane a tile holds: the whole plane, else whole blocks of
        vectors (the driver's bng_nchw_layout: in a call that reads a channel
        twice, a tile buffer of STREAM_TILE_BYTES, 16 KiB)."""
        tp = target_plan()
        d = tp.dtype(dtype)
        fit = STREAM_TILE_BYTES // d.element_bytes
        block = tp.nchw_block_vectors * d.config.lanes
        return spatial if spatial <= fit else fit // block * block

    def test_the_sweep_reaches_every_kind_of_slice(self):
        """The sweep above has cores without rows, slices that stay whole in private
        memory, and slices of which the last rows stay there and rows before those in
        GSM (else it proves less). On mt7004 a slice larger than private memory always
        keeps some rows in GSM; slices with none there, or none in private memory, take
        a smaller memory (the tiny test target's, in the C suite)."""
        tp = target_plan()
        private = tp.target.memory.private_bytes
        kinds = set()
        for dtype in ("f32", "f16"):
            d = tp.dtype(dtype)
            for b, c in self.SHAPES:
                width = min(c if c in tp.target.channels else d.generic_chunk, c)
                for n in (1, 3, 8):
                    for begin, end in slices(b, n)[1]:
                        rows = end - begin
                        stay = d.resident_rows(private, width, rows)
                        kept = tp.gsm_rows(d, width, n, rows, True)
                        kinds.add("none" if not rows else "whole" if stay == rows
                                  else ("part" if stay else "streamed")
                                  + ("+gsm" if kept else ""))
        self.assertEqual(kinds, {"none", "whole", "part+gsm"})

    def test_gsm_rows_fill_the_share_or_balance_the_memories(self):
        """A core keeps in GSM its streamed rows, whole blocks from the resident ones
        back, as many as its share of memory.gsm holds and no more than make pass 2's
        GSM traffic outlast its DDR traffic at the part's bandwidths."""
        tp = target_plan()
        d, memory, part = tp.dtype("f32"), tp.target.memory, tp.target.part
        share = memory.gsm_bytes // 8 // 64 * 64 // 2 // 64 * 64
        rows = 12544                        # 100352 x 64 on 8 cores: the share binds
        self.assertEqual(tp.gsm_rows(d, 64, 8, rows, True), share // 256 // 32 * 32)
        slow = dataclasses.replace(part, gsm_mb_per_s=part.ddr_mb_per_s // 40)
        plan = plan_target(dataclasses.replace(tp.target, part=slow))
        for train, again in ((True, 2), (False, 1)):
            with self.subTest(train=train):
                kept = plan.gsm_rows(plan.dtype("f32"), 64, 8, rows, train)
                stay = d.resident_rows(memory.private_bytes, 64, rows)
                ddr = rows + again * (rows - stay - kept)       # pass 2, in rows
                self.assertGreater(kept, 0)
                self.assertLess(kept, share // 256)             # the balance binds
                self.assertLessEqual(again * kept / slow.gsm_mb_per_s, ddr / slow.ddr_mb_per_s)
                more = kept + 32
                self.assertGreater(again * more / slow.gsm_mb_per_s,
                                   (rows + again * (rows - stay - more)) / slow.ddr_mb_per_s)

    def test_resident_rows_fill_the_resident_area(self):
        """What stays is as much as private memory holds beside the workspace and the
        four streamed tiles: one block more would not fit."""
        tp = target_plan()
        private = tp.target.memory.private_bytes
        for dtype, c in (("f32", 64), ("f32", 256), ("f16", 64), ("f16", 256)):
            d = tp.dtype(dtype)
            big = 10 ** 7       # a whole number of blocks
            stay = d.resident_rows(private, c, big)
            pitch = d.row_pitch(c)
            tiles = 4 * aligned(d.tile_rows(private, c, keeps=True) * pitch)
            with self.subTest(dtype=dtype, channels=c):
                self.assertLessEqual(d.workspace_bytes + tiles + 2 * aligned(stay * pitch),
                                     private)
                more = aligned((stay + BLOCK_ROWS) * pitch)
                self.assertGreater(d.workspace_bytes + tiles + 2 * more, private)


if __name__ == "__main__":
    unittest.main()
