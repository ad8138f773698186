import torch


def rope(x, offset=0, base=10000.0):
    """Rotary embedding, half-split layout: dims i and i + D/2 form pair i.

    x: (B, H, T, D) with D even; token t sits at position offset + t.
    """
    T, D = x.shape[-2], x.shape[-1]
    assert D % 2 == 0, "head_dim must be even"
    dtype = x.dtype                                  # bf16 in, bf16 angles
    inv_freq = base ** (-torch.arange(0, D, 2, dtype=dtype, device=x.device) / D)
    pos = torch.arange(offset, offset + T, dtype=dtype, device=x.device)
    angles = torch.outer(pos, inv_freq)                         # (T, D/2): pos * theta_i
    cos, sin = angles.cos(), angles.sin()
    x1, x2 = x[..., : D // 2].to(dtype), x[..., D // 2 :].to(dtype)
    out = torch.cat([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1)
    return out.to(x.dtype)
