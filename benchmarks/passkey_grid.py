"""Passkey retrieval on SmolLM2-135M-Instruct, inside and past its 8,192-token context, under every recipe.

For each prompt length, each needle depth and each recipe, one five-digit key (drawn with
``--seed``, the same key for every recipe at a given length and depth) is hidden in filler text
and the model answers greedily (:mod:`transformerland.passkey`). Seven rows
(:func:`~transformerland.passkey.long_context_recipes`): plain RoPE; linear, NTK-aware, YaRN and
Llama 3 at factor 4, configured as chapter 8 configures them for 8,192 → 32,768 tokens and applied
at every length; and dynamic NTK at factor 1 (its canonical form, effective factor ``max(1, ℓ/L)``
at the prompt's length ``ℓ``) and at factor 4 (``4ℓ/L − 3``), each row named with its factor.

Each answer is ``--new-tokens`` tokens long (default :data:`~transformerland.passkey.ANSWER_TOKENS`,
24) and found when its first run of five digits is the key
(:func:`~transformerland.passkey.passkey_found`); the file records both, with 30 needles a cell by
default, so that each cell's Wilson interval (:func:`~transformerland.passkey.wilson_interval`) is
about √3 times narrower than with the 10 of the first grid. Each sitting records the code's commit
(``git rev-parse HEAD``, ``+dirty`` when tracked files were changed; on a copy of the tree on another
machine, set ``BENCHMARK_COMMIT`` to the commit it was made from).

Prompts of one length and recipe run ``--batch`` at a time (default 10; every prompt of a length has
exactly that many tokens, so a batch needs no padding), ordered by length, then by group of needles,
then by recipe, so that a sitting stopped by ``--time-budget`` leaves each recipe of a length with the
same needles, give or take one batch. The committed grid (2026-11-27) took two sittings on one H200:
1,260 prompts in 495 s of trials, with at most 16.4 GB of GPU memory at 23,040 tokens. It replaced a
first grid of 10 needles, 7-token answers and six rows, measured on an H100 on 2026-11-25 (the file
keeps what that grid was, under ``replaces``). To measure it again, run until it prints "grid
complete":

    python -m benchmarks.passkey_grid --remeasure           # 6 lengths x 30 needles x 7 rows = 1,260 prompts

``--remeasure`` writes into the library's file, replacing a grid of another protocol and otherwise
adding only what the file lacks (``--merge``), with ``--time-budget`` 540 s unless given. It runs on
the CPU too, but on a 2-core CPU one 8,000-token prompt takes about 20 s.

Writes a JSON file (by default the library's ``data/passkey_grid.json``, which chapter 8 reads with
:func:`transformerland.passkey.load_passkey_grid`) with every trial and its provenance (device, date,
commit, command, library, transformers and torch versions, seconds per trial and in all). With
``--merge`` the trials already in ``--out`` are kept and only the missing ones are run, so a grid can
be computed in several sittings (``--time-budget`` stops one cleanly); ``--merge`` refuses to mix
answer lengths or judging rules.

    python -m benchmarks.passkey_grid --lengths 4096 --depths 2 --out /tmp/small.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from tqdm.auto import tqdm
from transformerland.llm import load_smollm2
from transformerland.passkey import (
    ANSWER_TOKENS,
    JUDGING,
    WORDING,
    WORDINGS,
    long_context_recipes,
    needle_depths,
    passkey_keys,
    passkey_trial,
    passkey_trials,
)

from benchmarks.provenance import sitting

CONTEXT = 8192
FACTOR = 4.0
LENGTHS = (4096, 7680, 9600, 11520, 15360, 23040)
RESULTS = Path(__file__).parents[1] / "lib" / "transformerland" / "data" / "passkey_grid.json"


NEEDLES = 30
BATCH = 10
REMEASURE_BUDGET = 540.0


def grid_recipes() -> dict[str, dict[str, object] | None]:
    """The grid's seven rows: plain RoPE, four recipes at factor 4, dynamic NTK at factors 1 and 4."""
    return long_context_recipes(CONTEXT, FACTOR)


def length_keys(n_tokens: int, count: int, seed: int) -> list[str]:
    """The keys of the needles at one length: drawn from ``seed`` and the length, whatever else is run."""
    return passkey_keys(count, seed=seed * 1_000_003 + n_tokens)


def summary(trials: list[dict]) -> dict[tuple[int, str], tuple[int, int]]:
    """``(length, recipe) → (found, trials)``."""
    table: dict[tuple[int, str], tuple[int, int]] = {}
    for t in trials:
        found, count = table.get((t["n_tokens"], t["recipe"]), (0, 0))
        table[t["n_tokens"], t["recipe"]] = (found + t["found"], count + 1)
    return table


