"""The lab's decoder-only Transformer (engine/model/model.cpp, attention_layer.cpp, gates.cpp) in
PyTorch, with the parameter names and layouts of the lab's model.safetensors: token embedding
(+ absolute positions), pre-norm blocks (attention, then an MLP unless attention_only; sequential
or parallel residual), a final norm and a head tied to the embedding or not. Norms and MLPs come in
the kinds of model/block_parts.h (LayerNorm with or without bias, RMSNorm; GELU tanh or erf, SwiGLU)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from .attention import VARIANTS
from .config import PROJECTION_SHARING
from .positional import make_positional, rotate
from .precision import rounder


class OmegaIncrements(nn.Module):
    """accumulated_rotation's per-layer increments: `pos.omega` = Linear(d_model, pairs)."""

    def __init__(self, spec, pairs):
        super().__init__()
        self.omega = nn.Linear(spec.d_model, pairs)


class Attention(nn.Module):
    """One block's attention: projections (shared per projection_sharing, grouped K/V heads), value
    gate, rotation, score bias, key gates (retention, presence), the variant, receiver presence,
    output gate, output projection."""

    def __init__(self, spec, layer, positional):
        super().__init__()
        self.H, self.Hkv, self.dh = spec.n_heads, spec.kv_heads, spec.d_head
        d, name = spec.d_model, spec.attention_of(layer)
        self.variant = VARIANTS[name](spec, name)
        self.positional = [positional]  # shared with the model, not a submodule of every layer
        query_is_key, value_is_key = PROJECTION_SHARING[spec.projection_sharing]
        self.query_is_key, self.value_is_key = query_is_key, value_is_key
        key_roles = ("q" if query_is_key else "") + "k" + ("v" if value_is_key else "")
        if not query_is_key:
            self.wq = nn.Linear(d, self.H * self.dh, bias=spec.qkv_bias)
        self.latent = spec.projection_sharing == "latent"
        # cross-layer KV (model.kv_share_group): a reader reads its group's first layer's k, v
        group_size = max(1, int(spec.kv_share_group))
        self.kv_source = layer - layer % group_size
        self.reader = self.kv_source != layer
        if self.reader:
            pass  # no key or value projection of its own
        elif self.latent:  # latent KV (MLA): c = W_DKV x, k = W_UK c, v = W_UV c
            self.wdkv = nn.Linear(d, spec.latent_dim, bias=False)
            self.wuk = nn.Linear(spec.latent_dim, self.Hkv * self.dh, bias=spec.qkv_bias)
            self.wuv = nn.Linear(spec.latent_dim, self.Hkv * self.dh, bias=spec.qkv_bias)
        else:
            setattr(self, "w" + key_roles, nn.Linear(d, self.Hkv * self.dh, bias=spec.qkv_bias))
            if not value_is_key:
                self.wv = nn.Linear(d, self.Hkv * self.dh, bias=spec.qkv_bias)
        self.key_name = "wuk" if self.latent else "w" + key_roles
        self.wo = nn.Linear(self.H * self.dh, d, bias=spec.out_bias)
        for pname, shape in self.variant.parameters(spec).items():  # e.g. qk_norm_tau, sink_logit, static_map
            setattr(self, pname, nn.Parameter(torch.zeros(shape)))
        self.output_gate = spec.output_gate
        if spec.output_gate != "none":
            self.gate = nn.Linear(d, self.H * self.dh if spec.output_gate == "elementwise" else self.H)
        self.value_gate = spec.value_gate
        if spec.retention_gate:  # the sparsity lambda is spread over the layers
            self.retention = nn.Linear(d, self.H)
            self.retention_weight = spec.retention_sparsity / spec.n_layers
        self.round_fn = rounder(spec.score_precision)
        self.entropy = None  # set when the model records entropies

    def heads(self, y, heads):  # [B, T, heads*dh] -> [B, heads, T, dh]
        B, T, _ = y.shape
        return y.view(B, T, heads, self.dh).transpose(1, 2)

    def forward(self, x, h, block, ids, shared_kv):
        """x: the block's normalised input [B, T, d]; h: the block input (presence reads it);
        shared_kv: layer -> (k, v) of the layers so far, after value gate and rotation (cross-layer KV).
        Returns the output [B, T, d] and the auxiliary loss (retention sparsity, else 0)."""
        B, T, _ = x.shape
        group = self.H // self.Hkv
        positional = self.positional[0]
        rotary = positional.pairs > 0 and self.variant.uses_dot_scores
        angles = positional.angles(block.layer, x, block, ids) if rotary else None
        if self.reader:  # cross-layer KV: the source's k, v as they are, only the queries are this layer's
            k, v = shared_kv[self.kv_source]
            q = self.heads(self.wq(x), self.H)
            if rotary:
                q = rotate(q, angles)
        else:
            kv_in = self.wdkv(x) if self.latent else x  # latent KV: keys and values read c
            k = self.heads(getattr(self, self.key_name)(kv_in), self.Hkv)
            q = k.repeat_interleave(group, dim=1) if self.query_is_key else self.heads(self.wq(x), self.H)
            v = k if self.value_is_key else self.heads((self.wuv if self.latent else self.wv)(kv_in), self.Hkv)
            if self.value_gate:  # G4: v <- sigmoid(v)
                v = torch.sigmoid(v)
            if rotary:
                q, k = rotate(q, angles), rotate(k, angles)
                if positional.rotates_values:  # v_j turned by phi_j
                    v = rotate(v, angles)
            shared_kv[block.layer] = (k, v)
        bias = positional.score_bias(self.H, T, x.device) if self.variant.uses_dot_scores else None

        aux, key_gate, presence = x.new_zeros(()), None, None
        if self.variant.needs_presence:  # G3: p = |h|^2 / (tau + |h|^2)
            n = (h * h).sum(dim=-1)
            presence = n / (self.variant.tau + n)
            key_gate = presence.unsqueeze(1).expand(B, self.H, T)
        if hasattr(self, "retention"):  # G1: g = sigmoid(w_h . x_j + c_h); loss += lambda mean(g)
            g = torch.sigmoid(self.retention(x)).transpose(1, 2)  # [B, H, T]
            aux = self.retention_weight * g.mean()
            key_gate = g if key_gate is None else g * key_gate

        k_all, v_all = k.repeat_interleave(group, dim=1), v.repeat_interleave(group, dim=1)
        o = self.variant(self, q, k_all, v_all, bias, key_gate, 1.0 / math.sqrt(self.dh), self.round_fn)
        if self.entropy is not None:
            self.entropy = self.record_entropy(q, k_all, bias, key_gate)
        if rotary and positional.rotates_values:  # o_i turned back by -phi_i
            o = rotate(o, angles, inverse=True)
        o = o.transpose(1, 2).reshape(B, T, self.H * self.dh)
        if presence is not None:  # receiver presence: o_i *= p_i
            o = o * presence.unsqueeze(-1)
        if self.output_gate == "elementwise":  # G2: o_i *= sigmoid(W_g x_i + b_g)
            o = o * torch.sigmoid(self.gate(x))
        elif self.output_gate == "headwise":
            o = (o.view(B, T, self.H, self.dh) * torch.sigmoid(self.gate(x)).unsqueeze(-1)).view(B, T, -1)
        return self.wo(o), aux

    def record_entropy(self, q, k, bias, key_gate):
        """Mean attention entropy (nats) over heads and rows of batch element 0, as history.csv records it."""
        with torch.no_grad():
            weights = attention_weights(self, q[:1], k[:1], bias, None if key_gate is None else key_gate[:1])
            w = weights.clamp(min=1e-30)
            return float(-(weights * torch.log(w)).sum() / (weights.shape[1] * weights.shape[2]))


