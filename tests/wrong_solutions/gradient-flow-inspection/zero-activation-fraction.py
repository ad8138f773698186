import torch
from torch import nn


def inspect_gradients(model, inputs, loss_fn):
    """One forward and backward; per-parameter gradient norms, parameters left without a
    gradient, and for each nn.ReLU the fraction of units that never fired on this batch."""
    model.zero_grad(set_to_none=True)        # stale gradients would hide a None
    fired = {}

    def record(name):
        def hook(module, args, output):      # a unit is a channel: dim 1
            out = output.detach().transpose(0, 1).reshape(output.shape[1], -1)
            fired[name] = out > 0                # share of non-zero activations
        return hook

    handles = [m.register_forward_hook(record(name))
               for name, m in model.named_modules() if isinstance(m, nn.ReLU)]
    try:
        loss_fn(model(inputs)).backward()
    finally:
        for h in handles:
            h.remove()
    trainable = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    return {
        "grad_norms": {n: p.grad.norm().item() for n, p in trainable if p.grad is not None},
        "no_grad": sorted(n for n, p in trainable if p.grad is None),
        "dead_relu": {n: 1.0 - f.float().mean().item() for n, f in fired.items()},
    }
