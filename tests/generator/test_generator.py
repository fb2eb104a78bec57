"""Generator tests (stdlib unittest): validation messages, the plan, determinism."""

import contextlib
import io
import os
import shutil
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from generator.cli import main                       # noqa: E402
from generator.files import FileManager              # noqa: E402
from generator.loader import load                    # noqa: E402
from generator.plan import plan_target, segments     # noqa: E402

TARGETS_YAML = os.path.join(ROOT, "targets.yaml")


def run(*argv):
    """Run the CLI in-process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


def tree(path):
    """{relative path: bytes} of every file below path."""
    files = {}
    for dirpath, _, names in os.walk(path):
        for n in names:
            full = os.path.join(dirpath, n)
            with open(full, "rb") as f:
                files[os.path.relpath(full, path)] = f.read()
    return files


class TempDir(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)

    def write_config(self, text):
        path = os.path.join(self.tmp, "targets.yaml")
        with open(path, "w") as f:
            f.write(textwrap.dedent(text))
        return path


GOOD = """\
targets:
  dsp:
    description: test target
    dtypes:
      f32: {lanes: 16}
    cores: 8
    vector_backend: gnu
    memory:
      private_bytes: 786432
      address_bits: 32
      shared_params_address: 0xAFF00000
      shared_scratch_address: 0xAFF01000
      shared_qualifier: ""
    channels: [32, 64]
    max_unroll: 32
