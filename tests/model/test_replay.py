"""The cost model against hand-computed cases: the replay's arithmetic (bandwidth shared
by the cores, latency, the in-flight limit, barriers) and the kernels' operation
counts, then whole traced calls in the three regimes, with the fused ReLU and NCHW."""

import math
import os
import unittest
from dataclasses import replace

from programs import ROOT, TARGET, TARGETS_YAML, target_plan
from test_trace import trace

from generator.costmodel.opcount import (KernelCosts, Slots, kernel_timer, relu_step_cycles,
                                         relu_step_seconds)
from generator.costmodel.replay import Machine, predict, replay_region
from generator.costmodel.shapes import default_shapes, parse_shapes
from generator.costmodel.trace import Barrier, KernelCall, Transfer, Wait, parse
from generator.errors import ConfigError
from generator.loader import load
from generator.plan import plan_target

MB = 1_000_000
# Round numbers: 1 GB/s of DDR, 2 GB/s of GSM, 1 us of latency, 1 GHz.
MACHINE = Machine(clock_hz=1e9, bandwidth={"ddr": 1e9, "gsm": 2e9}, latency_s=1e-6, in_flight=4,
                  alu_per_cycle=3, ldst_per_cycle=2)


def no_kernels(call):
    raise AssertionError("no kernel call expected")


def get(handle, rows, row_bytes, source="ddr", dest="am"):
    return Transfer(False, handle, source, dest, rows, row_bytes)


class ReplayTest(unittest.TestCase):
    def replay(self, region, machine=MACHINE, kernels=no_kernels):
        return replay_region(region, machine, kernels)

    def test_one_large_copy_is_ddr_bound(self):
        """1 MB from DDR: the latency, then 1 MB at 1 GB/s."""
        t = self.replay({0: (get(1, 1000, 1000), Wait(1))})
        self.assertAlmostEqual(t.seconds, 1e-6 + 1e-3, delta=1e-12)
        self.assertAlmostEqual(t.spent["ddr"], 1e-3, delta=1e-12)
        self.assertAlmostEqual(t.spent["latency"], 1e-6, delta=1e-12)

    def test_cores_share_ddr(self):
        """Two cores, 1 MB each: the two stream at 0.5 GB/s each."""
        t = self.replay({c: (get(1, 1000, 1000), Wait(1)) for c in (0, 1)})
        self.assertAlmostEqual(t.seconds, 1e-6 + 2e-3, delta=1e-12)

    def test_ddr_and_gsm_are_separate(self):
        """1 MB from DDR on one core, 1 MB from GSM (2 GB/s) on another: neither slows
        the other; a transfer between the two moves at the lesser bandwidth."""
        t = self.replay({0: (get(1, 1000, 1000), Wait(1)), 1: (get(1, 1000, 1000, "gsm"), Wait(1))})
        self.assertAlmostEqual(t.seconds, 1e-6 + 1e-3, delta=1e-12)
        t = self.replay({0: (get(1, 1000, 1000, "gsm"), Wait(1))})
        self.assertAlmostEqual(t.seconds, 1e-6 + 0.5e-3, delta=1e-12)
        t = self.replay({0: (get(1, 1000, 1000, "ddr", "gsm"), Wait(1))})
        self.assertAlmostEqual(t.seconds, 1e-6 + 1e-3, delta=1e-12)

    def test_one_row_is_latency_bound(self):
        """One 256-byte row: 1 us of latency, 0.256 us of streaming."""
        t = self.replay({0: (get(1, 1, 256), Wait(1))})
        self.assertAlmostEqual(t.seconds, 1.256e-6, delta=1e-15)
        self.assertGreater(t.spent["latency"], t.spent["ddr"])

    def test_in_flight_limit_serializes(self):
        """Three 1 MB gets issued at once: with 4 in flight they share DDR (one latency,
        3 ms); with 1 in flight each waits for the one before (three latencies)."""
        region = {0: (get(1, 1000, 1000), get(2, 1000, 1000), get(3, 1000, 1000),
                      Wait(1), Wait(2), Wait(3))}
        self.assertAlmostEqual(self.replay(region).seconds, 1e-6 + 3e-3, delta=1e-12)
        one = Machine(**{**MACHINE.__dict__, "in_flight": 1})
        self.assertAlmostEqual(self.replay(region, one).seconds, 3 * (1e-6 + 1e-3), delta=1e-12)

    def test_barrier_waits_for_the_slowest_core_and_its_puts(self):
        """Core 0 computes 5 us then meets core 1 at a barrier; core 1 first puts 1000
        bytes without waiting: the barrier completes them (1 us + 1 us)."""
        kernel = KernelCall("k", "reduce", 1, 1)
        region = {0: (kernel, Barrier()),
                  1: (Transfer(True, 1, "am", "ddr", 1, 1000), Barrier())}
        t = self.replay(region, kernels=lambda call: 5e-6)
        self.assertAlmostEqual(t.seconds, 5e-6, delta=1e-15)
        self.assertAlmostEqual(t.spent["compute"], 5e-6, delta=1e-15)
        self.assertAlmostEqual(t.spent["barrier"], 5e-6 - 2e-6, delta=1e-15)

    def test_transfers_overlap_kernels(self):
        """A get in flight while the core computes costs only what the kernel leaves."""
        region = {0: (get(1, 1, 1000), KernelCall("k", "reduce", 1, 1), Wait(1))}
        t = self.replay(region, kernels=lambda c: 1.5e-6)
        self.assertAlmostEqual(t.seconds, 2e-6, delta=1e-15)


