#!/usr/bin/python3
"""Opens tiny random Hugging Face models with attnlab-cli and checks the logits against reference
forwards written here from each architecture's published definition (GPT-2, Llama, Qwen2,
GPT-NeoX), in float64 with PyTorch; transformers is not used; and the same for the PyTorch export
of each (export pytorch --model HFDIR, then attnlab_torch). Also the BF16 and sharded forms,
both GPT-2 name layouts, the cache listing, and bad folders refused with one clear line.

usage: hf_reference.py --cli build/bin/attnlab-cli [--work DIR]
       hf_reference.py --write-tiny DIR   (only writes one tiny random folder per architecture, for
                                           tests that run other checks on them: test_interpret_hf)"""
import argparse
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile

import torch

F64 = torch.float64
failures = []


def check(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        failures.append(what)


# ---- writing the Hugging Face layout --------------------------------------------------------

DTYPES = {torch.float32: "F32", torch.float16: "F16", torch.bfloat16: "BF16"}


def safetensors_bytes(tensors, dtype=torch.float32, header_patch=None):
    header, blobs, offset = {}, [], 0
    for name, t in tensors.items():
        t = t.to(dtype).contiguous()
        raw = (t.view(torch.int16) if dtype == torch.bfloat16 else t).numpy().tobytes()  # numpy has no bfloat16
        header[name] = {"dtype": DTYPES[dtype], "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        blobs.append(raw)
        offset += len(raw)
    if header_patch:
        header_patch(header)
    text = json.dumps(header).encode()
    text += b" " * ((8 - len(text) % 8) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(blobs)


saved = {}  # folder name -> the tensors written there
exported = []  # (name, folder, ids, reference logits) of each compared model, for export_pytorch


def write_folder(folder, config, tensors, dtype=torch.float32, shards=1):
    os.makedirs(folder, exist_ok=True)
    saved[os.path.basename(folder)] = tensors
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(config, f)
    names = list(tensors)
    if shards == 1:
        with open(os.path.join(folder, "model.safetensors"), "wb") as f:
            f.write(safetensors_bytes(tensors, dtype))
        return
    weight_map = {}
    for s in range(shards):
        part = names[s::shards]
        file = "model-%05d-of-%05d.safetensors" % (s + 1, shards)
        with open(os.path.join(folder, file), "wb") as f:
            f.write(safetensors_bytes({n: tensors[n] for n in part}, dtype))
        weight_map.update({n: file for n in part})
    with open(os.path.join(folder, "model.safetensors.index.json"), "w") as f:
        json.dump({"metadata": {}, "weight_map": weight_map}, f)


def rand(gen, *shape, scale=0.3):
    return torch.randn(*shape, generator=gen) * scale


def norm_weight(gen, d):
    return 1 + rand(gen, d, scale=0.1)


# ---- the reference forwards -----------------------------------------------------------------

def layer_norm(x, w, b, eps):
    mu = x.mean(-1, keepdim=True)
    var = ((x - mu) ** 2).mean(-1, keepdim=True)
    return (x - mu) / torch.sqrt(var + eps) * w + (b if b is not None else 0)


def rms_norm(x, w, eps):
    return x / torch.sqrt((x * x).mean(-1, keepdim=True) + eps) * w


def gelu_tanh(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


def gelu_erf(x):
    return 0.5 * x * (1 + torch.erf(x / math.sqrt(2)))


def causal_attention(q, k, v):
    """q [H, T, dh], k/v [H, T, dh] -> [T, H*dh]"""
    H, T, dh = q.shape
    s = q @ k.transpose(1, 2) / math.sqrt(dh)
    s = s.masked_fill(torch.triu(torch.ones(T, T, dtype=torch.bool), 1), float("-inf"))
    return (torch.softmax(s, -1) @ v).transpose(0, 1).reshape(T, H * dh)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], -1)


def rope(x, inv_freq, pos):
    """x [H, T, r] in the rotate-half layout."""
    freqs = pos[:, None] * inv_freq[None, :]
    emb = torch.cat([freqs, freqs], -1)
    return x * emb.cos() + rotate_half(x) * emb.sin()


def inv_frequencies(dim, theta, scaling):
    inv = 1.0 / theta ** (torch.arange(0, dim, 2, dtype=F64) / dim)
    if not scaling:
        return inv
    if scaling.get("rope_type", scaling.get("type")) == "linear":
        return inv / scaling["factor"]
    # llama3: keep short wavelengths, divide long ones by the factor, blend in between
    factor, low, high = scaling["factor"], scaling["low_freq_factor"], scaling["high_freq_factor"]
    old = scaling["original_max_position_embeddings"]
    wavelen = 2 * math.pi / inv
    out = torch.where(wavelen > old / low, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low)
    medium = (wavelen >= old / high) & (wavelen <= old / low)
    return torch.where(medium, (1 - smooth) * inv / factor + smooth * inv, out)


def gpt2_forward(cfg, W, ids, prefix):
    g = lambda n: W[prefix + n].to(F64)
    d, H = cfg["n_embd"], cfg["n_head"]
    T = len(ids)
    x = g("wte.weight")[ids] + g("wpe.weight")[:T]
    for l in range(cfg["n_layer"]):
        p = "h.%d." % l
        a = layer_norm(x, g(p + "ln_1.weight"), g(p + "ln_1.bias"), 1e-5)
        qkv = a @ g(p + "attn.c_attn.weight") + g(p + "attn.c_attn.bias")  # Conv1D: x W + b, W [in, out]
        q, k, v = (t.reshape(T, H, d // H).transpose(0, 1) for t in qkv.split(d, -1))
        x = x + causal_attention(q, k, v) @ g(p + "attn.c_proj.weight") + g(p + "attn.c_proj.bias")
        m = layer_norm(x, g(p + "ln_2.weight"), g(p + "ln_2.bias"), 1e-5)
        x = x + gelu_tanh(m @ g(p + "mlp.c_fc.weight") + g(p + "mlp.c_fc.bias")) @ g(p + "mlp.c_proj.weight") + g(p + "mlp.c_proj.bias")
    x = layer_norm(x, g("ln_f.weight"), g("ln_f.bias"), 1e-5)
    return x @ g("wte.weight").T


def llama_forward(cfg, W, ids, qwen=False):
    g = lambda n: W[n].to(F64)
    d, H, Hkv = cfg["hidden_size"], cfg["num_attention_heads"], cfg["num_key_value_heads"]
    dh, T, eps = d // H, len(ids), cfg["rms_norm_eps"]
    pos = torch.arange(T, dtype=F64)
    inv = inv_frequencies(dh, cfg["rope_theta"], cfg.get("rope_scaling"))
    x = g("model.embed_tokens.weight")[ids]
    for l in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % l
        a = rms_norm(x, g(p + "input_layernorm.weight"), eps)
        proj = lambda n: a @ g(p + "self_attn.%s.weight" % n).T + (g(p + "self_attn.%s.bias" % n) if qwen else 0)
        q = proj("q_proj").reshape(T, H, dh).transpose(0, 1)
        k = proj("k_proj").reshape(T, Hkv, dh).transpose(0, 1)
        v = proj("v_proj").reshape(T, Hkv, dh).transpose(0, 1)
        q, k = rope(q, inv, pos), rope(k, inv, pos)
        k, v = (t.repeat_interleave(H // Hkv, 0) for t in (k, v))  # query head h reads kv head h // group
        x = x + causal_attention(q, k, v) @ g(p + "self_attn.o_proj.weight").T
        m = rms_norm(x, g(p + "post_attention_layernorm.weight"), eps)
        gate, up = m @ g(p + "mlp.gate_proj.weight").T, m @ g(p + "mlp.up_proj.weight").T
        x = x + (torch.nn.functional.silu(gate) * up) @ g(p + "mlp.down_proj.weight").T
    x = rms_norm(x, g("model.norm.weight"), eps)
    head = g("model.embed_tokens.weight") if cfg["tie_word_embeddings"] else g("lm_head.weight")
    return x @ head.T


def neox_forward(cfg, W, ids):
    g = lambda n: W[n].to(F64)
    d, H = cfg["hidden_size"], cfg["num_attention_heads"]
    dh, T, eps = d // H, len(ids), cfg["layer_norm_eps"]
    rot = int(dh * cfg["rotary_pct"])
    pos = torch.arange(T, dtype=F64)
    inv = inv_frequencies(rot, cfg["rotary_emb_base"], None)
    x = g("gpt_neox.embed_in.weight")[ids]
    for l in range(cfg["num_hidden_layers"]):
        p = "gpt_neox.layers.%d." % l
        a = layer_norm(x, g(p + "input_layernorm.weight"), g(p + "input_layernorm.bias"), eps)
        qkv = (a @ g(p + "attention.query_key_value.weight").T + g(p + "attention.query_key_value.bias")).reshape(T, H, 3 * dh)
        q, k, v = (t.transpose(0, 1) for t in qkv.split(dh, -1))  # per head: [q | k | v]
        q = torch.cat([rope(q[..., :rot], inv, pos), q[..., rot:]], -1)
        k = torch.cat([rope(k[..., :rot], inv, pos), k[..., rot:]], -1)
        attn = causal_attention(q, k, v) @ g(p + "attention.dense.weight").T + g(p + "attention.dense.bias")
        mlp = lambda y: gelu_erf(y @ g(p + "mlp.dense_h_to_4h.weight").T + g(p + "mlp.dense_h_to_4h.bias")) @ \
            g(p + "mlp.dense_4h_to_h.weight").T + g(p + "mlp.dense_4h_to_h.bias")
        ln2 = lambda y: layer_norm(y, g(p + "post_attention_layernorm.weight"), g(p + "post_attention_layernorm.bias"), eps)
        if cfg["use_parallel_residual"]:
            x = x + attn + mlp(ln2(x))
        else:
            x = x + attn
            x = x + mlp(ln2(x))
    x = layer_norm(x, g("gpt_neox.final_layer_norm.weight"), g("gpt_neox.final_layer_norm.bias"), eps)
    return x @ g("embed_out.weight").T


# ---- the tiny models ------------------------------------------------------------------------

def gpt2_model(gen, prefix, with_head):
    cfg = {"model_type": "gpt2", "vocab_size": 50, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 64,
           "activation_function": "gelu_new", "layer_norm_epsilon": 1e-5}
    d, V = 32, 50
    W = {"wte.weight": rand(gen, V, d), "wpe.weight": rand(gen, 64, d)}
    for l in range(2):
        p = "h.%d." % l
        W.update({p + "ln_1.weight": norm_weight(gen, d), p + "ln_1.bias": rand(gen, d, scale=0.1),
                  p + "attn.c_attn.weight": rand(gen, d, 3 * d), p + "attn.c_attn.bias": rand(gen, 3 * d, scale=0.1),
                  p + "attn.c_proj.weight": rand(gen, d, d), p + "attn.c_proj.bias": rand(gen, d, scale=0.1),
                  p + "attn.bias": torch.tril(torch.ones(1, 1, 64, 64)),  # the causal-mask buffer old files keep
                  p + "ln_2.weight": norm_weight(gen, d), p + "ln_2.bias": rand(gen, d, scale=0.1),
                  p + "mlp.c_fc.weight": rand(gen, d, 4 * d), p + "mlp.c_fc.bias": rand(gen, 4 * d, scale=0.1),
                  p + "mlp.c_proj.weight": rand(gen, 4 * d, d), p + "mlp.c_proj.bias": rand(gen, d, scale=0.1)})
    W.update({"ln_f.weight": norm_weight(gen, d), "ln_f.bias": rand(gen, d, scale=0.1)})
    stored = {prefix + n: t for n, t in W.items()}
    if with_head:
        stored["lm_head.weight"] = W["wte.weight"]
    return cfg, stored


def llama_model(gen, qwen, tied, scaling, heads=4, kv_heads=2):
    d, V, ff, L = 32, 60, 48, 2
    cfg = {"model_type": "qwen2" if qwen else "llama", "vocab_size": V, "hidden_size": d, "intermediate_size": ff,
           "num_hidden_layers": L, "num_attention_heads": heads, "num_key_value_heads": kv_heads,
           "max_position_embeddings": 131072, "rms_norm_eps": 1e-6, "rope_theta": 500.0, "hidden_act": "silu",
           "tie_word_embeddings": tied, "rope_scaling": scaling}
    dh = d // heads
    W = {"model.embed_tokens.weight": rand(gen, V, d, scale=0.5)}
    for l in range(L):
        p = "model.layers.%d." % l
        W.update({p + "input_layernorm.weight": norm_weight(gen, d),
                  p + "self_attn.q_proj.weight": rand(gen, heads * dh, d), p + "self_attn.k_proj.weight": rand(gen, kv_heads * dh, d),
                  p + "self_attn.v_proj.weight": rand(gen, kv_heads * dh, d), p + "self_attn.o_proj.weight": rand(gen, d, heads * dh),
                  p + "post_attention_layernorm.weight": norm_weight(gen, d),
                  p + "mlp.gate_proj.weight": rand(gen, ff, d), p + "mlp.up_proj.weight": rand(gen, ff, d),
                  p + "mlp.down_proj.weight": rand(gen, d, ff)})
        if qwen:
            W.update({p + "self_attn.q_proj.bias": rand(gen, heads * dh, scale=0.2),
                      p + "self_attn.k_proj.bias": rand(gen, kv_heads * dh, scale=0.2),
                      p + "self_attn.v_proj.bias": rand(gen, kv_heads * dh, scale=0.2)})
    W["model.norm.weight"] = norm_weight(gen, d)
    if not tied:
        W["lm_head.weight"] = rand(gen, V, d)
    return cfg, W


def neox_model(gen, parallel):
    d, V, H, L = 32, 40, 4, 2
    cfg = {"model_type": "gpt_neox", "vocab_size": V, "hidden_size": d, "intermediate_size": 4 * d, "num_hidden_layers": L,
           "num_attention_heads": H, "rotary_pct": 0.5, "rotary_emb_base": 10000, "max_position_embeddings": 2048,
           "layer_norm_eps": 1e-5, "use_parallel_residual": parallel, "hidden_act": "gelu", "tie_word_embeddings": False}
    W = {"gpt_neox.embed_in.weight": rand(gen, V, d, scale=0.5), "embed_out.weight": rand(gen, V, d)}
    for l in range(L):
        p = "gpt_neox.layers.%d." % l
        W.update({p + "input_layernorm.weight": norm_weight(gen, d), p + "input_layernorm.bias": rand(gen, d, scale=0.1),
                  p + "post_attention_layernorm.weight": norm_weight(gen, d),
                  p + "post_attention_layernorm.bias": rand(gen, d, scale=0.1),
                  p + "attention.query_key_value.weight": rand(gen, 3 * d, d),
                  p + "attention.query_key_value.bias": rand(gen, 3 * d, scale=0.2),
                  p + "attention.dense.weight": rand(gen, d, d), p + "attention.dense.bias": rand(gen, d, scale=0.1),
                  p + "attention.rotary_emb.inv_freq": torch.ones(2),  # a buffer some files keep
                  p + "mlp.dense_h_to_4h.weight": rand(gen, 4 * d, d), p + "mlp.dense_h_to_4h.bias": rand(gen, 4 * d, scale=0.1),
                  p + "mlp.dense_4h_to_h.weight": rand(gen, d, 4 * d), p + "mlp.dense_4h_to_h.bias": rand(gen, d, scale=0.1)})
    W.update({"gpt_neox.final_layer_norm.weight": norm_weight(gen, d), "gpt_neox.final_layer_norm.bias": rand(gen, d, scale=0.1)})
    return cfg, W


def rounded(W, dtype):
    """The weights as the engine sees them after a round trip through `dtype`."""
    return {n: t.to(dtype).to(torch.float32) for n, t in W.items()}


# ---- running the CLI ------------------------------------------------------------------------

def run(cli, *args, env=None):
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=300, env=env)


def engine_logits(cli, folder, ids, work):
    out = os.path.join(work, "trace.json")
    r = run(cli, "trace", "--model", folder, "--ids", ",".join(map(str, ids)), "--logits", "--out", out)
    if r.returncode != 0:
        return None, r.stderr.strip()
    with open(out) as f:
        trace = json.load(f)
    if trace.get("ids") != ids:
        return None, "trace ids %s differ from %s" % (trace.get("ids"), ids)
    return torch.tensor(trace["logits"], dtype=F64), ""


def compare(cli, name, folder, ids, reference, work):
    exported.append((name, folder, ids, reference))
    logits, why = engine_logits(cli, folder, ids, work)
    if logits is None:
        check(False, "%s: attnlab-cli trace failed: %s" % (name, why))
        return
    rel = ((logits - reference).abs().max() / reference.abs().max()).item()
    check(logits.shape == reference.shape and rel < 1e-4, "%s: logits match the reference (relative error %.2e)" % (name, rel))


def expect_refusal(cli, name, folder, *needles):
    r = run(cli, "trace", "--model", folder, "--ids", "1,2", "--logits", "--out", os.path.join(folder, "t.json"))
    line = r.stderr.strip()
    ok = r.returncode > 0 and len(line.splitlines()) == 1 and all(n in line for n in needles)
    check(ok, "%s: refused with one line naming %s (exit %d: %s)" % (name, ", ".join(needles), r.returncode, line))


def write_tiny_folders(work):
    """DIR/gpt2, llama (GQA, llama3 rope scaling), qwen2 (q/k/v biases), neox_parallel, neox_sequential."""
    gen = torch.Generator().manual_seed(11)
    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 64}
    models = {"gpt2": gpt2_model(gen, "", False), "llama": llama_model(gen, False, False, llama3),
              "qwen2": llama_model(gen, True, True, None), "neox_parallel": neox_model(gen, True),
              "neox_sequential": neox_model(gen, False)}
    for name, (cfg, W) in models.items():
        write_folder(os.path.join(work, name), cfg, W)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cli")
    ap.add_argument("--work")
    ap.add_argument("--write-tiny")
    a = ap.parse_args()
    if a.write_tiny:
        return write_tiny_folders(a.write_tiny)
    if not a.cli:
        ap.error("--cli is required")
    work = a.work or tempfile.mkdtemp(prefix="attnlab-hf-")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    gen = torch.Generator().manual_seed(7)
    ids = [3, 17, 5, 0, 29, 11, 11, 2, 8, 23, 1, 14]

    cfg, W = gpt2_model(gen, "transformer.", True)
    write_folder(os.path.join(work, "gpt2"), cfg, W)
    compare(a.cli, "gpt2 (transformer. prefix, lm_head.weight, mask buffers)", os.path.join(work, "gpt2"), ids,
            gpt2_forward(cfg, W, ids, "transformer."), work)
    cfg, W = gpt2_model(gen, "", False)
    write_folder(os.path.join(work, "gpt2_bare"), cfg, W)
    compare(a.cli, "gpt2 (bare names, no lm_head)", os.path.join(work, "gpt2_bare"), ids, gpt2_forward(cfg, W, ids, ""), work)

    llama3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
              "original_max_position_embeddings": 64}
    cfg, W = llama_model(gen, False, False, llama3)
    write_folder(os.path.join(work, "llama"), cfg, W)
    compare(a.cli, "llama (GQA 4/2, untied, llama3 rope scaling, context 131072)", os.path.join(work, "llama"), ids,
            llama_forward(cfg, W, ids), work)
    cfg, W = llama_model(gen, False, True, {"type": "linear", "factor": 2.0}, heads=2, kv_heads=2)
    write_folder(os.path.join(work, "llama_bf16"), cfg, W, dtype=torch.bfloat16)
    compare(a.cli, "llama BF16 (tied, linear rope scaling)", os.path.join(work, "llama_bf16"), ids,
            llama_forward(cfg, rounded(W, torch.bfloat16), ids), work)
    write_folder(os.path.join(work, "llama_f16"), cfg, W, dtype=torch.float16)
    compare(a.cli, "llama F16", os.path.join(work, "llama_f16"), ids, llama_forward(cfg, rounded(W, torch.float16), ids), work)
    cfg, W = llama_model(gen, True, True, None)
    write_folder(os.path.join(work, "qwen2"), cfg, W)
    compare(a.cli, "qwen2 (q/k/v biases, GQA, tied)", os.path.join(work, "qwen2"), ids, llama_forward(cfg, W, ids, qwen=True), work)

    cfg, W = neox_model(gen, True)
    write_folder(os.path.join(work, "neox"), cfg, W)
    compare(a.cli, "gpt_neox (parallel residual, rotary_pct 0.5)", os.path.join(work, "neox"), ids, neox_forward(cfg, W, ids), work)
    cfg, W = neox_model(gen, False)
    write_folder(os.path.join(work, "neox_sharded"), cfg, W, shards=3)
    compare(a.cli, "gpt_neox sharded in 3 (sequential residual)", os.path.join(work, "neox_sharded"), ids,
            neox_forward(cfg, W, ids), work)

    for name, folder in [("gpt2", "gpt2"), ("llama", "llama"), ("qwen2", "qwen2"), ("gpt_neox", "neox"), ("gpt_neox sharded", "neox_sharded")]:
        export_round_trip(a.cli, name, os.path.join(work, folder), saved[folder], work)
    for name, folder, ids_, reference in exported:
        if os.path.basename(folder) in ("gpt2", "llama", "qwen2", "neox"):
            export_pytorch(a.cli, name, folder, ids_, reference, work)
    bad_folders(a.cli, work, gen)
    cache_listing(a.cli, work)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


def export_round_trip(cli, name, folder, W, work):
    """export-hf writes every weight back exactly where it came from (rotary permutation inverted)."""
    out = os.path.join(work, "export_" + os.path.basename(folder))
    r = run(cli, "export-hf", "--model", folder, "--out", out)
    if r.returncode != 0:
        check(False, "%s: export-hf failed: %s" % (name, r.stderr.strip()))
        return
    back = read_back(os.path.join(out, "model.safetensors"))
    tied_head = os.path.basename(folder) == "gpt2"
    buffers = lambda n: n.endswith((".attn.bias", ".attention.rotary_emb.inv_freq")) or (tied_head and n == "lm_head.weight")
    expected = {n: t for n, t in W.items() if not buffers(n)}
    same = set(back) == set(expected) and all(torch.equal(back[n], expected[n].to(torch.float32)) for n in expected)
    check(same, "%s: export-hf writes back the same tensors under the same names" % name)


def export_pytorch(cli, name, folder, ids, reference, work):
    """export pytorch --model HFDIR: the exported attnlab_torch builds the imported model from init/ and its
    float32 logits match the reference forward to 1e-4, as the engine's do."""
    out = os.path.join(work, "torch_" + os.path.basename(folder))
    r = run(cli, "export", "pytorch", "--model", folder, "--out", out)
    if r.returncode != 0:
        check(False, "%s: export pytorch failed: %s" % (name, r.stderr.strip()))
        return
    if out not in sys.path:
        sys.path.insert(0, out)
    import attnlab_torch as lab  # the exported copy (the package is the same in every export)
    model = lab.load(os.path.join(out, "init"))
    logits = model(torch.tensor([ids])).detach().to(F64)[0]
    rel = ((logits - reference).abs().max() / reference.abs().max()).item()
    check(logits.shape == reference.shape and rel < 1e-4,
          "%s: export pytorch, attnlab_torch's logits match the reference (relative error %.2e)" % (name, rel))


def bad_folders(cli, work, gen):
    cfg, W = gpt2_model(gen, "", False)

    def variant(name, config=cfg, tensors=W, patch=None, raw=None):
        folder = os.path.join(work, "bad_" + name)
        write_folder(folder, config, tensors)
        path = os.path.join(folder, "model.safetensors")
        if patch:
            with open(path, "wb") as f:
                f.write(safetensors_bytes(tensors, header_patch=patch))
        if raw:
            with open(path, "r+b") as f:
                raw(f)
        return folder

    expect_refusal(cli, "unsupported model_type", variant("bert", dict(cfg, model_type="bert")), "bert", "gpt2, gpt_neox, llama, qwen2")
    folder = variant("truncated")
    size = os.path.getsize(os.path.join(folder, "model.safetensors"))
    os.truncate(os.path.join(folder, "model.safetensors"), size // 2)
    expect_refusal(cli, "truncated weights", folder, "model.safetensors", "beyond")

    def huge_header(f):
        f.write(struct.pack("<Q", 2 ** 64 - 3))
    expect_refusal(cli, "header length near 2^64", variant("huge_header", raw=huge_header), "model.safetensors", "header length")

    def overflow_shape(h):
        h["wte.weight"]["shape"] = [2 ** 40, 2 ** 40]
    expect_refusal(cli, "shape whose size overflows", variant("overflow", patch=overflow_shape), "model.safetensors", "wte.weight")

    def far_offsets(h):
        h["wte.weight"]["data_offsets"] = [2 ** 63, 2 ** 64 - 1]
    expect_refusal(cli, "offsets far outside the file", variant("offsets", patch=far_offsets), "model.safetensors", "wte.weight")

    def wrong_dtype(h):
        h["wte.weight"]["dtype"] = "Q4"
    expect_refusal(cli, "unknown dtype", variant("dtype", patch=wrong_dtype), "model.safetensors", "Q4")
    folder = variant("garbage")
    with open(os.path.join(folder, "model.safetensors"), "wb") as f:
        f.write(struct.pack("<Q", 12) + b"not json at all!")
    expect_refusal(cli, "header not JSON", folder, "model.safetensors", "JSON")
    expect_refusal(cli, "missing weight", variant("missing", tensors={n: t for n, t in W.items() if n != "ln_f.bias"}), "ln_f.bias")
    # --scale plans from config.json alone: the folder whose weights are broken still plans
    r = run(cli, "export", "pytorch", "--model", os.path.join(work, "bad_missing"), "--scale", "n_layers=12", "--devices", "2")
    check(r.returncode == 0 and "12 layers" in r.stdout and "parameters" in r.stdout,
          "export pytorch --scale of a Hugging Face folder plans from its config.json (exit %d: %s)"
          % (r.returncode, (r.stdout + r.stderr).strip().splitlines()[:2]))
    out = os.path.join(work, "torch_bad_missing")  # the PyTorch export refuses the same folder in the same line
    r = run(cli, "export", "pytorch", "--model", os.path.join(work, "bad_missing"), "--out", out)
    line = r.stderr.strip()
    check(r.returncode == 2 and len(line.splitlines()) == 1 and "ln_f.bias" in line and not os.path.exists(out),
          "export pytorch of a folder missing a weight: refused with one line (exit %d: %s)" % (r.returncode, line))
    expect_refusal(cli, "wrong shape", variant("shape", tensors=dict(W, **{"wte.weight": rand(gen, 51, 32)})), "wte.weight", "shape")
    expect_refusal(cli, "bad config value", variant("config", dict(cfg, n_head="four")), "config.json", "n_head")
    folder = os.path.join(work, "bad_config_json")
    os.makedirs(folder)
    with open(os.path.join(folder, "config.json"), "w") as f:
        f.write("{\"model_type\": \"gpt2\", ")
    expect_refusal(cli, "config.json not JSON", folder, "config.json")
    folder = variant("nan", tensors=dict(W, **{"ln_f.weight": torch.full((32,), float("nan"))}))
    expect_refusal(cli, "NaN weight", folder, "ln_f.weight", "NaN")
    huge = variant("too_big", dict(cfg, n_embd=65536, n_layer=4096, n_head=256, vocab_size=50257))
    expect_refusal(cli, "memory estimate", huge, "needs about", "free")

    cfg_n, W_n = neox_model(gen, True)
    for name, target in [("escape", "../outside.safetensors"), ("absolute", "/etc/passwd")]:
        folder = os.path.join(work, "bad_shard_" + name)
        write_folder(folder, cfg_n, W_n, shards=2)
        index = os.path.join(folder, "model.safetensors.index.json")
        with open(index) as f:
            data = json.load(f)
        first = next(iter(data["weight_map"]))
        data["weight_map"][first] = target
        with open(index, "w") as f:
            json.dump(data, f)
        expect_refusal(cli, "shard index naming " + target, folder, "model.safetensors.index.json", "outside")
    folder = os.path.join(work, "bad_no_weights")
    os.makedirs(folder)
    with open(os.path.join(folder, "config.json"), "w") as f:
        json.dump(cfg, f)
    expect_refusal(cli, "no weight file", folder, "model.safetensors")


def cache_listing(cli, work):
    home = os.path.join(work, "hf_home")
    snap = os.path.join(home, "hub", "models--tiny-org--tiny-gpt2", "snapshots", "abc123")
    shutil.copytree(os.path.join(work, "gpt2_bare"), snap)
    os.makedirs(os.path.join(home, "hub", "models--tiny-org--tiny-gpt2", "refs"))
    with open(os.path.join(home, "hub", "models--tiny-org--tiny-gpt2", "refs", "main"), "w") as f:
        f.write("abc123")
    env = dict(os.environ, HF_HOME=home)
    env.pop("HF_HUB_CACHE", None)
    r = run(cli, "models", "--json", env=env)
    try:
        listed = json.loads(r.stdout)["models"]
    except (ValueError, KeyError):
        listed = []
    entry = next((m for m in listed if m.get("name") == "tiny-org/tiny-gpt2"), {})
    check(entry.get("architecture") == "gpt2" and entry.get("path") == snap and entry.get("bytes", 0) > 0
          and entry.get("parameters", 0) > 0, "models lists the cached model with name, size and architecture: %s" % entry)
    compare(cli, "a model opened by its cache path", entry.get("path", snap), [1, 2, 3],
            gpt2_forward(json.load(open(os.path.join(snap, "config.json"))),
                         read_back(os.path.join(snap, "model.safetensors")), [1, 2, 3], ""), work)


def read_back(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        b, end = e["data_offsets"]
        out[name] = torch.frombuffer(bytearray(data[b:end]), dtype=torch.float32).reshape(e["shape"])
    return out


if __name__ == "__main__":
    sys.exit(main())
