#include "tests/worker/data/npy_test_files.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/worker/data/test_files.h"
#include "worker/data/npy_header.h"

namespace ringleader {
namespace testing_files {

std::string NpyBytes(NpyDtype dtype, const std::vector<int64_t>& shape,
                     const std::string& data) {
  return FormatNpyHeader(dtype, shape) + data;
}

std::string NpyWithDict(const std::string& dict, const std::string& data,
                        int major) {
  std::string out("\x93NUMPY", 6);
  out.push_back(static_cast<char>(major));
  out.push_back(0);
  const size_t len = dict.size();
  const int len_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < len_bytes; ++i) {
    out.push_back(static_cast<char>((len >> (8 * i)) & 0xff));
  }
  return out + dict + data;
}

std::string WriteTemp(const std::string& name, const std::string& bytes) {
  const std::string path = TempPath(name);
  WriteFile(path, bytes);
  return path;
}

bool RunPython(const std::string& script) {
  const std::string path = TempPath("script.py");
  WriteFile(path, script);
  const pid_t pid = fork();
  if (pid == 0) {
    execl("/usr/bin/python3", "python3", path.c_str(),
          static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return false;
  return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

bool HaveNumpy(std::string& why) {
  if (access("/usr/bin/python3", X_OK) != 0) {
    why = "/usr/bin/python3 is not installed";
    return false;
  }
  if (!RunPython("import numpy\n")) {
    why = "/usr/bin/python3 has no numpy (apt-get install python3-numpy)";
    return false;
  }
  return true;
}

}  // namespace testing_files
}  // namespace ringleader
