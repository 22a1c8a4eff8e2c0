#!/usr/bin/env bash
# Runs the failure tests over and over and prints, per case, how the job
# ended each time (bench/recovery/soak_summary.py): the partition cases (10 s ones
# RUNS times, the 60 s one RUNS_LONG times), the coordinator outage
# (SIGSTOP) and the worker kill -9, RUNS times each. Not part of the test
# command: 20 runs of every case take a few hours on 2 cores. The partition
# cases need root (they skip, saying why, without it).
#   bench/recovery/soak.sh                      # RUNS=20 RUNS_LONG=5
#   RUNS=3 RUNS_LONG=1 bench/recovery/soak.sh   # a quick look
set -uo pipefail
cd "$(dirname "$0")/../.."
RUNS=${RUNS:-20}
RUNS_LONG=${RUNS_LONG:-5}
. scripts/bazel_output.sh

short=(//tests/partition:coordinator_partition_test
  //tests/partition:worker_partition_test
  //tests/partition:heartbeat_loss_test
  //tests/integration:coordinator_outage_test
  //tests/integration:worker_failure_test)
long=(//tests/partition:coordinator_long_partition_test)
common=(-c fastbuild --nocache_test_results --keep_going
  --test_output=summary "${BAZEL_QUIET[@]}")

bazel test "${common[@]}" --runs_per_test="$RUNS" "${short[@]}"
if ((RUNS_LONG > 0)); then
  bazel test "${common[@]}" --runs_per_test="$RUNS_LONG" "${long[@]}"
fi
paths=()
for t in "${short[@]}" "${long[@]}"; do paths+=("${t#//}"); done
paths=("${paths[@]/://}")
python3 bench/recovery/soak_summary.py --jsonl bench/results/soak.jsonl \
  "$(bazel info -c fastbuild bazel-testlogs 2>/dev/null)" "${paths[@]}"