def peak_memory(device: torch.device) -> float | None:
    """GiB of GPU memory at the peak, or None on a CPU."""
    return round(torch.cuda.max_memory_allocated(device) / 2**30, 2) if device.type == "cuda" else None


def needle_batches(
    todo: list[tuple[int, float, str, str]], size: int
) -> list[tuple[int, str, list[tuple[float, str]]]]:
    """``(length, depth, key, recipe)`` trials → batches ``(length, recipe, [(depth, key), ...])`` of ``size``.

    Ordered by length, then by groups of ``size`` needles, then by recipe, so that a sitting stopped by
    its time budget leaves every recipe of a length with the same needles, give or take one batch.
    """
    batches: dict[tuple[int, int, str], list[tuple[float, str]]] = {}
    order: dict[int, list[float]] = {}
    for n, depth, _, _ in todo:
        if depth not in order.setdefault(n, []):
            order[n].append(depth)
    for n, depth, key, name in todo:
        group = order[n].index(depth) // size
        batches.setdefault((n, group, name), []).append((depth, key))
    ranked = sorted(batches, key=lambda b: (b[0], b[1]))  # stable: recipes keep their order within a group
    return [(n, name, batches[n, group, name]) for n, group, name in ranked]


def grid_file(
    args: argparse.Namespace,
    old: dict,
    wording: str,
    tried: dict[str, int],
    trials: list[dict],
    argv: list[str] | None,
    device: torch.device,
    load_seconds: float,
    peaks: dict[str, float],
) -> dict:
    """The grid with this sitting's trials added, written to ``args.out``; returned."""
    recipes = grid_recipes()
    run = {
        **sitting("benchmarks.passkey_grid", argv, device),
        "load_seconds": round(load_seconds, 1),
        "batch": args.batch,
        "trials": len(trials),
        "trial_seconds": round(sum(t["seconds"] for t in trials), 1),
        "peak_gpu_memory_gb": peaks or None,
    }
    result = {
        "what": "passkey retrieval on SmolLM2-135M-Instruct (benchmarks/passkey_grid.py)",
        "context": CONTEXT,
        "factor": FACTOR,
        "recipes": recipes,
        "seed": args.seed,
        "wording": wording,
        "wording_trial": (
            {"length": args.choose_wording, "needles": args.depths, "found": tried}
            if tried
            else old.get("wording_trial")
        ),
        "prompt": WORDINGS[wording].__dict__,
        "new_tokens": args.new_tokens,
        "judging": JUDGING,
        **({"replaces": old["replaces"]} if "replaces" in old else {}),
        "runs": [*old["runs"], run],
        "trials": [*old["trials"], *trials],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    return result


def efficient_attention_on_cuda() -> None:
    """Let SDPA's memory-efficient kernel serve SmolLM2's grouped-query attention in float32 on a GPU.

    With no mask, transformers asks SDPA for grouped-query attention (``enable_gqa=True``); in float32
    on CUDA no fused kernel takes that, and SDPA falls back to its math kernel, which holds every
    ``(heads, T, T)`` score (37 GB at 32k tokens). Expanding the key/value heads first (what
    transformers does when it does not ask for GQA) gives the same attention through the fused kernel.
    """
    from transformers.integrations import sdpa_attention

    sdpa_attention.use_gqa_in_sdpa = lambda *args, **kwargs: False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lengths", type=int, nargs="+", default=list(LENGTHS), help="prompt lengths in tokens")
    parser.add_argument(
        "--depths", type=int, default=NEEDLES, help=f"needles per length, spread evenly (default {NEEDLES})"
    )
    parser.add_argument("--recipes", nargs="+", default=None, help="recipe names (default: all seven)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the keys (default 0)")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"JSON file to write (default {RESULTS})")
    parser.add_argument("--merge", action="store_true", help="keep the trials already in --out, run the others")
    parser.add_argument("--time-budget", type=float, default=None, help="stop starting trials after this many s")
    parser.add_argument("--wording", default=WORDING, choices=list(WORDINGS), help=f"prompt (default {WORDING!r})")
    parser.add_argument(
        "--choose-wording",
        type=int,
        default=None,
        metavar="LENGTH",
        help="first try every wording with plain RoPE at LENGTH tokens and keep the one found most often",
    )
    parser.add_argument(
        "--new-tokens", type=int, default=ANSWER_TOKENS, help=f"tokens per answer (default {ANSWER_TOKENS})"
    )
    parser.add_argument("--batch", type=int, default=BATCH, help=f"prompts of one length in a batch (default {BATCH})")
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda when there is one)")
    parser.add_argument(
        "--remeasure",
        action="store_true",
        help="the re-measurement of issue 33 into the library's file: replace a grid of another protocol, else "
        f"--merge; --time-budget {REMEASURE_BUDGET:g} unless given; run again until it prints 'grid complete'",
    )
    args = parser.parse_args(argv)
    carried: dict[str, object] = {}
    if args.remeasure:
        if args.out.exists():
            kept = json.loads(args.out.read_text())
            same = (kept.get("new_tokens"), kept.get("judging"), kept.get("recipes")) == (
                args.new_tokens,
                JUDGING,
                grid_recipes(),
            )
            args.merge = same
            if not same:  # the grid of an older protocol: keep how its wording was chosen, and what it was
                carried = {
                    "wording_trial": kept.get("wording_trial"),
                    "replaces": {k: kept.get(k) for k in ("new_tokens", "judging", "recipes", "runs")},
                }
        args.time_budget = REMEASURE_BUDGET if args.time_budget is None else args.time_budget

    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    recipes = grid_recipes()
    names = args.recipes or list(recipes)
    unknown = sorted(set(names) - set(recipes))
    if unknown:
        parser.error(f"unknown recipe(s) {unknown}; the grid knows {list(recipes)}")
    depths = needle_depths(args.depths)
    plan = [
        (n, d, key, name)
        for n in args.lengths
        for d, key in zip(depths, length_keys(n, len(depths), args.seed), strict=True)
        for name in names
    ]
    old = (
        json.loads(args.out.read_text()) if args.merge and args.out.exists() else {"runs": [], "trials": [], **carried}
    )
    if old["trials"] and (old.get("new_tokens"), old.get("judging")) != (args.new_tokens, JUDGING):
        parser.error(
            f"{args.out} holds answers of {old.get('new_tokens')} tokens judged by {old.get('judging')!r}; "
            f"--merge would mix them with answers of {args.new_tokens} judged by {JUDGING!r}: write to a new --out"
        )
    done = {(t["n_tokens"], t["depth"], t["key"], t["recipe"]) for t in old["trials"]}
    todo = [p for p in plan if p not in done]

    start = time.perf_counter()
    model, tokenizer = load_smollm2(device=device)
    model.set_attn_implementation("sdpa")
    if device.type == "cuda":
        efficient_attention_on_cuda()
    load_seconds = time.perf_counter() - start
    wording, tried = args.wording, {}
    if args.choose_wording is not None:
        n = args.choose_wording
        for name in WORDINGS:
            tried[name] = sum(
                passkey_trial(model, tokenizer, n, d, key, None, new_tokens=args.new_tokens, wording=name).found
                for d, key in zip(depths, length_keys(n, len(depths), args.seed + 1), strict=True)
            )
        wording = max(tried, key=tried.get)
        print(f"plain RoPE at {n} tokens, found out of {len(depths)} (other keys): {tried}; keeping {wording!r}")
    trials: list[dict] = []
    peaks: dict[str, float] = {}  # prompt length → GiB of GPU memory at its batches' peak (GPU only)
    batches = needle_batches(todo, args.batch)
    for n, name, needles in tqdm(batches, desc="passkey batches", unit="batch"):
        if args.time_budget is not None and time.perf_counter() - start > args.time_budget:
            print(f"time budget reached: {len(todo) - len(trials)} trials left for a --merge run", flush=True)
            break
        if device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(device)
        depths_, keys = [d for d, _ in needles], [k for _, k in needles]
        found = passkey_trials(
            model, tokenizer, n, depths_, keys, recipes[name], name, new_tokens=args.new_tokens, wording=wording
        )
        trials += [r.as_dict() for r in found]
        if device.type == "cuda":
            peaks[str(n)] = max(peaks.get(str(n), 0.0), peak_memory(device))
        # written after every batch, so that a sitting stopped from outside keeps what it measured
        grid_file(args, old, wording, tried, trials, argv, device, load_seconds, peaks)
    result = grid_file(args, old, wording, tried, trials, argv, device, load_seconds, peaks)
    run = result["runs"][-1]
    table = summary(result["trials"])
    for n in sorted({n for n, _ in table}):
        print(f"{n:>6d}  " + "  ".join(f"{r}: {f}/{c}" for (m, r), (f, c) in table.items() if m == n))
    print(f"{len(trials)} trials in {run['trial_seconds']} s on {run['device']}; {len(result['trials'])} in {args.out}")
    left = len(todo) - len(trials)
    print(f"{left} trials left: run the same command again" if left else "grid complete")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
