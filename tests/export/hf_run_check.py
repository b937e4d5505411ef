#!/usr/bin/python3
"""Helpers of tests/gui/test_export_hf_run.cpp (an imported Hugging Face model trained by the
exported train.py, back in the lab):

    hf_run_check.py data DIR VOCAB      writes a data folder (attnlab-data-1) of random ids: 32
                                        training and 8 validation sequences of 16 tokens, each
                                        target the next token (a user's own tokenized corpus)
    hf_run_check.py logits PACKAGE CHECKPOINT TRACE_JSON [CHECKPOINT TRACE_JSON ...]
                                        prints, a line per checkpoint, the largest difference
                                        between attnlab_torch's logits of the checkpoint and the
                                        lab's (attnlab-cli trace --logits), relative to the largest
                                        logit (one process: torch is imported once)
"""
import json
import os
import sys

import numpy as np


def write_data(out, vocab, seq_len=16, train=32, validation=8):
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(3)
    for split, rows in (("train", train), ("validation", validation)):
        s = rng.integers(0, vocab, size=(rows, seq_len + 1)).astype("<i4")
        np.ascontiguousarray(s[:, :seq_len]).tofile(os.path.join(out, split + ".tokens"))
        np.ascontiguousarray(s[:, 1:]).tofile(os.path.join(out, split + ".targets"))
    meta = {"format": "attnlab-data-1", "vocab": vocab, "seq_len": seq_len,
            "splits": {"train": train, "validation": validation}, "has_answers": False}
    with open(os.path.join(out, "data.json"), "w", encoding="utf-8") as f:
        json.dump(meta, f)


def logits_error(package, checkpoint, trace_path):
    sys.path.insert(0, package)
    import torch
    import attnlab_torch as lab

    with open(trace_path, encoding="utf-8") as f:
        trace = json.load(f)
    reference = torch.tensor(trace["logits"], dtype=torch.float64)
    with torch.no_grad():
        logits = lab.load(checkpoint)(torch.tensor([trace["ids"]]))[0].double()
    return float((logits - reference).abs().max() / reference.abs().max())


def main():
    if sys.argv[1] == "data":
        write_data(sys.argv[2], int(sys.argv[3]))
    else:
        pairs = sys.argv[3:]
        for checkpoint, trace in zip(pairs[0::2], pairs[1::2]):
            print(f"{logits_error(sys.argv[2], checkpoint, trace):.3e}")


if __name__ == "__main__":
    main()
