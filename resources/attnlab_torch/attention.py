"""Attention variants (engine/attention/*.cpp): how one layer's per-head q [B, H, T, dh], k and v
(already expanded to H heads) become outputs [B, H, T, dh]. The layer (model.py) owns what all
variants share: projections, rotation, score bias, gates.

Every variant is causal. `key_gate` [B, H, T] (retention gate times presence, or None) weights key j:
softmax-like variants add log g_j to its logits, sigmoid multiplies its weight by g_j, linear
attention weights it in numerator and normaliser. `round_fn` emulates the score precision
(precision.py): it rounds where the engine rounds, with straight-through gradients.
"""
import math

import torch

from .precision import round_ste, straight_through


def visible(T, window, device):
    """[T, T] True where query i sees key j: j <= i, and j > i - window when window > 0."""
    i = torch.arange(T, device=device).view(T, 1)
    j = torch.arange(T, device=device).view(1, T)
    keep = j <= i
    return keep & (j > i - window) if window > 0 else keep


def causal_scores(q, k, scale, bias, round_fn):
    """s = scale q.k + b. Under an emulated precision the product, the bias and the sum are each rounded."""
    s = (q @ k.transpose(-2, -1)) * scale
    if round_fn is None:
        return s if bias is None else s + bias
    s = round_ste(s, round_fn)
    return s if bias is None else round_ste(s + round_fn(bias), round_fn)


def masked_softmax(s, beta, key_gate, window, round_fn, sink=None):
    """a_ij = softmax_j(beta s_ij + log g_j) over visible keys, exactly 0 elsewhere. Under an emulated
    precision the logits and the exponentials are rounded; the sums stay float32. `sink` [H] (softmax_sink)
    is one more key per row with that logit and no value: the row then sums to 1 - a_sink."""
    z = beta * s
    if key_gate is not None:
        z = z + torch.log(key_gate).unsqueeze(-2)
    T = s.shape[-1]
    keep = visible(T, window, s.device)
    if round_fn is not None:
        z = round_ste(z, round_fn)  # the sink logit itself is not rounded (engine: sinkSoftmaxRow)
    if sink is not None:
        z = torch.cat((z, sink.view(1, -1, 1, 1).expand(*z.shape[:-1], 1)), dim=-1)
        keep = torch.cat((keep, torch.ones(T, 1, dtype=torch.bool, device=s.device)), dim=-1)
    masked = z.masked_fill(~keep, float("-inf"))
    if round_fn is None:
        a = torch.softmax(masked, dim=-1)
    else:  # (the shift uses the unmasked z: masked entries are zeroed below, and -inf - -inf would be NaN)
        shifted = z - masked.amax(dim=-1, keepdim=True).detach()
        rounded_e = torch.where(keep, round_fn(torch.exp(shifted)), torch.zeros_like(shifted))
        # the rounded exponential's value, and its own value as its derivative (the engine's backward uses the saved a)
        e = rounded_e * torch.exp(shifted - shifted.detach())
        a = e / e.sum(dim=-1, keepdim=True)
    return a[..., :T] if sink is not None else a


class Variant:
    """What the layer asks of every variant: whether it reads q.k (rotation and score bias apply),
    whether it needs presence, and the parameters it owns in the layer ({name: shape}, with init)."""

    uses_dot_scores = True
    needs_presence = False

    def parameters(self, spec):
        return {}

    def initialise(self, name, p, gen):
        """Fills the variant's own parameter `name` with the engine's initial values."""
        p.zero_()


class Softmax(Variant):
    """A1: a_ij = softmax_j(beta s_ij) over j <= i."""

    def __init__(self, spec, name):
        self.beta = spec.attention_setting(name, "temperature")
        self.window = int(spec.attention_setting(name, "window")) if name == "window" else 0

    def __call__(self, layer, q, k, v, bias, key_gate, scale, round_fn):
        s = causal_scores(q, k, scale, bias, round_fn)
        return masked_softmax(s, self.beta, key_gate, self.window, round_fn) @ v


class Momentum(Softmax):
    """A7: softmax on high-passed queries and keys, q~_t = q_t + gamma (q_t - q_{t-1}) (q~_0 = q_0), keys alike."""

    def __init__(self, spec, name):
        super().__init__(spec, "momentum")
        self.gamma = spec.attention_setting(name, "momentum_gamma")

    def high_pass(self, x):
        return torch.cat((x[..., :1, :], x[..., 1:, :] + self.gamma * (x[..., 1:, :] - x[..., :-1, :])), dim=-2)

    def __call__(self, layer, q, k, v, bias, key_gate, scale, round_fn):
        return super().__call__(layer, self.high_pass(q), self.high_pass(k), v, bias, key_gate, scale, round_fn)


