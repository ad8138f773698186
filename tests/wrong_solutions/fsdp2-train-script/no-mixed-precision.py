import os
import tempfile

import torch
import torch.distributed as dist
import torch.distributed.checkpoint as dcp
import torch.multiprocessing as mp
import torch.nn.functional as F
from torch import nn
from torch.distributed.checkpoint.state_dict import get_state_dict, set_state_dict
from torch.distributed.checkpoint.stateful import Stateful
from torch.distributed.device_mesh import init_device_mesh
from torch.distributed.fsdp import MixedPrecisionPolicy, fully_shard

D = 16


class Block(nn.Module):                                  # given
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2 = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

    def forward(self, x):
        return x + self.fc2(torch.relu(self.fc1(x)))


class Net(nn.Module):                                    # given
    def __init__(self, n_blocks=3):
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(n_blocks))
        self.head = nn.Linear(D, 1)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def get_batch(step, rank):                               # given: step and rank only
    g = torch.Generator().manual_seed(1000 * step + rank)
    x = torch.randn(8, D, generator=g)
    return x, x.sum(dim=-1, keepdim=True).sin()


def build(mesh):
    torch.manual_seed(0)                                 # the same full init on every rank
    model = Net()
    mp_policy = MixedPrecisionPolicy()                   # BUG: no bf16 compute
    for block in model.blocks:                           # one all-gather unit per block ...
        fully_shard(block, mesh=mesh, mp_policy=mp_policy)
    fully_shard(model, mesh=mesh, mp_policy=mp_policy)   # ... then the root (the head)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)  # after fully_shard: DTensor params
    sched = torch.optim.lr_scheduler.LinearLR(opt, start_factor=0.1, total_iters=6)
    return model, opt, sched


def train_steps(model, opt, sched, start, num_steps, rank):
    losses = []
    for step in range(start, start + num_steps):
        x, y = get_batch(step, rank)
        loss = F.mse_loss(model(x).float(), y)           # bf16 compute, fp32 loss
        opt.zero_grad()
        loss.backward()                                  # reduce-scatter in fp32
        opt.step()
        sched.step()
        losses.append(loss.item())
    return losses


class TrainState(Stateful):                              # what dcp.save / dcp.load call
    def __init__(self, model, opt, sched, step=0):
        self.model, self.opt, self.sched, self.step = model, opt, sched, step

    def state_dict(self):
        model_sd, optim_sd = get_state_dict(self.model, self.opt)   # sharded, FQN keys
        return {"model": model_sd, "optim": optim_sd,
                "sched": self.sched.state_dict(), "step": self.step}

    def load_state_dict(self, sd):
        set_state_dict(self.model, self.opt, model_state_dict=sd["model"],
                       optim_state_dict=sd["optim"])
        self.sched.load_state_dict(sd["sched"])
        self.step = sd["step"]


def save_checkpoint(path, model, opt, sched, step):
    dcp.save({"train": TrainState(model, opt, sched, step)}, checkpoint_id=path)


def load_checkpoint(path, model, opt, sched):
    state = TrainState(model, opt, sched)
    dcp.load({"train": state}, checkpoint_id=path)       # each rank reads its own shards
    return state.step


def main(rank, world_size, workdir, launch, steps):      # one launch: resume, train, save
    dist.init_process_group("gloo", init_method=f"file://{workdir}/rdzv{launch}",
                            rank=rank, world_size=world_size)   # a new file every launch
    try:
        mesh = init_device_mesh("cpu", (world_size,))
        model, opt, sched = build(mesh)
        ckpts = f"{workdir}/ckpt"
        saved = sorted(os.listdir(ckpts)) if os.path.isdir(ckpts) else []   # step000004, ...
        start = load_checkpoint(f"{ckpts}/{saved[-1]}", model, opt, sched) if saved else 0
        losses = train_steps(model, opt, sched, start, steps, rank)
        end = start + steps                              # a new directory per checkpoint:
        save_checkpoint(f"{ckpts}/step{end:06d}", model, opt, sched, end)   # never overwrite
        torch.save(losses, f"{workdir}/losses{start}_rank{rank}.pt")
    finally:
        dist.destroy_process_group()


