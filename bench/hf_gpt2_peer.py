#!/usr/bin/python3
"""Workload "gpt2" beside attnlab-bench --hf: writes a GPT-2-shaped model with random weights in
the Hugging Face layout (--write), and times the same model in PyTorch (--run): prefill of N
tokens (ms), cached decoding of M tokens after it (tokens/s) and peak resident memory. The forward
is GPT-2's published definition written here in float32 (transformers is not used).

usage: hf_gpt2_peer.py --write DIR [--tiny]
       hf_gpt2_peer.py --run DIR [--threads N] [--prefill N] [--decode N] [--passes N] [--heap-reuse]

--heap-reuse gives PyTorch the heap settings attnlab runs with (engine/core/heap_reuse.h: freed
blocks up to 256 MiB stay in the heap), so that the two sides can also be compared on equal terms."""
import argparse
import json
import math
import os
import resource
import struct
import sys
import time

import torch

from peer_heap import keep_freed_blocks_for_reuse

SMALL = {"vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12, "n_positions": 1024}
TINY = {"vocab_size": 500, "n_embd": 64, "n_layer": 2, "n_head": 4, "n_positions": 1024}


def write(folder, shape):
    gen = torch.Generator().manual_seed(1)
    d, V, L, P = shape["n_embd"], shape["vocab_size"], shape["n_layer"], shape["n_positions"]
    r = lambda *s: torch.randn(*s, generator=gen) * 0.02
    W = {"wte.weight": r(V, d), "wpe.weight": r(P, d)}
    for l in range(L):
        p = "h.%d." % l
        W.update({p + "ln_1.weight": torch.ones(d), p + "ln_1.bias": torch.zeros(d),
                  p + "attn.c_attn.weight": r(d, 3 * d), p + "attn.c_attn.bias": torch.zeros(3 * d),
                  p + "attn.c_proj.weight": r(d, d), p + "attn.c_proj.bias": torch.zeros(d),
                  p + "ln_2.weight": torch.ones(d), p + "ln_2.bias": torch.zeros(d),
                  p + "mlp.c_fc.weight": r(d, 4 * d), p + "mlp.c_fc.bias": torch.zeros(4 * d),
                  p + "mlp.c_proj.weight": r(4 * d, d), p + "mlp.c_proj.bias": torch.zeros(d)})
    W.update({"ln_f.weight": torch.ones(d), "ln_f.bias": torch.zeros(d)})
    os.makedirs(folder, exist_ok=True)
    header, offset = {}, 0
    for n, t in W.items():
        header[n] = {"dtype": "F32", "shape": list(t.shape), "data_offsets": [offset, offset + 4 * t.numel()]}
        offset += 4 * t.numel()
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for t in W.values():
            f.write(t.contiguous().numpy().tobytes())
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(dict(shape, model_type="gpt2", activation_function="gelu_new"), f)


def load(folder):
    with open(os.path.join(folder, "config.json")) as f:
        cfg = json.load(f)
    with open(os.path.join(folder, "model.safetensors"), "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = bytearray(f.read())
    W = {}
    for name, e in header.items():
        if name != "__metadata__":
            b, end = e["data_offsets"]
            W[name] = torch.frombuffer(data, dtype=torch.float32, count=(end - b) // 4, offset=b).reshape(e["shape"])
    return cfg, W


class Gpt2:
    def __init__(self, cfg, W):
        self.W, self.d, self.H, self.L = W, cfg["n_embd"], cfg["n_head"], cfg["n_layer"]

    def block(self, l, x, cache, start):
        W, d, H = self.W, self.d, self.H
        p = "h.%d." % l
        T = x.shape[0]
        a = torch.nn.functional.layer_norm(x, (d,), W[p + "ln_1.weight"], W[p + "ln_1.bias"], 1e-5)
        q, k, v = torch.addmm(W[p + "attn.c_attn.bias"], a, W[p + "attn.c_attn.weight"]).split(d, -1)
        heads = lambda t: t.reshape(-1, H, d // H).transpose(0, 1)
        q, k, v = heads(q), heads(k), heads(v)
        if cache is not None:
            if l in cache:
                k, v = torch.cat([cache[l][0], k], 1), torch.cat([cache[l][1], v], 1)
            cache[l] = (k, v)
        s = q @ k.transpose(1, 2) / math.sqrt(d // H)
        if T > 1:
            s = s + torch.triu(torch.full((T, k.shape[1]), float("-inf")), 1 + start)
        o = (torch.softmax(s, -1) @ v).transpose(0, 1).reshape(T, d)
        x = x + torch.addmm(W[p + "attn.c_proj.bias"], o, W[p + "attn.c_proj.weight"])
        m = torch.nn.functional.layer_norm(x, (d,), W[p + "ln_2.weight"], W[p + "ln_2.bias"], 1e-5)
        h = torch.nn.functional.gelu(torch.addmm(W[p + "mlp.c_fc.bias"], m, W[p + "mlp.c_fc.weight"]), approximate="tanh")
        return x + torch.addmm(W[p + "mlp.c_proj.bias"], h, W[p + "mlp.c_proj.weight"])

    def forward(self, ids, cache=None, start=0):
        W = self.W
        x = W["wte.weight"][ids] + W["wpe.weight"][start:start + len(ids)]
        for l in range(self.L):
            x = self.block(l, x, cache, start)
        x = torch.nn.functional.layer_norm(x, (self.d,), W["ln_f.weight"], W["ln_f.bias"], 1e-5)
        return x @ W["wte.weight"].T


def run(folder, threads, prefill, decode, passes, heap_reuse):
    if heap_reuse:
        keep_freed_blocks_for_reuse("hf_gpt2_peer.py")
    torch.set_num_threads(threads)
    cfg, W = load(folder)
    model = Gpt2(cfg, W)
    ids = torch.tensor([(i * 7919) % cfg["vocab_size"] for i in range(prefill + decode)])
    times, cpu_times, rates = [], [], []
    with torch.no_grad():
        for p in range(passes + 1):
            start, cpu_start = time.perf_counter(), time.process_time()
            model.forward(ids[:prefill])
            if p:
                times.append(1000 * (time.perf_counter() - start))
                cpu_times.append(1000 * (time.process_time() - cpu_start))
        for _ in range(passes):
            cache = {}
            model.forward(ids[:prefill], cache, 0)
            start = time.perf_counter()
            for t in range(prefill, prefill + decode):
                model.forward(ids[t:t + 1], cache, t)
            rates.append(decode / (time.perf_counter() - start))
    median = lambda v: sorted(v)[len(v) // 2]
    weights = sum(t.numel() for t in W.values()) * 4 / 1048576
    print(json.dumps({"side": "pytorch, heap reuse" if heap_reuse else "pytorch", "workload": "gpt2", "threads": threads, "prefill_tokens": prefill,
                      "prefill_ms": median(times), "prefill_cpu_ms": median(cpu_times), "decode_tokens": decode, "decode_tokens_per_second": median(rates),
                      "weights_mb": weights, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--write")
    ap.add_argument("--tiny", action="store_true")
    ap.add_argument("--run")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--prefill", type=int, default=512)
    ap.add_argument("--decode", type=int, default=128)
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--heap-reuse", action="store_true")
    a = ap.parse_args()
    if a.write:
        write(a.write, TINY if a.tiny else SMALL)
    if a.run:
        run(a.run, a.threads, a.prefill, a.decode, a.passes, a.heap_reuse)
    if not (a.write or a.run):
        ap.error("give --write DIR and/or --run DIR")


if __name__ == "__main__":
    sys.exit(main())