class OperationCountTest(unittest.TestCase):
    """Vector issue slots per row (and per 32-row block) of mt7004's kernels, counted by
    hand from templates/ukernel_ops.j2. Per vector and row: reduce loads x and dy and
    does sub, add, mul, add (4 + 2); dx_train loads x and dy, does sub, sub, mul, sub,
    mul and stores (5 + 3); dx_infer loads, multiplies, stores (1 + 2). Per block and
    vector, reduce zeroes two accumulators and adds them to the sums (4 + 4: two loads,
    two stores). The generic kernel reloads its per-channel operands with each vector
    (reduce: mean, once a block; dx_train: four; dx_infer: one)."""

    def costs(self, dtype):
        tp = target_plan()
        d = tp.dtype(dtype)
        return KernelCosts(tp, d), {k.channels: k for k in d.kernels}

    def test_specialized_f32_c64(self):
        costs, kernels = self.costs("f32")
        k = kernels[64]             # 4 vectors of 16 lanes
        self.assertEqual(costs.cost(k, "reduce", 64).row, Slots(16, 8))
        self.assertEqual(costs.cost(k, "reduce", 64).block, Slots(16, 16))
        self.assertEqual(costs.cost(k, "dx_train", 64).row, Slots(20, 12))
        self.assertEqual(costs.cost(k, "dx_infer", 64).row, Slots(4, 8))

    def test_generic_f32_over_100_channels(self):
        """6 vectors of 16 lanes and 4 single lanes: 10 columns."""
        costs, kernels = self.costs("f32")
        k = kernels[None]
        self.assertEqual(costs.cost(k, "reduce", 100).row, Slots(40, 20))
        self.assertEqual(costs.cost(k, "reduce", 100).block, Slots(40, 50))
        self.assertEqual(costs.cost(k, "dx_train", 100).row, Slots(50, 70))
        self.assertEqual(costs.cost(k, "dx_infer", 100).row, Slots(10, 30))

    def test_forward_f32_c64(self):
        """The training forward's ukernels, 4 vectors of 16 lanes: fwd_stats per row its
        two sweeps (load, subtract, add; load, subtract twice, multiply, add), per block
        the mean (a divide, a broadcast, a zero) and the merge; fwd_norm per row load,
        subtract twice, multiply, add, store."""
        costs, kernels = self.costs("f32")
        k = kernels[64]
        self.assertEqual(costs.cost(k, "fwd_stats", 64).row, Slots(24, 8))
        self.assertEqual(costs.cost(k, "fwd_norm", 64).row, Slots(16, 8))
        self.assertEqual(costs.cost(k, "fwd_stats", 64).block.ldst, 0)

    def test_half_vectors_take_two_slots_and_convert(self):
        """f16 at 32 lanes on a 16-float register: 2 slots an operation, and each half
        load or store also converts (an arithmetic slot). c64: 2 vectors of 32."""
        costs, kernels = self.costs("f16")
        k = kernels[64]
        self.assertEqual(costs.cost(k, "reduce", 64).row, Slots(2 * 2 * (4 + 2), 2 * 2 * 2))
        self.assertEqual(costs.cost(k, "dx_infer", 64).row, Slots(2 * 2 * (1 + 2), 2 * 2 * 2))

    def test_one_multiply_per_vector_operation_of_the_plan(self):
        """dx_infer multiplies once per vector operation the plan gives each kernel."""
        costs, kernels = self.costs("f32")
        for channels, k in kernels.items():
            if channels:
                self.assertEqual(costs.cost(k, "dx_infer", channels).row.alu, k.vector_ops_per_row)