class OAttention(Softmax):
    """A5: presence-coupled softmax. The layer passes each source's presence p_j (times any retention
    gate) as the key gate and multiplies each output by the receiver's p_i."""

    needs_presence = True

    def __init__(self, spec, name):
        super().__init__(spec, "oattention")
        self.tau = spec.attention_setting(name, "presence_tau")


class Sigmoid(Variant):
    """A2: a_ij = sigmoid(beta s_ij + b) g_j over j <= i, no normalisation; b = -log(i + 1), or a
    learned scalar per head (`sigmoid_bias` [H]) with sigmoid_bias_learned = 1."""

    def __init__(self, spec, name):
        self.beta = spec.attention_setting(name, "temperature")
        self.learned_bias = spec.attention_setting(name, "sigmoid_bias_learned") != 0  # the layer owns `sigmoid_bias`
        self.context = spec.context

    def parameters(self, spec):
        return {"sigmoid_bias": [spec.n_heads]} if self.learned_bias else {}

    def initialise(self, name, p, gen):
        p.fill_(-math.log(self.context))

    def __call__(self, layer, q, k, v, bias, key_gate, scale, round_fn):
        T = q.shape[-2]
        s = causal_scores(q, k, scale, bias, round_fn)
        if self.learned_bias:
            b = layer.sigmoid_bias.view(1, -1, 1, 1)
        else:
            b = -torch.log(torch.arange(1, T + 1, dtype=torch.float32, device=q.device)).view(T, 1)
        x = self.beta * s + b
        gate = key_gate.unsqueeze(-2) if key_gate is not None else 1.0
        a = torch.sigmoid(x) * gate
        if round_fn is not None:  # the engine's backward reads sigmoid(x) of the unrounded x
            a = straight_through(round_fn(torch.sigmoid(round_fn(x))) * gate, a)
        return a.masked_fill(~visible(T, 0, q.device), 0.0) @ v


def elu_plus_one(x):
    """phi(x) = x + 1 for x > 0, else exp(x) (not elu(x) + 1, which loses exp(x) below about -17)."""
    return torch.where(x > 0, x + 1.0, torch.exp(x.clamp(max=0.0)))


class Linear(Variant):
    """A3: linear attention, a_ij = g_j m_ij / sum_j' g_j' m_ij' with m_ij = phi(q_i).phi(k_j), j <= i.
    No 1/sqrt(d) scale, no rotation and no score bias (the layer skips both)."""

    uses_dot_scores = False

    def __init__(self, spec, name):
        pass

    def __call__(self, layer, q, k, v, bias, key_gate, scale, round_fn):
        T = q.shape[-2]
        m = round_ste(elu_plus_one(q) @ elu_plus_one(k).transpose(-2, -1), round_fn)
        n = m.masked_fill(~visible(T, 0, q.device), 0.0)
        if key_gate is not None:
            n = n * key_gate.unsqueeze(-2)
        total = n.sum(dim=-1, keepdim=True)
        return (n / torch.where(total > 0, total, torch.ones_like(total))) @ v  # an empty row stays 0


NORM_EPS = 1e-12  # qk_norm: |x| -> sqrt(|x|^2 + eps), so a zero vector scores 0, not NaN


class QkNorm(Variant):
    """A13: a_ij = softmax_j(tau_h (q_i/|q_i|).(k_j/|k_j|) + bias_ij + log g_j), tau_h learned per head
    (`qk_norm_tau` [H], initial sqrt(d_head)); the scores are computed at scale 1."""

    def __init__(self, spec, name):
        self.d_head = spec.d_head

    def parameters(self, spec):
        return {"qk_norm_tau": [spec.n_heads]}

    def initialise(self, name, p, gen):
        p.fill_(math.sqrt(self.d_head))

    def __call__(self, layer, q, k, v, bias, key_gate, scale, round_fn):
        unit = lambda x: x * torch.rsqrt((x * x).sum(dim=-1, keepdim=True) + NORM_EPS)
        q = layer.qk_norm_tau.view(1, -1, 1, 1) * unit(q)
        s = causal_scores(q, unit(k), 1.0, bias, round_fn)
        return masked_softmax(s, 1.0, key_gate, 0, round_fn) @ v


