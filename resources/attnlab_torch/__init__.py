"""attnlab_torch: the Attention Lab's models in PyTorch, exactly (same architecture, parameter
names, layouts and numerics as the lab's engine), for training at scale with torchrun.

    import attnlab_torch as lab
    model = lab.load("runs/induction")       # a lab checkpoint folder -> torch.nn.Module
    logits = model(ids)                      # LongTensor [B, T] -> [B, T, vocab]
    lab.save(model, "runs/induction-more")   # a folder the lab app and attnlab-cli open
"""
from .checkpoint import load, read_history, save
from .config import read_config
from .errors import LabError
from .model import LabModel


def build(config):
    """A freshly initialised LabModel from a config.json dict (see LabModel.reset_parameters)."""
    return LabModel(config)


__all__ = ["LabModel", "LabError", "build", "load", "save", "read_config", "read_history"]