class NchwOperationCountTest(unittest.TestCase):
    """Vector issue slots per plane of mt7004's NCHW ukernels, counted by hand from
    templates/nchw_ukernels.j2: a plane's vectors as the row kernels' (reduce 4 + 2,
    dx_train 5 + 3, dx_infer 1 + 2 each), reduce's blocks of 32 vectors as a row
    kernel's block (4 + 4), the last n % lanes elements in a step per set bit of the
    count (ukernel_ops.j2, tail_steps: a step of 16 lanes or fewer is one slot an
    operation: reduce 4 + 2 and a block's 4 + 4 a step)."""

    def costs(self, dtype):
        tp = target_plan()
        return KernelCosts(tp, tp.dtype(dtype))

    def test_f32_plane_of_49(self):
        """3 vectors of 16, one block, one element more."""
        costs = self.costs("f32")
        self.assertEqual(costs.nchw_cost("reduce", 49), Slots(3 * 4 + 4 + 8, 3 * 2 + 4 + 6))
        self.assertEqual(costs.nchw_cost("dx_train", 49), Slots(4 * 5, 4 * 3))
        self.assertEqual(costs.nchw_cost("dx_infer", 49), Slots(4 * 1, 4 * 2))

    def test_f32_plane_of_3136_has_seven_blocks(self):
        """196 vectors: 6 full blocks of 32 and one of 4."""
        costs = self.costs("f32")
        self.assertEqual(costs.nchw_cost("reduce", 3136), Slots(196 * 4 + 7 * 4, 196 * 2 + 7 * 4))

    def test_half_plane_of_49_takes_its_last_17_in_two_steps(self):
        """f16 at 32 lanes: one vector (2 slots an operation, a conversion per half load
        or store) and the last 17 in a step of 16 lanes and one of 1 (one slot an
        operation each, with the conversions), not 17 steps of one lane: reduce's step
        its row and block, dx_train's 8 + 3 (5 and its three conversions), dx_infer's
        3 + 2."""
        costs = self.costs("f16")
        vector = Slots(2 * (4 + 2), 2 * 2)
        block = Slots(2 * 4, 2 * 4)
        step = Slots(4 + 2, 2) + Slots(4, 4)
        self.assertEqual(costs.nchw_cost("reduce", 49), vector + block + step * 2)
        self.assertEqual(costs.nchw_cost("dx_train", 49), Slots(8, 3) * 2 + Slots(8, 3) * 2)
        self.assertEqual(costs.nchw_cost("dx_infer", 49), Slots(3, 2) * 2 + Slots(3, 2) * 2)


    def test_forward_f32_plane_of_49(self):
        """The training forward's plane ukernels, counted by hand in mt7004's generated
        bng_f32_fwd_nchw_*_ukernel__mt7004_generic_v16, 3 vectors of 16 and one value
        more: its statistics a vector's two sweeps (6 + 2: the loads of x, two subs and
        an add, a sub, a mul and an add); a block 26 + 0 (its eight accumulators zeroed,
        the two sums of four added, the mean's div, broadcast and zero, the merge's
        nine); the last value 22 + 6 (its shift broadcast, three zeros, the lane's load
        and store of mean and M2, its sweeps, mean and merge at one lane); y a vector's
        4 + 2; with the ReLU 4 + 4 (the value through the stack, the masked load, the
        store) and its keep bits packed in the register (mt7004's backend is gnu): an
        and, a shift and four halvings of a move and an or, 10 slots a vector of 16, 2
        for the last value's step."""
        costs = self.costs("f32")
        self.assertEqual(costs.nchw_cost("fwd_nchw_stats", 49),
                         Slots(3 * 6 + 26 + 22, 3 * 2 + 6))
        self.assertEqual(costs.nchw_cost("fwd_nchw_norm", 49), Slots(4 * 4, 4 * 2))
        self.assertEqual(costs.nchw_cost("fwd_nchw_norm_relu", 49),
                         Slots(4 * 4 + 3 * 10 + 2, 4 * 4))

    def test_forward_half_plane_of_49_takes_its_last_17_in_two_steps(self):
        """f16 at 32 lanes on mt7004's 16: a vector is two slots an operation, and a
        half load or store one conversion more. A plane of 49 is one vector and the
        last 17 in a step of 16 lanes and one of 1, one slot an operation each (not 17
        steps of one lane): statistics the vector's sweeps 2 * (8 + 2), its block 2 *
        (26 + 0), each step 24 + 6 (the last value's 22 + 6 and its two loads of x
        converted); y the vector's 2 * (6 + 2), each step 6 + 2; with the ReLU the
        vector's 2 * (8 + 4), each step 8 + 4, and the packing of each one's keep bits in
        the register, by groups of 16 (a half word's): the vector's and and shift, then
        its two groups' four halvings of two slots, 18; the step of 16, 2 + 8; the step
        of 1, 2."""
        costs = self.costs("f16")
        self.assertEqual(costs.nchw_cost("fwd_nchw_stats", 49),
                         Slots(2 * 8 + 2 * 26 + 2 * 24, 2 * 2 + 2 * 6))
        self.assertEqual(costs.nchw_cost("fwd_nchw_norm", 49), Slots(2 * 6 + 2 * 6, 2 * 2 + 2 * 2))
        self.assertEqual(costs.nchw_cost("fwd_nchw_norm_relu", 49),
                         Slots(2 * 8 + 2 * 8 + 18 + 10 + 2, 2 * 4 + 2 * 4))

    def test_forward_relu_packs_its_bits_at_the_scalar_estimate(self):
        """y's vectors and their packing at their slots, then each packed vector's bits
        into its word as plain C: a plane of 49 float values is 3 vectors of 16 and a
        step of 1, each one chunk of a word, FWD_NCHW_CHUNK_OPS operations a chunk at
        RELU_SCALAR_OPS_PER_CYCLE."""
        from generator.costmodel.opcount import (FWD_NCHW_CHUNK_OPS, RELU_SCALAR_OPS_PER_CYCLE,
                                                 kernel_timer)
        from generator.costmodel.trace import KernelCall
        tp = target_plan()
        entry = tp.nchw_kernels(tp.dtype("f32"))[-1].fwd_table_entry
        seconds = kernel_timer(tp, 1e9, 3, 2)
        slots = self.costs("f32").nchw_cost("fwd_nchw_norm_relu", 49)
        cycles = (2 * max(slots.alu / 3, slots.ldst / 2)
                  + 2 * 4 * FWD_NCHW_CHUNK_OPS / RELU_SCALAR_OPS_PER_CYCLE)
        self.assertAlmostEqual(seconds(KernelCall(entry, "fwd_nchw_norm_relu", 2, 49)), cycles / 1e9)
        slots = self.costs("f32").nchw_cost("fwd_nchw_norm", 49)
        self.assertAlmostEqual(seconds(KernelCall(entry, "fwd_nchw_norm", 2, 49)),
                               2 * max(slots.alu / 3, slots.ldst / 2) / 1e9)


