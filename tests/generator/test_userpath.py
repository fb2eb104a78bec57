"""The firmware engineer's path: errors in make's words, the drop's licence, build glue,
MANIFEST and its verification, the version in one place (stdlib unittest)."""

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, ROOT)

from generator import COPYRIGHT, LICENSE_ID, VERSION   # noqa: E402
from generator.cli import main                         # noqa: E402
from generator.vendor import source_pin                # noqa: E402

TARGETS_YAML = os.path.join(ROOT, "targets.yaml")
with open(TARGETS_YAML) as _f:
    _LINES = _f.read().splitlines()
# Where mt7004's memory.private_bytes stands in targets.yaml.
PRIVATE_BYTES_LINE = next(i for i in range(_LINES.index("  mt7004:"), len(_LINES))
                          if _LINES[i].strip().startswith("private_bytes:")) + 1
SPDX = f"SPDX-License-Identifier: {LICENSE_ID}"


def run(*argv):
    """Run the CLI in-process: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(list(argv))
    return status, out.getvalue(), err.getvalue()


class TempDir(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, self.tmp)
        self.config = os.path.join(self.tmp, "targets.yaml")
        shutil.copy(TARGETS_YAML, self.config)

    def config_unchanged(self):
        with open(self.config, "rb") as f, open(TARGETS_YAML, "rb") as g:
            return f.read() == g.read()


class MakeWordsTest(TempDir):
    """Under make (--via-make) errors name CHANNELS=, TARGET=, DEST=, HAL=."""

    def make_error(self, *argv):
        status, _, err = run("--via-make", *argv)
        self.assertEqual(status, 2, argv)
        self.assertEqual(err.count("\n"), 1, err)
        self.assertNotRegex(err, r"--(channels|target|dest|hal)\b")
        return err

    def test_each_variable_by_its_make_name(self):
        out = ("--out", self.tmp + "/out")
        err = self.make_error("generate", "--config", self.config, "--channels", "48 96", *out)
        self.assertTrue(err.startswith('error: CHANNELS="48 96": needs TARGET=: the target '), err)
        err = self.make_error("generate", "--config", self.config, "--target", "mt7", *out)
        self.assertEqual(err, "error: TARGET=mt7: unknown target; known: ft78ne, mt7004\n")
        err = self.make_error("generate", "--config", self.config, "--target", "mt7004",
                              "--channels", "48 x", *out)
        self.assertTrue(err.startswith('error: CHANNELS="48 x": x: not a positive integer'), err)
        err = self.make_error("vendor", "--config", self.config, "--target", "", "--dest",
                              self.tmp + "/d")
        self.assertEqual(err, "error: TARGET=: vendor needs one target; known: ft78ne, mt7004\n")
        err = self.make_error("vendor", "--config", self.config, "--target", "mt7004",
                              "--dest", "")
        self.assertEqual(err, "error: DEST=: is empty: name the folder to write the drop into\n")
        err = self.make_error("vendor", "--config", self.config, "--target", "mt7004",
                              "--dest", self.tmp + "/d", "--hal", "posix")
        self.assertTrue(err.startswith("error: HAL=posix: not a reference HAL"), err)
        self.assertTrue(self.config_unchanged())
        self.assertFalse(os.path.exists(self.tmp + "/d"))

    def test_a_refused_vendor_with_channels_edits_nothing(self):
        """vendor --channels (make vendor CHANNELS=) asks every question before it edits
        targets.yaml or renders: whatever is refused, and in any combination, the file
        and the tree beside it stay as they were and no drop is written."""
        good = {"--target": "mt7004", "--channels": "48 96", "--dest": self.tmp + "/d",
                "--hal": "hthreads"}
        bad = {"--target": "mt7040", "--channels": "48 0", "--dest": self.config,
               "--hal": "bogus"}
        for refused in range(1, 16):
            argv = ["vendor", "--config", self.config]
            for bit, option in enumerate(good):
                argv += [option, bad[option] if refused >> bit & 1 else good[option]]
            self.make_error(*argv)
            self.assertTrue(self.config_unchanged(), argv)
            self.assertFalse(os.path.exists(self.tmp + "/generated"), argv)
            self.assertFalse(os.path.exists(self.tmp + "/d"), argv)

    def test_a_drop_refused_as_it_is_written_puts_the_list_back(self):
        """A DEST the early checks pass but the drop cannot be written into (a file in
        its path): the list goes back and the tree beside the configuration with it."""
        with open(self.tmp + "/afile", "w"):
            pass
        status, _, err = run("vendor", "--config", self.config, "--target", "mt7004",
                             "--channels", "48 96", "--dest", self.tmp + "/afile/sub")
        self.assertEqual(status, 2, err)
        self.assertTrue(self.config_unchanged())
        with open(self.tmp + "/generated/mt7004/bng_kernels.h") as f:
            self.assertNotIn("c96", f.read())

    def test_vendor_with_channels_sets_renders_and_vendors(self):
        status, out, err = run("vendor", "--config", self.config, "--target", "mt7004",
                               "--channels", "48 96", "--dest", self.tmp + "/d")
        self.assertEqual(status, 0, err)
        self.assertIn("mt7004 channels: 32 64 128 256 -> 48 96", out)
        with open(self.tmp + "/generated/mt7004/bng_kernels.h") as f:
            self.assertIn("c96", f.read())
        with open(self.tmp + "/d/bng_f32_ukernels.c") as f:
            self.assertIn("__mt7004_c96_", f.read())

    def test_a_config_error_is_said_once(self):
        """A targets.yaml that does not load: make says the generator's error, with file
        and line, once (not a Makefile warning before it), whichever command ran."""
        with open(self.config, "a") as f:
            f.write("  bogus: {}\n")
        for goal in ("generate", "lib"):
            done = subprocess.run(["make", "-s", "--no-print-directory", "-C", ROOT, goal,
                                   "TARGET=mt7004", f"CONFIG={self.config}"],
                                  capture_output=True, text=True)
            said = done.stdout + done.stderr
            self.assertNotEqual(done.returncode, 0, goal)
            self.assertEqual(said.count(f"error: {self.config}:"), 1, said)
            self.assertNotIn("does not load", said)

    def test_config_picks_the_targets_make_builds(self):
        """CONFIG= names the configuration the Makefile reads its targets from too."""
        start, end = _LINES.index("  ft78ne:"), _LINES.index("  mt7004:")
        with open(self.config, "w") as f:
            f.write("\n".join(_LINES[:start] + _LINES[end:]) + "\n")
        done = subprocess.run(["make", "-s", "--no-print-directory", "-C", ROOT, "help",
                               f"CONFIG={self.config}"], capture_output=True, text=True)
        self.assertEqual(done.returncode, 0, done.stderr)
        self.assertIn("\ntargets: mt7004\n", done.stdout)

    def test_without_make_the_options(self):
        status, _, err = run("generate", "--config", self.config, "--channels", "48",
                             "--out", self.tmp + "/out")
        self.assertEqual(status, 2)
        self.assertTrue(err.startswith("error: --channels: 48: needs --target: "), err)

    def test_a_size_error_names_the_key_and_the_value_that_would_do(self):
        # mt7004 as shipped: past 1020 its _s scratch would end past memory.shared, which
        # a larger private_bytes does not change, so none is advised
        err = self.make_error("generate", "--config", self.config, "--target", "mt7004",
                              "--channels", "2000", "--out", self.tmp + "/out")
        self.assertEqual(err, f"error: CHANNELS=2000: memory.private_bytes (768000 bytes, "
                         f"{self.config}:{PRIVATE_BYTES_LINE}) holds the _s workspace and "
                         "32-row tiles for at most 1109 channels, and the _s scratch of a "
                         "count above 1020 would end past memory.shared: list no count "
                         "above 1020\n")
        self.assertTrue(self.config_unchanged())
        # a private memory too small for a count the scratch takes: the value advised
        # is enough, and the same list is taken with it
        self.set_private_bytes(400000)
        err = self.make_error("generate", "--config", self.config, "--target", "mt7004",
                              "--channels", "48 900", "--out", self.tmp + "/out")
        advised = re.fullmatch(r'error: CHANNELS="48 900": 900: memory\.private_bytes \(400000 '
                               r'bytes, .*\) holds the _s workspace and 32-row tiles for at most '
                               r'576 channels: list no count above 576, or set '
                               r'memory\.private_bytes to at least (\d+)\n', err)
        self.assertIsNotNone(advised, err)
        self.set_private_bytes(int(advised.group(1)))
        status, _, err = run("--via-make", "generate", "--config", self.config, "--target",
                             "mt7004", "--channels", "48 900", "--out", self.tmp + "/out")
        self.assertEqual(status, 0, err)

    def test_a_memory_map_no_scratch_fits_is_named_before_private_memory(self):
        # memory.shared ending where the scratch starts: no count's scratch fits, so no
        # private_bytes would do; the error names the scratch's address, not the size
        self.set_private_bytes(131072)
        with open(self.config) as f:
            text = f.read()
        at = text.index("  mt7004:")
        text = text[:at] + text[at:].replace("shared: {address: 0xAFA00000, bytes: 6291456}",
                                             "shared: {address: 0xAFA00000, bytes: 5246976}", 1)
        with open(self.config, "w") as f:
            f.write(text)
        status, _, err = run("plan", "--config", self.config, "--target", "mt7004")
        self.assertEqual(status, 2)
        self.assertIn("targets.mt7004.memory.shared_scratch_address: 0xaff01000: the ", err)
        self.assertNotIn("private_bytes", err)

    def set_private_bytes(self, value):
        """mt7004's memory.private_bytes in the copy of targets.yaml := value."""
        with open(self.config) as f:
            lines = f.read().splitlines(keepends=True)
        key = lines[PRIVATE_BYTES_LINE - 1]
        lines[PRIVATE_BYTES_LINE - 1] = key[:key.index(":") + 1] + f" {value}\n"
        with open(self.config, "w") as f:
            f.writelines(lines)

    def test_an_error_line_names_only_the_first_few_values(self):
        channels = "\n".join(str(c) for c in range(1, 4097))      # "$(seq 1 4096)"
        for style, start in (((), "error: --channels: "),
                             (("--via-make",), 'error: CHANNELS="1 2 3 4 ... (4096 values)": ')):
            status, _, err = run(*style, "generate", "--config", self.config, "--target",
                                 "mt7004", "--channels", channels, "--out", self.tmp + "/out")
            self.assertEqual(status, 2)
            self.assertLess(len(err), 400, err[:400])
            self.assertTrue(err.startswith(start + "1021 1022 1023 1024 ... (3076 counts): "), err)
            self.assertTrue(err.endswith(": list no count above 1020\n"), err)
        for argv in (("--channels", "9" * 5000), ("--channels", "48 " * 3000 + "x"),
                     ("--channels", "48 " * 3000)):
            for style in ((), ("--via-make",)):
                status, _, err = run(*style, "generate", "--config", self.config, "--target",
                                     "mt7004", *argv, "--out", self.tmp + "/out")
                self.assertEqual(status, 2)
                self.assertLess(len(err), 300, err)
        self.assertTrue(self.config_unchanged())


