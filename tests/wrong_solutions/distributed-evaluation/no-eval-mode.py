import torch
import torch.distributed as dist
from torch.utils.data import DataLoader, Subset


def distributed_accuracy(model, dataset, batch_size=64):
    """Wrong: evaluates in whatever mode the model is in, so dropout stays on."""
    rank, world = dist.get_rank(), dist.get_world_size()
    shard = Subset(dataset, range(rank, len(dataset), world))
    counts = torch.zeros(2, dtype=torch.int64)
    with torch.no_grad():
        for x, y in DataLoader(shard, batch_size=batch_size):
            counts[0] += (model(x).argmax(dim=-1) == y).sum()
            counts[1] += y.numel()
    dist.all_reduce(counts)
    return counts[0].item() / counts[1].item()
