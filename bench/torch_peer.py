#!/usr/bin/python3
"""The PyTorch peer of attnlab-bench: the same model, optimiser, batch and context in PyTorch.

Reads the workload that `attnlab-bench --describe WORKLOAD` prints (so both sides share one
definition), times training steps and probe traces the way attnlab-bench does, and prints one
JSON object in attnlab-bench's result format. The model is written out in plain tensor ops as a
user would write it for PyTorch 1.13 (Debian 12): token embedding, learned absolute positions or
RoPE, pre-LayerNorm blocks with bias-free q/k/v/o projections, causal softmax (or sigmoid with
b = -log(i + 1)) attention, a GELU (tanh) MLP with biases, a final LayerNorm and a head tied to the
embedding or not; AdamW (decay on matrices only), gradient clipping at the same norm.
Written as nanoGPT writes it, the fastest layout measured for PyTorch on a CPU: one fused q/k/v
projection (one matrix product instead of three), the causal mask and the sigmoid's row bias made
once per model and sliced, contiguous batches.
"""
import argparse
import json
import math
import resource
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from peer_heap import keep_freed_blocks_for_reuse


class Attention(nn.Module):
    def __init__(self, w):
        super().__init__()
        d, self.heads = w["d_model"], w["n_heads"]
        self.d_head = d // self.heads
        self.wqkv = nn.Linear(d, 3 * d, bias=False)  # q, k and v in one product
        self.wo = nn.Linear(d, d, bias=False)
        self.kind = w["attention"]
        self.beta = w.get("temperature", 1.0)
        T = max(w["seq_len"], w["probe_len"])
        self.register_buffer("causal", torch.ones(T, T, dtype=torch.bool).triu(1), persistent=False)
        self.register_buffer("row_bias", -torch.log(torch.arange(1, T + 1, dtype=torch.float32)).view(T, 1), persistent=False)

    def forward(self, x, rope, maps=None):
        B, T, d = x.shape
        split = lambda y: y.view(B, T, self.heads, self.d_head).transpose(1, 2)  # [B, H, T, d_head]
        q, k, v = (split(y) for y in self.wqkv(x).split(d, dim=2))
        if rope is not None:
            q, k = rotate(q, *rope), rotate(k, *rope)
        s = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(self.d_head))
        s = s.masked_fill(self.causal[:T, :T], float("-inf"))
        if self.kind == "softmax":
            a = torch.softmax(self.beta * s, dim=-1)
        else:  # sigmoid with b = -log(number of visible keys); exactly 0 above the diagonal
            a = torch.sigmoid(self.beta * s + self.row_bias[:T])
        if maps is not None:
            maps.append((s[0].clone(), a[0].clone(), q[0].clone(), k[0].clone(), v[0].clone()))
        o = (a @ v).transpose(1, 2).reshape(B, T, d)
        return self.wo(o)


def rotate(x, cos, sin):
    """Turns adjacent pairs (2m, 2m + 1) by angle t * theta^(-2m/d_head), as the engine's rope."""
    x0, x1 = x[..., 0::2], x[..., 1::2]
    return torch.stack((cos * x0 - sin * x1, sin * x0 + cos * x1), dim=-1).flatten(-2)


