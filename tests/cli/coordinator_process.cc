#include "tests/cli/coordinator_process.h"

#include <stdlib.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace ringleader::testing {

absl::StatusOr<std::unique_ptr<CoordinatorProcess>> CoordinatorProcess::Start(
    const Options& options) {
  std::string templ = TestTempDir() + "/coordinator.XXXXXX";
  if (mkdtemp(templ.data()) == nullptr) {
    return absl::InternalError(
        absl::StrCat("mkdtemp ", templ, ": ", std::strerror(errno)));
  }
  const std::string dir = templ;
  const std::string port_file = dir + "/port";
  std::vector<std::string> argv = {
      options.binary.empty() ? RunfilePath("coordinator/ringleader-coordinator")
                             : options.binary,
      "--listen=127.0.0.1:0", "--state=" + dir + "/state.db",
      "--port_file=" + port_file};
  argv.insert(argv.end(), options.extra_flags.begin(),
              options.extra_flags.end());
  ProcessOptions popts;
  popts.stderr_path = dir + "/coordinator.log";
  popts.stdout_path = dir + "/coordinator.out";
  absl::StatusOr<std::unique_ptr<Subprocess>> process =
      Subprocess::Start(argv, popts);
  if (!process.ok()) return process.status();
  absl::StatusOr<int> port =
      WaitForPortFile(port_file, options.start_timeout, process->get());
  if (!port.ok()) {
    return absl::Status(
        port.status().code(),
        absl::StrCat("coordinator did not start: ", port.status().message(),
                     "; log: ", ReadFileOrEmpty(popts.stderr_path)));
  }
  return std::unique_ptr<CoordinatorProcess>(
      new CoordinatorProcess(dir, *std::move(process), *port));
}

std::string CoordinatorProcess::address() const {
  return absl::StrCat("127.0.0.1:", port_);
}

}  // namespace ringleader::testing
