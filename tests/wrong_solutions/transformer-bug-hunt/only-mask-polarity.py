import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

PAD = 0                                          # pads sequences on the right


@dataclass
class Config:
    vocab: int = 24
    d_model: int = 32
    n_head: int = 4
    n_layer: int = 2
    max_len: int = 32
    dropout: float = 0.1


def make_batch(batch_size, seq_len, gen):
    """Sequences a, a+s, a+2s, ... (mod 23, as tokens 1..23) of random length, PAD after."""
    start = torch.randint(0, 23, (batch_size, 1), generator=gen)
    stride = torch.randint(1, 4, (batch_size, 1), generator=gen)
    tokens = (start + stride * torch.arange(seq_len)) % 23 + 1
    length = torch.randint(seq_len // 2, seq_len + 1, (batch_size, 1), generator=gen)
    return tokens.masked_fill(torch.arange(seq_len) >= length, PAD)


class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len):
        super().__init__()
        pos = torch.arange(max_len).unsqueeze(1)
        div = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
        pe = torch.zeros(max_len, 1, d_model)    # (time, 1, d_model), as in the tutorial
        pe[:, 0, 0::2] = torch.sin(pos * div)
        pe[:, 0, 1::2] = torch.cos(pos * div)
        self.register_buffer("pe", pe)

    def forward(self, x):                        # x: (batch, time, d_model)
        return x + self.pe[: x.size(1)].transpose(0, 1)


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.n_head, self.dropout = cfg.n_head, cfg.dropout
        self.ln1, self.ln2 = nn.LayerNorm(cfg.d_model), nn.LayerNorm(cfg.d_model)
        self.qkv = nn.Linear(cfg.d_model, 3 * cfg.d_model)
        self.proj = nn.Linear(cfg.d_model, cfg.d_model)
        self.mlp = nn.Sequential(nn.Linear(cfg.d_model, 4 * cfg.d_model), nn.GELU(),
                                 nn.Linear(4 * cfg.d_model, cfg.d_model),
                                 nn.Dropout(cfg.dropout))

    def attend(self, x):
        B, T, C = x.shape
        qkv = self.qkv(x).view(B, T, 3, self.n_head, C // self.n_head)
        q, k, v = qkv.permute(2, 0, 3, 1, 4)     # each (batch, heads, time, head_dim)
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=x.device), diagonal=1)
        y = F.scaled_dot_product_attention(q, k, v, attn_mask=future,    # True = masked out
                                           dropout_p=self.dropout if self.training else 0.0)
        return self.proj(y.transpose(1, 2).reshape(B, T, C))

    def forward(self, x):
        x = x + self.attend(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class TinyLM(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(cfg.vocab, cfg.d_model)
        self.pos = PositionalEncoding(cfg.d_model, cfg.max_len)
        self.drop = nn.Dropout(cfg.dropout)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.vocab, bias=False)

    def forward(self, tokens):                   # (batch, time) -> (batch, time, vocab)
        x = self.drop(self.pos(self.embed(tokens)))
        for block in self.blocks:
            x = block(x)
        return self.head(self.ln_f(x))


def lm_loss(logits, tokens):
    """Mean cross-entropy of predicting each next token of `tokens` (batch, time)."""
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.size(-1)),
                           tokens[:, 1:].reshape(-1), ignore_index=PAD)


@torch.no_grad()
def evaluate(model, batches):
    """Mean loss over a list of token batches."""
    was_training = model.training
    model.eval()
    loss = torch.stack([lm_loss(model(tokens), tokens) for tokens in batches]).mean()
    model.train(was_training)
    return loss.item()


def train_model(model, steps, eval_every=40, seed=0):
    gen = torch.Generator().manual_seed(seed)
    val = [make_batch(32, 16, gen) for _ in range(4)]
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
    model.train()
    for step in range(1, steps + 1):
        tokens = make_batch(32, 16, gen)
        loss = lm_loss(model(tokens), tokens)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % eval_every == 0:
            print(f"step {step}: train {loss.item():.3f}, val {evaluate(model, val):.3f}")
    return evaluate(model, val)


if __name__ == "__main__":
    torch.set_num_threads(1)                     # tiny ops: one thread is fastest
    torch.manual_seed(0)
    final = train_model(TinyLM(Config()), steps=80)
    print(f"final val loss {final:.3f}")
