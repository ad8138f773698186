import copy

import torch


def find_divergence(model, optimizer, step_fn, num_steps, seed=0):
    """Compare the runs with allclose, and leave the RNG as the second run left it."""
    import random
    model_start = copy.deepcopy(model.state_dict())
    optim_start = copy.deepcopy(optimizer.state_dict())
    runs = []
    for _ in range(2):
        model.load_state_dict(model_start)
        optimizer.load_state_dict(copy.deepcopy(optim_start))
        torch.manual_seed(seed)
        random.seed(seed)
        history = []
        for step in range(num_steps):
            step_fn(model, optimizer, step)
            history.append({n: p.detach().clone() for n, p in model.named_parameters()})
        runs.append(history)
    model.load_state_dict(model_start)
    optimizer.load_state_dict(copy.deepcopy(optim_start))
    for step, (a, b) in enumerate(zip(*runs)):
        for name in a:
            if not torch.allclose(a[name], b[name], equal_nan=True):
                return step, name, (a[name] - b[name]).abs().max().item()
    return None
