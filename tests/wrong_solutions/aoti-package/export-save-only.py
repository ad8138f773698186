import torch
from torch.export import Dim


def package_for_serving(model, example, package_path):
    model.eval()
    ep = torch.export.export(model, (example,), dynamic_shapes=({0: Dim("batch", max=256)},))
    torch.export.save(ep, package_path)                # a .pt2, but not compiled by AOTI
    return torch.export.load(package_path).module()
