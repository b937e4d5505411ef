// study: the seed papers' experiments at toy scale, each writing a report folder; each study lives in
// its own study_NAME.cpp, and this file holds the list of studies and the help.
#include "cli_error.h"
#include "command.h"
#include "study_all.h"
#include "study_extrapolation.h"
#include "study_projection_sharing.h"
#include "study_phase_change.h"
#include "study_live_cache.h"
#include "study_low_precision.h"
#include "study_qk_runaway.h"
#include "study_sinks.h"
#include "study_seed_checks.h"

namespace attnlab::cli {
namespace {

// Every study: adding one is its file and one line here (study all runs them in this order).
const std::vector<StudyEntry> kStudies = {
    {"live-cache", "R1: soft gates and hard eviction, against H2O, KeyDiff, window and SnapKV (seed 000)", runLiveCacheStudy},
    {"low-precision", "R2: ALiBi under fp32, bf16 and fp16 and ALiBi-log: exact-zero weights and passkey retrieval (seed 000)", runLowPrecisionStudy},
    {"seed-checks", "R3 QK spectra by positional encoding and R7 head-drop order (seeds 000 and 001)", runSeedChecksStudy},
    {"projection-sharing", "R5: shared projections and grouped KV heads, KV cache saved against perplexity paid (seed 000)",
     runProjectionSharingStudy},
    {"extrapolation", "R6: accumulated rotations, RoPE and ALiBi beyond the training length (seed 000)", runExtrapolationStudy},
    {"sinks", "R8: the first token as a sink, the output gate and the learnable sink (seeds 000 and 001)", runSinksStudy},
    {"phase-change", "R9: induction heads forming, a phase change in 2 layers, none in 1, and momentum's one-layer induction (seed 004)",
     runPhaseChangeStudy},
    {"qk-runaway", "QK score runaway under fast learning and bf16, QK-norm and QK-guard (seed 001)", runQkRunawayStudy},
};

std::vector<std::string> studyNames() {
  std::vector<std::string> names;
  for (const StudyEntry& s : kStudies) names.push_back(s.name);
  names.push_back("all");
  return names;
}

int runStudy(const Args& args) {
  const std::string name = args.text("subcommand");
  if (name == "all") return runAllStudies(args, kStudies, studyCommand().flags);
  for (const StudyEntry& s : kStudies)
    if (s.name == name) return s.run(args);
  throw CliError("no study '" + name + "'");
}

}  // namespace

Command studyCommand() {
  return {"study",
          "live-cache --out DIR [--quick] [--steps N] [--seeds 1,2,3] [--d-model N] [--layers N] [--heads N]\n"
          "    [--d-ff N] [--context N] [--batch N] [--lr X] [--sparsity L] [--threshold T] [--eval-sequences N]\n"
          "    [--budgets 12.5%,25%] [--policies a,b] [--threads N] [--json] [--quiet]\n"
          "  or: attnlab-cli study seed-checks --out DIR [--quick] [--seeds 1,2,3 | --seed S] [--steps N] [--threads N] [--quiet]\n"
          "  or: attnlab-cli study extrapolation --out DIR [--quick] [--steps N] [--seeds 1,2,3] [--threads N] [--quiet]\n"
          "  or: attnlab-cli study qk-runaway --out DIR [--quick] [--steps N] [--batch N] [--seeds 1,2,3] [--guard T] [--threads N] [--quiet]\n"
          "  or: attnlab-cli study sinks --out DIR [--quick] [--steps N] [--seeds 1,2,3] [--d-model N] [--layers N] [--context N]\n"
          "    [--batch N] [--threads N] [--quiet]\n"
          "  or: attnlab-cli study projection-sharing --out DIR [--quick] [--steps N] [--seeds 1,2,3] [--d-model N] [--layers N]\n"
          "    [--heads N] [--kv-heads N] [--context N] [--batch N] [--eval-batches N] [--threads N] [--quiet]\n"
          "  or: attnlab-cli study phase-change --out DIR [--quick] [--steps N] [--seeds 1,2,3] [--d-model N] [--batch N] [--every K]\n"
          "    [--gamma G] [--threads N] [--quiet]\n"
          "  or: attnlab-cli study low-precision --out DIR [--quick] [--steps N] [--seeds 1,2,3] [--d-model N] [--layers N] [--heads N]\n"
          "    [--train-length N] [--batch N] [--threads N] [--quiet]\n"
          "  or: attnlab-cli study all --out DIR [--quick] [--seeds 1,2,3] [--studies a,b] [--resume] [--threads N] [--quiet]",
          "run a study from the seed papers and write a report folder",
          {{"subcommand", "NAME", "the study, given as the first argument: live-cache, low-precision, seed-checks, projection-sharing, extrapolation, sinks, phase-change, qk-runaway or all"},
           {"out", "DIR", "report folder (created): report.md, findings.csv, results.csv, charts/*.png and the study's other CSVs"},
           {"quick", "", "a tiny grid that runs in seconds (for tests; the numbers mean nothing)"},
           {"steps", "N", "training steps per model (defaults: live-cache 2000, low-precision and projection-sharing 800, extrapolation and sinks 400, phase-change 3000, qk-runaway 150; seed-checks: per model)"},
           {"seed", "S", "seed-checks: one seed only, short for --seeds S"},
           {"seeds", "LIST", "seeds, comma separated; each trains the whole grid (default 1,2,3)"},
           {"d-model", "N", "model width (default 64)"},
           {"layers", "N", "blocks (default 4)"},
           {"heads", "N", "attention heads (default 4)"},
           {"d-ff", "N", "MLP width (default 256)"},
           {"context", "N", "sequence length for training and evaluation (default 64)"},
           {"batch", "N", "training batch (default 16)"},
           {"lr", "X", "peak learning rate (default 0.003)"},
           {"sparsity", "L", "lambda of the gated models' sparsity pressure on mean(g) (default 0.5)"},
           {"threshold", "T", "hard eviction removes entries with g below T (default 0.5)"},
           {"eval-sequences", "N", "held-out sequences per evaluation (default 24)"},
           {"budgets", "LIST", "budgets of the PPL-vs-budget sweep, as shares (default 12.5%,25%,50%,75%)"},
           {"policies", "LIST", "policies of the sweep (default window,streaming_llm,h2o,tova,keydiff,snapkv,random,learned_gate)"},
           {"kv-heads", "N", "projection-sharing: KV heads of the grouped (GQA) arms; must divide --heads (default 1 of 4)"},
           {"eval-batches", "N", "projection-sharing: validation batches for the perplexity (default 8)"},
           {"every", "K", "phase-change: measure every K steps (default 25)"},
           {"gamma", "G", "phase-change: the momentum arm's gamma (default 0.5)"},
           {"train-length", "N", "low-precision: tokens per passkey training sequence, evaluated up to 8x (default 64)"},
           {"guard", "T", "qk-runaway: the QK-guard score threshold (default 20)"},
           {"threads", "N", "worker threads (default 2)"},
           {"json", "", "print one JSON object with the table's numbers"},
           {"studies", "LIST", "all: only these studies, comma separated (default every one)"},
           {"resume", "", "all: keep a study whose folder already holds findings.csv from an earlier run"},
           {"quiet", "", "no progress lines on stderr"}},
          "live-cache (seed 000, R1): trains {softmax, sigmoid} x {learned retention gate, none} x {RoPE, ALiBi} on the toy\n"
          "language for every seed, then measures on the same held-out text: dense PPL, PPL with the gate applied hard,\n"
          "H2O, KeyDiff, window and SnapKV under the matched live-cache protocol, and PPL vs cache budget per policy; each\n"
          "as mean and 95% interval over seeds, charts with bands, and seed 000's claims judged by the intervals\n"
          "(findings.csv). Defaults: d_model 64, 4 layers, 2000 steps, seeds 1,2,3: the largest that fits in about half an\n"
          "hour on 2 idle cores; --d-model 128 --d-ff 512 costs about 3-4 times as much per step.\n\n"
          "seed-checks (R3, seed 000; R7, seed 001), for each seed (default 1,2,3): R3 trains the two-layer attention-only\n"
          "induction preset under RoPE, learned absolute positions and ALiBi (6000 steps of batch 64), follows every head's\n"
          "QK spectrum and maps over training (charts/rotational_share_*.png), checks the heads start at the Ginibre null\n"
          "and compares how rotational the strongest previous-token head is. R7: head-drop curves by importance order on\n"
          "those models and on recall, copy, sorting and toy-language models; the share of cases (model x seed) in which\n"
          "ascending order is the most resilient, with Wilson's interval, against seed 001's 72.5%. --steps sets every\n"
          "model's steps (defaults: recall 2000 steps of batch 64, copy and sorting 1500, toy language 2000 at d_model 64).\n"
          "About 400 CPU-seconds per seed, so 20 to 30 minutes on 2 idle cores for 3 seeds (estimated from CPU time per\n"
          "step on a shared, loaded machine); --quick: seconds, on 1 thread. Writes report.md, findings.csv, runs.csv,\n"
          "spectra.csv, null_draw.csv, importance.csv, head_drop.csv, resilience.csv and charts/.\n\n"
          "extrapolation (seed 000, R6): trains RoPE, ALiBi, ALiBi-log, accumulated rotation (learned and random) and no\n"
          "encoding on passkey and induction for each seed at the training length, evaluates each at 1, 2 and 4 times it\n"
          "and writes report.md (the table, and whether it agrees with seed 000), results.csv and charts/<task>.png.\n\n"
          "qk-runaway (seed 001): the induction preset with softmax, qk_norm and softmax under QK-guard (train.qk_guard)\n"
          "at the preset learning rate and 10x, with fp32 and bf16 scores, for each seed: each layer's largest score\n"
          "against the step (scores.csv, charts/scores_*.png), final loss and accuracy with 95% intervals over seeds,\n"
          "and which runs diverged. Default 150 steps of batch 16 per run, seeds 1,2,3.\n\n"
          "sinks (seed 001, R8): the toy language with softmax, softmax with an element-wise or head-wise output gate, and\n"
          "the learnable sink (softmax_sink), for each seed: the first token's share of attention per layer (mean and\n"
          "95% interval over seeds), the learnable sink's own share, a chart, results.csv and report.md.\n\n"
          "projection-sharing (seed 000, R5): the toy language with qkv, q_k=v, q=k_v and q=k=v projections, each with one\n"
          "KV head per query head and with --kv-heads (GQA), for each seed: held-out perplexity and the KV bytes per token\n"
          "the decoding cache really holds (checked against live entries x entry size), with 95% intervals over seeds; two\n"
          "frontier charts (PPL, and PPL over qkv's on the same seed, against bytes; the Pareto arms joined), results.csv,\n"
          "findings.csv and report.md. Defaults: d_model 64, 2 layers, 4 heads, context 64, 800 steps of batch 16, seeds\n"
          "1,2,3: 24 models, about 30 minutes on 2 idle cores (estimated from 0.19 CPU-seconds per step, evaluation\n"
          "included, measured on a shared, loaded machine).\n\n"
          "phase-change (R9; seed 004): the induction preset attention-only with 2 softmax layers, 1 softmax layer and 1\n"
          "momentum layer, for each seed: validation loss, in-context accuracy and the strongest head's induction score\n"
          "every K steps, the phase-change step detected per run (halfway up the smoothed induction score's rise; none\n"
          "below a 0.2 rise), its mean and 95% interval per model, charts, curves.csv, results.csv, findings.csv, report.md.\n"
          "Default d_model 128, 3000 steps of batch 64, seeds 1,2,3: about 15 CPU-minutes (timed on a shared, loaded\n"
          "machine), well under 30 minutes on 2 idle cores.\n\n"
          "low-precision (seed 000, R2): passkey models with ALiBi trained with fp32, bf16 and fp16 scores and ALiBi-log\n"
          "with fp16 and fp32, for each seed (and the fp32 ALiBi model evaluated with fp16 scores), evaluated at 1, 2, 4\n"
          "and 8x the training length: the share of exactly zero visible weights per layer, head and distance\n"
          "(zero_share.csv, a chart per model) and passkey accuracy (results.csv, a chart), mean and 95% interval over\n"
          "seeds, checked against the paper (findings.csv). Defaults: d_model 64, 2 layers, 8 heads, 64-token sequences,\n"
          "800 steps of batch 32, seeds 1,2,3: about 30 minutes on 2 idle cores (0.26 CPU-seconds per step, measured on\n"
          "a shared, loaded machine).\n\n"
          "all: every study above in turn, each into DIR/<name> with the --quick, --seeds and --threads given, then\n"
          "DIR/report.md: one table of every finding (what the paper says, what this run measured with its interval,\n"
          "and the verdict agrees / partly / does not) linking each study's report, and DIR/findings.csv. A study\n"
          "that fails is named in the index and the others still run; --resume keeps studies already done.\n\n"
          "Every study writes findings.csv (finding,paper,measured,verdict) beside its report.",
          runStudy,
          studyNames()};
}

}  // namespace attnlab::cli
