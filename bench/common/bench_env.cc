#include "bench/common/bench_env.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ringleader::bench {

void SetUpRunfiles(const char* argv0) {
  if (std::getenv("TEST_SRCDIR") != nullptr ||
      std::getenv("RUNFILES_DIR") != nullptr) {
    return;
  }
  std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  for (const std::string& candidate :
       {absl::StrCat(argv0, ".runfiles"), absl::StrCat(self, ".runfiles")}) {
    if (std::filesystem::is_directory(candidate)) {
      setenv("RUNFILES_DIR",
             std::filesystem::absolute(candidate).string().c_str(), 1);
      return;
    }
  }
}

std::string ResultsDir(const std::string& flag) {
  std::string dir = flag;
  if (dir.empty()) {
    const char* ws = std::getenv("BUILD_WORKSPACE_DIRECTORY");
    dir = absl::StrCat(ws != nullptr ? ws : ".", "/bench/results");
  }
  std::filesystem::create_directories(dir);
  return dir;
}

double ProcessCpuSeconds(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
  std::string line;
  if (!std::getline(in, line)) return -1;
  // Fields after the command name (which may hold spaces) in parentheses.
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return -1;
  std::vector<std::string> f =
      absl::StrSplit(line.substr(close + 2), ' ', absl::SkipEmpty());
  // f[0] is field 3 (state); utime is field 14, stime 15.
  if (f.size() < 13) return -1;
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  return (std::strtod(f[11].c_str(), nullptr) +
          std::strtod(f[12].c_str(), nullptr)) /
         ticks;
}

double LoadAverage1() {
  std::ifstream in("/proc/loadavg");
  double l = 0;
  in >> l;
  return l;
}

std::string MachineDescription() {
  std::string model;
  std::ifstream cpu("/proc/cpuinfo");
  for (std::string line; std::getline(cpu, line);) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  return absl::StrCat(std::thread::hardware_concurrency(), " cores, ", model);
}

std::string UtcNow() {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(),
                          absl::UTCTimeZone());
}

double Percentile(std::vector<double>& v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t rank = static_cast<size_t>(std::ceil(p / 100.0 * v.size()));
  rank = std::clamp<size_t>(rank, 1, v.size());
  return v[rank - 1];
}

double Median(std::vector<double> v) { return Percentile(v, 50); }

}  // namespace ringleader::bench
