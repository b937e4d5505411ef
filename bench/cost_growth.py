#!/usr/bin/python3
"""Cost growth: training step time and peak memory against the context and the model width.

Runs attnlab-bench and bench/torch_peer.py (the same model in PyTorch) at each point of two sweeps
and prints a Markdown table with the least-squares slopes of log(cost) against log(size), then
draws both sweeps as log-log charts into one SVG (written by hand: no plotting library needed).

  context sweep: d_model 256, 4 layers, 8 heads, d_ff 1024, batch 4 (workload long_1024), T = 128 .. 2048
  width sweep:   the same at context 512, d_model = 64 .. 512 with d_ff = 4 d_model and d_head 32

A slope of 1 is linear growth, 2 quadratic. Peak memory is the whole process's peak resident set,
the interpreter and libtorch included on the PyTorch side, so at small sizes both curves flatten
towards that fixed part and the slopes there understate the growth.

usage: bench/cost_growth.py [--bench build/bin/attnlab-bench] [--threads 1] [--steps 2]
                            [--svg docs/performance/cost_growth.svg] [--no-peer]
"""
import argparse
import json
import math
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = "long_1024"
CONTEXTS = [128, 256, 512, 1024, 2048]
WIDTHS = [64, 128, 256, 512]
WIDTH_CONTEXT = 512


def context_point(t):
    return [f"model.context={t}"]


def width_point(d):
    return [f"model.context={WIDTH_CONTEXT}", f"model.d_model={d}", f"model.d_ff={4 * d}", f"model.n_heads={d // 32}"]


