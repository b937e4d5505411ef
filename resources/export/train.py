#!/usr/bin/env python3
"""Trains an exported Attention Lab experiment with PyTorch, on one process or many (torchrun).

    torchrun --standalone --nproc_per_node 2 train.py --data DATA --out RUN [--steps N]

Starts from init/ (the lab's initial or trained weights and its config.json: model and train
settings), reads DATA (written by `attnlab-cli data`), trains with the lab's AdamW, schedule and
clipping, evaluates every train.eval_every steps, and writes RUN/history.csv (a row per step, as it
goes) and RUN/checkpoint/ (a lab checkpoint folder, replaced atomically every --checkpoint-every
steps and at the end) that the lab app and `attnlab-cli eval --model RUN/checkpoint` open.
Processes share each step's batch (DDP, gloo on CPU, NCCL on CUDA; --fsdp shards the model instead).
"""
import argparse
import contextlib
import datetime
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)


def fail(message):
    print(f"train.py: {message}", file=sys.stderr)
    sys.exit(2)


try:
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
except ImportError:
    fail("PyTorch is not installed for this Python (Debian: apt-get install python3-torch; else pip install torch)")

import attnlab_torch as lab  # noqa: E402
from attnlab_torch.checkpoint import fixed_tables, history_header, history_line, read_kept_files, set_fixed_tables  # noqa: E402
from attnlab_torch.data import TokenData  # noqa: E402
from attnlab_torch.training import (clip_gradients, gradient_norm, learning_rate, make_optimizer, plain_name,  # noqa: E402
                                    set_learning_rates)


def parse_args():
    ap = argparse.ArgumentParser(description="Train an exported Attention Lab experiment (see README.md).")
    ap.add_argument("--data", required=True, help="folder written by 'attnlab-cli data'")
    ap.add_argument("--out", required=True, help="run folder: history.csv and checkpoint/")
    ap.add_argument("--steps", type=int, help="optimiser steps (default: train.steps of init/config.json)")
    ap.add_argument("--init", default=os.path.join(HERE, "init"), help="lab checkpoint to start from (default: init/)")
    ap.add_argument("--checkpoint-every", type=int, help="steps between checkpoints (default: train.eval_every)")
    ap.add_argument("--resume", action="store_true", help="continue the run in --out from its last checkpoint")
    ap.add_argument("--fsdp", action="store_true", help="shard parameters, gradients and optimiser state (FSDP)")
    ap.add_argument("--device", choices=["auto", "cpu", "cuda"], default="auto", help="auto: CUDA when present")
    ap.add_argument("--no-bf16", action="store_true", help="on CUDA: no bf16 autocast (the lab's float32 numerics)")
    ap.add_argument("--threads", type=int, help="CPU threads per process (default: torch's)")
    return ap.parse_args()


class Run:
    def __init__(self, args):
        self.args = args
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        local_rank = int(os.environ.get("LOCAL_RANK", "0"))
        if args.device == "cuda" and not torch.cuda.is_available():
            fail("--device cuda, but this machine has no CUDA device")
        use_cuda = args.device == "cuda" or (args.device == "auto" and torch.cuda.is_available())
        self.device = torch.device(f"cuda:{local_rank}" if use_cuda else "cpu")
        if use_cuda:
            torch.cuda.set_device(self.device)
        self.bf16 = use_cuda and not args.no_bf16 and torch.cuda.is_bf16_supported()
        if self.world > 1:
            dist.init_process_group("nccl" if use_cuda else "gloo", timeout=datetime.timedelta(minutes=10))
        if args.threads:
            torch.set_num_threads(args.threads)

    def autocast(self):
        """bf16 autocast on a CUDA device that has bf16; else nothing (the lab's float32)."""
        return torch.autocast("cuda", dtype=torch.bfloat16) if self.bf16 else contextlib.nullcontext()

    def all_sum(self, values):
        t = torch.tensor(values, dtype=torch.float64, device=self.device)
        if self.world > 1:
            dist.all_reduce(t)
        return t.tolist()

    def shard(self, rows):
        """This process's share of a batch's rows (contiguous, as even as the batch allows)."""
        return torch.tensor_split(rows, self.world)[self.rank]


def import_fsdp():
    try:
        from torch.distributed.fsdp import FullyShardedDataParallel
    except Exception as e:  # Debian's torch 1.13 FSDP does not import under Python 3.11
        fail(f"FSDP is not usable in this PyTorch {torch.__version__} ({type(e).__name__}: {str(e).splitlines()[0][:80]}); "
             "use DDP (no --fsdp) or PyTorch 2")
    return FullyShardedDataParallel


