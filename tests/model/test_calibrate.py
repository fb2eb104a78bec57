"""The calibration program (include/programs/bng_calibrate.c) on the host HAL: it runs and
prints lines that, pasted into targets.yaml, the loader reads back; and the loader's
part: section reports its errors with file and line like every other key."""

import os
import re
import shutil
import subprocess
import tempfile
import unittest

from programs import TARGET, TARGETS_YAML, program

from generator.errors import ConfigError
from generator.loader import PART_FIGURES, load

MEASUREMENT = re.compile(r"# (ddr|gsm) (get|put) +(\d+) B +(\d+) cores +(\d+) MB/s\Z")
PASTE = re.compile(r"      ([a-z_]+): (\d+)\Z")


def calibrate_output() -> str:
    done = subprocess.run([program("calibrate")], capture_output=True, text=True, timeout=300)
    if done.returncode:
        raise AssertionError(f"bng_calibrate failed: {done.stderr}{done.stdout}")
    return done.stdout


def in_target(text: str, old: str, new: str) -> str:
    """targets.yaml with `old` replaced by `new` once, within TARGET's settings."""
    head, tail = text.split(f"\n  {TARGET}:\n", 1)
    assert old in tail, old
    return f"{head}\n  {TARGET}:\n" + tail.replace(old, new, 1)


def paste(text: str, figures: dict) -> str:
    """targets.yaml with TARGET's part: lines of these figures replaced, as a user pastes."""
    part = load(TARGETS_YAML).target(TARGET).part
    for key, value in figures.items():
        text = in_target(text, f"      {key}: {getattr(part, key)}\n", f"      {key}: {value}\n")
    return text


class CalibrateTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.lines = calibrate_output().splitlines()

    def test_every_measurement_is_a_comment_line(self):
        """Both memories, both directions, three sizes, 1, 2, 4 and 8 cores."""
        found = {MEASUREMENT.match(l).groups()[:4] for l in self.lines if MEASUREMENT.match(l)}
        want = {(m, d, s, c) for m in ("ddr", "gsm") for d in ("get", "put")
                for s in ("256", "4096", "65536") for c in ("1", "2", "4", "8")}
        self.assertEqual(found, want)
        for line in self.lines:
            self.assertTrue(line.startswith("#") or PASTE.match(line), line)

    def test_pasted_lines_load_back(self):
        figures = dict(PASTE.match(l).groups() for l in self.lines if PASTE.match(l))
        self.assertEqual(sorted(figures), ["ddr_mb_per_s", "dma_latency_ns", "gsm_mb_per_s"])
        self.assertTrue(set(figures) <= set(PART_FIGURES))
        with open(TARGETS_YAML, encoding="utf-8") as f:
            text = paste(f.read(), figures)
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        path = os.path.join(tmp, "targets.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        part = load(path).target(TARGET).part
        for key, value in figures.items():
            self.assertEqual(getattr(part, key), int(value), key)


class PartLoaderTest(unittest.TestCase):
    def message(self, old: str, new: str) -> str:
        """The loader's message for targets.yaml with one edit in TARGET's part."""
        with open(TARGETS_YAML, encoding="utf-8") as f:
            text = in_target(f.read(), old, new)
        tmp = tempfile.mkdtemp()
        self.addCleanup(shutil.rmtree, tmp)
        path = os.path.join(tmp, "targets.yaml")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        with self.assertRaises(ConfigError) as caught:
            load(path)
        return str(caught.exception).replace(path, "targets.yaml")

    def line_of(self, fragment: str) -> int:
        """The line of `fragment` within TARGET's settings."""
        with open(TARGETS_YAML, encoding="utf-8") as f:
            lines = f.read().splitlines()
        start = lines.index(f"  {TARGET}:")
        return next(i for i in range(start, len(lines)) if fragment in lines[i]) + 1

    def test_a_figure_out_of_range_names_its_line(self):
        message = self.message("ddr_mb_per_s: 24000", "ddr_mb_per_s: 0")
        where = f"targets.yaml:{self.line_of('ddr_mb_per_s:')}"
        self.assertIn(f"{where}: targets.{TARGET}.part.ddr_mb_per_s: 0 is out of range", message)

    def test_a_missing_figure_is_named(self):
        message = self.message("      dma_in_flight: 20\n", "")
        self.assertIn(f"targets.{TARGET}.part.dma_in_flight: missing required key", message)

    def test_an_unknown_figure_names_its_line(self):
        message = self.message("clock_mhz:", "clock_ghz:")
        where = f"targets.yaml:{self.line_of('clock_mhz:')}"
        self.assertIn(f"{where}: targets.{TARGET}.part.clock_ghz: unknown key", message)


if __name__ == "__main__":
    unittest.main()
