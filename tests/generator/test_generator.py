"""Generator tests (stdlib unittest): validation messages, the plan, determinism."""

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from generator.cli import main                       # noqa: E402
from generator.errors import ConfigError             # noqa: E402
from generator.files import FileManager, is_temporary  # noqa: E402
from generator.loader import load                    # noqa: E402
from generator.plan import DRIVER_ROOMS, plan_target, segments  # noqa: E402
from generator.validate import check_split_native_halves, widest_channels  # noqa: E402

TARGETS_YAML = os.path.join(ROOT, "targets.yaml")


def line_of(target, key):
    """The line of targets.yaml where target's key (e.g. "channels") stands."""
    with open(TARGETS_YAML) as f:
        lines = f.read().splitlines()
    start = lines.index(f"  {target}:")
    return next(i for i in range(start, len(lines)) if lines[i].strip().startswith(key + ":")) + 1


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

    def config_copy(self):
        """A copy of targets.yaml for a run that may edit it (generate --channels)."""
        path = os.path.join(self.tmp, "targets.yaml")
        shutil.copy(TARGETS_YAML, path)
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
        # (020, YAML 1.1's octal 16, is refused: test_leading_zero_is_not_octal)
        for text, value in (("0x10", 16), ("0b10000", 16), ("1_6", 16), ("+16", 16)):
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
                          "1 to 64 lower-case letters, digits and _")

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
                          "targets.dsp.memory.private_bytes: 65536 bytes cannot hold the _s "
                          "workspace and 32-row tiles for 256-channel chunks, even without "
                          "specialized counts; at least 144384 needed")
        # the key to change, the value that does, and the widest count that fits
        self.expect_error(GOOD.replace("private_bytes: 786432", "private_bytes: 131072")
                          .replace("[32, 64]", "[32, 256, 300]"), 9,
                          "targets.dsp.memory.private_bytes: 131072 bytes cannot hold the _s "
                          "workspace and 32-row tiles for 300-channel chunks; at least 169408 "
                          "needed: set it to 169408 or more, or specialize no count above 231 "
                          "(now 256 300)")

    def test_channels_too_wide_for_private_memory_blames_the_option(self):
        path = self.config_copy()
        for style in ((), ("--via-make",)):
            status, _, err = run(*style, "generate", "--config", path, "--target", "mt7004",
                                 "--channels", "48 2000 4096", "--out", self.tmp + "/out")
            self.assertEqual(status, 2)
            option = 'CHANNELS="48 2000 4096"' if style else "--channels"
            # no larger private_bytes is advised: memory.shared's bound would refuse
            # the list again (past 1020 the _s scratch ends past the GSM)
            self.assertEqual(err, f"error: {option}: 2000 4096: memory.private_bytes (768000 "
                             f"bytes, {path}:{line_of('mt7004', 'private_bytes')}) holds the _s "
                             "workspace and 32-row tiles for at most 1109 channels, and the _s "
                             "scratch of a count above 1020 would end past memory.shared: list "
                             "no count above 1020\n")
        with open(path, "rb") as f, open(TARGETS_YAML, "rb") as g:
            self.assertEqual(f.read(), g.read())

    def test_bad_channels_argument(self):
        for value, fragment in (("48 x", "not a positive integer"), ("48 48", "listed twice"),
                                ("0", "out of range"), ("-4", "not a positive integer")):
            status, _, err = run("generate", "--config", TARGETS_YAML, "--target", "mt7004",
                                 "--channels", value, "--out", self.tmp + "/out")
            self.assertEqual(status, 2, value)
            self.assertIn(fragment, err)


SPLIT = '      shared_qualifier: ""\n      spaces: {kind: split, scalar_bytes: 65536, vector_bytes: 786432}\n'
# GOOD with an f16 dtype beside its f32: GOOD.replace(*WITH_F16).
WITH_F16 = ("      f32: {lanes: 16}\n", "      f32: {lanes: 16}\n      f16: {lanes: 16}\n")
NATIVE_BACKEND = ("vector_backend: gnu", "vector_backend: native")