def wrap(model, run):
    if run.args.fsdp:
        FSDP = import_fsdp()
        if run.world == 1:
            fail("--fsdp needs torchrun with more than one process")
        # use_orig_params keeps the lab's parameter names (and per-matrix weight decay) visible
        return FSDP(model, device_id=run.device if run.device.type == "cuda" else None, use_orig_params=True)
    if run.world > 1:
        from torch.nn.parallel import DistributedDataParallel as DDP

        return DDP(model, device_ids=[run.device] if run.device.type == "cuda" else None)
    return model


def full_state(wrapped, model, run):
    """The whole model's weights on rank 0 (FSDP gathers them); None elsewhere."""
    if run.args.fsdp:
        from torch.distributed.fsdp import FullStateDictConfig, StateDictType

        FSDP = import_fsdp()

        with FSDP.state_dict_type(wrapped, StateDictType.FULL_STATE_DICT, FullStateDictConfig(offload_to_cpu=True, rank0_only=True)):
            state = wrapped.state_dict()
        return state if run.rank == 0 else None
    return {n: p.detach().cpu() for n, p in model.named_parameters()} if run.rank == 0 else None


def save_checkpoint(path, state, config, history, tables, kept):
    snapshot = lab.LabModel(config)
    state = {plain_name(k): v for k, v in state.items()}
    with torch.no_grad():
        for name, p in snapshot.named_parameters():
            p.copy_(state[name])
    set_fixed_tables(snapshot, tables)  # tables that never train (accumulated_rotation omega_mode 1)
    lab.save(snapshot, path, history, kept)


def masked_sums(logits, targets):
    """(sum of cross-entropy, scored positions, correct argmax) over positions whose target is not -1."""
    flat, goal = logits.reshape(-1, logits.shape[-1]).float(), targets.reshape(-1)
    scored = goal >= 0
    ce = F.cross_entropy(flat, goal, ignore_index=-1, reduction="sum") if scored.any() else flat.sum() * 0.0
    correct = (flat.argmax(dim=-1)[scored] == goal[scored]).sum()
    return ce, int(scored.sum()), int(correct)


def evaluate(wrapped, data, run):
    tokens, targets = data.splits["validation"]
    ce_sum = counted = correct = 0.0
    with torch.no_grad():
        mine_t, mine_y = run.shard(tokens), run.shard(targets)
        for start in range(0, mine_t.shape[0], 64):
            x, y = mine_t[start : start + 64].to(run.device), mine_y[start : start + 64].to(run.device)
            with run.autocast():
                logits = wrapped(x)
            ce, n, c = masked_sums(logits, y)
            ce_sum, counted, correct = ce_sum + float(ce), counted + n, correct + c
    ce_sum, counted, correct = run.all_sum([ce_sum, counted, correct])
    loss = ce_sum / counted if counted else 0.0
    return loss, (correct / counted if data.has_answers and counted else float("nan"))