def attention_weights(layer, q, k, bias, key_gate):
    """The variant's map A [B, H, T, T], obtained by running it on identity values."""
    T = q.shape[-2]
    eye = torch.eye(T, dtype=q.dtype, device=q.device).expand(q.shape[0], q.shape[1], T, T)
    return layer.variant(layer, q, k, eye, bias, key_gate, 1.0 / math.sqrt(layer.dh), layer.round_fn)


class Norm(nn.Module):
    """model.norm: "layernorm" (weight, bias), "layernorm_no_bias" (weight), "rmsnorm" (weight:
    y = x / sqrt(mean(x^2) + eps) * w), with model.norm_eps."""

    def __init__(self, spec):
        super().__init__()
        self.kind, self.eps = spec.norm, float(spec.norm_eps)
        self.weight = nn.Parameter(torch.ones(spec.d_model))
        if spec.norm == "layernorm":
            self.bias = nn.Parameter(torch.zeros(spec.d_model))

    def forward(self, x):
        if self.kind == "rmsnorm":
            return x * torch.rsqrt((x * x).mean(dim=-1, keepdim=True) + self.eps) * self.weight
        return F.layer_norm(x, x.shape[-1:], self.weight, getattr(self, "bias", None), self.eps)


class MLP(nn.Module):
    """model.mlp: proj(gelu_tanh(fc(x))), proj(gelu_erf(fc(x))) or proj(silu(gate(x)) * fc(x)) (SwiGLU);
    biases when model.mlp_bias."""

    def __init__(self, spec):
        super().__init__()
        self.kind = spec.mlp
        self.fc = nn.Linear(spec.d_model, spec.d_ff, bias=spec.mlp_bias)
        if spec.mlp == "swiglu":
            self.gate = nn.Linear(spec.d_model, spec.d_ff, bias=spec.mlp_bias)
        self.proj = nn.Linear(spec.d_ff, spec.d_model, bias=spec.mlp_bias)

    def forward(self, x):
        if self.kind == "swiglu":
            return self.proj(F.silu(self.gate(x)) * self.fc(x))
        return self.proj(F.gelu(self.fc(x), approximate="tanh" if self.kind == "gelu" else "none"))