class SplitTargetCountTest(unittest.TestCase):
    """A split target's kernels and ReLU steps as the driver runs them there (the test
    target mt3000_split: 32 f32 lanes, halves 64 to a vector, a register of 32 floats),
    counted by hand from the split branches of templates/nchw_ukernels.j2 and
    fwd_nchw_ukernels.j2 and from include/bng_relu.c's and bng_nchw_relu.c's split
    steps: a plane's last elements one whole vector merged in the plane's lanes alone,
    not halving steps."""

    def plan(self):
        return plan_target(load(os.path.join(ROOT, "tests/c/targets-test.yaml"))
                           .target("mt3000_split"))

    def test_a_plane_of_49_is_two_whole_vectors(self):
        """f32: the vector of 32 and the last 17 in a second whole vector: reduce two
        rows (4 + 2), the loop's block (4 + 4) and the tail's, folded into the plane's
        lanes alone (6 + 6: its two zeros, and each sum loaded twice, added, selected
        and stored); dx_train two of 5 + 3, dx_infer two of 1 + 2."""
        tp = self.plan()
        self.assertTrue(tp.target.memory.split)
        costs = KernelCosts(tp, tp.dtype("f32"))
        self.assertEqual(costs.nchw_cost("reduce", 49), Slots(2 * 4 + 4 + 6, 2 * 2 + 4 + 6))
        self.assertEqual(costs.nchw_cost("dx_train", 49), Slots(2 * 5, 2 * 3))
        self.assertEqual(costs.nchw_cost("dx_infer", 49), Slots(2 * 1, 2 * 2))
        self.assertEqual(costs.nchw_cost("dx_infer", 64), Slots(2 * 1, 2 * 2))

    def test_the_forward_relu_turns_its_words_once_a_word_of_vectors(self):
        """y with the ReLU over y alone: per vector the masked load and store's two
        load/store slots more, the plane's last vector zeroed past its values (a zero
        and a select), and per turn (a word's bits of vectors, and the piece's end) a
        load and two stores and, on a register of the lanes' words, a step of 12 slots
        per halving of a word's bits, a permute more where the lanes outnumber them:
        f32, 32 lanes of 32-bit words, five steps (60); f16, 64 lanes of 16-bit words,
        four and the permute (49). Nothing is packed as plain C."""
        tp = self.plan()
        f32, f16 = KernelCosts(tp, tp.dtype("f32")), KernelCosts(tp, tp.dtype("f16"))
        self.assertEqual(f32.nchw_cost("fwd_nchw_norm_relu", 49) - f32.nchw_cost("fwd_nchw_norm", 49),
                         Slots(2 + 60, 2 * 2 + 3))
        # (one vector of 64 halves: two slots an operation, and the store's and masked
        # load's conversions)
        self.assertEqual(f16.nchw_cost("fwd_nchw_norm_relu", 49) - f16.nchw_cost("fwd_nchw_norm", 49),
                         Slots(2 * 2 + 2 * 2 + 49, 2 * 2 + 3))
        # 33 vectors of 32 floats: two turns
        self.assertEqual(f32.nchw_cost("fwd_nchw_norm_relu", 33 * 32)
                         - f32.nchw_cost("fwd_nchw_norm", 33 * 32), Slots(2 * 60, 33 * 2 + 2 * 3))
        self.assertEqual(f32.fwd_nchw_pack_ops(49), 0)
        self.assertEqual(f16.fwd_nchw_pack_ops(49), 0)

    def test_the_relu_steps_take_whole_vectors_of_the_register(self):
        """The steps' masked loads, 32 lanes of either type a vector: two rows of 49
        halves by the bits take two vectors each (4 + 3 slots a vector), none of it
        as plain C; two NCHW planes of 49 turn their 4 words first, a register of 32
        16-bit words a plane (four steps and a permute, 49, and a load and a store)."""
        tp = self.plan()
        half = tp.dtype("f16")
        seconds = relu_step_seconds(tp, half, "relu_by_bits", 2, 49, 1e9, 3, 2)
        self.assertAlmostEqual(seconds, max(2 * 2 * 4 / 3, 2 * 2 * 3 / 2) / 1e9, delta=1e-15)
        planes = relu_step_seconds(tp, half, "relu_by_bits", 2, 49, 1e9, 3, 2, planes=True)
        self.assertAlmostEqual(planes, max(2 * (2 * 4 + 49) / 3, 2 * (2 * 3 + 2) / 2) / 1e9,
                               delta=1e-15)


