import math

import torch
import torch.nn.functional as F
from torch import nn


class CausalSelfAttention(nn.Module):
    def __init__(self, embed_dim, num_heads, bias=True):
        super().__init__()
        assert embed_dim % num_heads == 0, "embed_dim must be divisible by num_heads"
        self.num_heads, self.head_dim = num_heads, embed_dim // num_heads
        self.q_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.k_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.v_proj = nn.Linear(embed_dim, embed_dim, bias=bias)
        self.out_proj = nn.Linear(embed_dim, embed_dim, bias=bias)

    def _split(self, t):                       # (B, T, E) -> (B, H, T, D)
        B, T, _ = t.shape
        return t.view(B, T, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, x, key_padding_mask=None, causal=True):
        B, T, E = x.shape
        q = self._split(self.q_proj(x))
        k = self._split(self.k_proj(x))
        v = self._split(self.v_proj(x))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)    # (B, H, T, T)
        allowed = torch.ones(T, T, dtype=torch.bool, device=x.device)
        if causal:
            allowed = allowed.tril()                                   # key j <= query i
        if key_padding_mask is not None:                               # True = padding
            allowed = allowed & ~key_padding_mask[:, None, :, None]    # (B, 1, T, 1) queries
        scores = scores.masked_fill(~allowed, float("-inf"))
        out = torch.softmax(scores, dim=-1) @ v                        # (B, H, T, D)
        out = out.transpose(1, 2).reshape(B, T, E)                     # merge the heads
        return self.out_proj(out)
