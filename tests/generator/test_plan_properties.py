"""The kernel plan, proven over the whole space the loader accepts.

A specialized kernel is spelled out by plan.plan_loops(channels, lanes, max_unroll).
Whatever the loader accepts (lanes a power of two up to MAX_LANES, max_unroll 1 to
MAX_UNROLL, channels 1 to MAX_SPECIALIZED_CHANNELS), the plan must:
  - cover every channel in [0, channels) exactly once, in order, and nothing else;
  - use vectors of a power of two lanes, at most the target's lanes;
  - write out at most max_unroll vector operations per row (the code-size cap);
  - be fully unrolled exactly when the straight segments fit the cap, and then be
    exactly those segments (the kernel the tests of fully unrolled counts run);
  - call itself partial exactly when some channels run in a loop;
  - on a split target (rows padded to whole vectors of the widest dtype's lanes), run
    whole vectors of the dtype's lanes only, over the padded row.
The exhaustive part walks every lanes x every channel count x the caps around every
boundary a plan has (1 to 40, and the large caps); hypothesis draws the rest of the
caps, and whole targets through the loader, both dtypes.
"""

import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from generator.errors import ConfigError                                  # noqa: E402
from generator.loader import (MAX_LANES, MAX_SPECIALIZED_CHANNELS,        # noqa: E402
                              MAX_UNROLL, load)
from generator.plan import (SegmentLoop, Kernel, plan_loops,            # noqa: E402
                            plan_target, segments)
from generator.validate import validate_target                             # noqa: E402

try:
    from hypothesis import given, settings, strategies as st
except ImportError:     # the Makefile installs python3-hypothesis; say so, never pass silently
    given = None

LANES = tuple(1 << i for i in range(MAX_LANES.bit_length()))
EXHAUSTIVE_CAPS = tuple(range(1, 41)) + (63, 64, 65, 128, 255, MAX_UNROLL)


def unrolled_ops(channels, lanes):
    """The vector operations of the fully unrolled kernel: the full vectors, and the
    tail's descending powers of two."""
    vectors, tail = divmod(channels, lanes)
    return vectors + bin(tail).count("1")


def plan_problem(channels, lanes, cap):
    """None when plan_loops(channels, lanes, cap) keeps every promise, else what breaks."""
    loops = plan_loops(channels, lanes, cap)
    at, in_code = 0, 0
    for g in loops:
        if g.start != at:
            return f"loop starts at {g.start}, channels covered up to {at}"
        if g.repeat < 1 or g.step < 1:
            return f"loop of {g.repeat} x {g.step}"
        offset = 0
        for s in g.segments:
            if s.offset != offset:
                return f"segment at {s.offset} in a body covered up to {offset}"
            if s.lanes > lanes or s.lanes & (s.lanes - 1):
                return f"a {s.lanes}-lane vector on a {lanes}-lane target"
            offset += s.lanes
        if offset != g.step:
            return f"body covers {offset} channels, its loop steps by {g.step}"
        at = g.end
        in_code += len(g.segments)
    if at != channels:
        return f"channels covered up to {at}, not {channels}"
    if in_code > cap:
        return f"{in_code} vector operations written out, cap {cap}"
    fits = unrolled_ops(channels, lanes) <= cap
    if fits and loops != (SegmentLoop(0, 1, channels, segments(channels, lanes)),):
        return "fits the cap but is not the fully unrolled kernel"
    if fits == any(g.repeat > 1 for g in loops):
        return f"{'fits' if fits else 'over'} the cap, but {'' if fits else 'no '}loop"
    return None


class ExhaustivePlanTest(unittest.TestCase):
    def test_every_lanes_cap_and_channel_count(self):
        checked = 0
        for lanes in LANES:
            for channels in range(1, MAX_SPECIALIZED_CHANNELS + 1):
                # The caps rise: once one fits the unrolled kernel, every later one
                # does, and a plan equal to the one proven for it keeps every promise
                # (a cheap comparison: the exhaustive walk proves 1.3 million plans).
                unrolled = None
                for cap in EXHAUSTIVE_CAPS:
                    checked += 1
                    if unrolled is not None and plan_loops(channels, lanes, cap) == unrolled:
                        continue
                    problem = plan_problem(channels, lanes, cap)
                    if problem:
                        self.fail(f"channels={channels} lanes={lanes} max_unroll={cap}: {problem}")
                    if unrolled_ops(channels, lanes) <= cap:
                        unrolled = plan_loops(channels, lanes, cap)
        self.assertEqual(checked, len(LANES) * len(EXHAUSTIVE_CAPS) * MAX_SPECIALIZED_CHANNELS)

    def test_the_reported_cases(self):
        # 505 on mt7004 (16 lanes, cap 32) summed 512 channels; 63 on 64 lanes, cap 3.
        for channels, lanes, cap in ((505, 16, 32), (479, 16, 32), (1000, 16, 32),
                                     (927, 32, 32), (63, 64, 3)):
            self.assertIsNone(plan_problem(channels, lanes, cap))
        self.assertEqual(sum(len(g.segments) for g in plan_loops(1000, 16, 32)), 32)


