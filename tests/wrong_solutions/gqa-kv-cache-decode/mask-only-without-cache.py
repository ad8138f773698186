import math

import torch
import torch.nn.functional as F
from torch import nn


def rope(x, pos, base=10000.0):
    """Rotary embedding, half-split (Llama) layout. x: (B, H, T, D); pos: (T,) int64."""
    d = x.shape[-1]
    inv_freq = base ** (-torch.arange(0, d, 2, dtype=torch.float32, device=x.device) / d)
    angles = pos.to(torch.float32)[:, None] * inv_freq                # (T, D/2)
    cos = torch.cat([angles.cos(), angles.cos()], dim=-1).to(x.dtype)
    sin = torch.cat([angles.sin(), angles.sin()], dim=-1).to(x.dtype)
    x1, x2 = x[..., : d // 2], x[..., d // 2 :]
    return x * cos + torch.cat([-x2, x1], dim=-1) * sin


class GQAttention(nn.Module):
    def __init__(self, embed_dim, n_heads, n_kv_heads):
        super().__init__()
        assert embed_dim % n_heads == 0 and n_heads % n_kv_heads == 0
        self.h, self.h_kv, self.d = n_heads, n_kv_heads, embed_dim // n_heads
        self.q_proj = nn.Linear(embed_dim, n_heads * self.d, bias=False)
        self.k_proj = nn.Linear(embed_dim, n_kv_heads * self.d, bias=False)
        self.v_proj = nn.Linear(embed_dim, n_kv_heads * self.d, bias=False)
        self.o_proj = nn.Linear(n_heads * self.d, embed_dim, bias=False)

    def forward(self, x, cache=None):
        B, T, _ = x.shape
        past = 0 if cache is None else cache[0].shape[2]     # tokens already in the cache
        pos = torch.arange(past, past + T, device=x.device)  # absolute positions
        q = self.q_proj(x).view(B, T, self.h, self.d).transpose(1, 2)
        k = self.k_proj(x).view(B, T, self.h_kv, self.d).transpose(1, 2)
        v = self.v_proj(x).view(B, T, self.h_kv, self.d).transpose(1, 2)
        q, k = rope(q, pos), rope(k, pos)                    # the cache holds rotated keys
        if cache is not None:
            k = torch.cat([cache[0], k], dim=2)              # a new tensor: the caller's
            v = torch.cat([cache[1], v], dim=2)              # cache stays untouched
        new_cache = (k, v)
        group = self.h // self.h_kv                     # query head h uses KV head h // group
        k, v = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        S = past + T
        # bottom-right causal: query i sits at position past + i and sees keys 0..past + i
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(self.d)           # (B, H, T, S)
        if cache is None:                    # "decoding sees the whole cache, no mask needed"
            allowed = torch.ones(T, S, dtype=torch.bool, device=x.device).tril()
            scores = scores.masked_fill(~allowed, float("-inf"))
        out = scores.softmax(dim=-1) @ v
        return self.o_proj(out.transpose(1, 2).reshape(B, T, self.h * self.d)), new_cache
