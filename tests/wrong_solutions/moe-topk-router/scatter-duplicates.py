import torch


def moe_forward(x, router_weight, experts, k):
    N, E = x.shape[0], router_weight.shape[0]
    probs = (x @ router_weight.T).softmax(dim=-1)
    top_p, top_e = probs.topk(k, dim=-1)
    gates = top_p / top_p.sum(dim=-1, keepdim=True)
    flat_e, flat_gate = top_e.flatten(), gates.flatten()
    flat_tok = torch.arange(N).repeat_interleave(k)
    order = flat_e.argsort(stable=True)                 # group the assignments by expert
    counts = torch.bincount(flat_e, minlength=E).tolist()
    ys = [experts[e](chunk) for e, chunk in
          enumerate(x[flat_tok[order]].split(counts)) if counts[e] > 0]
    y = torch.cat(ys) * flat_gate[order, None]
    out = torch.zeros_like(x)
    out[flat_tok[order]] += y                           # BUG: repeated token indices
    f = torch.bincount(flat_e, minlength=E).float() / (N * k)
    return out, E * (f * probs.mean(dim=0)).sum()
