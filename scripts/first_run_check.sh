#!/usr/bin/env bash
# What a new user sees, checked (issue 15). Three JUnit cases for
# tools/count_tests.py, run by scripts/test.sh after the tests:
#   build_output       the log of test.sh's own `bazel build //...` (given as
#                      $1) is short and free of Bazel's sandbox tracing
#   demo_output        scripts/demo.sh, the README's first command, run off a
#                      terminal on a small synthetic job: it succeeds and
#                      prints the coordinator, the workers, a bounded number
#                      of progress lines and the final result
#   daemons_optimized  the binaries the README and deploy files build compile
#                      with -O2 and NDEBUG by default (bazel aquery; no build)
# FIRST_RUN_XML=PATH writes the cases.
set -uo pipefail
cd "$(dirname "$0")/.."
. scripts/junit.sh
build_log="${1:?usage: first_run_check.sh BUILD_LOG}"
# A cold build prints about one progress line a minute (scripts/bazel_output.sh)
# plus Bazel's fixed dozen; the sandbox tracing was about 40 lines an action.
max_build_lines=80
max_demo_lines=40

check_begin "${FIRST_RUN_XML:-}" first_run build_output first_run
lines=$(wc -l <"$build_log")
if grep -q "src/main/tools/" "$build_log"; then
  check_failed "the build printed Bazel's sandbox tracing ($(grep -c src/main/tools/ "$build_log") lines)"
elif ((lines > max_build_lines)); then
  check_failed "the build printed $lines lines (at most $max_build_lines)"
else
  echo "first_run: the build printed $lines lines"
  check_pass
fi

check_next demo_output first_run
work="$(mktemp -d "${TMPDIR:-/tmp}/ringleader-first-run.XXXXXX")"
trap 'rm -rf "$work"' EXIT
cat >"$work/job.textproto" <<'JOB'
name: "first-run-check"
model { arch: MODEL_ARCH_MLP }
dataset {
  format: DATASET_FORMAT_SYNTHETIC
  synthetic_train_size: 16384
  synthetic_test_size: 512
  shuffle: true
}
optimizer { kind: OPTIMIZER_KIND_SGD learning_rate: 0.05 momentum: 0.9 }
epochs: 2
batch_size: 32
min_workers: 2
max_workers: 2
seed: 7
progress_every_steps: 2
JOB
# Piped, so the demo runs off a terminal as in CI's log.
DEMO_BAZEL_FLAGS="-c fastbuild" JOB_FILE="$work/job.textproto" \
  timeout 300 bash scripts/demo.sh 2>&1 | cat >"$work/demo.out"
demo_rc=${PIPESTATUS[0]}
demo_lines=$(wc -l <"$work/demo.out")
missing=""
# The progress lines read "RUNNING gen 1 world 2 epoch 1/2 [###---] 15.6% 20/128 loss ...".
for want in "coordinator on " "worker 1 started" "worker 2 started" \
  "submitted " "dashboard: http://127.0.0.1:[0-9]+/jobs/" \
  "RUNNING .* [0-9]+/512 loss" "job .* SUCCEEDED" "final .*accuracy"; do
  grep -Eq "$want" "$work/demo.out" || missing+=" /$want/"
done
if ((demo_rc != 0)) || [[ -n $missing ]] || ((demo_lines > max_demo_lines)); then
  cat "$work/demo.out" >&2
  check_failed "demo.sh exit $demo_rc, $demo_lines lines (at most $max_demo_lines), missing:${missing:- nothing}"
else
  echo "first_run: demo.sh printed $demo_lines lines and succeeded"
  check_pass
fi

check_next daemons_optimized first_run
unoptimized=""
for target in //coordinator:ringleader-coordinator //worker:ringleader-worker \
  //cli:ringctl; do
  # Depth 1: a binary whose main is a library of its own (the coordinator's,
  # //coordinator/server:coordinator_main) compiles nothing itself.
  cmd=$(bazel aquery --output=text "mnemonic(\"CppCompile\", deps($target, 1))" 2>/dev/null |
    grep -m1 "Command Line:" -A200 | tr '\n' ' ')
  [[ $cmd == *" -O2 "* && $cmd == *" -DNDEBUG "* ]] || unoptimized+=" $target"
done
if [[ -n $unoptimized ]]; then
  check_failed "not built with -O2 -DNDEBUG by default:$unoptimized"
else
  echo "first_run: the daemons and ringctl build optimized by default"
  check_pass
fi
check_status
