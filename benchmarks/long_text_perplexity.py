"""SmolLM2's loss along a long public-domain text, past its 8,192-token context, under every recipe.

The text is the Book of Genesis in the King James Version (1611, public domain), shipped in
``benchmarks/data/genesis_kjv.txt``: taken from Debian's ``bible-kjv-text`` package (4.38), one
paragraph per chapter, verse numbers removed. One window of ``--tokens`` tokens from its start is
read in one pass under each recipe of :func:`transformerland.passkey.long_context_recipes` (plain
RoPE; linear, NTK-aware, YaRN and Llama 3 at factor 4; dynamic NTK at factors 1 and 4, each at the
window's length), and the next-token loss of every prediction is averaged over runs of
``--bucket`` positions (:func:`transformerland.experiments.long_text.token_losses`).

A causal model's prediction at position ``p`` depends only on tokens ``0 … p``, so for every recipe
but dynamic NTK (whose frequencies depend on the whole input's length) the loss at ``p`` is the same
in a shorter window; ``tests/test_long_text.py`` re-runs the first 9,216 tokens under plain RoPE and
compares them with the file.

Writes a JSON file (by default the library's ``data/long_text_losses.json``, which chapter 8 reads with
:func:`transformerland.experiments.long_text.load_long_text_losses`) with the losses and the provenance of each
sitting (date, commit, command, device, versions, seconds). The file is rewritten after every recipe,
and ``--merge`` keeps the recipes already in it, so a run cut short loses at most one recipe.

On a 2-core CPU one pass of 16,384 tokens takes minutes; on a GPU, seconds.

    python -m benchmarks.long_text_perplexity                              # every recipe, 16,384 tokens
    python -m benchmarks.long_text_perplexity --recipes "plain RoPE" --tokens 9216 --out /tmp/plain.json
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch
from transformerland.experiments.long_text import bucket_means, token_losses
from transformerland.llm import load_smollm2
from transformerland.passkey import long_context_recipes, rope_recipe

from benchmarks.provenance import ROOT, sitting

CONTEXT = 8192
TEXT = ROOT / "benchmarks" / "data" / "genesis_kjv.txt"
SOURCE = (
    "The Book of Genesis, King James Version (1611, public domain), from Debian's bible-kjv-text 4.38: "
    "one paragraph per chapter, verse numbers removed (benchmarks/data/genesis_kjv.txt)"
)
RESULTS = ROOT / "lib" / "transformerland" / "data" / "long_text_losses.json"


def text_ids(tokenizer: object, tokens: int) -> torch.Tensor:
    """The first ``tokens`` tokens of the text, ``(1, tokens)``."""
    ids = tokenizer(TEXT.read_text(), return_tensors="pt").input_ids  # type: ignore[operator]
    if ids.shape[1] < tokens:
        raise SystemExit(f"the text has {ids.shape[1]:,} tokens, fewer than the {tokens:,} asked for")
    return ids[:, :tokens]


def measure(model: torch.nn.Module, ids: torch.Tensor, scaling: dict | None, bucket: int) -> tuple[list[float], float]:
    """Bucketed losses of one recipe over ``ids``, and the seconds the pass took."""
    start = time.perf_counter()
    with rope_recipe(model, scaling, seq_len=ids.shape[1]):
        losses = token_losses(model, ids.to(next(model.parameters()).device))
    return [round(v, 5) for v in bucket_means(losses, bucket)], time.perf_counter() - start


def empty(tokens: int, bucket: int, words: int) -> dict:
    """The file's frame before any sitting: what will be measured, and no losses."""
    return {
        "what": "SmolLM2-135M-Instruct's next-token loss along one long text (benchmarks/long_text_perplexity.py)",
        "text": {"source": SOURCE, "words": words},
        "context": CONTEXT,
        "tokens": tokens,
        "bucket": bucket,
        "recipes": long_context_recipes(CONTEXT, 4.0),
        "measured": False,
        "losses": {},
        "seconds": {},
        "runs": [],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    recipes = long_context_recipes(CONTEXT, 4.0)
    parser.add_argument("--tokens", type=int, default=16384, help="window length in tokens (default 16,384)")
    parser.add_argument("--bucket", type=int, default=1024, help="positions per mean (default 1,024)")
    parser.add_argument("--recipes", nargs="+", default=None, help=f"recipe names (default all: {list(recipes)})")
    parser.add_argument("--out", type=Path, default=RESULTS, help=f"JSON file to write (default {RESULTS})")
    parser.add_argument("--merge", action="store_true", help="keep the recipes already in --out, run the others")
    parser.add_argument("--frame-only", action="store_true", help="write the file's frame, measure nothing")
    parser.add_argument("--device", default=None, help="cuda or cpu (default: cuda when there is one)")
    args = parser.parse_args(argv)
    names = args.recipes or list(recipes)
    unknown = sorted(set(names) - set(recipes))
    if unknown:
        parser.error(f"unknown recipe(s) {unknown}; the benchmark knows {list(recipes)}")

    result = empty(args.tokens, args.bucket, len(TEXT.read_text().split()))
    if args.merge and args.out.exists():
        old = json.loads(args.out.read_text())
        if (old["tokens"], old["bucket"]) != (args.tokens, args.bucket):
            parser.error(
                f"{args.out} holds windows of {old['tokens']} tokens in buckets of {old['bucket']}: "
                "--merge would mix them; write to a new --out"
            )
        result.update({k: old[k] for k in ("losses", "seconds", "runs")})
    if args.frame_only:
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        return 0
    device = torch.device(args.device or ("cuda" if torch.cuda.is_available() else "cpu"))
    start = time.perf_counter()
    model, tokenizer = load_smollm2(device=device)
    model.set_attn_implementation("sdpa")
    run = {
        **sitting("benchmarks.long_text_perplexity", argv, device),
        "load_seconds": round(time.perf_counter() - start, 1),
        "recipes": [],
    }
    result["runs"].append(run)
    ids = text_ids(tokenizer, args.tokens)
    for name in (n for n in names if n not in result["losses"]):
        result["losses"][name], seconds = measure(model, ids, recipes[name], args.bucket)
        result["seconds"][name] = round(seconds, 1)
        run["recipes"].append(name)
        result["measured"] = True
        args.out.write_text(json.dumps(result, indent=1) + "\n")
        shown = " ".join(f"{v:.2f}" for v in result["losses"][name])
        print(f"{name:18s} {seconds:6.1f} s  losses by {args.bucket} positions: {shown}", flush=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
