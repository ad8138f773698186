import torch


def next_token_probs(logits, temperature=1.0, top_k=None, top_p=None):
    """(B, V) logits -> (B, V) float32 probabilities: temperature, then top-k, then top-p."""
    assert temperature > 0, "temperature must be positive (use argmax for greedy)"
    logits = logits.float() / temperature             # a new tensor: the input stays intact
    if top_k is not None and top_k < logits.size(-1):
        idx = torch.topk(logits, top_k, dim=-1).indices                # exactly k tokens
        keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, idx, True)
        logits = logits.masked_fill(~keep, float("-inf"))
    if top_p is not None and top_p < 1.0:
        probs = logits.softmax(dim=-1)                # renormalised over the top-k survivors
        sorted_probs, order = probs.sort(dim=-1, descending=True)
        mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs        # more likely tokens
        drop_sorted = mass_before >= top_p            # the top token has 0 < top_p: kept
        drop = torch.zeros_like(drop_sorted).scatter(-1, order, drop_sorted)  # vocab order
        logits = logits.masked_fill(drop, float("-inf"))
    return logits.softmax(dim=-1)


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    """One token id per row, (B,) int64, drawn with `generator` only."""
    probs = next_token_probs(logits, temperature, top_k, top_p)
    return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)
