import torch
import torch.nn.functional as F
from torch import nn

PATTERN = torch.tensor([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9])   # digits of pi


def get_batch(batch_size, T, generator):                          # given
    """(batch_size, T) int64 windows of the endlessly repeated PATTERN, random offsets."""
    start = torch.randint(len(PATTERN), (batch_size, 1), generator=generator)
    return PATTERN[(start + torch.arange(T)) % len(PATTERN)]


class Block(nn.Module):
    def __init__(self, d_model, n_head):
        super().__init__()
        self.n_head = n_head
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(),
                                 nn.Linear(4 * d_model, d_model))

    def forward(self, h):
        B, T, D = h.shape
        q, k, v = self.qkv(self.ln1(h)).split(D, dim=-1)
        q, k, v = (t.view(B, T, self.n_head, D // self.n_head).transpose(1, 2)
                   for t in (q, k, v))                            # (B, H, T, D/H)
        a = F.scaled_dot_product_attention(q, k, v)               # BUG: not causal
        h = h + self.proj(a.transpose(1, 2).reshape(B, T, D))     # pre-LN residuals
        return h + self.mlp(self.ln2(h))


class MiniGPT(nn.Module):
    def __init__(self, vocab_size, block_size, d_model=32, n_head=4, n_layer=2):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.pos_emb = nn.Embedding(block_size, d_model)
        self.blocks = nn.ModuleList(Block(d_model, n_head) for _ in range(n_layer))
        self.ln_f = nn.LayerNorm(d_model)
        self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
        self.lm_head.weight = self.tok_emb.weight                 # tied: one Parameter
        for emb in (self.tok_emb, self.pos_emb):                  # N(0, 1) would give logits
            nn.init.normal_(emb.weight, std=0.02)                 # of size ~sqrt(d_model)

    def forward(self, idx):
        B, T = idx.shape
        h = self.tok_emb(idx) + self.pos_emb(torch.arange(T, device=idx.device))
        for block in self.blocks:
            h = block(h)
        logits = self.lm_head(self.ln_f(h))                       # (B, T, V)
        loss = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                               idx[:, 1:].reshape(-1))            # position t predicts t+1
        return logits, loss


def train(model, steps, batch_size=16, lr=3e-3, seed=0):
    g = torch.Generator().manual_seed(seed)                       # the data order
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0)
    T = model.pos_emb.num_embeddings
    losses = []
    for _ in range(steps):
        _, loss = model(get_batch(batch_size, T, g))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses
