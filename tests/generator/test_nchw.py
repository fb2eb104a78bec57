"""targets.yaml's nchw extension (channel axis 1) and its spatial: list: the loader's
and validator's checks, the kernels and table entries it renders, and that the driver
compiles with nchw beside each family alone."""

import os
import shutil
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from test_generator import GOOD, ROOT, TempDir, run   # noqa: E402
from test_extensions import library_sources, syntax_check   # noqa: E402

from generator.loader import load                      # noqa: E402
from generator.model import DEFAULT_SPATIAL            # noqa: E402

SPLIT = GOOD.replace('      shared_qualifier: ""\n', '      shared_qualifier: ""\n      spaces: '
                     '{kind: split, scalar_bytes: 65536, vector_bytes: 786432}\n')


class NchwTest(TempDir):
    def generate(self, text):
        path = self.write_config(text)
        out = os.path.join(self.tmp, "out")
        status, _, err = run("generate", "--config", path, "--out", out, "--quiet")
        return status, err, os.path.join(out, "dsp")

    def test_spatial_defaults_to_resnet_and_is_sorted(self):
        target = load(self.write_config(GOOD + "    extensions: [ext, nchw]\n")).targets[0]
        self.assertEqual(target.spatial, DEFAULT_SPATIAL)
        self.assertEqual(DEFAULT_SPATIAL, (49, 196, 784, 3136, 12544))
        path = self.write_config(GOOD + "    extensions: [ext, nchw]\n    spatial: [784, 7]\n")
        self.assertEqual(load(path).targets[0].spatial, (7, 784))
        path = self.write_config(GOOD + "    extensions: [ext, nchw]\n    spatial: []\n")
        self.assertEqual(load(path).targets[0].spatial, ())

    def test_refusals(self):
        for text, fragment in (
                (GOOD + "    extensions: [nchw]\n", "list at least one of reduce, apply, dx, ext"),
                (GOOD + "    extensions: [ext]\n    spatial: [49]\n", "add nchw to extensions"),
                (GOOD + "    extensions: [ext, nchw]\n    spatial: [49, 49]\n", "49 is listed twice"),
                (GOOD + "    extensions: [ext, nchw]\n    spatial: [0]\n", "spatial"),
                (GOOD + "    extensions: [ext, nchw]\n    spatial: 49\n", "expected a list of spatial"),
                (SPLIT.replace("vector_backend: gnu", "vector_backend: portable")
                 + "    extensions: [ext, nchw]\n", "nchw on a split target (memory.spaces) needs "
                 "vector_backend gnu, not portable: its plane sums' fold is a scalar lane loop"),
                (SPLIT.replace("f32: {lanes: 16}", "f32: {lanes: 16}\n      f16: {lanes: 8}")
                 + "    extensions: [ext, nchw]\n", "nchw on a split target needs a multiple of 16"),
                (GOOD.replace("f32: {lanes: 16}", "f32: {lanes: 64}").replace("786432", "32768")
                 .replace("channels: [32, 64]", "channels: [8]") + "    extensions: [reduce, nchw]\n",
                 "cannot hold nchw's 4 tile buffers"),
                # the old dx's two where a call writes dx (BNG_FLAG_ACCUMULATE_DX)
                (GOOD.replace("f32: {lanes: 16}", "f32: {lanes: 64}").replace("786432", "40960")
                 .replace("channels: [32, 64]", "channels: [8]") + "    extensions: [ext, nchw]\n",
                 "cannot hold nchw's 6 tile buffers"),
                (GOOD.replace("f32: {lanes: 16}", "f32: {lanes: 64}").replace("786432", "49152")
                 .replace("channels: [32, 64]", "channels: [8]") + "    extensions: [ext, nchw, relu]\n",
                 "cannot hold nchw's 7 tile buffers")):
            status, err, _ = self.generate(text)
            self.assertEqual(status, 2, (text, err))
            self.assertIn(fragment, err)

    def test_split_target_stages_whole_vectors(self):
        """On a split target (docs/contract.md, section 5) the kernels take each
        coefficient as a vector of vector memory and end a plane with one whole vector
        added in the plane's lanes alone; no ReLU ukernels (_p stages); the forward's
        NCHW likewise, its keep words turned back in a register, and _p staged."""
        status, err, out = self.generate(SPLIT + "    extensions: [ext, relu, nchw, forward]\n"
                                         "    spatial: [49]\n")
        self.assertEqual(status, 0, err)
        with open(os.path.join(out, "bng_f32_ukernels.c")) as f:
            kernels = f.read()
        self.assertIn("BNG_VMEM float *lane_dyxm)", kernels)
        self.assertIn("const BNG_VMEM float *mean, const BNG_VMEM float *gain", kernels)
        self.assertIn("const unsigned kept = (unsigned)(49 % 16);", kernels)
        self.assertIn("bng_f32x16_select_first(", kernels)
        self.assertNotIn("nchw_reduce_relu_ukernel", kernels)
        with open(os.path.join(out, "bng_kernels.h")) as f:
            header = f.read()
        self.assertIn("#define BNG_HAS_NCHW 1", header)
        self.assertIn("#define BNG_HAS_FWD_NCHW 1", header)
        with open(os.path.join(out, "bng_f32_fwd_ukernels.c")) as f:
            forward = f.read()
        self.assertIn("size_t n, size_t merged, const BNG_VMEM void *x_data, const BNG_VMEM float *shift,",
                      forward)
        self.assertIn("bng_keeps16_turn_back_f32(bits + BNG_TURNED_WORD(v, 16, 32));", forward)
        self.assertNotIn("bng_f32x8_", forward)
        with open(os.path.join(out, "build.mk")) as f:
            build = f.read()
        self.assertNotIn("bng_nchw_direct.c", build)
        self.assertNotIn("bng_fwd_nchw_direct.c", build)
        self.assertIn("include/bng_fwd_nchw_staged.c", build)

    def test_kernels_and_table_follow_the_list(self):
        status, err, out = self.generate(GOOD + "    extensions: [ext, nchw]\n    spatial: [20, 49]\n")
        self.assertEqual(status, 0, err)
        with open(os.path.join(out, "bng_f32_ukernels.c")) as f:
            kernels = f.read()
        for name in ("bng_f32_nchw_reduce_ukernel__dsp_s20_v16(",
                     "bng_f32_nchw_dx_train_ukernel__dsp_s49_v16(",
                     "bng_f32_nchw_dx_infer_ukernel__dsp_generic_v16(",
                     "bng_f32_nchw_dx_end_ukernel__dsp_v16("):
            self.assertIn(name, kernels)
        with open(os.path.join(out, "batch_norm_grad.c")) as f:
            table = f.read()
        self.assertIn("case 49: return &bng_f32_nchw_kernel__dsp_s49_v16;", table)
        with open(os.path.join(out, "bng_kernels.h")) as f:
            header = f.read()
        self.assertIn("#define BNG_HAS_NCHW 1", header)
        self.assertIn("#define BNG_NCHW_SPATIAL(X) X(20) X(49)", header)
        status, err, out = self.generate(GOOD + "    extensions: [ext]\n")
        with open(os.path.join(out, "bng_f32_ukernels.c")) as f:
            self.assertNotIn("nchw", f.read())       # no code size without the extension

    @unittest.skipUnless(shutil.which("cc"), "no C compiler")
    def test_the_driver_compiles_with_nchw_beside_each_family(self):
        for family in ("reduce", "apply", "dx", "ext"):
            status, err, out = self.generate(GOOD + f"    extensions: [{family}, nchw]\n")
            self.assertEqual(status, 0, err)
            syntax_check(self, library_sources(out), out, family)


if __name__ == "__main__":
    unittest.main()
