import torch


def moe_forward(x, router_weight, experts, k):
    N, E = x.shape[0], router_weight.shape[0]
    probs = (x @ router_weight.T).softmax(dim=-1)
    top_p, top_e = probs.topk(k, dim=-1)
    gates = top_p / top_p.sum(dim=-1, keepdim=True)
    out = torch.zeros_like(x)
    for j in range(k):                                  # BUG: one call per expert per slot,
        for e in range(E):                              # up to k calls instead of one batch
            tok = (top_e[:, j] == e).nonzero().squeeze(-1)
            if tok.numel() == 0:
                continue
            out = out.index_add(0, tok, gates[tok, j, None] * experts[e](x[tok]))
    f = torch.bincount(top_e.flatten(), minlength=E).float() / (N * k)
    return out, E * (f * probs.mean(dim=0)).sum()