class MinimumBytesTest(unittest.TestCase):
    def test_forward_keep_bits_follow_the_layout(self):
        """The forward's least DDR bytes: x read and y written once, eight per-channel
        arrays, and with the ReLU its keep words: NHWC a word per channel per 32 rows
        (f32: 40 rows take two), NCHW per plane per 32 values, a plane's last its own
        (49 values take two)."""
        from generator.costmodel.replay import minimum_ddr_bytes
        from generator.costmodel.trace import Call
        nhwc = Call("f32", 40, 3, 0x1, True, (), relu=True, forward=True)
        nchw = Call("f32", 2, 3, 0x1, True, (), spatial=49, relu=True, forward=True)
        self.assertEqual(minimum_ddr_bytes(nhwc, 4, 4), (2 * 120 + 2 * 3) * 4 + 8 * 3 * 4)
        self.assertEqual(minimum_ddr_bytes(nchw, 4, 4), (2 * 294 + 2 * 3 * 2) * 4 + 8 * 3 * 4)
        plain = Call("f32", 2, 3, 0x1, True, (), spatial=49, forward=True)
        self.assertEqual(minimum_ddr_bytes(plain, 4, 4), 2 * 294 * 4 + 8 * 3 * 4)


class ShapesTest(unittest.TestCase):
    def test_spellings(self):
        plain, relu, nchw, both = parse_shapes("4096x64 4096x64:relu 16x64x3136 16x64x3136:relu")
        self.assertEqual((plain.extension, relu.extension, nchw.extension, both.extension),
                         ("", "relu", "nchw", "nchw relu"))
        self.assertEqual((relu.size, nchw.size, nchw.batch, nchw.spatial, both.extensions),
                         ("4096x64", "16x64x3136", 16, 3136, ("nchw", "relu")))
        for word in ("16x64x3136:relux", "4096x64:relux", "0x64", "16x64x3136:bits",
                     "4096x64:bits", "4096x64:fwd:relu:bits"):
            with self.subTest(word=word), self.assertRaises(ConfigError):
                parse_shapes(word)
        (bits,) = parse_shapes("4096x64:relu:bits")
        self.assertEqual((bits.extension, bits.extensions, bits.relu, bits.bits, bits.size),
                         ("relu bits", ("relu",), True, True, "4096x64"))
        acc, both = parse_shapes("4096x64:acc 16x64x3136:relu:bits:acc")
        self.assertEqual((acc.extension, acc.extensions, acc.accumulate_dx),
                         ("acc", ("ext",), True))
        self.assertEqual((both.extension, both.extensions), ("nchw relu bits acc",
                                                             ("nchw", "relu", "ext")))
        for word in ("4096x64:acc:relu", "4096x64:acc:acc", "4096x64:fwd:acc"):
            with self.subTest(word=word), self.assertRaises(ConfigError):
                parse_shapes(word)

    def test_default_extension_shapes(self):
        """ResNet-50 at batch 32, in NHWC and in NCHW each: the 33 layers a ReLU follows
        with the fused ReLU backward (in NHWC from the forward's keep bits too), all 53
        (NCHW's backward), all 53's training forward (the 33's with the ReLU fused); none
        without the extensions."""
        shapes = default_shapes(("relu", "nchw", "forward"))
        for nchw in (False, True):      # NHWC's plain backward: the vendor's call's rows
            mine = [s for s in shapes if bool(s.spatial) == nchw
                    and s.label.startswith("resnet50 n=32 ")]
            with self.subTest(nchw=nchw):
                self.assertEqual(sum(s.layers for s in mine if s.relu and not s.forward
                                     and not s.bits), 33)
                self.assertEqual(sum(s.layers for s in mine if not s.relu and not s.forward), 53)
                self.assertEqual(sum(s.layers for s in mine if s.forward), 53)
                self.assertEqual(sum(s.layers for s in mine if s.forward and s.relu), 33)
                # the backward from the forward's keep bits: the 33's, in either layout
                self.assertEqual(sum(s.layers for s in mine if s.bits), 33)
                self.assertTrue(all(s.label.endswith(" " + s.extension) for s in mine
                                    if s.extension))
        self.assertEqual([s for s in default_shapes(("relu", "nchw")) if s.bits], [])
        # with ext, all 53 adding into dx, in NHWC
        acc = [s for s in default_shapes(("ext",)) if s.accumulate_dx]
        self.assertEqual(sum(s.layers for s in acc), 53)
        self.assertTrue(all(s.label.endswith(" acc") and not s.spatial for s in acc))
        self.assertEqual([s for s in default_shapes(("relu", "nchw", "forward"))
                          if s.accumulate_dx], [])
        self.assertEqual(parse_shapes("100x64:fwd")[0].extension, "forward")
        self.assertEqual(parse_shapes("100x64:fwd:relu")[0].extension, "forward relu")
        self.assertEqual(parse_shapes("100x64:fwd:relu")[0].extensions, ("forward",))
        nchw = parse_shapes("32x64x3136:fwd:relu")[0]
        self.assertEqual((nchw.extension, nchw.extensions, nchw.size, nchw.spatial),
                         ("forward nchw relu", ("forward", "nchw"), "32x64x3136", 3136))
        self.assertEqual([s for s in default_shapes(("forward",)) if s.spatial], [])
        self.assertEqual([s for s in default_shapes() if s.extension], [])