class Block(nn.Module):
    def __init__(self, w):
        super().__init__()
        d = w["d_model"]
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(w)
        self.ln2 = nn.LayerNorm(d)
        self.fc = nn.Linear(d, w["d_ff"])
        self.proj = nn.Linear(w["d_ff"], d)

    def forward(self, x, rope, maps=None):
        x = x + self.attn(self.ln1(x), rope, maps)
        return x + self.proj(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, w):
        super().__init__()
        d = w["d_model"]
        self.tok = nn.Embedding(w["vocab"], d)
        self.pos = nn.Embedding(w["context"], d) if w["positional"] == "learned" else None
        self.blocks = nn.ModuleList(Block(w) for _ in range(w["n_layers"]))
        self.ln_f = nn.LayerNorm(d)
        self.head = None if w["tied_embeddings"] else nn.Linear(d, w["vocab"], bias=False)
        self.rope_freq = None
        if w["positional"] == "rope":
            d_head = d // w["n_heads"]
            self.rope_freq = torch.tensor([w["rope_theta"] ** (-2.0 * m / d_head) for m in range(d_head // 2)])
        for p in self.parameters():
            nn.init.normal_(p, 0.0, 0.02) if p.dim() == 2 else None

    def forward(self, tokens, targets=None, maps=None):
        B, T = tokens.shape
        x = self.tok(tokens)
        if self.pos is not None:
            x = x + self.pos(torch.arange(T))
        rope = None
        if self.rope_freq is not None:
            angles = torch.arange(T, dtype=torch.float32).view(T, 1) * self.rope_freq.view(1, -1)
            rope = (angles.cos(), angles.sin())
        for block in self.blocks:
            x = block(x, rope, maps)
        x = self.ln_f(x)
        logits = x @ (self.tok.weight if self.head is None else self.head.weight).t()
        if targets is None:
            return logits
        return F.cross_entropy(logits.view(B * T, -1), targets.reshape(B * T))


def spread(values):
    v = sorted(values)
    n = len(v)
    median = v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
    return {"median": median, "min": v[0], "max": v[-1]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workload", required=True, help="JSON from attnlab-bench --describe")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--traces", type=int, default=20)
    ap.add_argument("--heap-reuse", action="store_true", help="keep freed blocks in the heap, as attnlab does (peer_heap.py)")
    args = ap.parse_args()
    if args.heap_reuse:
        keep_freed_blocks_for_reuse("torch_peer.py")
    w = json.loads(args.workload)
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)

    model = GPT(w)
    decay = [p for p in model.parameters() if p.dim() == 2]
    other = [p for p in model.parameters() if p.dim() != 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": w["weight_decay"]}, {"params": other, "weight_decay": 0.0}],
                            lr=w["lr"], betas=(w["beta1"], w["beta2"]), eps=w["eps"])
    B, T, V = w["batch"], w["seq_len"], w["vocab"]
    g = torch.Generator().manual_seed(2)
    data = [torch.randint(0, V, (B, T + 1), generator=g) for _ in range(4)]
    batches = [(d[:, :-1].contiguous(), d[:, 1:].contiguous()) for d in data]  # inputs and targets, contiguous

    tokens_per_second, tokens_per_cpu_second = [], []
    for step in range(args.warmup + args.steps):
        inputs, targets = batches[step % len(batches)]
        start, cpu_start = time.perf_counter(), time.process_time()
        opt.zero_grad(set_to_none=True)
        loss = model(inputs, targets)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), w["grad_clip"])
        opt.step()
        seconds, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        if not math.isfinite(loss.item()):
            sys.exit("torch_peer: the loss is not finite")
        if step >= args.warmup:
            tokens_per_second.append(B * T / seconds)
            tokens_per_cpu_second.append(B * T / cpu)

    result = {"side": "pytorch, heap reuse" if args.heap_reuse else "pytorch", "workload": w["name"], "threads": args.threads, "steps": args.steps,
              "tokens_per_second": spread(tokens_per_second),
              "tokens_per_cpu_second": spread(tokens_per_cpu_second),
              "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
              "version": torch.__version__, "seq_len": T}
    if args.traces > 0:
        probe = data[0][:1, : w["probe_len"]].contiguous()
        trace_ms, trace_cpu_ms = [], []
        with torch.no_grad():
            for i in range(args.traces + 1):
                start, cpu_start = time.perf_counter(), time.process_time()
                maps = []
                model(probe, maps=maps)
                if i > 0:  # the first is a warm-up
                    trace_ms.append((time.perf_counter() - start) * 1000.0)
                    trace_cpu_ms.append((time.process_time() - cpu_start) * 1000.0)
        result["trace_ms"] = spread(trace_ms)
        result["trace_cpu_ms"] = spread(trace_cpu_ms)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