class MemorySpacesTest(TempDir):
    """targets.yaml memory.spaces: unified (the default) or split with its two sizes."""

    expect_error = ValidationTest.expect_error

    def with_spaces(self, text):
        return GOOD.replace('      shared_qualifier: ""\n', '      shared_qualifier: ""\n' + text)

    def test_default_and_explicit_unified(self):
        for text in (GOOD, self.with_spaces("      spaces: {kind: unified}\n")):
            memory = load(self.write_config(text)).targets[0].memory
            self.assertEqual((memory.spaces, memory.split), ("unified", False))

    def test_split_loads_and_renders(self):
        config = load(self.write_config(GOOD.replace('      shared_qualifier: ""\n', SPLIT)))
        memory = config.targets[0].memory
        self.assertEqual((memory.spaces, memory.scalar_bytes, memory.vector_bytes),
                         ("split", 65536, 786432))
        plan = plan_target(config.targets[0])
        self.assertEqual(plan.vector_lanes, 16)
        self.assertEqual(plan.dtypes[0].workspace_chunk, plan.dtypes[0].max_chunk)
        out = self.tmp + "/out"
        path = self.write_config(GOOD.replace('      shared_qualifier: ""\n', SPLIT)
                                 .replace("[32, 64]", "[200]"))
        status, _, err = run("generate", "--config", path, "--out", out)
        self.assertEqual(status, 0, err)
        with open(os.path.join(out, "dsp", "bng_kernels.h")) as f:
            header = f.read()
        for line in ("#define BNG_SPLIT_MEMORY 1", "#define BNG_SCALAR_BYTES 65536u",
                     "#define BNG_VECTOR_BYTES 786432u", "#define BNG_VECTOR_LANES 16",
                     "#define BNG_VECTOR_BACKEND BNG_VEC_GNU"):
            self.assertIn(line, header)
        with open(os.path.join(out, "dsp", "build.mk")) as f:
            self.assertIn("BNG_MEMORY_$(bng_dir) := split", f.read())
        # A 200-channel kernel: each workspace array padded to 208 floats (13 vectors).
        padded = plan_target(load(path).targets[0]).dtypes[0]
        self.assertEqual((padded.max_chunk, padded.workspace_chunk), (200, 208))

    def test_unified_target_renders_no_split_constants(self):
        out = self.tmp + "/out"
        status, _, err = run("generate", "--config", self.write_config(GOOD), "--out", out)
        self.assertEqual(status, 0, err)
        with open(os.path.join(out, "dsp", "bng_kernels.h")) as f:
            header = f.read()
        self.assertIn("#define BNG_SPLIT_MEMORY 0", header)
        self.assertNotIn("BNG_VECTOR_LANES", header)

    def test_spaces_errors_name_line_and_key(self):
        cases = (
            ("      spaces: {kind: both}\n", 14, "targets.dsp.memory.spaces.kind: "),
            ("      spaces: {kind: split, scalar_bytes: 65536}\n", 14,
             "targets.dsp.memory.spaces.vector_bytes: missing required key (kind: split)"),
            ("      spaces: {kind: unified, scalar_bytes: 65536}\n", 14,
             "targets.dsp.memory.spaces.scalar_bytes: only a split target has separate memories"),
            ("      spaces: {kind: split, scalar_bytes: 65536, vector_bytes: 786432, am: 1}\n", 14,
             "targets.dsp.memory.spaces.am: unknown key; allowed: kind, scalar_bytes, vector_bytes"),
            ("      spaces: {kind: split, scalar_bytes: 65536, vector_bytes: 65536}\n", 14,
             "targets.dsp.memory.spaces.vector_bytes: 65536 is smaller than memory.private_bytes (786432)"),
            ("      spaces: {kind: split, scalar_bytes: 12, vector_bytes: 786432}\n", 14,
             "targets.dsp.memory.spaces.scalar_bytes: 12 is out of range"),
            ("      spaces: split\n", 14, "targets.dsp.memory.spaces: expected a mapping"),
        )
        for text, line, fragment in cases:
            self.expect_error(self.with_spaces(text), line, fragment)

    def test_split_p_workspace_default_and_checks(self):
        split = GOOD.replace('      shared_qualifier: ""\n', SPLIT)
        plan = plan_target(load(self.write_config(split)).targets[0])
        # The default: the least the plan needs (the workspace arrays, four one-block tiles).
        self.assertEqual(plan.p_workspace_bytes, plan.min_private_bytes)
        self.assertEqual(plan.stack_bytes, 0)
        given = split.replace("vector_bytes: 786432", "vector_bytes: 786432, p_workspace_bytes: 262144")
        self.assertEqual(plan_target(load(self.write_config(given)).targets[0]).p_workspace_bytes, 262144)
        need = plan.min_private_bytes
        cases = (
            (f"p_workspace_bytes: {need + 8}", f"{need + 8} is not a multiple of 64"),
            (f"p_workspace_bytes: {need - 64}",
             f"{need - 64} bytes cannot hold _p's workspace and 32-row tiles"),
            ("p_workspace_bytes: 786433", "786433 is out of range"),
        )
        for key, fragment in cases:
            self.expect_error(split.replace("vector_bytes: 786432", "vector_bytes: 786432, " + key), 14,
                              "targets.dsp.memory.spaces.p_workspace_bytes: " + fragment)
        self.expect_error(self.with_spaces("      spaces: {kind: unified, p_workspace_bytes: 4096}\n"), 14,
                          "targets.dsp.memory.spaces.p_workspace_bytes: only a split target")

    def test_split_kernels_run_whole_vectors_over_padded_rows(self):
        # 200 channels at 16 lanes: 13 whole vectors over rows padded to 208; the
        # generic kernels have no one-lane loop.
        path = self.write_config(GOOD.replace('      shared_qualifier: ""\n', SPLIT)
                                 .replace("[32, 64]", "[200]"))
        kernel = plan_target(load(path).targets[0]).dtypes[0].specialized[0]
        self.assertEqual(kernel.row_channels, 208)
        self.assertEqual({s.lanes for g in kernel.loops for s in g.segments}, {16})
        self.assertIn("rows padded to 208 channels", kernel.layout)
        out = self.tmp + "/out"
        status, _, err = run("generate", "--config", path, "--out", out)
        self.assertEqual(status, 0, err)
        with open(os.path.join(out, "dsp", "bng_f32_ukernels.c")) as f:
            source = f.read()
        self.assertNotRegex(source, r"bng_f32x1_|bng_f32x[248]_")
        self.assertNotIn("c < channels; c++", source)
        with open(os.path.join(out, "dsp", "bng_kernels.h")) as f:
            self.assertIn(f"#define BNG_P_WORKSPACE_BYTES {plan_target(load(path).targets[0]).p_workspace_bytes}u",
                          f.read())

    def test_split_native_renders_whole_vectors_and_division(self):
        out = self.tmp + "/native-out"
        path = self.write_config(GOOD.replace('      shared_qualifier: ""\n', SPLIT)
                                 .replace(*NATIVE_BACKEND).replace("[32, 64]", "[40]"))
        status, _, err = run("generate", "--config", path, "--out", out)
        self.assertEqual(status, 0, err)
        with open(os.path.join(out, "dsp", "bng_native.h")) as f:
            self.assertIn("#define BNG_NATIVE_DIV(a, b) ((a) / (b))", f.read())
        with open(os.path.join(out, "dsp", "bng_f32_ukernels.c")) as f:
            source = f.read()
        self.assertIn("rows padded to 48 channels", source)
        self.assertNotRegex(source, r"bng_f32x[1248]_")
        # With f16 the half spellings are required, through the command line too.
        self.expect_error(GOOD.replace('      shared_qualifier: ""\n', SPLIT).replace(*NATIVE_BACKEND)
                          .replace(*WITH_F16), 8,
                          "targets.dsp.native.half_load: a split target with f16 and the native backend")

    def split_native_f16(self, native_body=()):
        """A split native target with f16, as loaded (validate_target refuses it unless
        both half spellings are given)."""
        text = GOOD.replace('      shared_qualifier: ""\n', SPLIT).replace(*NATIVE_BACKEND).replace(*WITH_F16)
        if native_body:
            text += "    native:\n" + "".join(f"      {line}\n" for line in native_body)
        path = self.write_config(text)
        return path, load(path).targets[0]

    def test_split_native_f16_needs_the_half_spellings(self):
        path, target = self.split_native_f16()
        with self.assertRaises(ConfigError) as e:
            check_split_native_halves(target)
        # No native: key: the vector_backend line, where native was chosen.
        self.assertIn(f"{path}:8: targets.dsp.native.half_load: a split target with f16 and "
                      "the native backend needs native.half_load and native.half_store "
                      "(missing: half_load, half_store)", str(e.exception))
        path, target = self.split_native_f16(['half_load: "vld_h2f({ptr})"'])
        with self.assertRaises(ConfigError) as e:
            check_split_native_halves(target)
        self.assertIn(f"{path}:19: targets.dsp.native.half_store: ", str(e.exception))   # under native:
        self.assertIn("(missing: half_store)", str(e.exception))

    def test_split_native_halves_check_passes(self):
        _, target = self.split_native_f16(['half_load: "vld_h2f({ptr})"',
                                           'half_store: "vst_f2h({value}, {ptr})"'])
        check_split_native_halves(target)
        # Without f16, on a unified target, or with another backend: nothing to check.
        split = GOOD.replace('      shared_qualifier: ""\n', SPLIT)
        for text in (split.replace(*NATIVE_BACKEND), GOOD.replace(*NATIVE_BACKEND).replace(*WITH_F16),
                     split.replace(*WITH_F16)):
            check_split_native_halves(load(self.write_config(text)).targets[0])

    def test_split_workspace_holds_the_count_limbs(self):
        # f16 at 2 lanes beside 16 f32 lanes: a generic chunk of 16 halves, 1 vector.
        text = (GOOD.replace('      shared_qualifier: ""\n', SPLIT)
                .replace("      f32: {lanes: 16}\n", "      f32: {lanes: 16}\n      f16: {lanes: 2}\n")
                .replace("[32, 64]", "[4]"))
        self.expect_error(text, 5, "on a split target the f16 workspace needs room for 6 vectors of 16 floats")

