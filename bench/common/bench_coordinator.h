#ifndef RINGLEADER_BENCH_BENCH_COORDINATOR_H_
#define RINGLEADER_BENCH_BENCH_COORDINATOR_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "tests/testing/process.h"

namespace ringleader::bench {

// A real coordinator process for a benchmark, on a loopback port the OS
// picks, its SQLite state and logs in `dir` (emptied first).
struct BenchCoordinator {
  std::unique_ptr<testing::Subprocess> process;
  std::string target;  // 127.0.0.1:PORT
};

// `binary`: empty for the runfiles' //coordinator:ringleader-coordinator.
// `flags` are added to --listen, --state and --port_file.
absl::StatusOr<BenchCoordinator> StartBenchCoordinator(
    std::string binary, const std::string& dir,
    const std::vector<std::string>& flags);

}  // namespace ringleader::bench

#endif  // RINGLEADER_BENCH_BENCH_COORDINATOR_H_
