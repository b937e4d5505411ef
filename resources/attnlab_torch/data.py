"""Token files written by `attnlab-cli data` (or by you, in the same format):

    data.json          {"format": "attnlab-data-1", "vocab": V, "seq_len": T,
                        "splits": {"train": N, "validation": M}, "has_answers": true|false, ...}
    train.tokens       N * T little-endian int32 token ids, sequence after sequence
    train.targets      N * T int32: the token expected after each input, -1 where no loss is taken (the loss mask)
    validation.tokens, validation.targets   the same for M held-out sequences
"""
import json
import os

import numpy as np
import torch

from .errors import LabError

FORMAT = "attnlab-data-1"


class TokenData:
    def __init__(self, folder):
        meta_path = os.path.join(folder, "data.json")
        try:
            with open(meta_path, encoding="utf-8") as f:
                meta = json.load(f)
        except FileNotFoundError:
            raise LabError(f"{meta_path}: not found (write a data folder with 'attnlab-cli data')")
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            raise LabError(f"{meta_path}: is not a readable JSON file")
        if not isinstance(meta, dict) or meta.get("format") != FORMAT:
            raise LabError(f"{meta_path}: is not an attnlab data folder (format is not {FORMAT})")
        try:
            self.vocab, self.seq_len = int(meta["vocab"]), int(meta["seq_len"])
            splits = {name: int(meta["splits"][name]) for name in ("train", "validation")}
        except (KeyError, TypeError, ValueError):
            raise LabError(f"{meta_path}: needs vocab, seq_len and splits.train, splits.validation as numbers")
        self.has_answers = bool(meta.get("has_answers", False))
        self.meta = meta
        self.splits = {name: self._read(folder, name, count) for name, count in splits.items()}

    def _read(self, folder, split, count):
        arrays = []
        for kind in ("tokens", "targets"):
            path = os.path.join(folder, f"{split}.{kind}")
            expected = 4 * count * self.seq_len
            size = os.path.getsize(path) if os.path.exists(path) else None
            if size is None:
                raise LabError(f"{path}: not found")
            if size != expected:
                raise LabError(f"{path}: holds {size} bytes, expected {expected} ({count} sequences of "
                               f"{self.seq_len} int32 values, as data.json says)")
            values = torch.from_numpy(np.fromfile(path, dtype="<i4").astype(np.int64)).view(count, self.seq_len)
            low, high = int(values.min()) if count else 0, int(values.max()) if count else 0
            if low < (-1 if kind == "targets" else 0) or high >= self.vocab:
                raise LabError(f"{path}: holds the id {low if low < 0 else high}, outside the vocabulary of {self.vocab}")
            arrays.append(values)
        if count == 0:
            raise LabError(f"{os.path.join(folder, 'data.json')}: the {split} split holds no sequence")
        return tuple(arrays)
