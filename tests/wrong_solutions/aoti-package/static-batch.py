import torch


def package_for_serving(model, example, package_path):
    model.eval()
    with torch.no_grad():
        ep = torch.export.export(model, (example,))  # every dimension static: batch 8 only
    path = torch._inductor.aoti_compile_and_package(ep, package_path=package_path)
    return torch._inductor.aoti_load_package(path)
