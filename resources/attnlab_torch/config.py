"""The lab's config.json, read with the engine's defaults (engine/config/*.h), and the check
that this package can express the experiment exactly (anything else is refused in one line)."""
import json
import os

from .errors import LabError

FORMAT = "attnlab-experiment-1"

MODEL_DEFAULTS = {
    "vocab": 0, "d_model": 128, "n_layers": 4, "n_heads": 4, "n_kv_heads": 0, "d_ff": 512, "context": 128,
    "attention_only": False, "tied_embeddings": True, "attention": ["softmax"], "attention_settings": {},
    "positional": "learned", "positional_settings": {}, "projection_sharing": "qkv", "kv_latent_dim": 0,
    "kv_share_group": 1,
    "output_gate": "none",
    "value_gate": False, "retention_gate": False, "retention_sparsity": 0.0, "score_precision": "fp32",
    # The blocks of pretrained models (model/block_parts.h): RMSNorm, SwiGLU, biases, parallel residual.
    "norm": "layernorm", "norm_eps": 1e-5, "mlp": "gelu", "mlp_bias": True, "qkv_bias": False, "out_bias": False,
    "parallel_residual": False,
}
NORMS = ("layernorm", "layernorm_no_bias", "rmsnorm")
MLPS = ("gelu", "gelu_erf", "swiglu")
TRAIN_DEFAULTS = {
    "steps": 1000, "batch": 16, "lr": 3e-3, "min_lr_ratio": 0.1, "warmup": 50, "weight_decay": 0.01,
    "beta1": 0.9, "beta2": 0.98, "eps": 1e-8, "grad_clip": 1.0, "seed": 1, "threads": 2, "eval_every": 100,
    "eval_batches": 4,
    "qk_lr_ratio": 1.0, "ov_lr_ratio": 1.0, "lr_ratio_layers": "", "lr_ratio_from": 0, "lr_ratio_until": 0,
}

# What each attention variant and positional encoding reads from its settings, with the engine's
# defaults (engine/attention/*.cpp, engine/positional/*.cpp).
ATTENTION_SETTINGS = {
    "softmax": {"temperature": 1.0},
    "window": {"temperature": 1.0, "window": 16},
    "sigmoid": {"temperature": 1.0, "sigmoid_bias_learned": 0},
    "linear": {},
    "momentum": {"temperature": 1.0, "momentum_gamma": 0.5},
    "oattention": {"temperature": 1.0, "presence_tau": 0.01},
    "qk_norm": {},
    "softmax_sink": {"temperature": 1.0},
    "l1_score": {"temperature": 1.0, "l1_rank": 4},
    "static_map": {},
    "no_mixing": {},
    "deltanet": {},
    "gated_deltanet": {},
    "multi_token": {"temperature": 1.0, "mta_query_width": 3, "mta_key_width": 3},
}
POSITIONAL_SETTINGS = {
    "none": {}, "sinusoidal": {}, "learned": {}, "alibi": {}, "alibi_log": {},
    "rope": {"theta": 10000.0, "rotary_fraction": 1.0, "ntk_scale": 1.0, "span_rotary_only": 0, "linear_scale": 1.0,
             "llama3_factor": 0.0, "llama3_low_freq_factor": 1.0, "llama3_high_freq_factor": 4.0,
             "llama3_original_context": 8192},
    "accumulated_rotation": {"theta": 10000.0, "rotary_fraction": 1.0, "omega_mode": 0, "rotate_values": 0},
}
# (queries are keys, values are keys); "latent" (MLA): k = W_UK c, v = W_UV c from c = W_DKV x
PROJECTION_SHARING = {"qkv": (False, False), "q_k=v": (False, True), "q=k_v": (True, False), "q=k=v": (True, True),
                      "latent": (False, False)}
OUTPUT_GATES = ("none", "elementwise", "headwise")
SCORE_PRECISIONS = ("fp32", "bf16", "fp16")


GATES = ("retention_gate", "output_gate", "presence", "value_gate")  # model.retention_gate, output_gate, oattention's presence, value_gate

# members.json: what this package builds, the list attnlab-cli export refuses anything else by.
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "members.json"), encoding="utf-8") as _f:
    MEMBERS = json.load(_f)


def _check_members():
    """members.json and the tables above describe the same package (a difference is a bug here, not bad input)."""
    ours = {"attention": {k: sorted(v) for k, v in ATTENTION_SETTINGS.items()},
            "positional": {k: sorted(v) for k, v in POSITIONAL_SETTINGS.items()},
            "gates": sorted(GATES), "projection_sharing": sorted(PROJECTION_SHARING), "output_gate": sorted(OUTPUT_GATES),
            "score_precision": sorted(SCORE_PRECISIONS), "norm": sorted(NORMS), "mlp": sorted(MLPS),
            "model_keys": sorted(MODEL_DEFAULTS), "train_keys": sorted(TRAIN_DEFAULTS)}
    for kind, table in ours.items():
        listed = MEMBERS[kind]
        listed = {k: sorted(v) for k, v in listed.items()} if isinstance(listed, dict) else sorted(listed)
        if listed != table:
            raise LabError(f"attnlab_torch: members.json's {kind} ({listed}) differ from config.py's ({table})")


