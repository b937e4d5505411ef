#!/usr/bin/python3
"""Checks attnlab_torch against the engine, case by case (see tests/test_export_parity.cpp).

Each case folder holds a lab checkpoint (config.json, model.safetensors) and reference.safetensors:
the engine's tokens, targets, loss, logits and gradients of the training loss (grad/<name>). Logits
must agree to 1e-4 relative to their largest magnitude, the loss to 1e-5, and each gradient tensor
to 1e-3 relative to its norm (floored at 1e-4 of the whole gradient's norm, so a tensor whose
gradient is nearly zero is judged on the scale of the step it contributes to). A case marked
Under an emulated score precision (bf16, fp16) logits are held to 1e-3 instead: the two sides'
float32 sums differ in their last bits (summation order), which can round a score to the
neighbouring bf16 value, one step of 2^-8 (seen once in 363 cases: 1.3e-4). A case marked
expect_refusal must be refused with a one-line LabError. Prints one line per failure and
"checked N cases"; exits 1 when any failed.
"""
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "resources"))
import torch  # noqa: E402

import attnlab_torch as lab  # noqa: E402
from attnlab_torch.safetensors_io import read_safetensors  # noqa: E402
from attnlab_torch.training import clip_gradients, learning_rate, make_optimizer, set_learning_rates  # noqa: E402


def relative(a, b, floor=0.0):
    return float((a - b).norm()) / max(float(b.norm()), floor, 1e-30)


def check_case(folder):
    """Returns a list of failure lines for one case."""
    name = os.path.basename(folder)
    if os.path.exists(os.path.join(folder, "expect_refusal")):
        try:
            lab.load(folder)
        except lab.LabError as e:
            return [] if "\n" not in str(e) and str(e) else [f"{name}: refusal is not one line: {e!r}"]
        return [f"{name}: expected a refusal, but the model was built"]
    ref = read_safetensors(os.path.join(folder, "reference.safetensors"))
    model = lab.load(folder)
    tokens, targets = ref["tokens"].long(), ref["targets"].long()
    logits = model(tokens)
    loss = model.loss(tokens, targets)
    loss.backward()
    failures = []
    scale = float(ref["logits"].abs().max())
    logit_err = float((logits - ref["logits"]).abs().max()) / scale
    tolerance = 1e-4 if model.spec.score_precision == "fp32" else 1e-3
    if not logit_err <= tolerance:
        failures.append(f"{name}: logits differ by {logit_err:.2e} (relative to their largest, {scale:.3g})")
    loss_err = abs(float(loss) - float(ref["loss"])) / max(abs(float(ref["loss"])), 1e-30)
    if not loss_err <= 1e-5:
        failures.append(f"{name}: loss {float(loss):.7g} vs the engine's {float(ref['loss']):.7g}")
    grads = {n: p.grad if p.grad is not None else torch.zeros_like(p) for n, p in model.named_parameters()}
    total = math.sqrt(sum(float(ref["grad/" + n].norm()) ** 2 for n in grads))
    for n, g in grads.items():
        err = relative(g, ref["grad/" + n], 1e-4 * total)
        if not err <= 1e-3:
            failures.append(f"{name}: gradient of {n} differs by {err:.2e} relative")
    if "after/tok_emb.weight" in ref:
        failures += check_optimizer(name, folder, model, ref)
    return failures


def check_optimizer(name, folder, model, ref):
    """The engine's clipping, one AdamW step (decay as the lab decays, circuit learning rates) and its schedule."""
    failures = []
    train = model.config["train"]
    clip_gradients(model, train["grad_clip"])
    optimizer = make_optimizer(model, train)
    set_learning_rates(optimizer, float(ref["lr"]), 0, train)  # with the circuit rates of train.qk_lr_ratio, ...
    optimizer.step()
    for n, p in model.named_parameters():
        before = p.detach()
        err = float((before - ref["after/" + n]).abs().max())
        if not err <= 1e-5:
            failures.append(f"{name}: parameter {n} after one AdamW step differs by {err:.2e}")
    schedule = lab.read_config(os.path.join(folder, "schedule.json"))["train"]
    for step, expected in enumerate(ref["schedule"].tolist()):
        got = learning_rate(step, schedule)
        if not abs(got - expected) <= 1e-6 * expected:
            failures.append(f"{name}: learning rate at step {step} is {got:.7g}, the engine's {expected:.7g}")
    return failures


def main():
    root = sys.argv[1]
    torch.manual_seed(0)
    cases = sorted(d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d)))
    failures = []
    for case in cases:
        try:
            failures += check_case(os.path.join(root, case))
        except Exception as e:  # a crash is a failure of that case, reported as such
            failures.append(f"{case}: {type(e).__name__}: {e}")
    for line in failures:
        print(line)
    print(f"checked {len(cases)} cases, {len(failures)} failures")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
