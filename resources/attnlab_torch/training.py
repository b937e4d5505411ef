"""The lab's optimiser and schedule (engine/train/optimizer.cpp, trainer.cpp): AdamW with decoupled
weight decay on matrices only (not on norms, biases or gains), global gradient-norm clipping, linear
warm-up then a cosine decay to lr * min_lr_ratio."""
import math

import torch


def learning_rate(step, train):
    """The rate of 0-based step `step` (the lab's Trainer::learningRate)."""
    lr, warmup, steps = train["lr"], train["warmup"], train["steps"]
    if step < warmup:
        return lr * (step + 1) / warmup
    progress = min(1.0, (step - warmup) / (steps - warmup)) if steps > warmup else 1.0
    min_lr = lr * train["min_lr_ratio"]
    return min_lr + 0.5 * (lr - min_lr) * (1.0 + math.cos(math.pi * progress))


def plain_name(name):
    """A parameter's lab name inside a DDP or FSDP wrapper."""
    return name.replace("_fsdp_wrapped_module.", "").replace("module.", "", 1) if name.startswith(("module.", "_fsdp")) else name


def make_optimizer(model, train, decay_names=None):
    """AdamW with the lab's betas, eps and decay; decay applies to matrices (parameters of 2 or more
    dimensions, or the names in decay_names: FSDP shards matrices into flat pieces)."""
    params = [(plain_name(n), p) for n, p in model.named_parameters() if p.requires_grad]
    decays = (lambda n, p: n in decay_names) if decay_names is not None else (lambda n, p: p.dim() >= 2)
    decay = [p for n, p in params if decays(n, p)]
    other = [p for n, p in params if not decays(n, p)]
    groups = [{"params": decay, "weight_decay": train["weight_decay"]}, {"params": other, "weight_decay": 0.0}]
    return torch.optim.AdamW(groups, lr=train["lr"], betas=(train["beta1"], train["beta2"]), eps=train["eps"])


def gradient_norm(parameters):
    grads = [p.grad for p in parameters if p.grad is not None]
    return math.sqrt(sum(float(g.double().square().sum()) for g in grads)) if grads else 0.0


def clip_gradients(model, max_norm):
    """Scales every gradient so the global norm is at most max_norm (0: off). Returns the norm before."""
    params = list(model.parameters())
    norm = gradient_norm(params)
    if max_norm > 0 and norm > max_norm:
        scale = max_norm / (norm + 1e-12)
        for p in params:
            if p.grad is not None:
                p.grad.mul_(scale)
    return norm
