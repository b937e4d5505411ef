"""Attention variants (engine/attention/*.cpp): how one layer's per-head q [B, H, T, dh], k and v
(already expanded to H heads) become outputs [B, H, T, dh]. The layer (model.py) owns what all
variants share: projections, rotation, score bias, gates.

Every variant is causal. `key_gate` [B, H, T] (retention gate times presence, or None) weights key j:
softmax-like variants add log g_j to its logits, sigmoid multiplies its weight by g_j, linear
attention weights it in numerator and normaliser. `round_fn` emulates the score precision
(precision.py): it rounds where the engine rounds, with straight-through gradients.
"""
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


def masked_softmax(s, beta, key_gate, window, round_fn):
    """a_ij = softmax_j(beta s_ij + log g_j) over visible keys, exactly 0 elsewhere. Under an emulated
    precision the logits and the exponentials are rounded; the sums stay float32."""
    z = beta * s
    if key_gate is not None:
        z = z + torch.log(key_gate).unsqueeze(-2)
    keep = visible(s.shape[-1], window, s.device)
    if round_fn is None:
        return torch.softmax(z.masked_fill(~keep, float("-inf")), dim=-1)
    z = round_ste(z, round_fn)
    shifted = z - z.masked_fill(~keep, float("-inf")).amax(dim=-1, keepdim=True).detach()
    rounded_e = torch.where(keep, round_fn(torch.exp(shifted)), torch.zeros_like(shifted))
    # the rounded exponential's value, and its own value as its derivative (the engine's backward uses the saved a)
    e = rounded_e * torch.exp(shifted - shifted.detach())
    return e / e.sum(dim=-1, keepdim=True)


class Softmax:
    """A1: a_ij = softmax_j(beta s_ij) over j <= i."""

    uses_dot_scores = True
    needs_presence = False

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


class Sigmoid:
    """A2: a_ij = sigmoid(beta s_ij + b) g_j over j <= i, no normalisation; b = -log(i + 1), or a
    learned scalar per head (`sigmoid_bias` [H]) with sigmoid_bias_learned = 1."""

    uses_dot_scores = True
    needs_presence = False

    def __init__(self, spec, name):
        self.beta = spec.attention_setting(name, "temperature")
        self.learned_bias = spec.attention_setting(name, "sigmoid_bias_learned") != 0  # the layer owns `sigmoid_bias`

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


class Linear:
    """A3: linear attention, a_ij = g_j m_ij / sum_j' g_j' m_ij' with m_ij = phi(q_i).phi(k_j), j <= i.
    No 1/sqrt(d) scale, no rotation and no score bias (the layer skips both)."""

    uses_dot_scores = False
    needs_presence = False

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


VARIANTS = {"softmax": Softmax, "window": Softmax, "momentum": Momentum, "oattention": OAttention,
            "sigmoid": Sigmoid, "linear": Linear}
