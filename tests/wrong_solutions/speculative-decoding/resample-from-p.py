import torch
import torch.nn.functional as F


def speculative_verify(p, q, draft, generator=None):
    """p: (B, k+1, V) target probabilities at the k draft positions and one more;
    q: (B, k, V) draft probabilities; draft: (B, k) tokens sampled from q.
    Returns out (B, k+1) int64, padded with -1, and n_accepted (B,) in 0..k:
    out[b, :n] = draft[b, :n], out[b, n] is the corrected or bonus token."""
    B, k = draft.shape
    p_x = p[:, :k].gather(-1, draft[..., None]).squeeze(-1)          # p(x_i), (B, k)
    q_x = q.gather(-1, draft[..., None]).squeeze(-1)                 # q(x_i) > 0: drafted
    u = torch.rand(B, k, generator=generator, device=p.device)
    accepted = u * q_x < p_x                                         # u < p/q, no division
    n = accepted.long().cumprod(dim=-1).sum(dim=-1)                  # leading accepts, (B,)
    rows = torch.arange(B, device=p.device)
    q_pad = F.pad(q, (0, 0, 0, 1))                                   # q = 0 at position k ...
    extra = torch.multinomial(p[rows, n], 1, generator=generator).squeeze(-1)  # BUG: not p - q
    pos = torch.arange(k + 1, device=p.device)
    out = torch.where(pos[:k] < n[:, None], draft, -1)
    out = torch.cat([out, torch.full((B, 1), -1, device=p.device)], dim=1)
    out[rows, n] = extra
    return out, n
