from collections import defaultdict

import torch
from torch import nn

aten = torch.ops.aten


class MatmulFlopCounter:
    """thop-style: count each nn.Linear from its shapes in a global forward hook."""

    def __init__(self):
        self.counts = defaultdict(lambda: defaultdict(int))

    def hook(self, module, inputs, output):
        if isinstance(module, nn.Linear):
            x = inputs[0]
            rows = x.numel() // x.shape[-1]
            op = aten.addmm if module.bias is not None else aten.mm
            flops = 2 * rows * module.in_features * module.out_features
            self.counts["Global"][op] += flops

    def __enter__(self):
        self.counts.clear()
        self.handle = nn.modules.module.register_module_forward_hook(self.hook)
        return self

    def __exit__(self, *exc):
        self.handle.remove()

    @property
    def total(self):
        return sum(self.counts["Global"].values())
