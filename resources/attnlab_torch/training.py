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


def circuit_of(name):
    """("qk" | "ov" | None, layer) of a lab parameter name (engine/train/circuit_lr.cpp): W_q, W_k, W_qk are
    the QK circuit, W_v, W_o the OV circuit; a tensor serving both (W_kv, W_qkv) keeps the base rate.
    Latent KV: W_UK is QK, W_UV is OV, and W_DKV, feeding both, keeps the base rate."""
    parts = name.split(".")
    if len(parts) != 5 or parts[0] != "blocks" or parts[2] != "attn" or parts[4] != "weight":
        return None, -1
    kind = {"wq": "qk", "wk": "qk", "wqk": "qk", "wuk": "qk", "wv": "ov", "wo": "ov", "wuv": "ov"}.get(parts[3])
    return kind, int(parts[1])


def circuit_ratio(group, step, train):
    """The factor on the learning rate of an optimiser group at 0-based step `step` (1 outside the
    circuit, the layers listed in train.lr_ratio_layers or the steps [lr_ratio_from, lr_ratio_until))."""
    kind, layer = group.get("circuit", (None, -1))
    if kind is None:
        return 1.0
    layers = [int(l) for l in str(train["lr_ratio_layers"]).split(",") if l != ""]
    until = int(train["lr_ratio_until"])
    in_window = step >= int(train["lr_ratio_from"]) and (until == 0 or step < until)
    if not in_window or (layers and layer not in layers):
        return 1.0
    return float(train["qk_lr_ratio"] if kind == "qk" else train["ov_lr_ratio"])


def set_learning_rates(optimizer, lr, step, train):
    for group in optimizer.param_groups:
        group["lr"] = lr * circuit_ratio(group, step, train)


def make_optimizer(model, train, decay_names=None):
    """AdamW with the lab's betas, eps and decay; decay applies to what the lab decays (LabModel.decayed,
    or the names in decay_names: FSDP shards matrices into flat pieces). Parameters of the QK and OV
    circuits get groups of their own, so set_learning_rates can give them train.qk_lr_ratio, ov_lr_ratio."""
    params = [(plain_name(n), p) for n, p in model.named_parameters() if p.requires_grad]
    if decay_names is None:
        inner = getattr(model, "module", model)
        decay_names = {n for n, p in params if inner.decayed(n, p)}
    groups = {}
    for n, p in params:
        decays, circuit = n in decay_names, circuit_of(n)
        key = (decays, circuit)
        if key not in groups:
            groups[key] = {"params": [], "weight_decay": train["weight_decay"] if decays else 0.0, "circuit": circuit}
        groups[key]["params"].append(p)
    return torch.optim.AdamW(list(groups.values()), lr=train["lr"], betas=(train["beta1"], train["beta2"]), eps=train["eps"])


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