"""


class ValidationTest(TempDir):
    def expect_error(self, config_text, line, fragment):
        path = self.write_config(config_text)
        status, out, err = run("generate", "--config", path, "--out", self.tmp + "/out")
        self.assertEqual(status, 2, err)
        self.assertIn(f"{path}:{line}:", err)
        self.assertIn(fragment, err)
        self.assertNotIn("Traceback", err)
        self.assertFalse(os.path.exists(self.tmp + "/out"), "an invalid config wrote output")

    def test_good_config_loads(self):
        config = load(self.write_config(GOOD))
        self.assertEqual(config.targets[0].channels, (32, 64))

    def test_unknown_key_names_line_and_key(self):
        self.expect_error(GOOD.replace("    cores: 8\n", "    cores: 8\n    corez: 4\n"),
                          7, "targets.dsp.corez: unknown key; allowed: description, dtypes")

    def test_lanes_must_be_power_of_two(self):
        self.expect_error(GOOD.replace("lanes: 16", "lanes: 12"), 5,
                          "targets.dsp.dtypes.f32.lanes: 12 is not a power of two")

    def test_lanes_zero(self):
        self.expect_error(GOOD.replace("lanes: 16", "lanes: 0"), 5, "out of range")

    def test_every_yaml_integer_form_is_read(self):
        for text, value in (("0x10", 16), ("0b10000", 16), ("020", 16), ("1_6", 16), ("+16", 16)):
            config = load(self.write_config(GOOD.replace("lanes: 16", f"lanes: {text}")))
            self.assertEqual(config.targets[0].dtypes[0].lanes, value, text)
        self.expect_error(GOOD.replace("lanes: 16", "lanes: 0:16"), 5, "expected an integer")

    def test_cores_above_31(self):
        self.expect_error(GOOD.replace("cores: 8", "cores: 32"), 6,
                          "targets.dsp.cores: 32 is out of range; allowed: 1 to 31")

    def test_duplicate_channels(self):
        self.expect_error(GOOD.replace("[32, 64]", "[32, 64, 32]"), 14,
                          "targets.dsp.channels: 32 is listed twice")

    def test_channel_not_an_integer(self):
        self.expect_error(GOOD.replace("[32, 64]", "[32, x]"), 14,
                          "targets.dsp.channels: expected an integer")

    def test_target_name_is_not_a_path(self):
        self.expect_error(GOOD.replace("  dsp:", "  ../evil:"), 2,
                          "lower-case letters, digits and _ only")

    def test_unknown_dtype(self):
        self.expect_error(GOOD.replace("f32: {lanes: 16}", "bf16: {lanes: 16}"), 5,
                          "targets.dsp.dtypes.bf16: unknown key; allowed: f32, f16")

    def test_stats_only_for_f16(self):
        self.expect_error(GOOD.replace("f32: {lanes: 16}", "f32: {lanes: 16, stats: f32}"), 5,
                          "targets.dsp.dtypes.f32.stats: unknown key")

    def test_missing_key(self):
        self.expect_error(GOOD.replace("    vector_backend: gnu\n", ""), 3,
                          "targets.dsp.vector_backend: missing required key")

    def test_list_where_mapping_belongs(self):
        self.expect_error(GOOD.replace("dtypes:\n      f32: {lanes: 16}", "dtypes: [f32]"), 4,
                          "targets.dsp.dtypes: expected a mapping")

    def test_unparsable_yaml(self):
        self.expect_error("targets:\n  dsp: {\n", 3, "not valid YAML")

    def test_empty_file(self):
        path = self.write_config("")
        status, _, err = run("generate", "--config", path, "--out", self.tmp + "/out")
        self.assertEqual(status, 2)
        self.assertIn("the file is empty", err)

    def test_not_utf8(self):
        path = self.write_config("")
        with open(path, "wb") as f:
            f.write(b"targets:\n  \xff\xfe: {}\n")
        status, _, err = run("generate", "--config", path, "--out", self.tmp + "/out")
        self.assertEqual(status, 2)
        self.assertIn("not UTF-8 text", err)

    def test_missing_file(self):
        status, _, err = run("generate", "--config", self.tmp + "/none.yaml")
        self.assertEqual(status, 2)
        self.assertIn("cannot read", err)

    def test_unknown_target_lists_known(self):
        status, _, err = run("generate", "--config", TARGETS_YAML, "--target", "tms320",
                             "--out", self.tmp + "/out")
        self.assertEqual(status, 2)
        self.assertIn("--target: tms320: unknown target; known: ft78ne, mt7004", err)

    def test_private_memory_too_small_names_its_line(self):
        self.expect_error(GOOD.replace("private_bytes: 786432", "private_bytes: 65536")
                          .replace("[32, 64]", "[32, 256]"), 9,
                          "targets.dsp.memory.private_bytes: 65536 bytes cannot hold the "
                          "workspace and one tile for 256-channel chunks; at least 144384 needed")

    def test_channels_too_wide_for_private_memory_blames_the_option(self):
        status, _, err = run("generate", "--config", TARGETS_YAML, "--target", "mt7004",
                             "--channels", "4096", "--out", self.tmp + "/out")
        self.assertEqual(status, 2)
        self.assertIn("error: --channels: 4096: 786432 bytes cannot hold the workspace and one "
                      "tile for 4096-channel chunks; at least 2310144 needed", err)

    def test_bad_channels_argument(self):
        for value, fragment in (("48 x", "not a positive integer"), ("48 48", "listed twice"),
                                ("0", "out of range"), ("-4", "not a positive integer")):
            status, _, err = run("generate", "--config", TARGETS_YAML, "--target", "mt7004",
                                 "--channels", value, "--out", self.tmp + "/out")
            self.assertEqual(status, 2, value)
            self.assertIn(fragment, err)


class PlanTest(unittest.TestCase):
    def test_segments_cover_channels_with_tail_inside(self):
        self.assertEqual([(s.offset, s.lanes) for s in segments(40, 16)],
                         [(0, 16), (16, 16), (32, 8)])
        self.assertEqual([(s.offset, s.lanes) for s in segments(13, 16)],
                         [(0, 8), (8, 4), (12, 1)])
        for channels in range(1, 200):
            segs = segments(channels, 16)
            self.assertEqual(sum(s.lanes for s in segs), channels)
            self.assertEqual([s.offset for s in segs],
                             [sum(x.lanes for x in segs[:i]) for i in range(len(segs))])

    def test_partial_unroll_covers_every_channel_once(self):
        from generator.plan import Kernel
        for channels in (20, 33, 100, 257, 1000):
            for cap in (1, 2, 3, 8):
                k = Kernel("t", "f32", 4, channels, cap)
                covered = [g.start + r * g.step + s.offset + lane
                           for g in k.loops for r in range(g.repeat)
                           for s in g.segments for lane in range(s.lanes)]
                self.assertEqual(covered, list(range(channels)), (channels, cap))
                self.assertLessEqual(k.vector_ops_in_code, cap + 4)   # + the unrolled tail
                self.assertEqual(k.partial, len(k.segments) > cap)

    def test_kernel_names_encode_target_dtype_shape_width(self):
        tp = plan_target(load(TARGETS_YAML).target("mt7004"))
        names = [k.ukernel("reduce") for d in tp.dtypes for k in d.kernels]
        self.assertIn("bng_f32_reduce_ukernel__mt7004_c64_v16", names)
        self.assertIn("bng_f16_reduce_ukernel__mt7004_c64_v32", names)
        self.assertIn("bng_f16_reduce_ukernel__mt7004_generic_v32", names)
        self.assertEqual(len(names), len(set(names)))

    def test_ft78ne_has_no_f16(self):
        tp = plan_target(load(TARGETS_YAML).target("ft78ne"))
        self.assertEqual([d.name for d in tp.dtypes], ["f32"])


class OutputTest(TempDir):
    def test_generation_is_deterministic_and_matches_committed_tree(self):
        a, b = self.tmp + "/a", self.tmp + "/b"
        self.assertEqual(run("generate", "--config", TARGETS_YAML, "--out", a)[0], 0)
        self.assertEqual(run("generate", "--config", TARGETS_YAML, "--out", b)[0], 0)
        self.assertEqual(tree(a), tree(b))
        self.assertEqual(tree(a), tree(os.path.join(ROOT, "generated")))
        for content in tree(a).values():
            self.assertNotIn(ROOT.encode(), content)     # no machine paths

    def test_second_run_writes_nothing(self):
        out = self.tmp + "/out"
        run("generate", "--config", TARGETS_YAML, "--out", out)
        before = {p: os.stat(os.path.join(out, p)).st_mtime_ns for p in tree(out)}
        status, stdout, _ = run("generate", "--config", TARGETS_YAML, "--out", out)
        self.assertEqual(status, 0)
        self.assertIn("up to date", stdout)
        self.assertEqual(before, {p: os.stat(os.path.join(out, p)).st_mtime_ns for p in tree(out)})

    def test_channels_override_touches_only_that_target(self):
        out = self.tmp + "/out"
        run("generate", "--config", TARGETS_YAML, "--out", out)
        ft78ne = tree(out + "/ft78ne")
        status, _, err = run("generate", "--config", TARGETS_YAML, "--out", out,
                             "--target", "mt7004", "--channels", "48 96")
        self.assertEqual(status, 0, err)
        self.assertEqual(tree(out + "/ft78ne"), ft78ne)
        with open(out + "/mt7004/bng_f32_ukernels.c") as f:
            text = f.read()
        self.assertIn('make generate TARGET=mt7004 CHANNELS="48 96"', text)
        self.assertIn("bng_f32_reduce_ukernel__mt7004_c48_v16(", text)
        self.assertIn("bng_f32_reduce_ukernel__mt7004_c96_v16(", text)
        self.assertNotIn("_c64_", text)

    def test_an_error_leaves_the_tree_unchanged(self):
        out = self.tmp + "/out"
        run("generate", "--config", TARGETS_YAML, "--out", out)
        before = tree(out)
        with open(TARGETS_YAML) as f:
            bad = f.read().replace("max_unroll: 32", "max_unroll: 0", 2)
        path = self.write_config(bad)
        for argv in (("--config", path), ("--config", TARGETS_YAML, "--target", "mt7004",
                                          "--channels", "48 4096")):
            status, _, err = run("generate", "--out", out, *argv)
            self.assertEqual(status, 2, err)
            self.assertEqual(tree(out), before, argv)

    def test_stale_files_are_removed(self):
        out = self.tmp + "/out"
        run("generate", "--config", TARGETS_YAML, "--out", out)
        with open(out + "/mt7004/bng_old_ukernels.c", "w") as f:
            f.write("stale")
        run("generate", "--config", TARGETS_YAML, "--out", out, "--target", "mt7004")
        self.assertFalse(os.path.exists(out + "/mt7004/bng_old_ukernels.c"))

    def test_file_manager_refuses_a_second_write(self):
        fm = FileManager(self.tmp)
        fm.add("t/a.c", "x")
        with self.assertRaises(AssertionError):
            fm.add("t/a.c", "y")


if __name__ == "__main__":
    unittest.main()
