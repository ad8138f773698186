import torch


def moe_forward(x, router_weight, experts, k):
    N, E = x.shape[0], router_weight.shape[0]
    probs = (x @ router_weight.T).softmax(dim=-1)
    gates, top_e = probs.topk(k, dim=-1)                # BUG: not renormalised
    flat_e, flat_gate = top_e.flatten(), gates.flatten()
    flat_tok = torch.arange(N).repeat_interleave(k)
    out = torch.zeros_like(x)
    for e in range(E):
        sel = (flat_e == e).nonzero().squeeze(-1)
        if sel.numel() == 0:
            continue
        tok = flat_tok[sel]
        out = out.index_add(0, tok, flat_gate[sel, None] * experts[e](x[tok]))
    f = torch.bincount(flat_e, minlength=E).float() / (N * k)
    return out, E * (f * probs.mean(dim=0)).sum()
