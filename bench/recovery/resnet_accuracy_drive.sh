#!/usr/bin/env bash
# One ResNet run of the accuracy investigation (bench/README.md, recovery_bench):
# a coordinator, the example ResNet job (bench/common/lib.sh subsets, one epoch,
# checkpoints every $CKPT_EVERY steps, default 50) and WORKERS workers, a
# kill -9 of worker VICTIM when a log shows the batch of step KILL_STEP
# (0: none), REPLACE=1 starts a replacement. Needs the -c opt binaries
# (build_opt) and /tmp/racc/resnet (prepare_example resnet with TMP=/tmp/racc).
# drive.sh NAME WORKERS MODE KILL_STEP VICTIM SEED [MINW]
# WORKERS started; job min_workers MINW (default 2), max_workers WORKERS.
set -uo pipefail
cd "$(dirname "$0")/../.."
NAME=$1 NW=$2 MODE=$3 KSTEP=$4 VICTIM=$5 SEED=$6 MINW=${7:-2}
export TMP=/tmp/racc PY=/usr/bin/python3 RESNET_TRAIN=12800 RESNET_TEST=1000 M=resnet
. bench/common/lib.sh
BIN="$(bazel info -c opt --symlink_prefix=/ bazel-bin 2>/dev/null)"
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 GLOG_vmodule=trainer=1
RUN=/tmp/racc/runs/$NAME; rm -rf "$RUN"; mkdir -p "$RUN/ckpt"
start_coordinator "$RUN"
example_spec "$RUN/job.textproto" "$NW" 64 auto
sed -i "s/^min_workers:.*/min_workers: $MINW/; s/^max_workers:.*/max_workers: $NW/; s/^seed:.*/seed: $SEED/" "$RUN/job.textproto"
printf 'max_restarts: 100\ncheckpoint_dir: "%s"\ncheckpoint_every_steps: %s\n' "$RUN/ckpt" "${CKPT_EVERY:-50}" >> "$RUN/job.textproto"
JOB=$("$BIN/cli/ringctl" --coordinator="$TARGET" submit --file="$RUN/job.textproto")
WPIDS=()
for r in $(seq $NW); do
  flags=(--coordinator="$TARGET" --threads=1 --max_jobs=1)
  [[ $MODE == disk ]] && flags+=(--recover_from_peers=false)
  "$BIN/worker/ringleader-worker" "${flags[@]}" >"$RUN/worker-$r.log" 2>&1 &
  WPIDS+=($!)
done
"$BIN/cli/ringctl" --coordinator="$TARGET" --output=json watch "$JOB" >"$RUN/watch.jsonl" 2>/dev/null &
WATCH=$!
if [[ $KSTEP -gt 0 ]]; then
  for _ in $(seq 3000); do
    grep -q "samples generation=1 .* step=$KSTEP " "$RUN"/worker-*.log 2>/dev/null && break
    sleep 0.1
  done
  if [[ $VICTIM == r0 ]]; then  # the worker that is rank 0 in generation 1
    VICTIM=$(grep -l "generation 1: rank 0 of" "$RUN"/worker-*.log | sed 's/.*worker-\([0-9]\)\.log/\1/')
  fi
  kill -9 "${WPIDS[$((VICTIM - 1))]}"; echo "killed worker $VICTIM at step $KSTEP" > "$RUN/kill"
  if [[ -n ${REPLACE:-} ]]; then
    flags=(--coordinator="$TARGET" --threads=1 --max_jobs=1)
    [[ $MODE == disk ]] && flags+=(--recover_from_peers=false)
    "$BIN/worker/ringleader-worker" "${flags[@]}" >"$RUN/worker-r.log" 2>&1 &
    WPIDS+=($!)
  fi
fi
for _ in $(seq 3000); do kill -0 $WATCH 2>/dev/null || break; sleep 0.1; done
kill $WATCH 2>/dev/null
sleep 1
for p in "${WPIDS[@]}"; do kill -9 $p 2>/dev/null; done
wait "${WPIDS[@]}" 2>/dev/null
kill $COORD; wait $COORD 2>/dev/null
echo "== $NAME"; cat "$RUN/kill" 2>/dev/null
grep -h "state digest\|recovers from\|resumes from\|done: \|generation [0-9]*: rank" "$RUN"/worker-*.log | sed 's/^.*\] //' | sort | uniq
tail -n 1 "$RUN/watch.jsonl" | $PY -c 'import json,sys; j=json.loads(sys.stdin.read()); print("ACC", j.get("state") or j.get("job",{}).get("state"), j.get("progress",j).get("testAccuracy") if isinstance(j,dict) else None)' 2>/dev/null || true
grep -o '"testAccuracy":[0-9.]*' "$RUN/watch.jsonl" | tail -1