class Block(nn.Module):
    def __init__(self, spec, layer, positional):
        super().__init__()
        self.layer = layer
        self.parallel_residual = spec.parallel_residual
        self.ln1 = Norm(spec)
        if spec.positional == "accumulated_rotation" and positional.pairs > 0 and not positional.fixed:
            self.pos = OmegaIncrements(spec, positional.pairs)
        self.attn = Attention(spec, layer, positional)
        if not spec.attention_only:
            self.ln2 = Norm(spec)
            self.mlp = MLP(spec)

    def forward(self, x, ids, shared_kv):
        y, aux = self.attn(self.ln1(x), x, self, ids, shared_kv)
        if not hasattr(self, "mlp"):
            return x + y, aux
        if self.parallel_residual:  # x + attn(ln1(x)) + mlp(ln2(x)) (GPT-NeoX)
            return x + y + self.mlp(self.ln2(x)), aux
        x = x + y
        return x + self.mlp(self.ln2(x)), aux


class LabModel(nn.Module):
    """model(ids [B, T]) -> logits [B, T, vocab]; model.loss(ids, targets) -> the lab's training loss."""

    def __init__(self, config):
        super().__init__()
        from .config import model_spec

        self.config = config  # the whole config.json, written back on save
        spec = self.spec = model_spec(config)
        self.positional = make_positional(spec)
        self.tok_emb = nn.Embedding(spec.vocab, spec.d_model)
        if spec.positional == "learned":
            self.pos_emb = nn.Embedding(spec.context, spec.d_model)
        self.blocks = nn.ModuleList(Block(spec, l, self.positional) for l in range(spec.n_layers))
        self.ln_f = Norm(spec)
        if not spec.tied_embeddings:
            self.head = nn.Linear(spec.d_model, spec.vocab, bias=False)
        self.reset_parameters(config["train"].get("seed", 1))

    def reset_parameters(self, seed):
        """The lab's initialisation rule (GPT-2: N(0, 0.02), residual projections / sqrt(2 n_layers),
        norms at 1, gate biases 0, retention biases 2, omega biases at RoPE's speeds). The draws are
        torch's, not the engine's: for the lab's exact initial weights, start from an exported init/ folder."""
        gen = torch.Generator().manual_seed(int(seed))
        residual = 0.02 / math.sqrt(2.0 * self.spec.n_layers)
        variant_parameters = {f"blocks.{l}.attn.{n}": block.attn.variant
                              for l, block in enumerate(self.blocks) for n in block.attn.variant.parameters(self.spec)}
        with torch.no_grad():
            for name, p in self.named_parameters():
                if name in variant_parameters:
                    variant_parameters[name].initialise(name.rsplit(".", 1)[1], p, gen)
                elif name.endswith("ln1.weight") or name.endswith("ln2.weight") or name == "ln_f.weight":
                    p.fill_(1.0)
                elif name.endswith("retention.bias"):
                    p.fill_(2.0)
                elif name.endswith("omega.bias"):
                    freq = torch.tensor(self.positional.freq, dtype=torch.float64)
                    p.copy_(torch.log(torch.expm1(freq)))
                elif p.dim() == 1:
                    p.zero_()
                else:
                    std = residual if name.endswith("attn.wo.weight") or name.endswith("mlp.proj.weight") else 0.02
                    p.copy_(torch.randn(p.shape, generator=gen) * std)

    def forward(self, ids, with_aux=False):
        B, T = ids.shape
        if T > self.spec.context:
            raise ValueError(f"sequence of {T} tokens exceeds the context of {self.spec.context}")
        x = self.tok_emb(ids)
        if hasattr(self, "pos_emb"):
            x = x + self.pos_emb.weight[:T]
        elif self.positional.absolute:
            x = x + self.positional.embeddings(T).to(x.device)
        aux, shared_kv = x.new_zeros(()), {}
        for block in self.blocks:
            x, block_aux = block(x, ids, shared_kv)
            aux = aux + block_aux
        x = self.ln_f(x)
        logits = x @ (self.head.weight if hasattr(self, "head") else self.tok_emb.weight).t()
        return (logits, aux) if with_aux else logits

    def loss(self, ids, targets):
        """Mean cross-entropy over positions whose target is not -1, plus the retention sparsity term."""
        logits, aux = self(ids, with_aux=True)
        targets = targets.reshape(-1)
        if not (targets >= 0).any():  # nothing to score: the lab's loss is 0 there, not NaN
            return aux + 0.0 * logits.sum()
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets, ignore_index=-1) + aux

    def decayed(self, name, p):
        """True for the parameters the lab's AdamW decays: matrices, except tables it marks as not
        decayed (static_map, mta_kernel)."""
        return p.dim() >= 2 and not name.endswith(".static_map") and not name.endswith(".mta_kernel")

    def record_entropies(self, on):
        for block in self.blocks:
            block.attn.entropy = 0.0 if on else None

    def entropies(self):
        return [block.attn.entropy for block in self.blocks]
