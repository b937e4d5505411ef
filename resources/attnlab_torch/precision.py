"""Emulated score precision (model.score_precision), as engine/attention/precision.h does it.

Values stay float32 but are rounded, where a low-precision kernel would store them, to what bf16
or fp16 can represent (round to nearest even; fp16 keeps subnormals, flushes below 2^-25 to 0 and
overflows to inf). Backward is straight-through, as in the engine: gradients are those of fp32.
"""
import torch

_FORMATS = {"bf16": torch.bfloat16, "fp16": torch.float16}


def rounder(precision):
    """A function x -> x rounded to `precision` (the identity for fp32), no gradient of its own."""
    if precision == "fp32":
        return None
    dtype = _FORMATS[precision]
    return lambda x: x.detach().to(dtype).to(torch.float32)


def straight_through(value, surrogate):
    """Takes the value of `value` and the gradient of `surrogate`."""
    return surrogate + (value - surrogate).detach()


def round_ste(x, round_fn):
    """x rounded, with the identity as its derivative (straight-through)."""
    return x if round_fn is None else straight_through(round_fn(x), x)