def main():
    args = parse_args()
    try:
        run = Run(args)
        train_loop(args, run)
    except lab.LabError as e:
        fail(str(e))
    except OSError as e:
        fail(f"{e.filename or 'a file'}: {e.strerror}")
    except Exception as e:  # a bug, not bad input: still one line, as the lab's tools report
        fail(f"internal error: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    finally:
        if dist.is_available() and dist.is_initialized():
            dist.destroy_process_group()


def train_loop(args, run):
    data = TokenData(args.data)
    checkpoint_dir = os.path.join(args.out, "checkpoint")
    history_path = os.path.join(args.out, "history.csv")
    if args.resume:
        model, history = lab.load(checkpoint_dir), lab.read_history(os.path.join(checkpoint_dir, "history.csv"))
    else:
        if os.path.exists(checkpoint_dir):
            fail(f"{args.out} already holds a run; pass --resume to continue it, or choose another --out")
        model, history = lab.load(args.init), []
    config, spec = model.config, model.spec
    tables = fixed_tables(model)
    # An imported model's checkpoints carry what describes its Hugging Face folder (pretrained/) and
    # name the data they trained on as their task (token_files), so the lab opens and evaluates them.
    kept = read_kept_files(checkpoint_dir if args.resume else args.init)
    if config.get("task", {}).get("name") == "token_files":
        config["task"].update(text_path=os.path.abspath(args.data), seq_len=data.seq_len)
    train = dict(config["train"])
    if args.steps:
        train["steps"] = config["train"]["steps"] = args.steps
    if data.vocab != spec.vocab:
        fail(f"{args.data}: the data's vocabulary has {data.vocab} tokens, the model's {spec.vocab}")
    if data.seq_len > spec.context:
        fail(f"{args.data}: sequences of {data.seq_len} tokens exceed the model's context of {spec.context}")
    if train["batch"] < run.world:
        fail(f"train.batch ({train['batch']}) is smaller than the number of processes ({run.world})")
    torch.manual_seed(int(train["seed"]) + run.rank)
    model.to(run.device)
    decay_names = {n for n, p in model.named_parameters() if model.decayed(n, p)}
    wrapped = wrap(model, run)
    optimizer = make_optimizer(wrapped, train, decay_names)
    every = args.checkpoint_every or train["eval_every"] or train["steps"]
    n_layers = spec.n_layers
    if run.rank == 0:
        os.makedirs(args.out, exist_ok=True)
        with open(history_path, "w", encoding="utf-8") as f:
            f.write(",".join(history_header(n_layers)) + "\n" + "".join(history_line(r, n_layers) + "\n" for r in history))
        print(f"training {sum(p.numel() for p in model.parameters()):,} parameters on {run.world} process(es), "
              f"{run.device.type}{', bf16 autocast' if run.bf16 else ''}{', FSDP' if args.fsdp else ''}; "
              f"{train['steps']} steps of {train['batch']} x {data.seq_len} tokens", flush=True)

    tokens, targets = data.splits["train"]
    B, first = train["batch"], (history[-1]["step"] if history else 0)
    log = open(history_path, "a", encoding="utf-8") if run.rank == 0 else None
    for step in range(first, train["steps"]):
        start = time.perf_counter()
        rows = torch.arange(step * B, (step + 1) * B) % tokens.shape[0]  # the lab's batches, in order
        x, y = run.shard(tokens[rows]).to(run.device), run.shard(targets[rows]).to(run.device)
        model.record_entropies(run.rank == 0)
        with run.autocast():
            logits, aux = wrapped(x, with_aux=True)
            ce, n, _ = masked_sums(logits, y)
        ce_total, counted, aux_total = run.all_sum([float(ce), n, float(aux)])
        # the lab's loss over the whole batch: every position weighs the same whichever process holds it
        # (DDP averages gradients over processes, hence the factor world)
        loss = ce * (run.world / max(counted, 1.0)) + aux
        loss.backward()
        row = {"step": step + 1, "loss": ce_total / max(counted, 1.0) + aux_total / run.world}
        if not args.fsdp:
            named = list(model.named_parameters())
            row.update({f"grad_norm_L{l}": gradient_norm([p for name, p in named if name.startswith(f"blocks.{l}.")])
                        for l in range(n_layers)})
            row["grad_norm"] = clip_gradients(model, train["grad_clip"])
        else:
            row["grad_norm"] = float(wrapped.clip_grad_norm_(train["grad_clip"] if train["grad_clip"] > 0 else math.inf))
        if not math.isfinite(row["loss"]) or not math.isfinite(row["grad_norm"]):
            fail(f"training diverged at step {step + 1}: the loss or the gradient is not finite; "
                 f"the last checkpoint in {checkpoint_dir} is kept")
        row["lr"] = learning_rate(step, train)
        set_learning_rates(optimizer, row["lr"], step, train)  # circuit rates: train.qk_lr_ratio, ov_lr_ratio
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        row.update({f"entropy_L{l}": e for l, e in enumerate(model.entropies()) if e is not None})
        model.record_entropies(False)
        done = step + 1
        if (train["eval_every"] > 0 and done % train["eval_every"] == 0) or done == train["steps"]:
            row["val_loss"], row["accuracy"] = evaluate(wrapped, data, run)
        row["seconds"] = time.perf_counter() - start
        row["tokens_per_second"] = B * data.seq_len / row["seconds"]
        history.append(row)
        if log:
            log.write(history_line(row, n_layers) + "\n")
            log.flush()
        if done % every == 0 or done == train["steps"]:
            state = full_state(wrapped, model, run)
            if run.rank == 0:
                save_checkpoint(checkpoint_dir, state, config, history, tables, kept)
                accuracy = "" if math.isnan(row.get("accuracy", math.nan)) else f", accuracy {row['accuracy']:.4f}"
                print(f"step {done}: loss {row['loss']:.4f}{accuracy}; checkpoint {checkpoint_dir}", flush=True)
    if log:
        log.close()


if __name__ == "__main__":
    main()