class HostileInputTest(TempDir):
    """Each input a hostile or careless user could give: one line on stderr with the
    location, exit 2, no traceback, nothing written."""

    def expect_clean_error(self, argv, fragment, where=None):
        out = self.tmp + "/out"
        status, stdout, err = run(*argv, **{})
        self.assertEqual(status, 2, (argv, err))
        self.assertTrue(err.startswith("error: "), err)
        self.assertEqual(err.count("\n"), 1, f"not one line: {err!r}")
        self.assertIn(fragment, err)
        if where:
            self.assertIn(where, err)
        self.assertFalse(os.path.exists(out), "an error wrote output")
        return err

    def config_error(self, text, line, fragment):
        path = self.write_config(text)
        return self.expect_clean_error(("generate", "--config", path, "--out", self.tmp + "/out"),
                                       fragment, f"{path}:{line}:")

    def test_description_cannot_leave_its_comment(self):
        for bad in ("x */ extern int injected; /*", "a /* b", "end ??/", "back\\\\slash",
                    '"two\\nlines\\n#error boom"', '"tab\\there"'):
            self.config_error(GOOD.replace("description: test target", f"description: {bad}"),
                              3, "targets.dsp.description: one line of 1 to 200 printable")

    def test_qualifier_must_be_a_qualifier(self):
        for bad in ('")("', '"int"', '"__gsm__ int"', '"a(b"', '"a)"', '"*"', '"1abc"',
                    '"x */ y"', '"(x)"'):
            self.config_error(GOOD.replace('shared_qualifier: ""', f"shared_qualifier: {bad}"),
                              13, "targets.dsp.memory.shared_qualifier:")
        for good in ('"__gsm__"', '"volatile"', '"__attribute__((address_space(1)))"'):
            load(self.write_config(GOOD.replace('shared_qualifier: ""', f"shared_qualifier: {good}")))

    def test_tags_huge_numbers_and_nesting(self):
        self.config_error(GOOD.replace("lanes: 16", "lanes: !!int abc"), 5, "'abc' is not one")
        self.config_error(GOOD.replace("cores: 8", "cores: !!int ''"), 6, "expected an integer")
        self.config_error(GOOD.replace("cores: 8", "cores: " + "9" * 5000), 6, "5000 characters")
        self.config_error(GOOD.replace("cores: 8", "cores: 0x" + "f" * 5000), 6, "5002 characters")
        self.config_error(GOOD.replace("[32, 64]", "[" * 500 + "]" * 500), 14,
                          "nested more than 64 deep")
        path = self.write_config("targets:\n  x: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n")
        self.expect_clean_error(("generate", "--config", path, "--out", self.tmp + "/out"),
                                "nested more than 64 deep", f"{path}:2:")

    def test_a_name_with_a_newline_stays_on_one_line(self):
        self.config_error(GOOD.replace("  dsp:", '  "a\\nb":'), 2, "targets.a\\nb: a target name")

    def test_nul_byte_gives_its_line(self):
        self.config_error(GOOD.replace("cores: 8", "cores: 8\0"), 6, "is not allowed")

    def test_endless_config_is_refused(self):
        self.expect_clean_error(("generate", "--config", "/dev/zero", "--out", self.tmp + "/out"),
                                "larger than 1048576 bytes")

    def test_shared_ranges(self):
        self.config_error(GOOD.replace("0xAFF01000", "0xAFF00000"), 12,
                          "overlaps the 96-byte parameter block")
        self.config_error(GOOD.replace("0xAFF01000", "0xAFF00040"), 12, "overlaps")
        self.config_error(GOOD.replace("0xAFF01000", "0xFFFFF000"), 12,
                          "would run past the 32-bit address space")
        self.config_error(GOOD.replace("0xAFF00000", "0"), 11, "out of range; allowed: 1 to")
        self.config_error(GOOD.replace("address_bits: 32", "address_bits: 64")
                          .replace("private_bytes: 786432", "private_bytes: 18446744073709551616"),
                          9, "out of range; allowed: 4096 to 2147483648")

    def test_channels_option(self):
        for bad in ("\u00b2", "\u0664\u0668", "9" * 5000, "48 x"):
            self.expect_clean_error(("generate", "--config", TARGETS_YAML, "--target", "mt7004",
                                     "--channels", bad, "--out", self.tmp + "/out"),
                                    "not a positive integer (decimal digits 0-9")

    def test_output_folder_that_is_a_file(self):
        with open(self.tmp + "/file", "w") as f:
            f.write("x")
        status, _, err = run("generate", "--config", TARGETS_YAML, "--out", self.tmp + "/file")
        self.assertEqual(status, 2)
        self.assertIn("the output folder is a file; nothing was written", err)

    def test_vendor_destinations(self):
        with open(self.tmp + "/file", "w") as f:
            f.write("x")
        for dest, fragment in ((self.tmp + "/file", "exists and is not a folder"),
                               (os.path.join(ROOT, "generated", "mt7004"), "inside generated/"),
                               (ROOT, "is the project")):
            status, _, err = run("vendor", "--config", TARGETS_YAML, "--target", "mt7004",
                                 "--dest", dest)
            self.assertEqual(status, 2, dest)
            self.assertIn(fragment, err)

    def test_report_objects_missing(self):
        status, _, err = run("report", "--config", TARGETS_YAML, "--target", "mt7004",
                             "--objects", f"host,nm,{self.tmp}/none/x.o")
        self.assertEqual(status, 2)
        self.assertIn("no object file", err)

    def test_report_names_objects_built_from_another_plan(self):
        """--channels 48 plans a 48-channel kernel: objects without it are refused."""
        from generator.errors import ConfigError
        from generator.report import report
        config = load(TARGETS_YAML)
        target = config.target("mt7004")
        import dataclasses
        tp = plan_target(dataclasses.replace(target, channels=(48,), channels_overridden=True))
        sizes = {k.ukernel(op): 1 for d in plan_target(target).dtypes for k in d.kernels
                 for op in ("reduce", "dx_train", "dx_infer")}
        with self.assertRaises(ConfigError) as e:
            report(tp, {"host": sizes})
        self.assertIn("lack bng_f32_reduce_ukernel__mt7004_c48_v16", str(e.exception))
        self.assertIn('make report TARGET=mt7004 CHANNELS="48"', str(e.exception))


    def test_report_sizes_each_object_and_the_image(self):
        """Each object's .text from size -A, the image's from the linked file: an image
        calling one of two functions compiled a function per section keeps one."""
        from generator.report import (_object_rows, image_texts_from_specs,
                                      object_texts_from_specs, text_bytes)
        src, obj, elf = (f"{self.tmp}/two.{e}" for e in ("c", "o", "elf"))
        with open(src, "w") as f:
            f.write("int used(int x) { return x * 3 + 1; }\n"
                    "int unused(int x) { int i, s = 0; for (i = 0; i < x; i++) s += (i * i) ^ x;"
                    " return s; }\n"
                    "int main(void) { return used(2); }\n")
        subprocess.run(["cc", "-O2", "-ffunction-sections", "-c", src, "-o", obj], check=True)
        subprocess.run(["cc", "-no-pie", "-nostdlib", "-Wl,-e,main", "-Wl,--gc-sections", obj,
                        "-o", elf], check=True)
        objects = object_texts_from_specs([f"host,nm,{obj}"])
        images = image_texts_from_specs([f"host,{elf}"], [f"host,nm,{obj}"])
        self.assertEqual(objects, {"host": {"two.o": text_bytes("size", obj)}})
        self.assertLess(0, images["host"])
        self.assertLess(images["host"], objects["host"]["two.o"])
        rows = _object_rows(["host"], objects, images)
        self.assertTrue(rows[-2].startswith("objects total") and
                        rows[-2].endswith(str(objects["host"]["two.o"])))
        self.assertTrue(rows[-1].startswith("image") and rows[-1].endswith(str(images["host"])))
        # the forward's image, a row of its own where the target has the forward
        forward = image_texts_from_specs([f"host,{elf}"], [f"host,nm,{obj}"], "--forward-image")
        rows = _object_rows(["host"], objects, images, {"host": forward["host"] + 1})
        self.assertTrue(rows[-1].startswith("image (fp forward") and
                        rows[-1].endswith(str(forward["host"] + 1)))
        with self.assertRaisesRegex(Exception, "--forward-image"):
            image_texts_from_specs([f"m7,{elf}"], [f"host,nm,{obj}"], "--forward-image")


class DesignMapTest(unittest.TestCase):
    """docs/design.md's map names every room of the one list (DRIVER_ROOMS), which is
    include/'s .c files, and no other; each name keeps the map's rule."""
    ROW = re.compile(r"^\| `(bng_[a-z0-9_]+\.c)` \|", re.M)
    # bng_[operator_][layout_]<part>.c: a layout's room (its part one of five words), an
    # operator other than the backward prefixing it (the training forward's fwd_), or one
    # noun for a shared room.
    RULE = re.compile(r"^bng_(?:fwd_)?(?:(?:nhwc|nchw)_(?:direct|staged|steps|memory|relu)|[a-z]+)\.c$")

    def test_the_map_is_the_list_of_rooms(self):
        with open(os.path.join(ROOT, "docs", "design.md")) as f:
            text = f.read()
        map_section = text[text.index("## Map\n"):text.index("\n## ", text.index("## Map\n") + 1)]
        self.assertEqual(self.ROW.findall(map_section), [room.name for room in DRIVER_ROOMS])
        self.assertEqual({room.name for room in DRIVER_ROOMS},
                         {f for f in os.listdir(os.path.join(ROOT, "include")) if f.endswith(".c")})

    def test_every_room_is_named_by_the_rule(self):
        for room in DRIVER_ROOMS:
            self.assertRegex(room.name, self.RULE)
        self.assertRegex("bng_fwd_nhwc_staged.c", self.RULE)     # the map's example
        for name in ("bng_nhwc_p.c", "bng_layout_nhwc.c", "bng_stage_steps.c"):
            self.assertNotRegex(name, self.RULE)


class DriverLayersTest(unittest.TestCase):
    """The driver's files in layers: no header includes itself through others, and the
    rooms and the kernels share bng_ukernel.h, not bng_entry.h (the entry points'),
    which only the entry points' file and the generated wrappers include: no room can
    call an entry point, so neither includes nor calls go round in a circle."""
    INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
    # The vector API includes itself, once a width, for its per-width part (bng_vec.h):
    # that edge is the one a header may have to itself.
    SELF_INCLUDED = {"bng_vec.h"}

    def graph(self):
        """File name (a template's as rendered) -> the names it includes."""
        graph = {}
        for folder in ("include", "include/hal", "include/programs", "templates"):
            for name in os.listdir(os.path.join(ROOT, folder)):
                if name.endswith((".h", ".c", ".h.j2", ".c.j2")):
                    with open(os.path.join(ROOT, folder, name)) as f:
                        includes = set(self.INCLUDE.findall(f.read()))
                    if name in self.SELF_INCLUDED:
                        includes.discard(name)
                    graph[name.removesuffix(".j2")] = includes
        return graph

    def reached(self, graph, name):
        seen, todo = set(), list(graph.get(name, ()))
        while todo:
            other = todo.pop()
            if other not in seen:
                seen.add(other)
                todo += graph.get(other, ())
        return seen

    def test_no_header_includes_itself(self):
        graph = self.graph()
        for name in graph:
            self.assertNotIn(name, self.reached(graph, name))

    # What makes an object depend on the vector backend or the half type: the backend's
    # header, the names by which code picks a half conversion or a backend, and a half
    # by value (a half the compiler's _Float16 in gnu's build and a struct in the
    # portable half's: another calling convention), not a pointer to one, its size or
    # the stats type's typedef.
    BACKEND_NAMES = re.compile(r"\b(?:bng_half_(?:to|from)_float|BNG_HALF_NATIVE|BNG_VEC_BACKEND)\b")
    HALF_BY_VALUE = re.compile(r"\b(?:half|_Float16|bng_hp_stats_t)\b(?!\s*(?:const\s*)?\*)")
    HALF_ALLOWED = re.compile(r"sizeof\s*\(\s*(?:half|bng_hp_stats_t)\s*\)|typedef half bng_hp_stats_t;")
    COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)

    def code_of(self, name):
        """A file's text without its comments: a template's as mt7004 renders it (half
        data and half stats), else the hand-written file's."""
        for folder in ("generated/mt7004", "include", "include/hal", "include/programs"):
            path = os.path.join(ROOT, folder, name)
            if os.path.isfile(path):
                with open(path) as f:
                    return self.COMMENT.sub(" ", f.read())
        self.fail(f"{name}: neither generated for mt7004 nor in include/")

    def test_the_rooms_that_compute_with_vectors_are_the_plans(self):
        """The suites' arithmetic flavours link the gnu flavour's object of every room but
        the plan's vector rooms (Room.vectors, mk/build.mk): sound while no other room
        reaches the vector backend, names a half conversion or the backend, or holds a
        half by value, and the generated wrappers neither."""
        graph = self.graph()
        vector_rooms = {room.name for room in DRIVER_ROOMS if room.vectors}
        self.assertEqual({room.name for room in DRIVER_ROOMS
                          if "bng_vec.h" in self.reached(graph, room.name)}, vector_rooms)
        wrappers = {n for n in graph if n.startswith("batch") and n.endswith(".c")}
        self.assertTrue(wrappers)
        for name in sorted(wrappers | {room.name for room in DRIVER_ROOMS} - vector_rooms):
            self.assertNotIn("bng_vec.h", self.reached(graph, name), name)
            for other in {name} | self.reached(graph, name) - {"bng_f16.h"}:
                code = self.HALF_ALLOWED.sub(" ", self.code_of(other))
                self.assertIsNone(self.BACKEND_NAMES.search(code), f"{name}: {other}")
                self.assertIsNone(self.HALF_BY_VALUE.search(code), f"{name}: {other}")

    def test_only_the_entry_points_and_their_wrappers_see_bng_entry_h(self):
        graph = self.graph()
        self.assertEqual({n for n in graph if "bng_entry.h" in self.reached(graph, n)},
                         {"bng_entry.c", "batch_norm_grad.c", "batchnormgrad.c",
                          "batch_norm_grad_ext.c"})
        self.assertIn("bng_ukernel.h", self.reached(graph, "bng_kernels.h"))


