import torch


def _tokens(vocab_size, seq_len, batch, gen):
    return torch.randint(vocab_size, (batch, seq_len), generator=gen)


def assert_causal(model, vocab_size, seq_len, batch=4, seed=0):
    """Change token s, for every s: the logits at positions < s must not move at all."""
    was_training = model.training
    model.eval()                                   # dropout would make every forward differ
    try:
        gen = torch.Generator().manual_seed(seed)
        tokens = _tokens(vocab_size, seq_len, batch, gen)
        with torch.no_grad():
            base = model(tokens)
            for s in range(1, seq_len):
                changed = tokens.clone()           # a different token at s, in every row
                shift = torch.randint(1, vocab_size, (batch,), generator=gen)
                changed[:, s] = (tokens[:, s] + shift) % vocab_size
                moved = (model(changed)[:, :s] - base[:, :s]).abs().amax(dim=(0, 2))
                if moved.any():                    # exact: a causal model gives bitwise zeros
                    t = int(moved.nonzero()[0])
                    raise AssertionError(f"logits at position {t} changed by {moved[t]:.2e} "
                                         f"when token {s} changed")
    finally:
        model.train(was_training)


def assert_causal_grad(model, embedding, vocab_size, seq_len, batch=4, seed=0):
    """d logits[:, t] / d embedding_output[:, s] must be exactly zero for every s > t."""
    captured = []

    def as_leaf(module, args, output):             # differentiate w.r.t. this activation
        output = output.detach().requires_grad_()
        captured.append(output)
        return output

    was_training = model.training
    model.eval()
    handle = embedding.register_forward_hook(as_leaf)
    try:
        gen = torch.Generator().manual_seed(seed)
        logits = model(_tokens(vocab_size, seq_len, batch, gen))
        (emb,) = captured
        probe = torch.randn(logits.shape[-1], generator=gen)   # a random direction, not .sum()
        for t in [0]:                              # the first position only
            (grad,) = torch.autograd.grad(logits[:, t] @ probe, emb,
                                          grad_outputs=torch.ones(batch), retain_graph=True)
            leak = grad[:, t + 1:].abs().amax()
            assert leak == 0, f"logits at position {t} depend on later embeddings ({leak:.2e})"
    finally:
        handle.remove()
        model.train(was_training)