def padded_problem(kernel):
    """None when a split target's kernel runs whole vectors over its padded row."""
    row = kernel.row_channels
    if row % kernel.pad_lanes or not kernel.channels <= row < kernel.channels + kernel.pad_lanes:
        return f"row of {row} channels for {kernel.channels} padded to {kernel.pad_lanes}"
    widths = {s.lanes for g in kernel.loops for s in g.segments}
    if widths != {kernel.lanes}:
        return f"vectors of {sorted(widths)} lanes, not only {kernel.lanes}"
    return plan_problem(row, kernel.lanes, kernel.max_unroll)


class PaddedPlanTest(unittest.TestCase):
    def test_every_lanes_pad_and_channel_count(self):
        for lanes in LANES:
            for pad in sorted({lanes, min(2 * lanes, MAX_LANES), MAX_LANES}):
                for cap in (1, 2, 3, 32, MAX_UNROLL):
                    for channels in range(1, MAX_SPECIALIZED_CHANNELS + 1):
                        kernel = Kernel("t", "f32", lanes, channels, cap, pad)
                        problem = padded_problem(kernel)
                        if problem:
                            self.fail(f"channels={channels} lanes={lanes} pad={pad} "
                                      f"max_unroll={cap}: {problem}")


class PrivateMemoryTest(unittest.TestCase):
    def test_private_bytes_must_be_whole_alignment_units(self):
        """786433 was accepted and the host HAL then asked aligned_alloc(64, 786433)."""
        text = TARGET_YAML.format(f32=16, f16=32, cap=32, channels="32", private=786433)
        with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
            f.write(text)
            f.flush()
            with self.assertRaises(ConfigError) as e:
                validate_target(load(f.name).targets[0])
        self.assertIn(":10: targets.hyp.memory.private_bytes: 786433 is not a multiple of 64",
                      str(e.exception))


class RandomPlanTest(unittest.TestCase):
    def setUp(self):
        if given is None:
            self.fail("python3-hypothesis is not installed (apt-get install python3-hypothesis)")

    def test_any_cap(self):
        @settings(max_examples=3000, deadline=None, derandomize=True)
        @given(st.sampled_from(LANES), st.integers(1, MAX_UNROLL),
               st.integers(1, MAX_SPECIALIZED_CHANNELS))
        def check(lanes, cap, channels):
            self.assertIsNone(plan_problem(channels, lanes, cap), (channels, lanes, cap))
        check()

    def test_whole_targets_through_the_loader(self):
        """Any target the loader and validator accept plans kernels that keep the
        promises, for both dtypes; whatever they refuse is one ConfigError."""
        @settings(max_examples=300, deadline=None, derandomize=True)
        @given(st.sampled_from(LANES), st.sampled_from(LANES), st.integers(1, MAX_UNROLL),
               st.lists(st.integers(1, MAX_SPECIALIZED_CHANNELS), min_size=1, max_size=6,
                        unique=True),
               st.integers(4096 // 64, 2**20 // 64).map(lambda n: n * 64), st.booleans())
        def check(f32_lanes, f16_lanes, cap, channels, private_bytes, split):
            text = TARGET_YAML.format(f32=f32_lanes, f16=f16_lanes, cap=cap,
                                      channels=", ".join(map(str, channels)),
                                      private=private_bytes)
            if split:
                text = text.replace('shared_qualifier: ""\n', 'shared_qualifier: ""\n'
                                    f"      spaces: {{kind: split, scalar_bytes: 65536, "
                                    f"vector_bytes: {private_bytes}}}\n")
            with tempfile.NamedTemporaryFile("w", suffix=".yaml") as f:
                f.write(text)
                f.flush()
                try:
                    target = validate_target(load(f.name).targets[0])
                except ConfigError:
                    return
            tp = plan_target(target)
            self.assertEqual(sorted(k.channels for d in tp.dtypes for k in d.specialized),
                             sorted(channels * 2))
            for d in tp.dtypes:
                for k in d.specialized:
                    if split:
                        self.assertEqual(k.pad_lanes, max(f32_lanes, f16_lanes))
                        self.assertIsNone(padded_problem(k))
                    else:
                        self.assertEqual(k.loops, plan_loops(k.channels, d.config.lanes, cap))
                        self.assertIsNone(plan_problem(k.channels, d.config.lanes, cap))
                    self.assertLessEqual(k.vector_ops_in_code, cap)
                    self.assertLessEqual(k.channels, d.max_chunk)
                    self.assertLessEqual(k.row_channels, d.workspace_chunk)
                self.assertGreaterEqual(private_bytes, d.min_private_bytes)
                self.assertGreaterEqual(tp.p_workspace_bytes, d.min_private_bytes if split else 0)
        check()


TARGET_YAML = """\
targets:
  hyp:
    description: hypothesis target
    dtypes:
      f32: {{lanes: {f32}}}
      f16: {{lanes: {f16}}}
    cores: 4
    vector_backend: gnu
    memory:
      private_bytes: {private}
      address_bits: 32
      shared_params_address: 0xAFF00000
      shared_scratch_address: 0xAFF01000
      shared_qualifier: ""
    channels: [{channels}]
    max_unroll: {cap}
"""


if __name__ == "__main__":
    unittest.main()