class SoftmaxSink(Softmax):
    """A14: softmax with one more key per head whose logit z_h is learned (`sink_logit` [H], initial 0)
    and which has no value: a_ij = exp(beta s_ij + log g_j) / (exp(z_h) + sum_j' exp(...))."""

    def __init__(self, spec, name):
        self.beta = spec.attention_setting(name, "temperature")

    def parameters(self, spec):
        return {"sink_logit": [spec.n_heads]}

    def __call__(self, layer, q, k, v, bias, key_gate, scale, round_fn):
        s = causal_scores(q, k, scale, bias, round_fn)
        return masked_softmax(s, self.beta, key_gate, 0, round_fn, sink=layer.sink_logit) @ v


class L1Score(Softmax):
    """A6: s_ij = scale q.k + b_ij - lambda_h |P_h q_i - P_h k_j|_1, then softmax; P_h [r, d_head] per head
    (`l1_proj` [H, r, d_head], initial N(0, 1/sqrt(d_head))), lambda_h = exp(`l1_log_lambda` [H]), initial 0.1."""

    def __init__(self, spec, name):
        self.beta = spec.attention_setting(name, "temperature")
        self.rank = int(spec.attention_setting(name, "l1_rank"))
        self.d_head = spec.d_head

    def parameters(self, spec):
        return {"l1_proj": [spec.n_heads, self.rank, spec.d_head], "l1_log_lambda": [spec.n_heads]}

    def initialise(self, name, p, gen):
        if name == "l1_log_lambda":
            p.fill_(math.log(0.1))
        else:
            p.copy_(torch.randn(p.shape, generator=gen) / math.sqrt(self.d_head))

    def __call__(self, layer, q, k, v, bias, key_gate, scale, round_fn):
        B, H, T, _ = q.shape
        P = layer.l1_proj
        pq, pk = torch.einsum("bhtd,hrd->bhtr", q, P), torch.einsum("bhtd,hrd->bhtr", k, P)
        distance = torch.cdist(pq.reshape(B * H, T, -1), pk.reshape(B * H, T, -1), p=1.0).view(B, H, T, T)
        penalty = torch.exp(layer.l1_log_lambda).view(1, -1, 1, 1) * distance
        s = causal_scores(q, k, scale, bias, round_fn)
        s = s - penalty if round_fn is None else round_ste(s - round_ste(penalty, round_fn), round_fn)
        return masked_softmax(s, self.beta, key_gate, 0, round_fn) @ v


class StaticMap(Variant):
    """A15 (static map): a_ij = softmax_j(B_{h, i-j} + log g_j), B a learned table per head and distance
    (`static_map` [H, context], initial 0, not decayed); distances past the table share its last entry.
    Queries and keys take no part (no rotation, no score bias)."""

    uses_dot_scores = False

    def __init__(self, spec, name):
        pass

    def parameters(self, spec):
        return {"static_map": [spec.n_heads, spec.context]}

    def __call__(self, layer, q, k, v, bias, key_gate, scale, round_fn):
        T, table = q.shape[-2], layer.static_map
        i = torch.arange(T, device=q.device)
        distance = (i.view(T, 1) - i.view(1, T)).clamp(min=0, max=table.shape[1] - 1)
        s = round_ste(table[:, distance], round_fn).unsqueeze(0)  # [1, H, T, T]
        return masked_softmax(s, 1.0, key_gate, 0, round_fn) @ v


class NoMixing(Variant):
    """A15 (no mixing): a_ij = delta_ij, so o_i = v_i (0 where the key gate is exactly 0; the gate gets no gradient)."""

    uses_dot_scores = False

    def __init__(self, spec, name):
        pass

    def __call__(self, layer, q, k, v, bias, key_gate, scale, round_fn):
        return v if key_gate is None else v * (key_gate != 0).to(v.dtype).unsqueeze(-1)


