#!/usr/bin/env python3
"""The ext call against PyTorch on real tensors: torch.nn.functional.batch_norm in
training, followed by relu for the fused ReLU backward (BNG_FLAG_RELU), its gradients
by autograd, in float64 and in float32, over batch-norm layers of ResNet-18 (a small
batch, so that the run takes seconds), in both layouts: NHWC (N*H*W folded into the
batch) and NCHW (channel axis 1, BNG_FLAG_NCHW, torch's own layout).

For each layer and each torch dtype: the forward runs in that dtype on inputs that are
float32 values (exact in both); its batch statistics (the mean and the biased variance
that training-mode batch_norm normalizes with) give mean and invar = 1/sqrt(var + eps),
its output is y; autograd gives dx, the gradient of weight (dscale) and of bias (dbias)
for a random dy. Our fp_batch_norm_grad_ext_p runs on the same tensors as float32, in
each case of CASES: a layout, and whether ReLU is fused (BNG_FLAG_RELU and y).

Tolerance, per element: twice the bound of docs/contract.md section 9 (K = 16 +
4*sqrt(m), u = 2^-24, plus 2^-126), evaluated on float64 terms of the (masked) dy: one
bound for our call, one for what separates torch's result from the exact one on our
inputs (in float64: mean, invar and y rounded to float32; in float32: torch's own
float32 sums). The script prints the largest error as a fraction of that bound.

Where PyTorch is missing it says so and exits 77, which make test counts as skipped.

Usage: torch_check.py LIBRARY (a shared build of the host library, make's rule)
"""

import ctypes
import math
import sys

SKIP = 77
FLAG_NCHW = 2          # BNG_FLAG_NCHW (batch_norm_grad_ext.h)
FLAG_RELU = 4          # BNG_FLAG_RELU
PARAM_SPATIAL = 14     # BNG_PARAM_SPATIAL
PARAM_Y = 15           # BNG_PARAM_Y
PARAM_FLAGS = 13       # BNG_PARAM_FLAGS
PARAM_STATUS = 8
EXT_PARAMS = 16
EPS = 1e-5

# ResNet-18's batch-norm layers: (channels, height = width) after conv1 and in each
# stage, with the batch each runs at here.
RESNET18_LAYERS = ((2, 64, 56), (2, 128, 28), (4, 256, 14), (8, 512, 7), (1, 64, 112))


def nhwc_rows(t):
    """Our layout of a torch NCHW tensor: rows of channels, N*H*W rows."""
    n, c, h, w = t.shape
    return t.permute(0, 2, 3, 1).reshape(n * h * w, c).contiguous()


def nhwc_from_rows(rows, shape):
    n, c, h, w = shape
    return rows.reshape(n, h, w, c).permute(0, 3, 1, 2)


# (layout, ReLU fused): what the ext call is checked in.
CASES = (("nhwc", True), ("nhwc", False), ("nchw", True), ("nchw", False))


def torch_reference(torch, x, weight, bias, dy, dtype, relu):
    """batch_norm (training), + relu when `relu`, in `dtype`, and its gradients by
    autograd."""
    x = x.to(dtype).requires_grad_()
    w = weight.to(dtype).requires_grad_()
    b = bias.to(dtype).requires_grad_()
    out = torch.nn.functional.batch_norm(x, None, None, w, b, training=True, eps=EPS)
    if relu:
        out = torch.nn.functional.relu(out)
    out.backward(dy.to(dtype))
    dims = (0, 2, 3)
    mean = x.detach().mean(dims)
    var = x.detach().var(dims, unbiased=False)
    invar = 1.0 / torch.sqrt(var + EPS)
    return out.detach(), mean, invar, x.grad, w.grad, b.grad


def as_float32_keeping_sign(torch, y):
    """y as float32 for the call: a positive value too small for float32 stays positive
    (the smallest subnormal), so that the mask is torch's."""
    y32 = y.to(torch.float32)
    y32[(y > 0) & (y32 == 0)] = 1e-45
    return y32


