"""targets.yaml memory.gsm (the GSM rows _s may keep rows in between its passes): the
loader's and the validation's file:line errors, and the constants bng_kernels.h gives
the driver."""

import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from test_generator import GOOD, TempDir, run   # noqa: E402

from generator.loader import load                # noqa: E402
from generator.plan import plan_target           # noqa: E402

PART = """\
    part:
      clock_mhz: 1200
      ddr_mb_per_s: 24000
      gsm_bytes: 6291456
      gsm_mb_per_s: 48000
      dma_latency_ns: 500
      dma_in_flight: 20
      vector_alu_per_cycle: 3
      vector_ldst_per_cycle: 2
"""


def with_gsm(value, part=""):
    """GOOD with memory.gsm (line 14) set to value."""
    return GOOD.replace('      shared_qualifier: ""\n',
                        f'      shared_qualifier: ""\n      gsm: {value}\n') + part


class GsmKeyTest(TempDir):
    def generate(self, text):
        path = self.write_config(text)
        out = os.path.join(self.tmp, "out")
        status, _, err = run("generate", "--config", path, "--out", out, "--quiet")
        return status, err, os.path.join(out, "dsp")

    def expect_error(self, text, line, key, fragment):
        status, err, _ = self.generate(text)
        self.assertEqual(status, 2, err)
        self.assertIn(f"{self.tmp}/targets.yaml:{line}: targets.dsp.memory.{key}", err)
        self.assertIn(fragment, err)

    def constants(self, text):
        status, err, out = self.generate(text)
        self.assertEqual(status, 0, err)
        with open(os.path.join(out, "bng_kernels.h")) as f:
            lines = [line.split() for line in f if line.startswith("#define BNG_GSM_")]
        return {words[1]: words[2] for words in lines}

    def test_loader_reads_it_and_defaults_to_none(self):
        text = with_gsm("{address: 0xAFA00000, bytes: 4096}")
        memory = load(self.write_config(text)).targets[0].memory
        self.assertEqual((memory.gsm_address, memory.gsm_bytes), (0xAFA00000, 4096))
        memory = load(self.write_config(GOOD)).targets[0].memory
        self.assertEqual((memory.gsm_address, memory.gsm_bytes), (0, 0))

    def test_errors_name_the_line(self):
        cases = (
            ("{address: 0xAFA00010, bytes: 4096}", "gsm.address", "is not 64-byte aligned"),
            ("{address: 0xAFA00000, bytes: 4000}", "gsm.bytes", "is not a multiple of 64"),
            ("{address: 0xAFA00000}", "gsm.bytes", "missing required key"),
            ("{address: 0xAFA00000, bytes: 64, at: 1}", "gsm.at", "unknown key"),
            ("{address: 0, bytes: 64}", "gsm.address", "out of range"),
            ("{address: 0xFFFFFFC0, bytes: 128}", "gsm.bytes", "out of range"),
            ("4096", "gsm", "expected a mapping"),
            ("{address: 0xAFF00000, bytes: 4096}", "gsm.address",
             "overlaps the 96-byte parameter block"),
            ("{address: 0xAFEFF000, bytes: 8192}", "gsm.address", "overlaps the"),
        )
        for value, key, fragment in cases:
            with self.subTest(value=value):
                self.expect_error(with_gsm(value), 14, key, fragment)

    def test_no_more_than_the_parts_gsm(self):
        self.expect_error(with_gsm("{address: 0xA0000000, bytes: 6291520}", PART), 14,
                          "gsm.bytes", "more than the part's GSM (part.gsm_bytes 6291456)")

    def test_constants_for_the_driver(self):
        self.assertEqual(self.constants(GOOD), {"BNG_GSM_ADDRESS": "0x0u", "BNG_GSM_BYTES": "0u",
                                                "BNG_GSM_SHARE": "65536u"})
        self.assertEqual(self.constants(with_gsm("{address: 0xAFA00000, bytes: 4194304}", PART)),
                         {"BNG_GSM_ADDRESS": "0xafa00000u", "BNG_GSM_BYTES": "4194304u",
                          "BNG_GSM_SHARE": "43690u"})

    def test_share_is_gsm_over_gsm_and_ddr_in_units_of_two_to_the_minus_16(self):
        text = with_gsm("{address: 0xAFA00000, bytes: 4096}",
                        PART.replace("gsm_mb_per_s: 48000", "gsm_mb_per_s: 18000"))
        share = plan_target(load(self.write_config(text)).targets[0]).gsm_share
        self.assertEqual(share, 65536 * 18000 // 42000)
        self.assertEqual(share, 28086)


if __name__ == "__main__":
    unittest.main()
