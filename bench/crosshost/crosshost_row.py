"""One job of bench/crosshost/crosshost_bench.sh as a JSON line: ROW (the JSON line of
train_watch.py for Ringleader or of train_ddp.py for PyTorch DDP) with
FIELD=VALUE tags added (numbers where they parse as numbers) and, given a
Ringleader job's timeline directory, rank 0's per-step figures over steps 21
to 200 (compression_row.timeline_stats: bytes and buckets all-reduced per
step, the wait for the last buckets after backward, the step time).
    crosshost_row.py ROW.json [--timeline DIR] FIELD=VALUE...
A missing or empty ROW (a run that failed) gives a line with samples_per_s 0
and "failed": true, so the summary can say what is missing.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "allreduce"))
import compression_row  # noqa: E402


def tag_value(text):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def main(argv):
    row_path, rest = argv[0], argv[1:]
    timeline = None
    if rest[:1] == ["--timeline"]:
        timeline, rest = rest[1], rest[2:]
    try:
        with open(row_path) as f:
            row = json.loads(f.read().strip().splitlines()[-1])
    except (OSError, ValueError, IndexError):
        row = {"samples_per_s": 0.0, "failed": True}
    for tag in rest:
        name, sep, value = tag.partition("=")
        if not sep:
            sys.exit(f"crosshost_row.py: tags are FIELD=VALUE, got {tag!r}")
        row[name] = tag_value(value)
    if timeline:
        row.update(compression_row.timeline_stats(timeline))
    print(json.dumps(row))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
