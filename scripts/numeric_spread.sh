#!/usr/bin/env bash
# The spread of every bounded trained result (issue 49; tests/README.md,
# "Bounds on trained results"): runs the numeric tests again under each of
# OpenBLAS's kernel families this CPU can run (OPENBLAS_CORETYPE: Debian's
# OpenBLAS is DYNAMIC_ARCH and then computes as that CPU would) and under
# other training seeds (RINGLEADER_TEST_SEED_OFFSET, tests/testing/
# numeric_bounds.h), and collects the "NUMERIC name value" lines the tests
# print into one JSON line per value:
#   {"family": ..., "seed_offset": ..., "target": ..., "name": ...,
#    "value": ..., "passed": ...}
# Then prints the table (scripts/numeric_spread_summary.py).
#
#   scripts/numeric_spread.sh                  # every family, seed offset 0,
#                                              # and offsets 1..4 on the default
#   FAMILIES="Haswell Zen" SEEDS="0 1" TARGETS="//tests/integration:fashion_mnist_test" \
#     scripts/numeric_spread.sh
# RESULTS (default bench/results/numeric_spread.jsonl) is appended to.
set -uo pipefail
cd "$(dirname "$0")/.."
RESULTS="${RESULTS:-bench/results/numeric_spread.jsonl}"
# The tests whose bounds are on trained results and not exact by
# construction (tests/README.md lists them all, exact ones included).
TARGETS="${TARGETS:-//tests/integration:fashion_mnist_test //tests/integration:chaos_test //tests/integration:compression_test //tests/integration:elastic_test //tests/integration:workloads_test //tests/integration:image_data_test //tests/integration:worker_failure_test //tests/integration:hung_worker_test //tests/slurm:slurm_test python}"

# The kernel families this CPU runs (by its flags): forcing one it cannot
# run would stop on an illegal instruction.
flags=" $(grep -m1 '^flags' /proc/cpuinfo) "
supported=()
has() { [[ $flags == *" $1 "* ]]; }
has pni && supported+=(Prescott)  # SSE3's name in /proc/cpuinfo
has sse4_2 && supported+=(Nehalem)
has avx && supported+=(Sandybridge)
has avx2 && has fma && supported+=(Haswell Zen)
has avx512f && has avx512bw && supported+=(SkylakeX)
has avx512_bf16 && supported+=(Cooperlake)
default_core=$(OPENBLAS_VERBOSE=2 /usr/bin/python3 -c 'import numpy' 2>&1 |
  sed -n 's/^Core: //p' | head -1)
echo "numeric_spread: CPU $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs); OpenBLAS picks ${default_core:-?}; can run: ${supported[*]}"
FAMILIES="${FAMILIES:-${supported[*]}}"
SEEDS="${SEEDS:-1 2 3 4}"

# One run of every target under family $1 and seed offset $2.
run_once() {
  local family=$1 seed=$2 target log
  local env=(--test_env=RINGLEADER_TEST_SEED_OFFSET="$seed")
  [[ $family != default ]] && env+=(--test_env=OPENBLAS_CORETYPE="$family")
  local cc=()
  for target in $TARGETS; do [[ $target == python ]] || cc+=("$target"); done
  if ((${#cc[@]})); then
    bazel test "${cc[@]}" "${env[@]}" --nocache_test_results \
      --test_output=summary >/dev/null 2>&1
    for target in "${cc[@]}"; do
      log="$(bazel info -c fastbuild bazel-testlogs 2>/dev/null)/${target#//}"
      log="${log/://}/test.log"
      collect "$family" "$seed" "$target" "$log"
    done
  fi
  if [[ " $TARGETS " == *" python "* ]]; then
    log="$(mktemp)"
    OPENBLAS_CORETYPE=$([[ $family != default ]] && echo "$family") \
      RINGLEADER_TEST_SEED_OFFSET="$seed" \
      bash scripts/python_tests.sh -s -k "fit" >"$log" 2>&1
    collect "$family" "$seed" python "$log"
    rm -f "$log"
  fi
}

# The NUMERIC lines of one log, and whether its test passed, as JSON lines.
collect() {
  /usr/bin/python3 - "$@" "$RESULTS" <<'PY'
import json, re, sys
family, seed, target, log, out = sys.argv[1:]
try:
    text = open(log, errors="replace").read()
except OSError:
    text = ""
passed = not re.search(r"\[  FAILED  \]|^FAILED |\d+ failed", text, re.M)
with open(out, "a") as f:
    for name, value in re.findall(r"NUMERIC (\S+) (\S+)$", text, re.M):
        row = {"family": family, "seed_offset": int(seed), "target": target,
               "name": name, "value": float(value), "passed": passed}
        f.write(json.dumps(row) + "\n")
        print(json.dumps(row))
PY
}

for family in $FAMILIES; do run_once "$family" 0; done
for seed in $SEEDS; do run_once default "$seed"; done
/usr/bin/python3 scripts/numeric_spread_summary.py "$RESULTS"