def ours(torch, lib, layout, relu, x, dy, y, mean, invar, scale):
    """The ext call on float32 copies; dx (torch's layout), dscale, dbias, and the
    inputs as float64 rows (NHWC) for the bound."""
    f32 = torch.float32
    n, c, h, w = x.shape
    x32, dy32 = x.to(f32).contiguous(), dy.to(f32).contiguous()
    y32 = as_float32_keeping_sign(torch, y).contiguous()
    mean32, invar32 = mean.to(f32).contiguous(), invar.to(f32).contiguous()
    scale32 = scale.to(f32).contiguous()
    params = (ctypes.c_longlong * EXT_PARAMS)()
    if layout == "nchw":     # torch's own layout, the extent H*W in its slot
        xa, dya, ya, batch = x32, dy32, y32, n
        params[PARAM_SPATIAL] = h * w
    else:
        xa, dya, ya, batch = nhwc_rows(x32), nhwc_rows(dy32), nhwc_rows(y32), n * h * w
    dx = torch.empty_like(xa)
    dbias = torch.empty_like(mean32)
    dscale = torch.empty_like(mean32)
    for slot, t in enumerate((mean32, invar32, scale32, dbias, dscale)):
        params[slot] = t.data_ptr()
    params[5], params[6], params[7] = batch, c, 1
    params[PARAM_FLAGS] = (FLAG_NCHW if layout == "nchw" else 0) | (FLAG_RELU if relu else 0)
    if relu:
        params[PARAM_Y] = ya.data_ptr()
    lib.fp_batch_norm_grad_ext_p(ctypes.c_void_p(xa.data_ptr()), ctypes.c_void_p(dya.data_ptr()),
                                 ctypes.c_void_p(dx.data_ptr()), params)
    if params[PARAM_STATUS] != 0:
        raise RuntimeError(f"fp_batch_norm_grad_ext_p: status {params[PARAM_STATUS]}")
    inputs = (nhwc_rows(x32).double(), nhwc_rows(dy32).double(),
              nhwc_rows(y32).double() if relu else None, mean32.double(), invar32.double(),
              scale32.double())
    dx = dx if layout == "nchw" else nhwc_from_rows(dx, x.shape)
    return dx, dscale, dbias, inputs


def bounds(torch, inputs):
    """docs/contract.md section 9's bound on dx (rows), dscale and dbias, in float64,
    for dy masked by y as the call masks it (y None: not masked)."""
    x, dy, y, mean, invar, scale = inputs
    m = x.shape[0]
    k_u = (16 + 4 * math.sqrt(m)) * 2.0 ** -24
    tiny = 2.0 ** -126
    if y is not None:
        dy = torch.where(y <= 0, torch.zeros_like(dy), dy)
    xhat = (x - mean) * invar
    sum_abs_dy = dy.abs().sum(0)
    sum_abs_dyxhat = (dy * xhat).abs().sum(0)
    dx = k_u * (scale * invar).abs() * (dy.abs() + sum_abs_dy / m + xhat.abs() * sum_abs_dyxhat / m) + tiny
    return dx, k_u * sum_abs_dyxhat + tiny, k_u * sum_abs_dy + tiny


def check_layer(torch, lib, layout, relu, batch, channels, side, seed):
    gen = torch.Generator().manual_seed(seed)
    shape = (batch, channels, side, side)
    x = (torch.randn(shape, generator=gen) * 1.5 + 0.3).float()
    dy = torch.randn(shape, generator=gen).float()
    weight = (torch.rand(channels, generator=gen) + 0.5).float()
    bias = (torch.randn(channels, generator=gen) * 0.2).float()
    worst = 0.0
    for dtype in (torch.float64, torch.float32):
        y, mean, invar, t_dx, t_dscale, t_dbias = torch_reference(torch, x, weight, bias, dy, dtype,
                                                                  relu)
        dx, dscale, dbias, inputs = ours(torch, lib, layout, relu, x, dy, y, mean, invar, weight)
        b_dx, b_dscale, b_dbias = bounds(torch, inputs)
        b_dx = nhwc_from_rows(b_dx, shape)
        for name, got, want, bound in (("dx", dx, t_dx, b_dx), ("dscale", dscale, t_dscale, b_dscale),
                                       ("dbias", dbias, t_dbias, b_dbias)):
            ratio = ((got.double() - want.double()).abs() / (2 * bound)).max().item()
            worst = max(worst, ratio)
            if not ratio <= 1.0:
                print(f"torch-check: FAIL {layout}{' relu' if relu else ''} {shape} torch {dtype}: {name} off by "
                      f"{ratio:.3g} of the tolerance")
                return None
    return worst


def main(argv):
    try:
        import torch
    except ImportError:
        print("torch-check: skipped: python3-torch is not installed (apt-get install python3-torch)")
        return SKIP
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    lib = ctypes.CDLL(argv[1])
    lib.fp_batch_norm_grad_ext_p.restype = None
    torch.set_num_threads(1)
    worst, failed = 0.0, 0
    for layout, relu in CASES:
        for seed, (batch, channels, side) in enumerate(RESNET18_LAYERS):
            ratio = check_layer(torch, lib, layout, relu, batch, channels, side, seed)
            if ratio is None:
                failed += 1
            else:
                worst = max(worst, ratio)
    cases = len(CASES) * len(RESNET18_LAYERS)
    print(f"torch-check: {cases - failed} of {cases} cases agree with PyTorch {torch.__version__} "
          f"(ResNet-18's layers; NHWC and NCHW, each with and without ReLU fused; float64 and float32), "
          f"largest error of those {worst:.3g} of the tolerance")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
