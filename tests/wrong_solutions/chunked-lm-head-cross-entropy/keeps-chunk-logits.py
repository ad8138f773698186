import torch
import torch.nn.functional as F


class ChunkedLinearCE(torch.autograd.Function):
    """Chunks the forward, but keeps every chunk's logits for backward: saves nothing."""

    @staticmethod
    def forward(ctx, hidden, weight, targets, chunk_size, ignore_index):
        acc = torch.promote_types(hidden.dtype, torch.float32)
        chunks, total = [], torch.zeros((), dtype=acc)
        for s in range(0, hidden.shape[0], chunk_size):
            logits = (hidden[s : s + chunk_size] @ weight.T).to(acc)
            t = targets[s : s + chunk_size]
            keep = t != ignore_index
            logp = logits.log_softmax(-1)
            chunks.append(logp)
            picked = logp.gather(1, torch.where(keep, t, 0)[:, None]).squeeze(1)
            total -= torch.where(keep, picked, 0.0).sum()
        ctx.save_for_backward(hidden, weight, targets, *chunks)
        ctx.chunk_size, ctx.ignore_index = chunk_size, ignore_index
        return (total / (targets != ignore_index).sum()).to(hidden.dtype)

    @staticmethod
    def backward(ctx, grad_out):
        hidden, weight, targets, *chunks = ctx.saved_tensors
        c, ig = ctx.chunk_size, ctx.ignore_index
        scale = grad_out.to(chunks[0].dtype) / (targets != ig).sum().clamp(min=1)
        grad_h = torch.empty_like(hidden)
        grad_w = torch.zeros_like(weight, dtype=chunks[0].dtype)
        for i, s in enumerate(range(0, hidden.shape[0], c)):
            h, t = hidden[s : s + c], targets[s : s + c]
            keep = t != ig
            d = chunks[i].exp()
            d[torch.arange(len(t)), torch.where(keep, t, 0)] -= 1.0
            d = torch.where(keep[:, None], d * scale, 0.0).to(hidden.dtype)
            grad_h[s : s + c] = d @ weight
            grad_w += (d.T @ h).to(grad_w.dtype)
        return grad_h, grad_w.to(weight.dtype), None, None, None


def chunked_linear_cross_entropy(hidden, weight, targets, chunk_size=1024,
                                 ignore_index=-100):
    return ChunkedLinearCE.apply(hidden, weight, targets, chunk_size, ignore_index)