class TrainingStepTest(unittest.TestCase):
    """A layer's training step: its forward and, where a ReLU follows, the fused ReLU
    backward, elsewhere the vendor's; summed over the layers, none when one is missing."""

    @staticmethod
    def row(label, layers, seconds, floor, forward=False, relu=False, spatial=0, bits=False):
        """A prediction of a layer's call: shape a is 100x64, b 200x64 (NCHW: x49)."""
        from generator.costmodel.replay import Prediction
        from generator.costmodel.shapes import Shape
        from generator.costmodel.trace import Call
        batch = 100 if label.split()[2] == "a" else 200
        call = Call("f32", batch, 64, 0xff, True, (), spatial=spatial)
        shape = Shape(batch, 64, label, layers, spatial=spatial, forward=forward, relu=relu,
                      bits=bits)
        return shape, Prediction(call, seconds, {}, {}, 0, floor, 0.0)

    def test_the_step_from_the_keep_bits_beside(self):
        """With the backward from the forward's keep bits in the rows, a second step
        takes it where a ReLU follows (the first keeps the backward from y)."""
        from generator.costmodel.report import training_steps
        rows = [self.row("resnet50 n=32 a forward relu", 3, 1e-3, 5e-4, forward=True, relu=True),
                self.row("resnet50 n=32 a relu", 3, 2e-3, 1e-3, relu=True),
                self.row("resnet50 n=32 a relu bits", 3, 1.5e-3, 9e-4, relu=True, bits=True),
                self.row("resnet50 n=32 b forward", 2, 4e-3, 1e-3, forward=True),
                self.row("resnet50 n=32 b", 2, 5e-3, 2e-3)]
        y_line, bits_line = training_steps("f32", rows)
        self.assertIn("(forward, ReLU, backward), 8 cores: 5 layers 27.00 ms "
                      "(DDR floor 10.50 ms, 39%)", y_line)
        # a: 3 x (1 + 1.5) ms; b: 2 x (4 + 5) ms
        self.assertIn("(forward, ReLU, backward from the keep bits), 8 cores: 5 layers "
                      "25.50 ms (DDR floor 10.20 ms, 40%)", bits_line)

    def test_nchw_takes_its_own_backward(self):
        """A layout's forward pairs with that layout's backward: NCHW's with NCHW's
        fused ReLU call or its plain one, never NHWC's."""
        from generator.costmodel.report import training_steps
        rows = [self.row("resnet50 n=32 a nchw forward relu", 3, 1e-3, 5e-4, forward=True,
                         relu=True, spatial=49),
                self.row("resnet50 n=32 a relu", 3, 9e-3, 1e-3, relu=True),
                self.row("resnet50 n=32 b nchw forward", 2, 4e-3, 1e-3, forward=True, spatial=49),
                self.row("resnet50 n=32 b nchw", 2, 5e-3, 2e-3, spatial=49)]
        self.assertEqual(training_steps("f32", rows), [])      # a's NCHW backward is missing
        rows.append(self.row("resnet50 n=32 a nchw relu", 3, 2e-3, 1e-3, relu=True, spatial=49))
        (line,) = training_steps("f32", rows)
        self.assertIn("training step in NCHW (forward, ReLU, backward), 8 cores: 5 layers "
                      "27.00 ms (DDR floor 10.50 ms, 39%)", line)

    def test_each_layer_takes_its_backward(self):
        from generator.costmodel.report import training_steps
        rows = [self.row("resnet50 n=32 a forward relu", 3, 1e-3, 5e-4, forward=True, relu=True),
                self.row("resnet50 n=32 a relu", 3, 2e-3, 1e-3, relu=True),
                self.row("resnet50 n=32 a", 3, 7e-3, 1e-3),
                self.row("resnet50 n=32 b forward", 2, 4e-3, 1e-3, forward=True)]
        self.assertEqual(training_steps("f32", rows), [])      # b's backward is missing
        rows.append(self.row("resnet50 n=32 b", 2, 5e-3, 2e-3))
        # a: 3 x (1 + 2) ms, its fused ReLU backward's; b: 2 x (4 + 5) ms
        (line,) = training_steps("f32", rows)
        self.assertIn("8 cores: 5 layers 27.00 ms (DDR floor 10.50 ms, 39%)", line)
        # a layer whose forward row is missing: no total either
        without = [r for r in rows if r[0].label != "resnet50 n=32 b forward"]
        self.assertEqual(training_steps("f32", without), [])


class TracedCallTest(unittest.TestCase):
    """Whole calls of the shipped driver, replayed."""

    def predict(self, spec, machine):
        tp = target_plan()
        (call,) = parse(trace(spec))
        d = tp.dtype(call.dtype)
        seconds = kernel_timer(tp, machine.clock_hz, machine.alu_per_cycle, machine.ldst_per_cycle)
        return predict(call, machine, seconds, d.element_bytes, d.stats_bytes)

    def test_large_call_is_ddr_bound_and_above_its_floor(self):
        p = self.predict("f32:100352x64:0xff", MACHINE)
        self.assertEqual(p.bound, "ddr")
        self.assertGreaterEqual(p.seconds, p.bytes["ddr"] / 1e9)
        self.assertEqual(p.min_ddr_bytes, 3 * 100352 * 64 * 4 + 5 * 64 * 4)
        self.assertAlmostEqual(p.floor_seconds, p.min_ddr_bytes / 1e9)

    def test_one_row_call_is_latency_bound(self):
        """On the part's figures (targets.yaml), one row on 8 cores: each core's
        per-channel transfers are all latency. The longest chain is five transfer
        start-ups: the core with the row gets mean, invar and scale (together), then x
        and dy, puts its group's two sums (together); after the barrier the lowest core
        gets the fold's one transfer and puts dbias and dscale (together)."""
        part = Machine.from_part(target_plan().target.part)
        p = self.predict("f32:1x64:0xff", part)
        self.assertEqual(p.bound, "latency")
        self.assertGreater(p.seconds, 5 * part.latency_s)

    def test_with_unlimited_bandwidth_a_call_takes_its_kernels_time(self):
        """No latency, endless bandwidth, one core, 4096 rows of 64 channels (128 blocks):
        reduce 16 ALU slots a row and 16 a block at 3 a cycle, dx_train 20 a row at 3
        a cycle (the load/store units, 8 and 12 at 2, wait less): 49834.7 cycles at 1 GHz."""
        unlimited = Machine(1e9, {"ddr": math.inf, "gsm": math.inf}, 0.0, 4, 3, 2)
        p = self.predict("f32:4096x64:0x1", unlimited)
        cycles = (16 * 4096 + 16 * 128) / 3 + 20 * 4096 / 3
        self.assertAlmostEqual(p.seconds, cycles / 1e9, delta=1e-12)
        self.assertEqual(p.bound, "compute")

    UNLIMITED = Machine(1e9, {"ddr": math.inf, "gsm": math.inf}, 0.0, 4, 3, 2)

    def test_the_relu_mask_costs_its_vector_slots(self):
        """One core, 1024 rows of 64 (all resident: masked by y once, in pass 1, no
        bits): the fused call takes the plain call's kernels and the mask's vectors, on
        mt7004's gnu backend 16 lanes of floats each at 10 ALU and 3 load/store slots,
        the busier unit deciding; its minimum reads y too (4 arrays, not 3)."""
        tp = target_plan()
        d = tp.dtype("f32")
        self.assertEqual(tp.target.vector_backend, "gnu")
        self.assertEqual(d.resident_rows(tp.target.memory.private_bytes, 64, 1024, True), 1024)
        plain = self.predict("f32:1024x64:0x1", self.UNLIMITED)
        fused = self.predict("f32:1024x64:0x1:relu", self.UNLIMITED)
        vectors = 1024 * 64 // 16
        mask = max(vectors * 10 / 3, vectors * 3 / 2) / 1e9
        self.assertAlmostEqual(fused.seconds, plain.seconds + mask, delta=1e-12)
        self.assertEqual(fused.min_ddr_bytes, 4 * 1024 * 64 * 4 + 5 * 64 * 4)

    def test_the_relu_steps_cost_their_vectors(self):
        """One core, 100352 rows of 100 halves: every ReLU step the driver took costs
        its vectors of 32 halves at their slots (mask 10+3, bits 12+1 and by bits 4+3
        per vector), the mask over the tile's rows as one run, the bits a row at a
        time with a row's last 4 halves at the plain-C estimate (10 and 7 operations at
        3 a cycle); without them the prediction is the rest."""
        (call,) = parse(trace("f16:100352x100:0x1:relu"))
        slots = {"relu_mask": (10, 3), "relu_bits": (12, 1), "relu_by_bits": (4, 3)}
        scalar = {"relu_mask": 12, "relu_bits": 10, "relu_by_bits": 7}
        cycles = 0.0
        seen = set()
        for events in call.regions[0].values():
            for e in events:
                if isinstance(e, KernelCall) and e.op in slots:
                    seen.add(e.op)
                    runs, run = (1, e.rows * e.channels) if e.op == "relu_mask" else (e.rows, e.channels)
                    vectors, tail = divmod(run, 32)
                    alu, ldst = slots[e.op]
                    cycles += max(runs * vectors * alu / 3, runs * vectors * ldst / 2)
                    cycles += runs * tail * scalar[e.op] / 3
        self.assertEqual(seen, set(slots))
        tp = target_plan()
        kernels = kernel_timer(tp, 1e9, 3, 2)
        p = predict(call, self.UNLIMITED, kernels, 4, 4)
        rest = predict(call, self.UNLIMITED,
                       lambda e: 0.0 if e.op in slots else kernels(e), 4, 4)
        self.assertAlmostEqual(p.seconds - rest.seconds, cycles / 1e9, delta=1e-9)

    def test_relu_steps_as_plain_c_cost_their_estimate(self):
        """On a backend other than gnu the steps are plain C: operations per element
        (12, 10, 7) at the estimate of 3 a cycle."""
        portable = plan_target(replace(load(TARGETS_YAML).target(TARGET), vector_backend="portable"))
        d = portable.dtype("f32")
        for op, ops in (("relu_mask", 12), ("relu_bits", 10), ("relu_by_bits", 7)):
            self.assertEqual(relu_step_cycles(op), ops / 3)
            self.assertAlmostEqual(relu_step_seconds(portable, d, op, 32, 64, 1e9, 3, 2),
                                   32 * 64 * ops / 3 / 1e9, delta=1e-15)

    def test_forward_relu_packing_as_plain_c_costs_its_estimate(self):
        """On a backend other than gnu the forward's NCHW keep bits are packed a value
        at a time as plain C (the portable lane loops): over y's row, the ReLU's two
        load/store slots a vector (the value through the stack) and one for its keep
        words (3 vectors of 16 and a step of 1 in a plane of 49), then
        FWD_NCHW_PACK_OPS operations a value."""
        from generator.costmodel.opcount import FWD_NCHW_PACK_OPS
        portable = plan_target(replace(load(TARGETS_YAML).target(TARGET), vector_backend="portable"))
        costs = KernelCosts(portable, portable.dtype("f32"))
        self.assertEqual(costs.nchw_cost("fwd_nchw_norm_relu", 49) - costs.nchw_cost("fwd_nchw_norm", 49),
                         Slots(0, 4 * 2 + 4))
        self.assertEqual(costs.fwd_nchw_pack_ops(49), 49 * FWD_NCHW_PACK_OPS)

    def test_nchw_takes_its_ukernels_time(self):
        """One core, 2 images of 3 channels of 3136 (a channel's planes in one tile):
        per channel a reduce of 2 planes (812 + 420 slots each) and a dx_train of 2
        (980 + 588), the busier unit deciding; the minimum is NHWC's."""
        p = self.predict("f32:2x3x3136:0x1", self.UNLIMITED)
        per_channel = max(2 * 812 / 3, 2 * 420 / 2) + max(2 * 980 / 3, 2 * 588 / 2)
        self.assertAlmostEqual(p.seconds, 3 * per_channel / 1e9, delta=1e-12)
        self.assertEqual(p.min_ddr_bytes, 3 * 2 * 3 * 3136 * 4 + 5 * 3 * 4)


class LegendTest(unittest.TestCase):
    def test_the_legend_names_every_measured_column(self):
        """make model prints what each column of its table is: a column added to the
        table without a word in the legend fails here."""
        import re
        from generator.costmodel.report import COLUMNS, LEGEND
        for column in COLUMNS[2:]:     # after the shape and its size
            self.assertRegex(LEGEND, rf"(^columns: |; |, ){re.escape(column)}[ ,]", column)


if __name__ == "__main__":
    unittest.main()
