"""A small reader and writer for the safetensors format, F32 only (what the lab writes).

Debian 12 packages no `safetensors` module, so the package carries its own: an 8-byte
little-endian header length N, N bytes of JSON, then the raw row-major tensor bytes
(docs/checkpoint-format.md). The header is padded with spaces so the data starts 8-aligned.
"""
import json
import os
import struct

import torch

from .errors import LabError


def read_safetensors(path):
    """Returns {name: float32 tensor}; raises LabError naming the file and what is wrong."""
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError as e:
        raise LabError(f"{path}: cannot be read ({e.strerror})")
    if len(blob) < 8:
        raise LabError(f"{path}: is not a safetensors file (shorter than its 8-byte header length)")
    (header_len,) = struct.unpack("<Q", blob[:8])
    if header_len > len(blob) - 8:
        raise LabError(f"{path}: is not a safetensors file (header length {header_len} exceeds the file)")
    try:
        header = json.loads(blob[8 : 8 + header_len].decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise LabError(f"{path}: is not a safetensors file (its header is not JSON)")
    if not isinstance(header, dict):
        raise LabError(f"{path}: is not a safetensors file (its header is not a JSON object)")
    data = memoryview(blob)[8 + header_len :]
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        if not isinstance(entry, dict) or entry.get("dtype") != "F32":
            raise LabError(f"{path}: tensor {name} is not F32 (the lab stores 32-bit floats only)")
        shape, (begin, end) = entry.get("shape", []), entry.get("data_offsets", [0, 0])
        count = 1
        for dim in shape:
            count *= dim
        if end - begin != 4 * count or begin < 0 or end > len(data):
            raise LabError(f"{path}: tensor {name} has offsets [{begin}, {end}] that do not fit its shape {shape}")
        values = torch.frombuffer(bytearray(data[begin:end]), dtype=torch.float32) if count else torch.zeros(0)
        tensors[name] = values.reshape(shape)
    return tensors


def write_safetensors(path, tensors):
    """Writes {name: tensor} as F32, flushed to disk."""
    header, chunks, offset = {"__metadata__": {"format": "attnlab"}}, [], 0
    for name, tensor in tensors.items():
        raw = tensor.detach().to(torch.float32).contiguous().cpu().numpy().tobytes()
        header[name] = {"dtype": "F32", "shape": list(tensor.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    text += b" " * ((8 - (8 + len(text)) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for chunk in chunks:
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
