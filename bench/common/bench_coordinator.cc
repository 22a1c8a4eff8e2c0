#include "bench/common/bench_coordinator.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace ringleader::bench {

absl::StatusOr<BenchCoordinator> StartBenchCoordinator(
    std::string binary, const std::string& dir,
    const std::vector<std::string>& flags) {
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  if (binary.empty()) {
    binary = testing::RunfilePath("coordinator/ringleader-coordinator");
  }
  const std::string port_file = dir + "/port";
  std::vector<std::string> argv = {binary, "--listen=127.0.0.1:0",
                                   "--state=" + dir + "/state.db",
                                   "--port_file=" + port_file};
  argv.insert(argv.end(), flags.begin(), flags.end());
  testing::ProcessOptions po;
  po.stderr_path = dir + "/coordinator.log";
  po.stdout_path = dir + "/coordinator.out";
  BenchCoordinator out;
  absl::StatusOr<std::unique_ptr<testing::Subprocess>> process =
      testing::Subprocess::Start(argv, po);
  if (!process.ok()) return process.status();
  out.process = *std::move(process);
  absl::StatusOr<int> port =
      testing::WaitForPortFile(port_file, absl::Seconds(30), out.process.get());
  if (!port.ok()) return port.status();
  out.target = absl::StrCat("127.0.0.1:", *port);
  return out;
}

}  // namespace ringleader::bench
