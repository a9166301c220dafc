"""Randomized fuzzing of both webhooks against the real service (issue 18).

`make fuzz` runs `python -m scripts.fuzz --seconds $(FUZZ_SECONDS)`; `FUZZ_SEED=N` reruns
from a given batch seed. It starts a private redis-server, the fake Slack, an embedded
Qdrant holding golden/runbooks and `python -m enricher` (as chaos does: scripts/chaos), then
sends random hostile bodies (tests/payloads.py: the strategies of tests/reliability/
test_fuzz.py, there derandomized) with valid credentials until the time is up, and waits
for the workers to finish every body they accepted.

It fails (exit 1) when a body gets a 5xx or the enricher dies (hypothesis shrinks that body:
the batch seed is printed and the body kept in the work folder); when an answer comes later
than 10 s, Alertmanager's cut-off (the seeds of those batches are printed: the body that
froze the service may have been sent before); and when a worker crashes, dead-letters or
never finishes an accepted body, or a request raises out of the app. The last line counts
the answers per endpoint and status code ("timeout": none within 120 s).
"""

from __future__ import annotations

import argparse
import random
import shutil
import sys
import tempfile
from pathlib import Path

from scripts.fuzz.run import failed, run, summary


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m scripts.fuzz", description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=60, help="how long to send bodies")
    p.add_argument("--seed", type=int, default=None, help="first batch seed (default: random)")
    p.add_argument("--examples", type=int, default=50, help="bodies per hypothesis batch")
    p.add_argument("--keep", action="store_true", help="keep the work folder (enricher log)")
    args = p.parse_args(argv)
    first_seed = args.seed if args.seed is not None else random.randrange(1_000_000)
    work = Path(tempfile.mkdtemp(prefix="rbe-fuzz-"))
    tally = run(args.seconds, first_seed, args.examples, work)
    reasons = failed(tally)
    if tally.failing_body:
        (work / "failing-body.bin").write_bytes(tally.failing_body)
    if reasons:
        print("fuzz FAILED:\n  " + "\n  ".join(reasons), file=sys.stderr)
        if tally.failed_seed is not None:
            print(f"rerun that batch: make fuzz FUZZ_SEED={tally.failed_seed}", file=sys.stderr)
    if args.keep or reasons:
        print(f"work folder kept: {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    print(summary(tally, args.seconds, first_seed), flush=True)
    return 1 if reasons else 0


if __name__ == "__main__":
    sys.exit(main())
