"""targets.yaml extensions: (the entry points beyond the vendor's four): the loader's
checks, the files and flags they render, the parameter block's range, and that the
driver compiles for every family alone (its code behind BNG_HAS_* conditions)."""

import os
import shutil
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from test_generator import GOOD, ROOT, TempDir, run   # noqa: E402

from generator.loader import load                      # noqa: E402
from generator.plan import DRIVER_ROOMS, OPS, plan_target   # noqa: E402


def with_extensions(value):
    return GOOD + f"    extensions: {value}\n"


def library_sources(out):
    """The C sources of a rendered target's library, as its build.mk lists them."""
    with open(os.path.join(out, "build.mk")) as f:
        line = next(line for line in f if line.startswith("BNG_SOURCES_"))
    return [os.path.join(out, s.split("/", 1)[1]) if s.startswith("$(bng_dir)/")
            else os.path.join(ROOT, s) for s in line.split(":=", 1)[1].split()]


def driver_rooms(out):
    """The driver's rooms a rendered target's library compiles (include/, by name)."""
    return [os.path.basename(s) for s in library_sources(out)
            if os.path.dirname(s) == os.path.join(ROOT, "include")]


def syntax_check(test, sources, out, what):
    for source in sources:
        result = subprocess.run(
            ["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only",
             "-DBNG_HOST", "-DBNG_VEC_BACKEND=BNG_VEC_PORTABLE", "-DBNG_HALF_PORTABLE",
             "-I" + os.path.join(ROOT, "include"), "-I" + out, source],
            capture_output=True, text=True)
        test.assertEqual(result.returncode, 0, (what, source, result.stderr))


