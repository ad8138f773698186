import itertools

import torch
import torch.nn.functional as F


class Trainer:
    """Trains on (x, y) batches with MSE; resumable bit for bit, mid-epoch included."""

    def __init__(self, model, optimizer, scheduler, loader):
        self.model, self.optimizer = model, optimizer
        self.scheduler, self.loader = scheduler, loader
        self.epoch_start = None        # loader.generator state when this epoch's shuffle began
        self.done_in_epoch = 0         # batches of this epoch already trained on
        self.batches = None            # the live iterator (never saved)

    def next_batch(self):
        while True:
            if self.batches is None:
                if self.epoch_start is None:            # a new epoch: remember where it began
                    self.epoch_start = self.loader.generator.get_state()
                else:                                   # resumed: replay this epoch's shuffle
                    self.loader.generator.set_state(self.epoch_start)
                self.batches = itertools.islice(self.loader, self.done_in_epoch, None)
            batch = next(self.batches, None)
            if batch is not None:
                self.done_in_epoch += 1
                return batch
            self.batches, self.epoch_start, self.done_in_epoch = None, None, 0

    def train(self, num_steps):
        self.model.train()
        losses = []
        for _ in range(num_steps):
            x, y = self.next_batch()
            loss = F.mse_loss(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            self.scheduler.step()
            losses.append(loss.detach())
        return losses

    def state_dict(self):
        return {"model": self.model.state_dict(),
                "optimizer": self.optimizer.state_dict(),
                "scheduler": self.scheduler.state_dict(),
                "torch_rng": torch.get_rng_state(),        # dropout (add CUDA/NumPy if used)
                "epoch_start": (self.loader.generator.get_state()
                                if self.epoch_start is None else self.epoch_start),
                "done_in_epoch": self.done_in_epoch}

    def load_state_dict(self, state):
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        self.epoch_start, self.done_in_epoch = None, 0      # start a fresh epoch
        self.batches = None
        torch.set_rng_state(state["torch_rng"])              # last: building used the RNG
