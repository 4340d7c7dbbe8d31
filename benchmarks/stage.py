"""Run one stage of ``make test`` and record its seconds in ``test-artifacts/stages.tsv``.

``make test`` runs each of its stages through this, so that every run leaves its own timings behind;
``python -m benchmarks.suite`` turns them into the table the README shows. The command's exit status is
passed on, and a failed stage is recorded as such.

    python -m benchmarks.stage [--first] NAME COMMAND [ARGUMENT ...]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

RECORD = Path("test-artifacts") / "stages.tsv"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--first", action="store_true", help="the run's first stage: start a new record")
    parser.add_argument("name", help="the stage's name, as the table shows it")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command to run")
    args = parser.parse_args(argv)
    start = time.monotonic()
    code = subprocess.run(args.command).returncode
    seconds = time.monotonic() - start
    RECORD.parent.mkdir(exist_ok=True)
    with RECORD.open("w" if args.first else "a", encoding="utf-8") as record:
        record.write(f"{args.name}\t{seconds:.1f}\t{'ok' if code == 0 else f'failed ({code})'}\n")
    return code


if __name__ == "__main__":
    sys.exit(main())