def drop(test, dest, *extra):
    status, stdout, err = run("vendor", "--config", TARGETS_YAML, "--target", "mt7004",
                              "--dest", dest, *extra)
    test.assertEqual(status, 0, err)
    return stdout


class DropTest(TempDir):
    def test_every_file_carries_the_licence(self):
        dest = self.tmp + "/drop"
        drop(self, dest, "--hal", "hthreads")
        with open(os.path.join(ROOT, "LICENSE")) as f:
            licence = f.read()
        self.assertIn("Apache License", licence.splitlines()[1])
        for name in sorted(os.listdir(dest)):
            with open(os.path.join(dest, name)) as f:
                text = f.read()
            if name == "LICENSE":
                self.assertEqual(text, licence)
            else:
                self.assertIn(SPDX, text[:300], name)
                self.assertIn(COPYRIGHT, text[:300], name)
        for dirpath, _, names in os.walk(os.path.join(ROOT, "generated")):
            for name in names:
                with open(os.path.join(dirpath, name)) as f:
                    self.assertIn(SPDX, f.readline(), name)
        for dirpath, _, names in os.walk(os.path.join(ROOT, "include")):
            for name in names:
                with open(os.path.join(dirpath, name)) as f:
                    first_two = [f.readline(), f.readline()]
                self.assertEqual(first_two, [f"/* {SPDX} */\n", f"/* {COPYRIGHT} */\n"], name)

    def test_build_glue_lists_the_drops_sources_and_the_flags_results_need(self):
        dest = self.tmp + "/drop"
        drop(self, dest)
        sources = sorted(n for n in os.listdir(dest) if n.endswith(".c"))
        self.assertIn("bng_entry.c", sources)
        self.assertIn("bng_hal_conformance.c", sources)
        with open(dest + "/CMakeLists.txt") as f:
            cmake = f.read()
        listed = re.search(r"add_library\(batchnormgrad STATIC\n(.*?)\)", cmake, re.S).group(1)
        self.assertEqual(listed.split(), sources)
        self.assertIn("C_STANDARD 99", cmake)
        self.assertIn("-ffp-contract=off", cmake)
        with open(dest + "/bng.mk") as f:
            fragment = f.read()
        self.assertIn("BNG_SOURCES := $(addprefix $(BNG_DIR)/," + " ".join(sources) + ")\n",
                      fragment)
        self.assertIn("BNG_CFLAGS := -std=c99 -ffp-contract=off\n", fragment)
        self.assertNotRegex(fragment, r"(?m)^[^#\s][^:=]*:(?!=)")    # variables only, no rule
        with open(dest + "/MANIFEST") as f:
            manifest = f.read()
        compile_line = next(line for line in manifest.splitlines() if line.startswith("compile:"))
        self.assertEqual(compile_line, "compile: cc -std=c99 -ffp-contract=off -I. -c "
                         + " ".join(sources))

    def test_the_header_stops_a_hosted_compiler_without_naming_a_file_outside_the_drop(self):
        with open(os.path.join(ROOT, "generated", "mt7004", "batch_norm_grad.h")) as f:
            error = next(line for line in f if line.startswith("#error"))
        self.assertIn("BNG_FIRMWARE", error)
        self.assertIn("BNG_HOST", error)
        self.assertNotIn("include/", error)

    def test_manifest_pins_the_generator(self):
        dest = self.tmp + "/drop"
        drop(self, dest)
        with open(dest + "/MANIFEST") as f:
            manifest = f.read()
        pin = source_pin(ROOT)
        self.assertIn(f"generator: {VERSION}, {pin}\n", manifest)
        self.assertRegex(pin, r"^(git [0-9a-f]{40}(-dirty)?|sha256 [0-9a-f]{64} of generator/ and templates/)$")
        # generated/ never carries the pin: a commit would make regen-check stale
        for dirpath, _, names in os.walk(os.path.join(ROOT, "generated")):
            for name in names:
                with open(os.path.join(dirpath, name)) as f:
                    self.assertNotRegex(f.read(2000), r"[0-9a-f]{40}", name)

    def test_source_pin_in_and_outside_git(self):
        if not shutil.which("git"):
            self.skipTest("no git")
        copy = self.tmp + "/project"
        for name in ("generator", "templates"):
            shutil.copytree(os.path.join(ROOT, name), os.path.join(copy, name),
                            ignore=shutil.ignore_patterns("__pycache__"))
        outside = source_pin(copy)
        self.assertRegex(outside, r"^sha256 [0-9a-f]{64} of generator/ and templates/$")
        with open(copy + "/templates/_banner.j2", "a") as f:
            f.write(" ")
        self.assertNotEqual(source_pin(copy), outside)

        def git(*argv):
            subprocess.run(["git", "-C", copy, *argv], check=True, capture_output=True)
        git("init", "-q")
        git("add", ".")
        git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x")
        head = subprocess.run(["git", "-C", copy, "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
        self.assertEqual(source_pin(copy), f"git {head}")
        with open(copy + "/generator/vendor.py", "a") as f:
            f.write("\n")
        self.assertEqual(source_pin(copy), f"git {head}-dirty")
        # a project copied into another checkout is not that checkout's commit
        inner = copy + "/sub"
        for name in ("generator", "templates"):
            shutil.copytree(os.path.join(copy, name), os.path.join(inner, name))
        self.assertTrue(source_pin(inner).startswith("sha256 "))

    def test_verify_drop(self):
        dest = self.tmp + "/drop"
        os.makedirs(dest)
        with open(dest + "/board.c", "w") as f:        # the folder's own: listed, kept
            f.write("int board;\n")
        drop(self, dest)
        status, stdout, err = run("verify-drop", "--dest", dest)
        files = len(os.listdir(dest)) - 2               # the MANIFEST and board.c
        self.assertEqual((status, err), (0, ""))
        self.assertEqual(stdout, f"{dest}: all {files} files of the drop match their sha256 "
                                 "in the MANIFEST\n")
        with open(dest + "/bng_entry.c", "a") as f:
            f.write("/* a local fix */\n")
        os.unlink(dest + "/bng_vec.h")
        with open(dest + "/notes.txt", "w") as f:
            f.write("x")
        os.makedirs(dest + "/build")
        status, stdout, err = run("--via-make", "verify-drop", "--dest", dest)
        self.assertEqual(status, 1)
        self.assertEqual(stdout.splitlines(), [
            f"{dest}/bng_entry.c: differs from its sha256 in the MANIFEST",
            f"{dest}/bng_vec.h: missing",
            f"{dest}/build/: not in the MANIFEST",
            f"{dest}/notes.txt: not in the MANIFEST"])
        self.assertIn(f"does not match its MANIFEST (2 of {files} files)", err)
        status, _, err = run("--via-make", "verify-drop", "--dest", self.tmp)
        self.assertEqual(status, 2)
        self.assertEqual(err, f"error: DEST={self.tmp}: holds no readable MANIFEST: not a drop\n")

    def test_manifest_lines_check_with_sha256sum(self):
        if not shutil.which("sha256sum"):
            self.skipTest("no sha256sum")
        dest = self.tmp + "/drop"
        drop(self, dest)
        with open(dest + "/MANIFEST") as f:
            listed = f.read().split("\nsha256:\n", 1)[1].split("\n\n", 1)[0].strip() + "\n"
        r = subprocess.run(["sha256sum", "-c", "--quiet", "-"], cwd=dest, input=listed,
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertEqual(len(listed.splitlines()), len(os.listdir(dest)) - 1)


class VersionTest(unittest.TestCase):
    def test_the_changelogs_newest_entry_is_the_version(self):
        """The newest released entry (an "Unreleased" one above it collects what the next
        version will have)."""
        with open(os.path.join(ROOT, "CHANGELOG.md")) as f:
            newest = next(line for line in f if line.startswith("## ") and line != "## Unreleased\n")
        self.assertEqual(newest.split()[1], VERSION)

    def test_the_version_is_written_in_one_place(self):
        hits = []
        for folder in ("generator", "templates"):
            for dirpath, _, names in os.walk(os.path.join(ROOT, folder)):
                for name in names:
                    if name.endswith((".py", ".j2", ".yaml")):
                        with open(os.path.join(dirpath, name)) as f:
                            if re.search(r"\b\d+\.\d+\.\d+\b", f.read()):
                                hits.append(name)
        self.assertEqual(hits, ["__init__.py"])


if __name__ == "__main__":
    unittest.main()