def run_json(command, env=None):
    done = subprocess.run(command, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"cost_growth: {' '.join(command[:3])} ... failed:\n{done.stderr.strip()}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(args, sets):
    """Step ms and peak MB of each side at one point."""
    flags = sum((["--set", s] for s in sets), [])
    timing = ["--threads", str(args.threads), "--steps", str(args.steps), "--warmup", "1", "--traces", "0"]
    workload = run_json([args.bench, "--describe", BASE] + flags)
    tokens = workload["batch"] * workload["seq_len"]
    out = {}
    ours = run_json([args.bench, "--workload", BASE] + flags + timing)
    out["attnlab"] = (1000.0 * tokens / ours["tokens_per_second"]["median"], ours["peak_rss_mb"])
    if not args.no_peer:
        env = dict(os.environ, OMP_NUM_THREADS=str(args.threads), OPENBLAS_NUM_THREADS=str(args.threads))
        peer = run_json(["/usr/bin/python3", os.path.join(ROOT, "bench", "torch_peer.py"), "--workload", json.dumps(workload)]
                        + timing, env)
        out["pytorch"] = (1000.0 * tokens / peer["tokens_per_second"]["median"], peer["peak_rss_mb"])
    return out


def slope(xs, ys):
    """Least-squares slope of log y against log x."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    return sum((a - mx) * (b - my) for a, b in zip(lx, ly)) / sum((a - mx) ** 2 for a in lx)


COLOURS = {"attnlab": "#1f77b4", "pytorch": "#ff7f0e"}
LABELS = {"attnlab": "attnlab", "pytorch": "PyTorch 1.13"}


def panel(x0, y0, w, h, title, xlabel, ylabel, xs, series):
    """One log-log panel: series maps a side to its y values at xs."""
    ys = [y for values in series.values() for y in values]
    lo, hi = math.log(min(ys) / 1.3), math.log(max(ys) * 1.3)
    lx0, lx1 = math.log(xs[0] / 1.2), math.log(xs[-1] * 1.2)
    px = lambda x: x0 + 60 + (math.log(x) - lx0) / (lx1 - lx0) * (w - 80)
    py = lambda y: y0 + h - 40 - (math.log(y) - lo) / (hi - lo) * (h - 70)
    parts = [f'<rect x="{x0 + 60}" y="{y0 + 30}" width="{w - 80}" height="{h - 70}" fill="none" stroke="#888"/>',
             f'<text x="{x0 + w / 2}" y="{y0 + 18}" text-anchor="middle" font-size="13">{title}</text>',
             f'<text x="{x0 + 40 + w / 2}" y="{y0 + h - 6}" text-anchor="middle" font-size="11">{xlabel}</text>',
             f'<text x="{x0 + 14}" y="{y0 + h / 2}" text-anchor="middle" font-size="11" '
             f'transform="rotate(-90 {x0 + 14} {y0 + h / 2})">{ylabel}</text>']
    for x in xs:
        parts.append(f'<text x="{px(x):.1f}" y="{y0 + h - 24}" text-anchor="middle" font-size="10">{x}</text>')
    # y ticks at 1, 2, 5 times powers of ten inside the range
    for e in range(int(math.floor(lo / math.log(10))) - 1, int(math.ceil(hi / math.log(10))) + 1):
        for m in (1, 2, 5):
            v = m * 10 ** e
            if lo <= math.log(v) <= hi:
                parts.append(f'<line x1="{x0 + 60}" x2="{x0 + w - 20}" y1="{py(v):.1f}" y2="{py(v):.1f}" stroke="#eee"/>')
                parts.append(f'<text x="{x0 + 56}" y="{py(v) + 3:.1f}" text-anchor="end" font-size="10">{v:g}</text>')
    for side, values in series.items():
        points = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in zip(xs, values))
        parts.append(f'<polyline points="{points}" fill="none" stroke="{COLOURS[side]}" stroke-width="2"/>')
        for x, y in zip(xs, values):
            parts.append(f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{COLOURS[side]}"/>')
    return parts


def chart(results, sides):
    w, h = 420, 300
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{2 * w}" height="{2 * h + 30}" font-family="sans-serif">',
             f'<rect width="{2 * w}" height="{2 * h + 30}" fill="white"/>']
    for row, (sweep, xs, xlabel) in enumerate((("context", CONTEXTS, "context (tokens)"), ("width", WIDTHS, "d_model"))):
        for col, (index, what, unit) in enumerate(((0, "step time", "ms per step"), (1, "peak memory", "peak RSS, MB"))):
            series = {s: [results[sweep][x][s][index] for x in xs] for s in sides}
            title = f"{what} against {'the context' if sweep == 'context' else 'the width'}"
            parts += panel(col * w, row * h, w, h, title, xlabel, unit, xs, series)
    for i, side in enumerate(sides):
        parts.append(f'<rect x="{20 + i * 150}" y="{2 * h + 10}" width="14" height="4" fill="{COLOURS[side]}"/>')
        parts.append(f'<text x="{40 + i * 150}" y="{2 * h + 16}" font-size="12">{LABELS[side]}</text>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", default=os.path.join(ROOT, "build", "bin", "attnlab-bench"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--svg", default=os.path.join(ROOT, "docs", "performance", "cost_growth.svg"))
    ap.add_argument("--no-peer", action="store_true")
    args = ap.parse_args()
    sides = ["attnlab"] + ([] if args.no_peer else ["pytorch"])

    results = {"context": {}, "width": {}}
    for t in CONTEXTS:
        print(f"  context {t}", file=sys.stderr)
        results["context"][t] = measure(args, context_point(t))
    for d in WIDTHS:
        print(f"  d_model {d}", file=sys.stderr)
        results["width"][d] = measure(args, width_point(d))

    head = " | ".join(f"{LABELS[s]} step ms | {LABELS[s]} peak MB" for s in sides)
    print(f"| sweep | size | {head} |")
    print("| --- | --- |" + " --- | --- |" * len(sides))
    for sweep, xs in (("context", CONTEXTS), ("width", WIDTHS)):
        for x in xs:
            cells = " | ".join(f"{results[sweep][x][s][0]:,.0f} | {results[sweep][x][s][1]:,.0f}" for s in sides)
            print(f"| {sweep} | {x} | {cells} |")
        fits = " | ".join(f"{slope(xs, [results[sweep][x][s][0] for x in xs]):.2f} | "
                          f"{slope(xs, [results[sweep][x][s][1] for x in xs]):.2f}" for s in sides)
        print(f"| {sweep} | fitted slope | {fits} |")
    os.makedirs(os.path.dirname(args.svg), exist_ok=True)
    with open(args.svg, "w") as f:
        f.write(chart(results, sides))
    print(f"\nchart: {os.path.relpath(args.svg, ROOT)}", file=sys.stderr)


if __name__ == "__main__":
    main()
