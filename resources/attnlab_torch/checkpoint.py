"""Lab checkpoint folders (docs/checkpoint-format.md): config.json, model.safetensors, history.csv.
Saving is all or nothing: the new folder is written beside the target, each file flushed, then
swapped with the previous checkpoint in one rename (so a run killed at any moment leaves a complete
checkpoint in place); the previous one is deleted after."""
import ctypes
import json
import math
import os
import shutil
import tempfile

import torch

from .config import FORMAT, read_config
from .errors import LabError
from .model import LabModel
from .safetensors_io import read_safetensors, write_safetensors

HISTORY_COLUMNS = ["step", "loss", "val_loss", "accuracy", "lr", "grad_norm", "tokens_per_second", "seconds"]


def load(folder):
    """A LabModel holding the lab checkpoint's weights (strict: every tensor, each once, right shape)."""
    if not os.path.isdir(folder):
        raise LabError(f"{folder}: is not a folder (a lab run folder holds config.json, model.safetensors, history.csv)")
    config = read_config(os.path.join(folder, "config.json"))
    model = LabModel(config)
    load_weights(model, os.path.join(folder, "model.safetensors"))
    return model


def load_weights(model, path):
    tensors = read_safetensors(path)
    expected = dict(model.named_parameters())
    for name in expected:
        if name not in tensors:
            raise LabError(f"{path}: tensor {name} is missing")
    for name, tensor in tensors.items():
        if name not in expected:
            raise LabError(f"{path}: has tensor {name}, which this model does not have")
        if list(tensor.shape) != list(expected[name].shape):
            raise LabError(f"{path}: tensor {name} has shape {list(tensor.shape)}, expected {list(expected[name].shape)}")
    with torch.no_grad():
        for name, p in expected.items():
            p.copy_(tensors[name])


def history_header(n_layers):
    return HISTORY_COLUMNS + [f"grad_norm_L{l}" for l in range(n_layers)] + [f"entropy_L{l}" for l in range(n_layers)]


def history_line(row, n_layers):
    """One history.csv row from a dict (missing or NaN cells empty), numbers read back exactly."""
    cells = []
    for key in history_header(n_layers):
        value = row.get(key)
        cells.append("" if value is None or (isinstance(value, float) and math.isnan(value)) else repr(value))
    return ",".join(cells)


def read_history(path):
    """history.csv rows as dicts of floats (empty cells None); [] when the file is absent."""
    if not os.path.exists(path):
        return []
    rows = []
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if not lines:
        return rows
    header = lines[0].split(",")
    if header[: len(HISTORY_COLUMNS)] != HISTORY_COLUMNS:
        raise LabError(f"{path}: is not a lab history (its header does not start with {','.join(HISTORY_COLUMNS)})")
    for number, line in enumerate(lines[1:], start=2):
        cells = line.split(",")
        if len(cells) != len(header):
            raise LabError(f"{path}: line {number} has {len(cells)} cells, expected {len(header)}")
        try:
            rows.append({k: (float(c) if c else None) for k, c in zip(header, cells)})
        except ValueError:
            raise LabError(f"{path}: line {number} holds a cell that is not a number")
    for row in rows:
        row["step"] = int(row["step"])
    return rows


def _fsync_write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())


def _exchange(a, b):
    """Swaps two paths in one step (Linux renameat2 RENAME_EXCHANGE): `b` is never missing. False where unsupported."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        at_fdcwd, rename_exchange = -100, 2
        return libc.renameat2(at_fdcwd, a.encode(), at_fdcwd, b.encode(), rename_exchange) == 0
    except (OSError, AttributeError):
        return False


def save(model, folder, history=()):
    """Writes `model` (a LabModel, or DDP/FSDP around one, unwrapped by the caller) as a lab checkpoint folder."""
    folder = os.path.abspath(folder)
    if os.path.isfile(folder) or (os.path.isdir(folder) and os.listdir(folder)
                                  and not os.path.exists(os.path.join(folder, "config.json"))):
        raise LabError(f"{folder}: exists and is not an attnlab checkpoint (no config.json); refusing to replace it")
    parent = os.path.dirname(folder)
    os.makedirs(parent, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix=os.path.basename(folder) + ".tmp-", dir=parent)
    try:
        config = dict(model.config, format=FORMAT)
        _fsync_write(os.path.join(tmp, "config.json"), json.dumps(config, indent=2) + "\n")
        write_safetensors(os.path.join(tmp, "model.safetensors"), dict(model.named_parameters()))
        n_layers = model.spec.n_layers
        text = ",".join(history_header(n_layers)) + "\n" + "".join(history_line(r, n_layers) + "\n" for r in history)
        _fsync_write(os.path.join(tmp, "history.csv"), text)
        if os.path.exists(folder) and _exchange(tmp, folder):
            shutil.rmtree(tmp, ignore_errors=True)  # now the previous checkpoint
        else:
            old = None
            if os.path.exists(folder):  # no atomic exchange here: the previous one moves aside first
                old = tempfile.mkdtemp(prefix=os.path.basename(folder) + ".old-", dir=parent)
                os.rmdir(old)
                os.rename(folder, old)
            os.rename(tmp, folder)
            if old:
                shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
