#!/usr/bin/env python3
"""The ext call against PyTorch on real tensors: torch.nn.functional.batch_norm in
training, followed by relu for the fused ReLU backward (BNG_FLAG_RELU), its gradients
by autograd, in float64 and in float32, over batch-norm layers of ResNet-18 (a small
batch, so that the run takes seconds), in both layouts: NHWC (N*H*W folded into the
batch) and NCHW (channel axis 1, BNG_FLAG_NCHW, torch's own layout). And a training
step made of our calls alone against the same in float64, in both layouts: the
training forward (fp_batch_norm_forward_p, NHWC or NCHW with BNG_FWD_NCHW, PyTorch's
running statistics: BNG_FWD_TORCH, momentum 0.1; with the ReLU fused, BNG_FWD_RELU and
its keep bits) and then the ext call in the same layout on the forward's mean, invar and
y, against batch_norm (+ relu) with running statistics and autograd.

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

The training step's tolerances: y and the running statistics within docs/contract.md
section 15's bound (K from the library's own row groups, bng_group_rows, and in NCHW
from its planes, "Channel axis 1"; the ReLU's y +0 wherever torch's is within that
bound of 0 or below), the keep bits exactly those of our y (NHWC: bit r % 32 of word
(r / 32) * channel + c; NCHW: bit s % 32 of word (n * channel + c) * words + s / 32,
words = ceil(H*W / 32); 1 where y > 0 or NaN), and dx, dscale and dbias within twice
section 9's bound as above, on the forward's statistics.

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
# The training forward's block (batch_norm_fwd.h): its slots and flags.
FWD_BIAS, FWD_MOVING_MEAN, FWD_MOVING_VAR, FWD_EPS, FWD_MOMENTUM, FWD_RELU_BITS = 3, 4, 7, 9, 10, 11
FWD_TORCH, FWD_RELU, FWD_RELU_BITS_FLAG, FWD_NCHW, FWD_SPATIAL = 32, 512, 1024, 2, 14
# mt7004's f32 vector lanes (targets.yaml; make builds this check's library for mt7004):
# the NCHW forward's bound counts its lanes' merges
F32_LANES = 16
MOMENTUM = 0.1         # PyTorch's default

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


def float_bits(value):
    """A float's bits in a block's slot (bng_fwd_float)."""
    return ctypes.c_uint32.from_buffer(ctypes.c_float(value)).value


def forward_ours(torch, lib, layout, relu, x, weight, bias, running_mean, running_var):
    """fp_batch_norm_forward_p on float32 x (torch's NCHW tensor; as rows for NHWC): y
    (in the call's layout), mean, invar, the running statistics after it, the keep bits
    (None without the ReLU)."""
    f32 = torch.float32
    n, c, h, w = x.shape
    xa = x.contiguous() if layout == "nchw" else nhwc_rows(x)
    y = torch.empty_like(xa)
    mean, invar = torch.empty(c, dtype=f32), torch.empty(c, dtype=f32)
    scale, shift = weight.to(f32).contiguous(), bias.to(f32).contiguous()
    moving_mean, moving_var = running_mean.to(f32).clone(), running_var.to(f32).clone()
    words = n * c * -(-(h * w) // 32) if layout == "nchw" else -(-(n * h * w) // 32) * c
    bits = torch.zeros(words, dtype=torch.int32)
    params = (ctypes.c_longlong * EXT_PARAMS)()
    for slot, t in ((0, mean), (1, invar), (2, scale), (FWD_BIAS, shift),
                    (FWD_MOVING_MEAN, moving_mean), (FWD_MOVING_VAR, moving_var)):
        params[slot] = t.data_ptr()
    params[5], params[6] = (n, c) if layout == "nchw" else (n * h * w, c)
    params[FWD_EPS], params[FWD_MOMENTUM] = float_bits(EPS), float_bits(MOMENTUM)
    params[PARAM_FLAGS] = FWD_TORCH | ((FWD_RELU | FWD_RELU_BITS_FLAG) if relu else 0)
    if layout == "nchw":
        params[PARAM_FLAGS] |= FWD_NCHW
        params[FWD_SPATIAL] = h * w
    params[FWD_RELU_BITS] = bits.data_ptr()
    lib.fp_batch_norm_forward_p(ctypes.c_void_p(xa.data_ptr()), ctypes.c_void_p(y.data_ptr()),
                                params)
    if params[PARAM_STATUS] != 0:
        raise RuntimeError(f"fp_batch_norm_forward_p: status {params[PARAM_STATUS]}")
    return y, mean, invar, moving_mean, moving_var, bits if relu else None


def forward_chain(lib, layout, shape):
    """K of section 15's bound: NHWC's from the row groups of its N*H*W rows; NCHW's
    from a plane's blocks and lanes and the row groups of its N planes."""
    n, _, h, w = shape
    if layout == "nchw":
        group = lib.bng_group_rows(ctypes.c_size_t(n))
        return 2.0 * (32 + -(-(h * w) // (32 * F32_LANES)) + math.log2(F32_LANES) + 1 + group
                      + -(-n // group)) + 16
    m = n * h * w
    group = lib.bng_group_rows(ctypes.c_size_t(m))
    return 2.0 * (32 + (group + 31) // 32 + -(-m // group)) + 16


def forward_bounds(torch, rows, k, weight, bias, running_mean, running_var):
    """docs/contract.md section 15's bounds with chain k, in float64, on y (rows, the
    first row the channels' shifts in either layout) and the running statistics
    (PyTorch's update), for float32 output."""
    x = rows.double()
    m = x.shape[0]
    u = 2.0 ** -24
    mu = x.mean(0)
    v = x.var(0, unbiased=False)
    dev = x - mu
    r = (x - x[0]).abs().max(0).values
    invstd = 1.0 / torch.sqrt(v + EPS)
    gamma, beta = weight.double().abs(), bias.double().abs()
    b_dev = k * u * r
    b_mean = u * mu.abs() + b_dev
    b_var = k * u * v + (k * u * r) ** 2 + u * v
    b_inv = invstd * (b_var / (v + EPS) / 2 + 4 * u)
    ref = dev * invstd * weight.double() + bias.double()
    b_y = gamma * (b_dev * invstd + dev.abs() * b_inv) + 4 * u * ((gamma * dev * invstd).abs() + beta) \
        + u * (ref.abs() + 2.0 ** -126)
    unbiased = v * m / (m - 1)
    b_rm = MOMENTUM * b_mean + 4 * u * (running_mean.double().abs() + mu.abs()) \
        + u * ((1 - MOMENTUM) * running_mean.double() + MOMENTUM * mu).abs()
    b_rv = MOMENTUM * b_var * m / (m - 1) + 4 * u * (running_var.double() + unbiased) \
        + u * ((1 - MOMENTUM) * running_var.double() + MOMENTUM * unbiased)
    return b_y, b_rm, b_rv


def keep_bits(torch, bits, layout, shape):
    """The keep bits as a 0/1 tensor of the call's layout: NHWC rows x channels, bit
    r % 32 of word (r / 32) * c + c; NCHW planes, bit s % 32 of the plane's word s / 32."""
    n, c, h, w = shape
    words = bits.to(torch.int64) & 0xffffffff
    if layout == "nchw":
        s = torch.arange(h * w)
        planes = words.reshape(n, c, -1)[:, :, s // 32]
        return ((planes >> (s % 32)) & 1).reshape(n, c, h, w)
    r = torch.arange(n * h * w)
    return (words.reshape(-1, c)[r // 32] >> (r % 32).unsqueeze(1)) & 1


def check_step(torch, lib, layout, relu, batch, channels, side, seed):
    """One training step of our calls in `layout` (forward, then the ext backward on its
    statistics and y) against PyTorch's in float64; the largest error as a fraction of
    the tolerance, or None on a failure (said)."""
    gen = torch.Generator().manual_seed(1000 + seed)
    shape = (batch, channels, side, side)
    x = (torch.randn(shape, generator=gen) * 1.5 + 0.3).float()
    dy = torch.randn(shape, generator=gen).float()
    weight = (torch.rand(channels, generator=gen) + 0.5).float()
    bias = (torch.randn(channels, generator=gen) * 0.2).float()
    running_mean = (torch.randn(channels, generator=gen) * 0.1).float()
    running_var = (torch.rand(channels, generator=gen) + 0.5).float()
    f64 = torch.float64
    t_rm, t_rv = running_mean.to(f64).clone(), running_var.to(f64).clone()
    xt = x.to(f64).requires_grad_()
    wt, bt = weight.to(f64).requires_grad_(), bias.to(f64).requires_grad_()
    out = torch.nn.functional.batch_norm(xt, t_rm, t_rv, wt, bt, training=True, momentum=MOMENTUM,
                                         eps=EPS)
    out_relu = torch.nn.functional.relu(out) if relu else out
    out_relu.backward(dy.to(f64))
    y, mean, invar, rm, rv, bits = forward_ours(torch, lib, layout, relu, x, weight, bias,
                                               running_mean, running_var)
    y_nchw = y if layout == "nchw" else nhwc_from_rows(y, shape)
    b_y, b_rm, b_rv = forward_bounds(torch, nhwc_rows(x), forward_chain(lib, layout, shape), weight,
                                     bias, running_mean, running_var)
    want = nhwc_rows(out.detach())
    y = nhwc_rows(y_nchw)
    got = y.double()
    name = f"training step {layout}{' relu' if relu else ''} {shape}"
    if relu:
        masked = (got == 0) & ~torch.signbit(y) & (want <= b_y)
        err = torch.where(masked, torch.zeros_like(got), (got - want).abs())
        negative = (~(got > 0) & ~masked).any().item()
        if negative:
            print(f"torch-check: FAIL {name}: a y neither above 0 nor masked")
            return None
        kept = keep_bits(torch, bits, layout, shape)
        if not torch.equal(kept, (y_nchw > 0 if layout == "nchw" else y > 0).to(kept.dtype)):
            print(f"torch-check: FAIL {name}: the keep bits are not y > 0")
            return None
    else:
        err = (got - want).abs()
    worst = 0.0
    for what, e, bound in (("y", err, b_y), ("running mean", (rm.double() - t_rm).abs(), b_rm),
                           ("running var", (rv.double() - t_rv).abs(), b_rv)):
        ratio = (e / bound).max().item()
        worst = max(worst, ratio)
        if not ratio <= 1.0:
            print(f"torch-check: FAIL {name}: {what} off by {ratio:.3g} of the bound")
            return None
    dx, dscale, dbias, inputs = ours(torch, lib, layout, relu, x, dy, y_nchw.double(), mean, invar,
                                     weight)
    b_dx, b_dscale, b_dbias = bounds(torch, inputs)
    b_dx = nhwc_from_rows(b_dx, shape)
    for what, got_g, want_g, bound in (("dx", dx, xt.grad, b_dx), ("dscale", dscale, wt.grad, b_dscale),
                                       ("dbias", dbias, bt.grad, b_dbias)):
        ratio = ((got_g.double() - want_g).abs() / (2 * bound)).max().item()
        worst = max(worst, ratio)
        if not ratio <= 1.0:
            print(f"torch-check: FAIL {name}: {what} off by {ratio:.3g} of the tolerance")
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
    lib.fp_batch_norm_forward_p.restype = None
    lib.bng_group_rows.restype = ctypes.c_size_t
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
    steps_worst, steps_failed = 0.0, 0
    for layout, relu in CASES:
        for seed, (batch, channels, side) in enumerate(RESNET18_LAYERS):
            ratio = check_step(torch, lib, layout, relu, batch, channels, side, seed)
            if ratio is None:
                steps_failed += 1
            else:
                steps_worst = max(steps_worst, ratio)
    steps = len(CASES) * len(RESNET18_LAYERS)
    print(f"torch-check: {steps - steps_failed} of {steps} training steps of our forward and "
          f"backward agree with PyTorch's in float64 (batch_norm with running statistics, "
          f"momentum {MOMENTUM}; NHWC and NCHW, each with and without relu; autograd), largest "
          f"error of those {steps_worst:.3g} of the bound")
    return 1 if failed or steps_failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