class NativeSpellingsTest(TempDir):
    NATIVE = GOOD.replace("vector_backend: gnu", "vector_backend: native")

    def with_native(self, body):
        return self.NATIVE + "    native:\n" + "".join(f"      {line}\n" for line in body)

    def test_defaults_are_the_mt3000_spellings(self):
        t = load(self.write_config(self.NATIVE)).targets[0]
        self.assertEqual((t.vector_backend, t.native.type, t.native.load),
                         ("native", "lvector float", "vec_ld(0, {ptr})"))
        out = self.tmp + "/out"
        self.assertEqual(run("generate", "--config", self.write_config(self.NATIVE), "--out", out)[0], 0)
        with open(out + "/dsp/bng_native.h") as f:
            text = f.read()
        self.assertIn("typedef lvector float bng_native_f32;", text)
        self.assertIn("#define BNG_NATIVE_LOAD(ptr) (vec_ld(0, ((bng_native_f32 *)(void *)(ptr))))", text)

    def test_div_defaults_to_gcc_vector_division(self):
        t = load(self.write_config(self.NATIVE)).targets[0]
        self.assertEqual(t.native.div, "{a} / {b}")
        out = self.tmp + "/out"
        self.assertEqual(run("generate", "--config", self.write_config(self.NATIVE), "--out", out)[0], 0)
        with open(out + "/dsp/bng_native.h") as f:
            self.assertIn("#define BNG_NATIVE_DIV(a, b) ((a) / (b))\n", f.read())

    def test_div_spelling_renders(self):
        for spelling, line in (("vm_fdivf32({a}, {b})", "vm_fdivf32((a), (b))"),
                               ("vec_div({a},{b})", "vec_div((a),(b))")):
            out = self.tmp + "/out-" + spelling[:3]
            status, _, err = run("generate", "--config",
                                 self.write_config(self.with_native([f'div: "{spelling}"'])),
                                 "--out", out)
            self.assertEqual(status, 0, err)
            with open(out + "/dsp/bng_native.h") as f:
                self.assertIn(f"#define BNG_NATIVE_DIV(a, b) ({line})\n", f.read())

    def test_spellings_are_checked(self):
        path_line = 17      # the first line under native:
        for body, fragment in (
                (["corez: x"], "targets.dsp.native.corez: unknown key; allowed: header, type"),
                (['load: "vec_ld(0, p)"'], "targets.dsp.native.load: a C expression"),
                (['load: "vec_ld(0, {ptr}); system(1)"'], "targets.dsp.native.load: a C expression"),
                (['store: "vec_st({value}, 0, {ptr}) /* x */"'], "targets.dsp.native.store"),
                (['add: "{a} + {a}"'], "using {a}, {b} once each"),
                (['mul: "f({a}, {b}"'], "targets.dsp.native.mul"),
                (['div: 2'], "targets.dsp.native.div: expected a string"),
                (['div: [a, b]'], "targets.dsp.native.div: expected a string"),
                (['div: "{a} / {a}"'], "targets.dsp.native.div: a C expression"),
                (['div: "{a} // {b}"'], "targets.dsp.native.div: a C expression"),
                (['div: "{a} /* {b} */"'], "targets.dsp.native.div: a C expression"),
                (['div: "{a} / {b}; f()"'], "targets.dsp.native.div: a C expression"),
                (['half_load: "{ptr}[0]"'], "targets.dsp.native.half_load"),
                (['type: "struct v"'], "targets.dsp.native.type: one to four C words"),
                (['type: "float; int"'], "targets.dsp.native.type"),
                (['header: "../evil.h"'], "targets.dsp.native.header: a header path"),
                (['header: "a.h>\\n#include <b.h"'], "targets.dsp.native.header")):
            self.config_error(self.with_native(body), path_line, fragment)

    def test_custom_spellings_render(self):
        body = ['header: ""', 'type: "vfloat32"', 'add: "{a} + {b}"',
                'half_load: "vld_h2f({ptr})"', 'half_store: "vst_f2h({value}, {ptr})"']
        out = self.tmp + "/out"
        status, _, err = run("generate", "--config", self.write_config(self.with_native(body)),
                             "--out", out)
        self.assertEqual(status, 0, err)
        with open(out + "/dsp/bng_native.h") as f:
            text = f.read()
        self.assertNotIn("#include", text)
        self.assertIn("#define BNG_NATIVE_ADD(a, b) ((a) + (b))", text)
        self.assertIn("#define BNG_NATIVE_HALF_STORE(ptr, value) vst_f2h((value), (ptr))", text)

    config_error = HostileInputTest.config_error
    expect_clean_error = HostileInputTest.expect_clean_error


# A generate run that pauses before it writes its tree (the second commit of a run that
# sets a list; the first writes the configuration): it creates the file argv[1], then
# waits for the file argv[2].
PAUSED_RUN = """
import os, sys, time
sys.path.insert(0, {root!r})
import generator.files as files
from generator.cli import main
paused, go, commit, calls = sys.argv[1], sys.argv[2], files.FileManager.commit, [0]
def pausing(self, *a, **k):
    calls[0] += 1
    if calls[0] == 2:
        open(paused, "w").close()
        deadline = time.monotonic() + 120
        while not os.path.exists(go) and time.monotonic() < deadline:
            time.sleep(0.02)
    return commit(self, *a, **k)
files.FileManager.commit = pausing
sys.exit(main(sys.argv[3:]))
"""


