import torch


def moe_forward(x, router_weight, experts, k):
    N, E = x.shape[0], router_weight.shape[0]
    logits = x @ router_weight.T
    top_logits, top_e = logits.topk(k, dim=-1)
    gates = top_logits.softmax(dim=-1)                  # top-k, then softmax: same gates
    flat_e, flat_gate = top_e.flatten(), gates.flatten()
    flat_tok = torch.arange(N).repeat_interleave(k)
    out = torch.zeros_like(x)
    for e in range(E):                                  # BUG: calls experts with 0 tokens
        sel = flat_e == e
        tok = flat_tok[sel]
        out = out.index_add(0, tok, flat_gate[sel, None] * experts[e](x[tok]))
    f = torch.bincount(flat_e, minlength=E).float() / (N * k)
    return out, E * (f * logits.softmax(dim=-1).mean(dim=0)).sum()
