#ifndef RINGLEADER_BENCH_BENCH_ENV_H_
#define RINGLEADER_BENCH_BENCH_ENV_H_

// Small helpers shared by the control-plane and failure-detection
// benchmarks: where the runfiles and the results directory are, a process's
// CPU time, the machine's load, percentiles.

#include <string>
#include <vector>

#include "sys/types.h"

namespace ringleader::bench {

// Under `bazel run`, makes tests/testing's RunfilePath find the binary's
// data dependencies (sets RUNFILES_DIR from argv[0] when unset).
void SetUpRunfiles(const char* argv0);

// `flag` if set; else <workspace>/bench/results under `bazel run`
// ($BUILD_WORKSPACE_DIRECTORY); else ./bench/results. Created if missing.
std::string ResultsDir(const std::string& flag);

// utime + stime of `pid` in seconds (from /proc/<pid>/stat), or -1.
double ProcessCpuSeconds(pid_t pid);

// The 1-minute load average, and a one-line machine description.
double LoadAverage1();
std::string MachineDescription();
std::string UtcNow();  // 2026-12-02T15:40:00Z

// Nearest-rank percentile (p in [0, 100]) of `v` (sorted in place); 0 if
// empty.
double Percentile(std::vector<double>& v, double p);
double Median(std::vector<double> v);

}  // namespace ringleader::bench

#endif  // RINGLEADER_BENCH_BENCH_ENV_H_