class DeltaNet(Variant):
    """A11: the delta rule S_t = alpha_t S_{t-1} (I - beta_t k^_t k^_t^T) + beta_t v_t k^_t^T, o_t = S_t q_t,
    with unit keys k^ = k/|k|, beta_t = sigmoid(w_b . k_t + c_b) g_t (`delta_beta_w` [H, dh], `delta_beta_b` [H],
    initial 0) and alpha_t = 1, or for gated_deltanet sigmoid(w_a . k_t + c_a) (`delta_alpha_w`, `delta_alpha_b`,
    initial 0 and 3). Computed in the parallel form: U = M^-1 D V with M = I + D (G o strict_lower(K^ K^^T)),
    O = (G o lower(Q K^^T)) U, G_ij = prod_{j<m<=i} alpha_m. No rotation, no score bias, no emulated rounding."""

    uses_dot_scores = False

    def __init__(self, spec, name):
        self.gated = name == "gated_deltanet"

    def parameters(self, spec):
        names = ("beta", "alpha") if self.gated else ("beta",)
        shapes = {}
        for n in names:
            shapes.update({f"delta_{n}_w": [spec.n_heads, spec.d_head], f"delta_{n}_b": [spec.n_heads]})
        return shapes

    def initialise(self, name, p, gen):
        p.fill_(3.0) if name == "delta_alpha_b" else p.zero_()

    @staticmethod
    def gate_logit(k, w, b):
        return torch.einsum("bhtd,hd->bht", k, w) + b.view(1, -1, 1)

    def __call__(self, layer, q, k, v, bias, key_gate, scale, round_fn):
        T = q.shape[-2]
        kn = k * torch.rsqrt((k * k).sum(dim=-1, keepdim=True) + NORM_EPS)
        beta = torch.sigmoid(self.gate_logit(k, layer.delta_beta_w, layer.delta_beta_b))
        if key_gate is not None:
            beta = beta * key_gate
        lower = visible(T, 0, q.device)
        if self.gated:
            c = torch.cumsum(torch.nn.functional.logsigmoid(self.gate_logit(k, layer.delta_alpha_w, layer.delta_alpha_b)), dim=-1)
            decay = torch.exp((c.unsqueeze(-1) - c.unsqueeze(-2)).masked_fill(~lower, float("-inf")))
        else:
            decay = lower.to(q.dtype)
        m = torch.eye(T, dtype=q.dtype, device=q.device) + beta.unsqueeze(-1) * decay * torch.tril(kn @ kn.transpose(-2, -1), -1)
        u = torch.linalg.solve_triangular(m, beta.unsqueeze(-1) * v, upper=False, unitriangular=True)
        return (decay * (q @ kn.transpose(-2, -1))) @ u


class MultiToken(Softmax):
    """A12: s~_ij = sum_{a < c_q, b < c_k} theta_{h,a,b} s0_{i-a, j-b} (s0: the causal scores, 0 where masked or
    out of range), then the masked softmax; `mta_kernel` [H, c_q * c_k], initial the identity, not decayed."""

    def __init__(self, spec, name):
        self.beta = spec.attention_setting(name, "temperature")
        self.cq = int(spec.attention_setting(name, "mta_query_width"))
        self.ck = int(spec.attention_setting(name, "mta_key_width"))

    def parameters(self, spec):
        return {"mta_kernel": [spec.n_heads, self.cq * self.ck]}

    def initialise(self, name, p, gen):
        p.zero_()
        p[:, 0] = 1.0

    def __call__(self, layer, q, k, v, bias, key_gate, scale, round_fn):
        T, H = q.shape[-2], q.shape[1]
        s0 = causal_scores(q, k, scale, bias, round_fn).masked_fill(~visible(T, 0, q.device), 0.0)
        theta = layer.mta_kernel.view(H, self.cq, self.ck)
        s = torch.zeros_like(s0)
        for a in range(self.cq):
            for b in range(self.ck):  # shifted[i, j] = s0[i - a, j - b], 0 out of range
                shifted = torch.nn.functional.pad(s0, (b, 0, a, 0))[..., :T, :T]
                s = s + theta[:, a, b].view(1, -1, 1, 1) * shifted
        return masked_softmax(s, self.beta, key_gate, 0, round_fn) @ v


VARIANTS = {"softmax": Softmax, "window": Softmax, "momentum": Momentum, "oattention": OAttention,
            "sigmoid": Sigmoid, "linear": Linear, "qk_norm": QkNorm, "softmax_sink": SoftmaxSink,
            "l1_score": L1Score, "static_map": StaticMap, "no_mixing": NoMixing,
            "deltanet": DeltaNet, "gated_deltanet": DeltaNet, "multi_token": MultiToken}
