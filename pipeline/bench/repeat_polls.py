"""More polls on a poll corpus `speedbook bench --scenario openrouter --workdir DIR` kept: for the
medians of one more poll and of nothing new at a size whose full build takes too long to repeat
(at 90 days, over an hour). Each round adds the next poll, builds (one more poll), then builds
again (nothing new), as the bench does once. Before each round it measures a floor on the same
machine at the same moment: DuckDB's `read_json` of the last day of the history's polls (the
bench's floor files), so rounds on a machine that is slower at times compare by their ratio.

    python -m pipeline.bench.repeat_polls DIR --models 400 --days 90 --rounds 3 --json FILE
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from pipeline.bench.poll_corpus import SOURCE, PollCorpus, PollSpec, add_poll
from pipeline.bench.poll_run import kept_corpus, read_json_floor
from pipeline.bench.run import checked_build
from pipeline.raw.snapshots import META_SUFFIX


def repeat_polls(workdir: Path, spec: PollSpec, rounds: int) -> dict[str, Any]:
    root, floor_files = kept_corpus(workdir)
    done = sum(1 for _ in (root / "raw" / SOURCE).glob(f"*{META_SUFFIX}"))  # polls stored
    corpus = PollCorpus(
        root=root,
        registry=root / "registry.toml",
        raw_dir=root / "raw",
        metadata_dir=root / "metadata",
        polls=done,
        members=0,
        endpoints=0,
        statistics=0,
        received_bytes=0,
    )
    polls: list[dict[str, Any]] = []
    noops: list[dict[str, Any]] = []
    # the floor's work: the same bytes every round (the history's last day of polls)
    floor_files = floor_files[-spec.polls_per_day :]
    floors: list[float] = []
    for number in range(done, done + rounds):
        if floor_files:
            floors.append(round(read_json_floor(floor_files, workdir)[1], 3))
            print(f"read_json floor: {floors[-1]} s ({len(floor_files)} polls)")
        corpus = add_poll(corpus, spec, number)
        poll = checked_build(corpus, workdir / "exports", f"poll-{number}", "one more poll", print)
        polls.append(
            {
                "wall_s": poll.wall_s,
                "stages": poll.stages,
                "peak": poll.peak_rss_mib,
                "spare_update_s": poll.spare_update_s,  # waited for after the build
            }
        )
        noop = checked_build(corpus, workdir / "exports", f"noop-{number}", "nothing new", print)
        noops.append({"wall_s": noop.wall_s, "skipped": noop.skipped, "peak": noop.peak_rss_mib})
    poll_median = statistics.median(p["wall_s"] for p in polls)
    floor_median = statistics.median(floors) if floors else None
    return {
        "polls_before": done,
        "poll_build_s": [p["wall_s"] for p in polls],
        "poll_build_median_s": poll_median,
        "floor_read_json_s": floors,  # before each round; empty without the bench's floor files
        "floor_read_json_median_s": floor_median,
        "poll_to_floor_ratio": round(poll_median / floor_median, 2) if floor_median else None,
        "noop_build_s": [n["wall_s"] for n in noops],
        "noop_build_median_s": statistics.median(n["wall_s"] for n in noops),
        "peak_rss_mib": max(r["peak"] for r in polls + noops),
        "polls": polls,
        "noops": noops,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m pipeline.bench.repeat_polls", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("workdir", type=Path, help="the --workdir of a poll bench, kept")
    parser.add_argument("--models", type=int, default=400, help="as the bench ran (400)")
    parser.add_argument("--days", type=int, default=90, help="as the bench ran (90)")
    parser.add_argument("--polls-per-day", type=int, default=48, help="as the bench ran (48)")
    parser.add_argument("--rounds", type=int, default=3, help="polls to add (3)")
    parser.add_argument("--json", type=Path, help="write the results as JSON")
    args = parser.parse_args(argv)
    spec = PollSpec(models=args.models, days=args.days, polls_per_day=args.polls_per_day)
    result = repeat_polls(args.workdir, spec, args.rounds)
    text = json.dumps(result, indent=2)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
