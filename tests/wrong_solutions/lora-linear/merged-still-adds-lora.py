import math

import torch
from torch import nn


class LoRALinear(nn.Module):
    """y = base(x) + (alpha / r) * B A dropout(x), with the base layer frozen."""

    def __init__(self, base: nn.Linear, r: int, alpha: float, dropout: float = 0.0):
        super().__init__()
        self.base = base
        self.base.requires_grad_(False)               # weight and bias: no grads, no updates
        self.scaling = alpha / r
        w = base.weight
        self.lora_A = nn.Parameter(torch.empty(r, base.in_features, dtype=w.dtype,
                                               device=w.device))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r, dtype=w.dtype,
                                               device=w.device))
        nn.init.kaiming_uniform_(self.lora_A, a=math.sqrt(5))    # as nn.Linear (and PEFT)
        self.dropout = nn.Dropout(dropout)            # on the LoRA path only
        self.merged = False

    def delta_weight(self):
        return (self.lora_B @ self.lora_A) * self.scaling         # (out, in)

    def forward(self, x):
        y = self.base(x)
        # x -> r -> out: r * (in + out) multiply-adds per token, never an (out, in) matrix
        return y + (self.dropout(x) @ self.lora_A.T) @ self.lora_B.T * self.scaling

    @torch.no_grad()
    def merge(self):
        if not self.merged:                           # merging twice would add it twice
            self.base.weight += self.delta_weight()
            self.merged = True

    @torch.no_grad()
    def unmerge(self):
        if self.merged:
            self.base.weight -= self.delta_weight()
            self.merged = False
