"""Positional encodings (engine/positional/*.cpp). Each acts at some of three places:
absolute (added to the embeddings), rotary (turns pairs of q/k features), score bias (ALiBi)."""
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Positional(nn.Module):
    absolute = False  # adds a table to the token embeddings
    pairs = 0  # rotary pairs (2m, 2m+1) that turn; 0: no rotation
    rotates_values = False

    def embeddings(self, T):
        raise NotImplementedError

    def angles(self, layer, x, block, ids):
        """[B or 1, T, pairs] rotation angles for the layer's normalised input x [B, T, d] (tokens ids [B, T])."""
        raise NotImplementedError

    def score_bias(self, heads, T, device=None):
        """[H, T, T] bias added to the attention scores, or None."""
        return None


class NoPositional(Positional):
    """P1 (none): no positional signal; the causal mask alone breaks symmetry."""


class Sinusoidal(Positional):
    """P2: x_t += [sin(t w_c), cos(t w_c)], w_c = 10000^(-(c - c mod 2)/d), in double as the engine."""

    absolute = True

    def __init__(self, spec):
        super().__init__()
        self.d = spec.d_model

    def embeddings(self, T):
        c = torch.arange(self.d, dtype=torch.float64)
        freq = torch.pow(10000.0, -(c - c % 2) / self.d)
        angle = torch.arange(T, dtype=torch.float64).view(T, 1) * freq
        return torch.where(c % 2 == 0, torch.sin(angle), torch.cos(angle)).to(torch.float32)


class Learned(Positional):
    """P3: a learned table pos_emb [context, d_model] (the model owns it as `pos_emb`)."""

    absolute = True


class Rope(Positional):
    """P4: pair m of q and k turns by t * freq_m, freq_m = theta^(-2m/span) / linear_scale; only the
    first rotary_fraction of the pairs turn; ntk_scale stretches the base (theta *= ntk^(d_head / (d_head - 2)));
    span is d_head, or the rotated dimensions with span_rotary_only (GPT-NeoX); llama3_factor > 0
    applies Llama 3's band-wise scaling. All in double, as the engine."""

    def __init__(self, spec):
        super().__init__()
        d_head, setting = spec.d_head, spec.positional_setting
        self.pairs = int(math.floor(setting("rotary_fraction") * d_head / 2.0 + 0.5))
        theta = setting("theta")
        if d_head > 2:
            theta *= setting("ntk_scale") ** (d_head / (d_head - 2))
        span = 2 * self.pairs if setting("span_rotary_only") > 0 else d_head
        freq = [theta ** (-2.0 * m / span) / setting("linear_scale") for m in range(self.pairs)]
        if setting("llama3_factor") > 0:
            freq = [llama3_scaled(f, setting("llama3_factor"), setting("llama3_low_freq_factor"),
                                  setting("llama3_high_freq_factor"), setting("llama3_original_context")) for f in freq]
        self.register_buffer("freq", torch.tensor(freq, dtype=torch.float64), persistent=False)

    def angles(self, layer, x, block, ids):
        t = torch.arange(x.shape[1], dtype=torch.float64, device=x.device).view(1, -1, 1)
        return (t * self.freq.to(x.device)).to(torch.float32)


def llama3_scaled(freq, factor, low, high, context):
    """Wavelengths below context/high stay, above context/low are divided by factor, a linear blend between."""
    wavelength = 2 * math.pi / freq
    if wavelength < context / high:
        return freq
    if wavelength > context / low:
        return freq / factor
    smooth = (context / wavelength - low) / (high - low)
    return (1 - smooth) * freq / factor + smooth * freq


class Alibi(Positional):
    """P5 / P6: b_h(i, j) = -m_h f(i - j), m_h = 2^(-8(h+1)/H); f the distance or log(1 + distance)."""

    def __init__(self, spec, log_distance):
        super().__init__()
        self.log_distance = log_distance

    def score_bias(self, heads, T, device=None):
        slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / heads) for h in range(heads)], dtype=torch.float32, device=device)
        i = torch.arange(T, device=device)
        distance = (i.view(T, 1) - i.view(1, T)).clamp(min=0).to(torch.float32)
        if self.log_distance:
            distance = torch.log1p(distance)
        return -(slopes.view(-1, 1, 1) * distance)


class AccumulatedRotation(Positional):
    """P7: RoPE's pairs, but pair m of token t turns by phi_t = sum_{s<=t} omega_m(x_s). omega_mode 0:
    omega = softplus(W_l x_s + b_l), learned per layer (each block owns `pos.omega`, a Linear(d_model,
    pairs)); omega_mode 1: omega = omega_table[token_s], increments the engine drew once per token id
    from the model's seed, fixed (a buffer, not a parameter: checkpoint.py reads and writes it as
    omega_table.safetensors). rotate_values also turns v_j by phi_j and each head output back by -phi_i."""

    def __init__(self, spec):
        super().__init__()
        d_head = spec.d_head
        self.pairs = int(math.floor(spec.positional_setting("rotary_fraction") * d_head / 2.0 + 0.5))
        self.rotates_values = spec.positional_setting("rotate_values") != 0
        self.fixed = spec.positional_setting("omega_mode") != 0
        theta = spec.positional_setting("theta")
        self.freq = [theta ** (-2.0 * m / d_head) for m in range(self.pairs)]
        if self.fixed:  # filled from omega_table.safetensors (checkpoint.load); NaN until then
            self.register_buffer("omega_table", torch.full((spec.vocab, self.pairs), math.nan))

    def angles(self, layer, x, block, ids):
        if self.fixed:
            omega = self.omega_table[ids]
        else:
            omega = F.softplus(block.pos.omega(x).double(), threshold=20.0).to(torch.float32)  # softplus in double
        return omega.double().cumsum(dim=1).to(torch.float32)  # a double running sum, as the engine's


def make_positional(spec):
    name = spec.positional
    if name == "none":
        return NoPositional()
    if name == "sinusoidal":
        return Sinusoidal(spec)
    if name == "learned":
        return Learned()
    if name == "rope":
        return Rope(spec)
    if name in ("alibi", "alibi_log"):
        return Alibi(spec, log_distance=name == "alibi_log")
    return AccumulatedRotation(spec)


def rotate(x, angles, inverse=False):
    """Turns pair m = (x[2m], x[2m+1]) of each row of x [B, heads, T, d_head] by angles [B|1, T, pairs]."""
    pairs = angles.shape[-1]
    if pairs == 0:
        return x
    cos, sin = torch.cos(angles).unsqueeze(1), torch.sin(angles).unsqueeze(1)
    if inverse:
        sin = -sin
    x0, x1 = x[..., 0 : 2 * pairs : 2], x[..., 1 : 2 * pairs : 2]
    turned = torch.stack((cos * x0 - sin * x1, sin * x0 + cos * x1), dim=-1).flatten(-2)
    return torch.cat((turned, x[..., 2 * pairs :]), dim=-1)
