import torch
import torch.nn.functional as F


def mtp_loss(logits, tokens, weights=None, ignore_index=-100):
    """Right shift, but one mean over all heads' positions pooled together."""
    k, B, T, V = logits.shape
    w = [1.0] * k if weights is None else list(weights)
    sums, counts, per_head = [], [], []
    for j in range(1, k + 1):
        pred = logits[j - 1, :, : max(T - j, 0)].float()
        target = tokens[:, j:]
        s = F.cross_entropy(pred.reshape(-1, V), target.reshape(-1),
                            ignore_index=ignore_index, reduction="sum")
        c = (target != ignore_index).sum()
        sums.append(w[j - 1] * s)
        counts.append(c)
        per_head.append(s / c.clamp(min=1))
    total = torch.stack(sums).sum() / torch.stack(counts).sum().clamp(min=1) * sum(w)
    return total, torch.stack(per_head)
