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

OMEGA_TABLE_FILE = "omega_table.safetensors"  # accumulated_rotation omega_mode 1: the engine's per-token increments
HISTORY_COLUMNS = ["step", "loss", "val_loss", "accuracy", "lr", "grad_norm", "tokens_per_second", "seconds"]


def load(folder):
    """A LabModel holding the lab checkpoint's weights (strict: every tensor, each once, right shape)."""
    if not os.path.isdir(folder):
        raise LabError(f"{folder}: is not a folder (a lab run folder holds config.json, model.safetensors, history.csv)")
    config = read_config(os.path.join(folder, "config.json"))
    model = LabModel(config)
    load_weights(model, os.path.join(folder, "model.safetensors"))
    load_fixed_tables(model, folder)
    return model


def fixed_tables(model):
    """The model's fixed tables that are not parameters (accumulated_rotation's omega_table), by name."""
    return {name: t.detach().cpu() for name, t in model.named_buffers() if name.endswith("omega_table")}


def set_fixed_tables(model, tables):
    with torch.no_grad():
        for name, t in model.named_buffers():
            if name in tables:
                t.copy_(tables[name])


def load_fixed_tables(model, folder):
    if not fixed_tables(model):
        return
    path = os.path.join(folder, OMEGA_TABLE_FILE)
    if not os.path.exists(path):
        raise LabError(f"{path}: not found (accumulated_rotation with omega_mode 1 needs the engine's per-token table, "
                       "which 'attnlab-cli export pytorch' writes)")
    table = read_safetensors(path).get("omega_table")
    expected = model.positional.omega_table
    if table is None or list(table.shape) != list(expected.shape):
        raise LabError(f"{path}: needs a tensor omega_table of shape {list(expected.shape)}")
    set_fixed_tables(model, {"positional.omega_table": table})


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


def read_kept_files(folder, subfolder="pretrained"):
    """{relative path: bytes} of a checkpoint's `pretrained/` folder: what describes the Hugging Face model
    it came from (config.json, tensors.json, tokenizer files), which every checkpoint of it carries on."""
    root = os.path.join(folder, subfolder)
    if not os.path.isdir(root):
        return {}
    kept = {}
    for name in sorted(os.listdir(root)):
        path = os.path.join(root, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                kept[f"{subfolder}/{name}"] = f.read()
    return kept


def save(model, folder, history=(), kept_files=None):
    """Writes `model` (a LabModel, or DDP/FSDP around one, unwrapped by the caller) as a lab checkpoint folder,
    with `kept_files` ({relative path: bytes}, from read_kept_files) beside it."""
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
        for table in fixed_tables(model).values():
            write_safetensors(os.path.join(tmp, OMEGA_TABLE_FILE), {"omega_table": table})
        n_layers = model.spec.n_layers
        text = ",".join(history_header(n_layers)) + "\n" + "".join(history_line(r, n_layers) + "\n" for r in history)
        _fsync_write(os.path.join(tmp, "history.csv"), text)
        for relative, data in (kept_files or {}).items():
            os.makedirs(os.path.dirname(os.path.join(tmp, relative)), exist_ok=True)
            with open(os.path.join(tmp, relative), "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
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