class ExtensionsTest(TempDir):
    def generate(self, text):
        path = self.write_config(text)
        out = os.path.join(self.tmp, "out")
        status, _, err = run("generate", "--config", path, "--out", out, "--quiet")
        return status, err, os.path.join(out, "dsp")

    def test_loader_takes_a_list_in_canonical_order(self):
        path = self.write_config(with_extensions("[ext, reduce]"))
        self.assertEqual(load(path).targets[0].extensions, ("reduce", "ext"))
        self.assertEqual(load(self.write_config(GOOD)).targets[0].extensions, ())
        self.assertEqual(load(self.write_config(with_extensions("[]"))).targets[0].extensions, ())

    def test_loader_refuses_unknown_duplicate_and_wrong_shapes(self):
        for value, fragment in (("[reduce, bogus]", "'bogus' is not allowed; allowed: reduce, apply, dx, ext, relu, nchw"),
                                ("[dx, dx]", "dx is listed twice"),
                                ("reduce", "expected a list of some of reduce, apply, dx, ext, relu, nchw"),
                                ("[relu]", "relu is a flag of the calls of reduce, apply, dx, ext: list one of them too")):
            status, err, _ = self.generate(with_extensions(value))
            self.assertEqual(status, 2, err)
            self.assertIn(f"{self.tmp}/targets.yaml:16: targets.dsp.extensions", err)
            self.assertIn(fragment, err)

    def test_files_and_flags_follow_the_list(self):
        status, err, out = self.generate(GOOD)
        self.assertEqual(status, 0, err)
        self.assertFalse(os.path.exists(os.path.join(out, "batch_norm_grad_ext.h")))
        with open(os.path.join(out, "bng_kernels.h")) as f:
            kernels = f.read()
        self.assertIn("#define BNG_HAS_EXTENSIONS 0", kernels)
        self.assertIn("#define BNG_SHARED_PARAMS_SLOTS 12", kernels)
        status, err, out = self.generate(with_extensions("[dx]"))
        self.assertEqual(status, 0, err)
        with open(os.path.join(out, "batch_norm_grad_ext.h")) as f:
            header = f.read()
        self.assertIn("fp_batch_norm_grad_dx_p(float *dy, float *dx, long long *params);", header)
        self.assertNotIn("reduce_p", header)
        with open(os.path.join(out, "build.mk")) as f:
            self.assertIn("batch_norm_grad_ext.c", f.read())

    def test_the_extended_block_is_128_bytes(self):
        near = GOOD.replace("0xAFF00000", "0xAFF00FA0")       # the block ends 96 bytes on, at the scratch
        status, err, _ = self.generate(near)
        self.assertEqual(status, 0, err)
        status, err, _ = self.generate(near + "    extensions: [apply]\n")
        self.assertEqual(status, 2, err)
        self.assertIn("overlaps the 128-byte parameter block", err)

    def test_plan_constants(self):
        tp = plan_target(load(os.path.join(ROOT, "targets.yaml")).target("mt7004"))
        self.assertEqual(tp.extensions, ("reduce", "apply", "dx", "ext", "relu", "nchw"))
        self.assertEqual(tp.shared_constants["TILE_BUFFERS"], 4)
        self.assertEqual(tp.shared_params_slots, 16)

    def test_relu_flag_and_slot_follow_the_list(self):
        status, err, out = self.generate(with_extensions("[dx, relu]"))
        self.assertEqual(status, 0, err)
        with open(os.path.join(out, "batch_norm_grad_ext.h")) as f:
            header = f.read()
        self.assertIn("#define BNG_FLAG_RELU 4", header)
        self.assertIn("#define BNG_PARAM_Y 15", header)
        with open(os.path.join(out, "bng_kernels.h")) as f:
            self.assertIn("#define BNG_HAS_RELU 1", f.read())
        status, err, out = self.generate(with_extensions("[dx]"))
        self.assertEqual(status, 0, err)
        with open(os.path.join(out, "batch_norm_grad_ext.h")) as f:
            self.assertNotIn("BNG_FLAG_RELU", f.read())
        with open(os.path.join(out, "bng_kernels.h")) as f:
            self.assertIn("#define BNG_HAS_RELU 0", f.read())

    def test_relu_needs_a_fifth_tile_and_on_a_split_target_no_relu_ukernels(self):
        """y's tile buffer everywhere; the ReLU ukernels (which mask dy as _p loads it
        from the caller's arrays) only on a unified target: a split target stages _p and
        masks its tiles in place, with the relu room all the same."""
        dsp = load(self.write_config(with_extensions("[ext]"))).targets[0]
        with_relu = load(self.write_config(with_extensions("[ext, relu]"))).targets[0]
        plain, relu = plan_target(dsp), plan_target(with_relu)
        for d, r in zip(plain.dtypes, relu.dtypes):
            tile = (r.min_private_bytes - d.min_private_bytes)
            self.assertEqual(tile * 4, d.min_private_bytes - d.workspace_bytes)
            self.assertIn("reduce_relu", r.generic.ops)
        split = plan_target(load(os.path.join(ROOT, "tests", "c", "targets-test.yaml"))
                            .target("mt3000_split"))
        self.assertIn("relu", split.target.extensions)
        self.assertIn("bng_relu.c", {room.name for room in split.rooms})
        for d in split.dtypes:
            self.assertEqual(d.generic.ops, OPS)
            self.assertTrue(all(k.ops == OPS for k in d.specialized))
        # on the native backend (and the portable one) the masked loads, and the
        # forward's square root, are lane loops, scalar code that cannot reach a split
        # target's vector memory: refused
        with open(os.path.join(ROOT, "tests", "c", "targets-test.yaml")) as f:
            text = f.read()
        native = text.index("  mt3000_split_native:")
        for extension in ("relu", "forward"):
            for backend in ("native", "portable"):
                tail = text[native:].replace("extensions: [reduce, apply, dx, ext]\n",
                                             f"extensions: [reduce, apply, dx, ext, {extension}]\n")
                if backend == "portable":
                    tail = tail.replace("vector_backend: native", "vector_backend: portable")
                status, err, _ = self.generate(text[:native] + tail)
                self.assertEqual(status, 2, err)
                self.assertIn(f"targets.mt3000_split_native.extensions: {extension} on a split "
                              f"target (memory.spaces) needs vector_backend gnu, not {backend}", err)

    @unittest.skipUnless(shutil.which("cc"), "no C compiler")
    def test_the_driver_compiles_for_each_family_alone(self):
        for family in ("", "reduce", "apply", "dx", "ext", "ext, relu", "dx, relu"):
            text = with_extensions(f"[{family}]") if family else GOOD
            status, err, out = self.generate(text)
            self.assertEqual(status, 0, err)
            sources = [s for s in library_sources(out) if not s.endswith("_ukernels.c")]
            self.assertEqual(os.path.join(out, "batch_norm_grad_ext.c") in sources, bool(family))
            syntax_check(self, sources, out, family)

    def test_an_extensions_rooms_only_where_it_is_listed(self):
        every = {room.name for room in DRIVER_ROOMS if room.extension is None}
        self.assertIn("bng_nhwc_direct.c", every)
        for family, listed in (("[ext]", ()), ("[ext, relu]", ("relu",)),
                               ("[ext, nchw]", ("nchw",)), ("[ext, relu, nchw]", ("relu", "nchw")),
                               ("[ext, forward]", ("forward",)),
                               ("[ext, nchw, forward]", ("nchw", "forward"))):
            status, err, out = self.generate(with_extensions(family))
            self.assertEqual(status, 0, err)
            more = {room.name for room in DRIVER_ROOMS
                    if room.extension is not None and room.compiled_for(listed)}
            self.assertTrue(more or not listed, family)
            self.assertEqual(set(driver_rooms(out)), every | more, family)
            # a room of two extensions only where both are listed
            self.assertEqual("bng_fwd_nchw_direct.c" in more, set(listed) >= {"forward", "nchw"})

    def test_a_split_target_stages_p_instead_of_the_direct_room(self):
        target = load(os.path.join(ROOT, "tests", "c", "targets-test.yaml")).target("mt3000_split")
        rooms = {room.name for room in plan_target(target).rooms}
        self.assertNotIn("bng_nhwc_direct.c", rooms)
        self.assertIn("bng_nhwc_staged.c", rooms)


if __name__ == "__main__":
    unittest.main()
