import torch


class MyAdamW(torch.optim.AdamW):
    """Not from scratch: torch's own AdamW under another name."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                         foreach=False)