class AtomicOutputTest(TempDir):
    def test_one_unwritable_file_leaves_every_target_as_it_was(self):
        out = self.tmp + "/out"
        run("generate", "--config", TARGETS_YAML, "--out", out)
        before = tree(out)
        with open(TARGETS_YAML) as f:
            changed = f.read().replace("DSP cluster", "DSP cluster (changed)")
        path = self.write_config(changed)
        os.unlink(out + "/mt7004/batch_norm_grad.c")
        os.mkdir(out + "/mt7004/batch_norm_grad.c")
        status, _, err = run("generate", "--config", path, "--out", out)
        self.assertEqual(status, 2, err)
        self.assertIn("is not a regular file", err)
        os.rmdir(out + "/mt7004/batch_norm_grad.c")
        del before["mt7004/batch_norm_grad.c"]
        self.assertEqual(tree(out), before, "ft78ne was rewritten although mt7004 failed")

    def test_concurrent_runs_leave_one_whole_configuration(self):
        """A run that sets a list holds the configuration until its tree is written: a
        second run started meanwhile waits, so the file and the tree end up agreeing."""
        import subprocess
        import time
        out, path = self.tmp + "/out", self.config_copy()
        driver, paused, go = self.tmp + "/driver.py", self.tmp + "/paused", self.tmp + "/go"
        with open(driver, "w") as f:
            f.write(PAUSED_RUN.format(root=ROOT))
        generate = ("generate", "--config", path, "--out", out, "--target", "mt7004")
        first = subprocess.Popen([sys.executable, driver, paused, go, *generate, "--channels",
                                  "48 96"], cwd=ROOT, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while not os.path.exists(paused) and time.monotonic() < deadline:
            time.sleep(0.02)
        second = subprocess.Popen([sys.executable, "-m", "generator", *generate, "--channels",
                                   "40 80 160"], cwd=ROOT, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        said = second.stderr.readline()     # it waits, or it has ended without waiting
        open(go, "w").close()
        first.communicate(timeout=120)
        second.communicate(timeout=120)
        self.assertEqual((first.returncode, second.returncode), (0, 0))
        self.assertIn("another generator run holds the lock; waiting", said)
        with open(path) as f:
            self.assertIn("channels: [40, 80, 160]", f.read())
        self.assertEqual(run(*generate, "--check")[0], 0)
        self.assertEqual([n for n in os.listdir(out + "/mt7004") if is_temporary(n)], [])
        self.assertEqual([n for n in os.listdir(self.tmp) if is_temporary(n)], [])


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

    def test_kernel_names_encode_target_dtype_shape_width(self):
        tp = plan_target(load(TARGETS_YAML).target("mt7004"))
        names = [k.ukernel("reduce") for d in tp.dtypes for k in d.kernels]
        self.assertIn("bng_f32_reduce_ukernel__mt7004_c64_v16", names)
        self.assertIn("bng_f16_reduce_ukernel__mt7004_c64_v32", names)
        self.assertIn("bng_f16_reduce_ukernel__mt7004_generic_v32", names)
        self.assertEqual(len(names), len(set(names)))

    def test_every_ukernel_defined_is_the_plans_by_one_scheme(self):
        # Every function a shipped ukernels file defines is a name the plan gives, and
        # every name the plan gives keeps the one scheme (ukernel_name).
        scheme = re.compile(r"^bng_(f32|f16)_(fwd_)?(nchw_)?[a-z_]+_ukernel__mt7004_"
                            r"(c[0-9]+_|s[0-9]+_|generic_)?v[0-9]+$")
        definition = re.compile(r"^void (bng_[a-z0-9_]+)\(", re.M)
        tp = plan_target(load(TARGETS_YAML).target("mt7004"))
        self.assertTrue(tp.has("nchw") and tp.has("relu") and tp.has("forward"))
        for d in tp.dtypes:
            nchw = tp.nchw_kernels(d)
            planned = {k.ukernel(op) for k in d.kernels for op in k.ops}
            planned |= {k.ukernel(op) for k in nchw for op in k.ops} | {nchw[-1].dx_end}
            planned |= {k.fwd_ukernel(op) for k in d.kernels for op in k.fwd_ops if tp.fwd_ops}
            planned |= {k.fwd_ukernel(op) for k in nchw for op in k.fwd_ops} | {nchw[-1].fwd_end}
            defined = set()
            for kind in ("", "fwd_"):
                with open(os.path.join(ROOT, "generated", "mt7004", f"bng_{d.name}_{kind}ukernels.c")) as f:
                    defined |= set(definition.findall(f.read()))
            self.assertEqual(defined, planned, d.name)
            for name in planned:
                self.assertRegex(name, scheme)

    def test_ft78ne_has_no_f16(self):
        tp = plan_target(load(TARGETS_YAML).target("ft78ne"))
        self.assertEqual([d.name for d in tp.dtypes], ["f32"])

    def test_ft78ne_kernels_are_mt7004s_renamed(self):
        # The test matrix (mk/test.mk) runs ft78ne's gnu suite at the quick size and no
        # other flavour of it (portable at mt7004's widths on mt7004_mixed, native at
        # 32 lanes): that holds while ft78ne's kernels are mt7004's f32 kernels with the
        # target's name (and description) changed.
        from generator.render import environment, render_target
        config = load(TARGETS_YAML)

        def f32_kernels(name):
            target = config.target(name)
            text = dict(render_target(environment(), plan_target(target)))[f"{name}/bng_f32_ukernels.c"]
            return (text.replace(target.description, "DESCRIPTION")
                        .replace(name, "TARGET").replace(name.upper(), "TARGET"))

        self.assertEqual(f32_kernels("ft78ne"), f32_kernels("mt7004"),
                         "ft78ne's f32 kernels differ from mt7004's: run its arithmetic "
                         "flavours and full size (mk/test.mk: KERNEL_ROOTS, "
                         "arithmetic_roots_flavours, QUICK_SUITES)")


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

    def test_the_scratch_must_end_inside_memory_shared(self):
        """A list whose _s scratch would run past the shared memory the target states is
        refused before anything is written, naming the widest count that fits; that
        count is accepted, and it is the one the README states."""
        target = load(TARGETS_YAML).target("mt7004")
        widest = widest_channels(target)
        status, _, err = run("--via-make", "plan", "--config", TARGETS_YAML, "--target", "mt7004",
                             "--channels", f"48 {widest + 1}")
        self.assertEqual(status, 2)
        self.assertIn("is not inside memory.shared", err)
        self.assertIn(f"list no count above {widest}", err)
        status, _, err = run("plan", "--config", TARGETS_YAML, "--target", "mt7004",
                             "--channels", f"48 {widest}")
        self.assertEqual(status, 0, err)
        with open(os.path.join(ROOT, "README.md")) as f:
            self.assertIn(f"take up to {widest:,} channels", f.read())

    def test_fixed_addresses_outside_memory_shared_are_refused(self):
        path = self.config_copy()
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace("shared_params_address: 0xAFF00000",
                                 "shared_params_address: 0xB0000000", 1))
        status, _, err = run("plan", "--config", path)
        self.assertEqual(status, 2)
        self.assertRegex(err, r"targets\.yaml:\d+: targets\.ft78ne\.memory\.shared_params_address: "
                              r"0xb0000000: the 128-byte parameter block \[0xb0000000, "
                              r"0xb0000080\) is not inside memory\.shared \[0xafa00000, "
                              r"0xb0000000\) .*; allowed: 0xafa00000 to 0xafffff80\n\Z")

    def test_channels_with_a_plus_adds_to_the_list(self):
        out, path = self.tmp + "/out", self.config_copy()
        status, stdout, err = run("generate", "--config", path, "--out", out,
                                  "--target", "mt7004", "--channels", "+48 64 96")
        self.assertEqual(status, 0, err)
        self.assertEqual(stdout.splitlines()[0],
                         f"{path}:{line_of('mt7004', 'channels')}: mt7004 channels: "
                         "32 64 128 256 -> 32 48 64 96 128 256")
        self.assertEqual(load(path).target("mt7004").channels, (32, 48, 64, 96, 128, 256))
        with open(path, "rb") as before:
            status, _, err = run("generate", "--config", path, "--out", out,
                                 "--target", "mt7004", "--channels", "+48 0")
            self.assertEqual(status, 2)
            self.assertIn("0 is out of range", err)
            before.seek(0)
            with open(path, "rb") as after:
                self.assertEqual(before.read(), after.read())

    def test_channels_sets_the_targets_list_in_the_config(self):
        out, path = self.tmp + "/out", self.config_copy()
        run("generate", "--config", path, "--out", out)
        ft78ne = tree(out + "/ft78ne")
        status, stdout, err = run("generate", "--config", path, "--out", out,
                                  "--target", "mt7004", "--channels", "96,48")
        self.assertEqual(status, 0, err)
        self.assertEqual(stdout.splitlines()[0],
                         f"{path}:{line_of('mt7004', 'channels')}: mt7004 channels: 32 64 128 256 -> 48 96"
                         " (dropped 32 64 128 256: those counts now run the generic kernel; "
                         '--channels "+48 96" adds counts instead)')
        with open(os.path.join(ROOT, "README.md")) as f:     # its example: the same line
            self.assertIn(f"`targets.yaml:{line_of('mt7004', 'channels')}: mt7004 channels: "
                          "32 64 128\n256 -> 48 96 (dropped", f.read())
        with open(TARGETS_YAML) as f:
            original = f.read()
        with open(path) as f:       # that one list, and nothing else of the file
            self.assertEqual(f.read(), original.replace(
                "    channels: [32, 64, 128, 256]\n    max_unroll: 32\n    extensions: [reduce, "
                "apply, dx, ext, relu, nchw, forward]\n", "    channels: [48, 96]\n    max_unroll: 32\n    "
                "extensions: [reduce, apply, dx, ext, relu, nchw, forward]\n").replace(
                "channels: [48, 96]", "channels: [32, 64, 128, 256]", 1))
        self.assertEqual(tree(out + "/ft78ne"), ft78ne)
        with open(out + "/mt7004/bng_f32_ukernels.c") as f:
            text = f.read()
        self.assertIn("Remake:   make generate TARGET=mt7004\n", text)   # the file holds it
        self.assertIn("bng_f32_reduce_ukernel__mt7004_c48_v16(", text)
        self.assertIn("bng_f32_reduce_ukernel__mt7004_c96_v16(", text)
        self.assertNotIn("_c64_", text)
        # what regen-check and a plain generate see: the same list
        self.assertEqual(run("generate", "--config", path, "--out", out, "--check")[0], 0)
        status, stdout, _ = run("generate", "--config", path, "--out", out)
        self.assertEqual((status, stdout), (0, f"{out}: up to date\n"))
        status, stdout, _ = run("generate", "--config", path, "--out", out,
                                "--target", "mt7004", "--channels", "48 96")
        self.assertEqual(stdout.splitlines()[0],
                         f"{path}:{line_of('mt7004', 'channels')}: mt7004 channels: 48 96 (unchanged)")

    def test_channels_edit_keeps_the_layout_or_refuses(self):
        with open(TARGETS_YAML) as f:
            original = f.read()
        ft78ne = "    channels: [32, 64, 128, 256]\n"
        cases = (  # (the list as written, what --channels "48 96" makes of it, or an error)
            ("    channels:\n      - 32\n      - 64   \n\n    # kept\n",
             "    channels:\n      [48, 96]   \n\n    # kept\n"),
            ("    channels: [32,\n      64]  # kept\n", "    channels: [48, 96]  # kept\n"),
            ("    channels:\n      - 32  # one\n      - 64\n", "holds comments"),
            ("    channels: &c [32, 64]\n", "shared with another through a YAML anchor"))
        for written, expected in cases:
            text = original.replace(ft78ne, written, 1)
            if "&c" in written:
                text = text.replace("    channels: [32, 64, 128, 256]\n", "    channels: *c\n")
            path = self.write_config(text)
            status, _, err = run("generate", "--config", path, "--out", self.tmp + "/out",
                                 "--target", "ft78ne", "--channels", "48 96")
            with open(path) as f:
                after = f.read()
            if expected.startswith("    "):
                self.assertEqual((status, after), (0, text.replace(written, expected, 1)), err)
            else:
                self.assertEqual((status, after), (2, text))
                self.assertIn(f"{path}:{line_of('ft78ne', 'channels')}: targets.ft78ne.channels: ", err)
                self.assertIn(expected, err)

    def test_an_error_leaves_the_tree_unchanged(self):
        out = self.tmp + "/out"
        run("generate", "--config", TARGETS_YAML, "--out", out)
        before = tree(out)
        with open(TARGETS_YAML) as f:
            bad = f.read().replace("max_unroll: 32", "max_unroll: 0", 2)
        path = self.write_config(bad)
        copy = os.path.join(self.tmp, "copy.yaml")
        shutil.copy(TARGETS_YAML, copy)
        for argv in (("--config", path), ("--config", copy, "--target", "mt7004",
                                          "--channels", "48 4096")):
            status, _, err = run("generate", "--out", out, *argv)
            self.assertEqual(status, 2, err)
            self.assertEqual(tree(out), before, argv)
        with open(copy, "rb") as f, open(TARGETS_YAML, "rb") as g:
            self.assertEqual(f.read(), g.read())

    def test_stale_generated_files_are_removed_and_user_files_kept(self):
        out = self.tmp + "/out"
        run("generate", "--config", TARGETS_YAML, "--out", out)
        with open(out + "/mt7004/bng_old_ukernels.c", "w") as f:
            f.write("/* DO NOT EDIT: generated by the batchnormgrad generator 0.0.1. */\n")
        with open(out + "/mt7004/NOTES.txt", "w") as f:
            f.write("my notes")
        status, stdout, _ = run("generate", "--config", TARGETS_YAML, "--out", out,
                                "--target", "mt7004")
        self.assertEqual(status, 0)
        self.assertFalse(os.path.exists(out + "/mt7004/bng_old_ukernels.c"))
        self.assertIn(f"removed {out}/mt7004/bng_old_ukernels.c", stdout)
        self.assertTrue(os.path.exists(out + "/mt7004/NOTES.txt"))
        self.assertIn(f"kept (not written by the generator) {out}/mt7004/NOTES.txt", stdout)

    def test_file_manager_refuses_a_second_write(self):
        fm = FileManager(self.tmp)
        fm.add("t/a.c", "x")
        with self.assertRaises(AssertionError):
            fm.add("t/a.c", "y")


def temporaries(path):
    """Every temporary of the generator's left below path."""
    return [os.path.join(d, n) for d, _, names in os.walk(path) for n in names if is_temporary(n)]


def manifest_is_true(test, dest):
    """Every file of dest is in its MANIFEST: the drop's with their sha256, the rest as
    the folder's own; and nothing listed is missing."""
    import hashlib
    with open(os.path.join(dest, "MANIFEST")) as f:
        text = f.read()
    drop_part = text.split("\nsha256:\n", 1)[1]
    listed, _, own = drop_part.partition("\nnot part of the drop")
    drop = dict(reversed(line.split("  ", 1)) for line in listed.strip().splitlines())
    own_names = own.split(":\n", 1)[1].split() if own else []
    for name, digest in drop.items():
        with open(os.path.join(dest, name), "rb") as f:
            test.assertEqual(hashlib.sha256(f.read()).hexdigest(), digest, name)
    test.assertEqual(sorted(os.listdir(dest)), sorted(list(drop) + own_names + ["MANIFEST"]))
    return drop, own_names


# A driver for a generate run in a child process that something ends half way: the
# argument names the hook, put on the n-th call of a function of generator.files.
INTERRUPTED_RUN = """
import os, signal, sys
sys.path.insert(0, {root!r})
import generator.files as files
from generator.cli import main
what, n = sys.argv[1], int(sys.argv[2])
calls = [0]
def hooked(original, action):
    def f(*a, **k):
        calls[0] += 1
        if calls[0] == n and action == "before":
            os.kill(os.getpid(), signal.SIGTERM)
        result = original(*a, **k)
        if calls[0] == n and action == "after-kill":
            os.kill(os.getpid(), signal.SIGKILL)
        return result
    return f
if what == "term-during-renames":
    files.os.replace = hooked(os.replace, "before")
elif what == "kill-after-temporary":
    files.FileManager._temporary = hooked(files.FileManager._temporary, "after-kill")
sys.exit(main(sys.argv[3:]))
"""


class AccidentsTest(TempDir):
    """Files and trees under real-world accidents."""

    def changed_config(self):
        with open(TARGETS_YAML) as f:
            return self.write_config(f.read().replace("DSP cluster", "DSP cluster (changed)"))

    def interrupted(self, what, n, *argv):
        import subprocess
        driver = os.path.join(self.tmp, "driver.py")
        with open(driver, "w") as f:
            f.write(INTERRUPTED_RUN.format(root=ROOT))
        return subprocess.run([sys.executable, driver, what, str(n), *argv], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)

    # -- 1. vendor never writes through a link -------------------------------------

    def test_vendor_replaces_links_and_never_writes_through_them(self):
        dest, victim = self.tmp + "/drop", self.tmp + "/elsewhere.c"
        header = self.tmp + "/generated/ft78ne/batch_norm_grad.h"   # stands for the real one
        os.makedirs(dest)
        os.makedirs(os.path.dirname(header))
        for path in (victim, header):
            with open(path, "w") as f:
                f.write("precious\n")
        os.symlink(victim, dest + "/bng_entry.c")
        os.symlink(header, dest + "/batch_norm_grad.h")
        os.symlink(self.tmp + "/nowhere", dest + "/bng_hal.h")          # dangling
        status, _, err = run("vendor", "--config", TARGETS_YAML, "--target", "mt7004",
                             "--dest", dest)
        self.assertEqual(status, 0, err)
        for path in (victim, header):
            with open(path) as f:
                self.assertEqual(f.read(), "precious\n", path)
        for name in ("bng_entry.c", "batch_norm_grad.h", "bng_hal.h"):
            self.assertFalse(os.path.islink(os.path.join(dest, name)), name)
        manifest_is_true(self, dest)

    def test_generate_replaces_a_link_with_the_same_content(self):
        out = self.tmp + "/out"
        run("generate", "--config", TARGETS_YAML, "--out", out)
        copy = self.tmp + "/copy.h"
        shutil.copy(out + "/mt7004/bng_kernels.h", copy)
        os.unlink(out + "/mt7004/bng_kernels.h")
        os.symlink(copy, out + "/mt7004/bng_kernels.h")
        status, stdout, _ = run("generate", "--config", TARGETS_YAML, "--out", out)
        self.assertEqual(status, 0)
        self.assertIn(f"wrote {out}/mt7004/bng_kernels.h", stdout)
        self.assertFalse(os.path.islink(out + "/mt7004/bng_kernels.h"))

    # -- 3. a vendor drop is all or nothing, its MANIFEST always true -------------

    def test_second_drop_removes_the_first_drops_files_and_lists_the_users(self):
        dest = self.tmp + "/drop"
        os.makedirs(dest)
        with open(dest + "/board.c", "w") as f:
            f.write("int board;\n")
        self.assertEqual(run("vendor", "--config", TARGETS_YAML, "--target", "mt7004",
                             "--hal", "hthreads", "--dest", dest)[0], 0)
        first, own = manifest_is_true(self, dest)
        self.assertIn("bng_f16_ukernels.c", first)
        self.assertEqual(own, ["board.c"])
        status, stdout, err = run("vendor", "--config", TARGETS_YAML, "--target", "ft78ne",
                                  "--dest", dest)
        self.assertEqual(status, 0, err)
        second, own = manifest_is_true(self, dest)
        for name in ("bng_f16_ukernels.c", "bng_hal_hthreads.c", "bng_hal_hthreads.h",
                     "bng_hal_hthreads_config.h"):
            self.assertNotIn(name, second)
            self.assertFalse(os.path.exists(os.path.join(dest, name)), name)
            self.assertIn(f"removed {dest}/{name}", stdout)
        self.assertEqual(own, ["board.c"])
        with open(dest + "/MANIFEST") as f:     # *.c would compile board.c too
            compile_line = next(line for line in f if line.startswith("compile:"))
        self.assertNotIn("*.c", compile_line)
        self.assertIn("bng_f32_ukernels.c", compile_line)

    def test_a_users_file_named_like_an_old_temporary_is_kept(self):
        """.tmp- and 8 letters or digits was generator 0.1.0's temporary name; a file of
        the user's so named is the user's, in a drop and in a generated folder."""
        dest, out = self.tmp + "/drop", self.tmp + "/out"
        os.makedirs(dest)
        for name in (".tmp-notes123", ".tmp-k3j_x9a0"):
            with open(os.path.join(dest, name), "w") as f:
                f.write("mine\n")
        self.assertEqual(run("vendor", "--config", TARGETS_YAML, "--target", "mt7004",
                             "--dest", dest)[0], 0)
        _, own = manifest_is_true(self, dest)
        self.assertEqual(own, [".tmp-k3j_x9a0", ".tmp-notes123"])
        run("generate", "--config", TARGETS_YAML, "--out", out)
        with open(out + "/mt7004/.tmp-notes123", "w") as f:
            f.write("mine\n")
        self.assertEqual(run("generate", "--config", TARGETS_YAML, "--out", out, "--check")[0], 0)
        status, stdout, _ = run("generate", "--config", TARGETS_YAML, "--out", out)
        self.assertEqual(status, 0)
        self.assertIn(f"kept (not written by the generator) {out}/mt7004/.tmp-notes123", stdout)
        self.assertTrue(os.path.exists(out + "/mt7004/.tmp-notes123"))

    def test_a_file_of_the_previous_drop_the_user_edited_is_kept(self):
        dest = self.tmp + "/drop"
        run("vendor", "--config", TARGETS_YAML, "--target", "mt7004", "--dest", dest)
        with open(dest + "/bng_f16_ukernels.c", "a") as f:
            f.write("/* my fix */\n")
        self.assertEqual(run("vendor", "--config", TARGETS_YAML, "--target", "ft78ne",
                             "--dest", dest)[0], 0)
        _, own = manifest_is_true(self, dest)
        self.assertEqual(own, ["bng_f16_ukernels.c"])

    def test_a_failed_drop_leaves_the_previous_one_whole(self):
        import resource
        import subprocess
        dest = self.tmp + "/drop"
        run("vendor", "--config", TARGETS_YAML, "--target", "ft78ne", "--dest", dest)
        before = tree(dest)

        def small_files():
            resource.setrlimit(resource.RLIMIT_FSIZE, (40000, 40000))
        r = subprocess.run([sys.executable, "-m", "generator", "vendor", "--target", "mt7004",
                            "--hal", "hthreads", "--dest", dest], cwd=ROOT, capture_output=True,
                           text=True, preexec_fn=small_files, timeout=120)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("File too large; nothing was written", r.stderr)
        self.assertEqual(r.stderr.count("\n"), 1, r.stderr)
        self.assertEqual(tree(dest), before)
        manifest_is_true(self, dest)

    def test_vendor_uses_the_file_manager(self):
        # one copy of the all-or-nothing machinery (no second copy of it)
        import inspect
        import generator.vendor as vendor
        source = inspect.getsource(vendor)
        self.assertIn("FileManager(", source)
        self.assertNotIn('"w"', source)
        self.assertNotIn('"wb"', source)

    # -- 4. an interrupted generate leaves the old tree, its leftovers are removed -

    def test_ctrl_c_and_any_exception_during_the_renames_roll_back(self):
        from unittest import mock
        out = self.tmp + "/out"
        run("generate", "--config", TARGETS_YAML, "--out", out)
        with open(out + "/mt7004/bng_old_ukernels.c", "w") as f:      # stale: to remove
            f.write("/* DO NOT EDIT: generated by the batchnormgrad generator 0.0.1. */\n")
        before = tree(out)
        path = self.changed_config()
        real_replace = os.replace
        for exc in (KeyboardInterrupt, RuntimeError, SystemExit):
            for n in (1, 4, 9):
                calls = []

                def replace(a, b, exc=exc, n=n, calls=calls):
                    calls.append(a)
                    if len(calls) == n:
                        raise exc()
                    return real_replace(a, b)
                with mock.patch("os.replace", replace):
                    if exc is KeyboardInterrupt:
                        status, _, err = run("generate", "--config", path, "--out", out)
                        self.assertEqual(status, 130)
                        self.assertEqual(err, "error: interrupted by SIGINT; no file was left "
                                              "half-written\n")
                    else:
                        with self.assertRaises(exc):
                            run("generate", "--config", path, "--out", out)
                self.assertEqual(tree(out), before, (exc, n))
                self.assertEqual(temporaries(out), [], (exc, n))

    def test_sigterm_during_the_renames_rolls_back(self):
        out = self.tmp + "/out"
        run("generate", "--config", TARGETS_YAML, "--out", out)
        before = tree(out)
        r = self.interrupted("term-during-renames", 5, "generate", "--config",
                             self.changed_config(), "--out", out)
        self.assertEqual(r.returncode, 143, r.stderr)
        self.assertIn("interrupted by SIGTERM", r.stderr)
        self.assertNotIn("Traceback", r.stderr)
        self.assertEqual(tree(out), before)
        self.assertEqual(temporaries(out), [])

    def test_kill_9_leftovers_are_removed_by_the_next_run(self):
        out = self.tmp + "/out"
        run("generate", "--config", TARGETS_YAML, "--out", out)
        r = self.interrupted("kill-after-temporary", 1, "generate", "--config",
                             self.changed_config(), "--out", out)
        self.assertEqual(r.returncode, -9)
        left = temporaries(out)
        self.assertEqual(len(left), 1)
        self.assertEqual(os.path.getsize(left[0]), 0)      # no banner: it needs the name
        status, stdout, _ = run("generate", "--config", TARGETS_YAML, "--out", out, "--check")
        self.assertEqual(status, 1)
        self.assertIn("a temporary left by an interrupted run", stdout)
        status, stdout, _ = run("generate", "--config", TARGETS_YAML, "--out", out)
        self.assertEqual(status, 0)
        self.assertIn("removed leftover temporary", stdout)
        self.assertEqual(temporaries(out), [])
        self.assertEqual(tree(out), tree(os.path.join(ROOT, "generated")))
        self.assertEqual(run("generate", "--config", TARGETS_YAML, "--out", out, "--check")[0], 0)

    # -- 5. renamed and removed targets; regen-check owns only what it wrote ------

    def two_targets(self, second="dsp2"):
        return self.write_config(GOOD + GOOD.split("targets:\n", 1)[1].replace("  dsp:", f"  {second}:"))

    def test_a_target_gone_from_the_config_loses_its_folder(self):
        out = self.tmp + "/out"
        self.assertEqual(run("generate", "--config", self.two_targets(), "--out", out)[0], 0)
        self.assertEqual(sorted(os.listdir(out)), ["dsp", "dsp2"])
        status, stdout, _ = run("generate", "--config", self.two_targets("dsp3"), "--out", out)
        self.assertEqual(status, 0)
        self.assertEqual(sorted(os.listdir(out)), ["dsp", "dsp3"])
        self.assertIn(f"removed {out}/dsp2/build.mk", stdout)

    def test_a_gone_targets_folder_with_user_files_is_kept_and_reported(self):
        out = self.tmp + "/out"
        run("generate", "--config", self.two_targets(), "--out", out)
        with open(out + "/dsp2/NOTES.txt", "w") as f:
            f.write("mine")
        os.makedirs(out + "/other")                 # not a generated folder: not looked at
        with open(out + "/other/x.c", "w") as f:
            f.write("/* DO NOT EDIT: generated by the batchnormgrad generator */\n")
        status, stdout, _ = run("generate", "--config", self.write_config(GOOD), "--out", out)
        self.assertEqual(status, 0)
        self.assertEqual(os.listdir(out + "/dsp2"), ["NOTES.txt"])
        self.assertIn(f"kept {out}/dsp2/: target dsp2 is not in", stdout)
        self.assertTrue(os.path.exists(out + "/other/x.c"))

    def test_one_target_runs_leave_other_folders(self):
        out = self.tmp + "/out"
        run("generate", "--config", self.two_targets(), "--out", out)
        path = self.write_config(GOOD)
        self.assertEqual(run("generate", "--config", path, "--out", out, "--target", "dsp")[0], 0)
        self.assertEqual(sorted(os.listdir(out)), ["dsp", "dsp2"])

    def test_check_compares_only_what_the_generator_owns_and_its_advice_works(self):
        out = self.tmp + "/out"
        run("generate", "--config", self.two_targets(), "--out", out)
        with open(out + "/dsp/NOTES.txt", "w") as f:           # documented: kept
            f.write("mine")
        status, stdout, err = run("generate", "--config", self.two_targets(), "--out", out,
                                  "--check")
        self.assertEqual((status, err), (0, ""))
        self.assertIn("up to date", stdout)
        with open(out + "/dsp/batch_norm_grad.h", "a") as f:   # an edit of a generated file
            f.write("/* edit */\n")
        path = self.two_targets("renamed")
        status, stdout, err = run("generate", "--config", path, "--out", out, "--check")
        self.assertEqual(status, 1)
        self.assertIn(f"{out}/dsp/batch_norm_grad.h: differs", stdout)
        self.assertIn("+/* edit */", stdout.replace("-/* edit */", "+/* edit */"))
        self.assertIn(f"{out}/dsp2/build.mk: is no longer generated", stdout)
        self.assertIn(f"{out}/renamed/build.mk: is missing", stdout)
        self.assertNotIn("NOTES", stdout)
        self.assertIn("run make generate", err)
        self.assertEqual(run("generate", "--config", path, "--out", out)[0], 0)   # the advice
        self.assertEqual(run("generate", "--config", path, "--out", out, "--check")[0], 0)
        self.assertTrue(os.path.exists(out + "/dsp/NOTES.txt"))

    def test_check_writes_nothing(self):
        out = self.tmp + "/out"
        status, stdout, _ = run("generate", "--config", TARGETS_YAML, "--out", out, "--check")
        self.assertEqual(status, 1)
        self.assertFalse(os.path.exists(out))

    def test_make_follows_targets_yaml(self):
        import subprocess
        if not shutil.which("make"):
            self.skipTest("no make")
        copy = self.tmp + "/project"
        os.makedirs(copy)
        for name in ("Makefile", "mk", "targets.yaml", "generator", "templates", "generated"):
            (shutil.copytree if os.path.isdir(os.path.join(ROOT, name)) else shutil.copy)(
                os.path.join(ROOT, name), os.path.join(copy, name))
        with open(copy + "/generated/mt7004/NOTES.txt", "w") as f:
            f.write("mine")

        def make(*goals):
            return subprocess.run(["make", "--no-print-directory", *goals], cwd=copy,
                                  capture_output=True, text=True, timeout=300)
        self.assertEqual(make("regen-check").returncode, 0)     # a user file is no staleness
        with open(copy + "/targets.yaml") as f:
            text = f.read()
        with open(copy + "/targets.yaml", "w") as f:
            f.write(text.replace("  ft78ne:", "  ft79:"))
        r = make("help")
        self.assertIn("targets: mt7004\n", r.stdout)     # not ft78ne; ft79 not generated yet
        self.assertIn("generated/ft79/ is missing: run make generate", r.stderr)
        r = make("regen-check")
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("generated/ft78ne/build.mk: is no longer generated", r.stdout)
        self.assertIn("run make generate", r.stderr)
        self.assertEqual(make("generate").returncode, 0)
        self.assertEqual(sorted(os.listdir(copy + "/generated")), ["ft79", "mt7004"])
        r = make("regen-check")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        r = make("help")
        self.assertIn("targets: ft79 mt7004\n", r.stdout)
        self.assertNotIn("missing", r.stderr)


class YamlLimitsTest(TempDir):
    """YAML that multiplies work or misreads numbers."""

    def test_aliases_are_bounded_by_the_work_they_cause(self):
        import time
        base = GOOD.replace("  dsp:", "  base: &x")
        path = self.write_config(base + "".join(f"  t{i}: *x\n" for i in range(12000)))
        self.assertLess(os.path.getsize(path), 1 << 20)
        start = time.monotonic()
        status, _, err = run("generate", "--config", path, "--out", self.tmp + "/out")
        self.assertLess(time.monotonic() - start, 10)
        self.assertEqual(status, 2)
        self.assertEqual(err.count("\n"), 1, err)
        self.assertRegex(err, rf"^error: {path}:\d+: more than 20000 values, aliases counted")
        laughs = "a: &a [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]\n" + "".join(
            f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdefgh", "bcdefghi"))
        for text in (laughs + "targets: {}\n", "targets:\n  a: &a [*a]\n",
                     "targets: &t\n  x: {<<: *t}\n"):
            status, _, err = run("generate", "--config", self.write_config(text), "--out",
                                 self.tmp + "/out")
            self.assertEqual(status, 2, text)
            self.assertEqual(err.count("\n"), 1, err)
            self.assertNotIn("Traceback", err)
        self.assertFalse(os.path.exists(self.tmp + "/out"))
        # an anchor shared by a few targets is what aliases are for
        shared = GOOD.replace("    memory:\n", "    memory: &mem\n") + "".join(
            GOOD.split("targets:\n", 1)[1].replace("  dsp:", f"  dsp{i}:").split("    memory:")[0]
            + "    memory: *mem\n    channels: [32, 64]\n    max_unroll: 32\n" for i in range(5))
        self.assertEqual(len(load(self.write_config(shared)).targets), 6)

    def test_leading_zero_is_not_octal(self):
        path = self.write_config(GOOD.replace("[32, 64]", "[032, 064]"))
        status, _, err = run("generate", "--config", path, "--out", self.tmp + "/out")
        self.assertEqual(status, 2)
        self.assertIn(f"{path}:14: targets.dsp.channels: '032' has a leading zero, which "
                      "YAML 1.1 reads as octal (26); write 32", err)
        for text in ("020", "+020", "0_20", "!!int 020", "00"):
            path = self.write_config(GOOD.replace("lanes: 16", f"lanes: {text}"))
            status, _, err = run("generate", "--config", path, "--out", self.tmp + "/out")
            self.assertEqual(status, 2, text)
            self.assertIn("leading zero", err, text)
        self.assertFalse(os.path.exists(self.tmp + "/out"))


class CommandLineTest(TempDir):
    """Every argument parsed into one clean line; vendor's DEST; pipes."""

    def test_vendor_destination_inside_the_project_or_forging_the_manifest(self):
        link = self.tmp + "/link"
        os.symlink(os.path.join(ROOT, "include"), link)
        for dest, fragment in (("include", "is inside the project"),
                               (os.path.join(ROOT, "templates", "x"), "is inside the project"),
                               (link, "is inside the project"),
                               (link + "/sub", "is inside the project"),
                               (self.tmp + "/a\nb", "contains control characters"),
                               (self.tmp + "/a\rb", "contains control characters"),
                               (self.tmp + "/a\x1bb", "contains control characters"),
                               ("", "is empty")):
            status, _, err = run("vendor", "--config", TARGETS_YAML, "--target", "mt7004",
                                 "--dest", dest)
            self.assertEqual(status, 2, dest)
            self.assertEqual(err.count("\n"), 1, err)
            self.assertIn(fragment, err)
        self.assertFalse(os.path.exists(os.path.join(ROOT, "templates", "x")))

    def test_plan_into_a_closed_pipe_ends_quietly(self):
        import subprocess
        r = subprocess.run(f"'{sys.executable}' -m generator plan | head -1", shell=True,
                           cwd=ROOT, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout.count("\n"), 1)
        self.assertEqual(r.stderr, "")

    def test_every_argument_error_is_one_clean_line(self):
        t = ("--config", TARGETS_YAML, "--target", "mt7004")
        for argv in (("report", *t, "--objects", "host"),
                     ("report", *t, "--objects", "host,nm"),
                     ("report", *t, "--objects", ",nm,x.o"),
                     ("report", *t, "--objects", ""),
                     ("generate", "--bogus"),
                     ("vendor", *t, "--dest", self.tmp + "/d", "--hal", "none"),
                     ("vendor", *t),
                     (),
                     ("nonsense",),
                     ("generate", "--config", "a\0b"),
                     ("generate", "--config", TARGETS_YAML, "--out", self.tmp + "/o\0x"),
                     ("plan", "--config", TARGETS_YAML, "--target", "mt\0"),
                     ("vendor", *t, "--dest", self.tmp + "/d\0")):
            status, out, err = run(*argv)
            self.assertEqual(status, 2, argv)
            self.assertTrue(err.startswith("error: "), (argv, err))
            self.assertEqual(err.count("\n"), 1, (argv, err))
            self.assertFalse(os.path.exists(self.tmp + "/d"))


if __name__ == "__main__":
    unittest.main()