_check_members()


def _cannot(kind, name, what, known):
    """The one-line refusal of a member: members.json's reason when it lists one, else what this package knows."""
    reason = MEMBERS["refused"].get(f"{kind}:{name}")
    return LabError(f"attnlab_torch cannot express {what} '{name}': {reason}" if reason
                    else f"attnlab_torch cannot express {what} '{name}' yet (it knows: {', '.join(known)})")


class ModelSpec:
    """The `model` section with every default filled in, plus helpers the modules read."""

    def __init__(self, section):
        unknown = sorted(set(section) - set(MODEL_DEFAULTS))
        if unknown:
            reason = MEMBERS["refused"].get(f"model_key:{unknown[0]}")
            raise LabError(f"attnlab_torch cannot express model.{unknown[0]}: {reason}" if reason
                           else f"config.json: model.{unknown[0]} is not a model key this package knows")
        merged = dict(MODEL_DEFAULTS, **section)
        for key, value in merged.items():
            setattr(self, key, value)
        if isinstance(self.attention, str):
            self.attention = [self.attention]

    @property
    def d_head(self):
        return self.d_model // self.n_heads

    @property
    def kv_heads(self):
        return self.n_kv_heads if self.n_kv_heads > 0 else self.n_heads

    @property
    def latent_dim(self):
        return self.kv_latent_dim if self.kv_latent_dim > 0 else self.d_model // 4

    def attention_of(self, layer):
        return self.attention[0] if len(self.attention) == 1 else self.attention[layer]

    def attention_setting(self, variant, key):
        return float(self.attention_settings.get(key, ATTENTION_SETTINGS[variant][key]))

    def positional_setting(self, key):
        return float(self.positional_settings.get(key, POSITIONAL_SETTINGS[self.positional][key]))


def check_expressible(spec):
    """Raises LabError with one line when the experiment cannot be built here exactly."""
    if spec.vocab <= 0:
        raise LabError("config.json: model.vocab is 0 (export through attnlab-cli, which fills it in from the task)")
    if spec.n_heads <= 0 or spec.d_model % spec.n_heads:
        raise LabError(f"config.json: n_heads ({spec.n_heads}) must divide d_model ({spec.d_model})")
    if spec.kv_heads <= 0 or spec.n_heads % spec.kv_heads:
        raise LabError(f"config.json: n_kv_heads ({spec.kv_heads}) must divide n_heads ({spec.n_heads})")
    if len(spec.attention) not in (1, spec.n_layers):
        raise LabError(f"config.json: model.attention lists {len(spec.attention)} variants for {spec.n_layers} layers")
    for name in spec.attention:
        if name not in ATTENTION_SETTINGS:
            raise _cannot("attention", name, "attention variant", ATTENTION_SETTINGS)
    if spec.positional not in POSITIONAL_SETTINGS:
        raise _cannot("positional", spec.positional, "positional encoding", POSITIONAL_SETTINGS)
    if spec.positional == "rope" and spec.positional_setting("llama3_factor") > 0 and not (
            spec.positional_setting("llama3_high_freq_factor") > spec.positional_setting("llama3_low_freq_factor")):
        raise LabError("config.json: rope llama3_high_freq_factor must exceed llama3_low_freq_factor")
    if spec.projection_sharing not in PROJECTION_SHARING:
        raise _cannot("projection_sharing", spec.projection_sharing, "projection sharing", PROJECTION_SHARING)
    if spec.output_gate not in OUTPUT_GATES:
        raise _cannot("output_gate", spec.output_gate, "output gate", OUTPUT_GATES)
    if spec.score_precision not in SCORE_PRECISIONS:
        raise _cannot("score_precision", spec.score_precision, "score precision", SCORE_PRECISIONS)
    if spec.norm not in NORMS:
        raise _cannot("norm", spec.norm, "model.norm", NORMS)
    if spec.mlp not in MLPS:
        raise _cannot("mlp", spec.mlp, "model.mlp", MLPS)
    # A setting no member here reads belongs to a feature this package does not have.
    for key in spec.attention_settings:
        if not any(key in declared for declared in ATTENTION_SETTINGS.values()):
            raise LabError(f"attnlab_torch cannot express attention setting '{key}' yet")
    for key in spec.positional_settings:
        if not any(key in declared for declared in POSITIONAL_SETTINGS.values()):
            raise LabError(f"attnlab_torch cannot express positional setting '{key}' yet")


def read_config(path):
    """The whole config.json as a dict (model, task, train sections with defaults filled in)."""
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except FileNotFoundError:
        raise LabError(f"{path}: not found (a lab run folder holds config.json, model.safetensors, history.csv)")
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise LabError(f"{path}: is not a readable JSON file ({str(e).splitlines()[0]})")
    if not isinstance(config, dict) or config.get("format", FORMAT) != FORMAT:
        raise LabError(f"{path}: is not an attnlab experiment (format is not {FORMAT})")
    config.setdefault("model", {})
    config["train"] = dict(TRAIN_DEFAULTS, **config.get("train", {}))
    return config


def model_spec(config):
    spec = ModelSpec(config["model"])
    check_expressible(spec)
    return spec

