#include "common/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ringleader {
namespace {

// errno after a failed call on `file`, as a status naming both.
absl::Status Errno(absl::string_view what, const std::string& file) {
  const int e = errno;
  std::string msg = absl::StrCat(what, " ", file, ": ", std::strerror(e));
  return e == ENOENT ? absl::NotFoundError(msg) : absl::InternalError(msg);
}

// "<path>.tmp.<pid>.<n>": distinct for every writer of every process, so
// two writes of one path never share a temporary file.
std::string TempPathFor(const std::string& path) {
  static std::atomic<uint64_t> next{0};
  return absl::StrCat(path, ".tmp.", ::getpid(), ".", next++);
}

std::string DirectoryOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

// Makes the directory's entries (a rename into it) durable.
absl::Status SyncDirectory(const std::string& dir) {
  const int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Errno("cannot open directory", dir);
  absl::Status s;
  if (::fsync(fd) != 0) s = Errno("cannot fsync directory", dir);
  ::close(fd);
  return s;
}

}  // namespace

AtomicFile::AtomicFile(std::string path)
    : path_(std::move(path)), temp_path_(TempPathFor(path_)) {}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(temp_path_.c_str());
}

absl::Status AtomicFile::Fail(absl::Status s) {
  if (error_.ok()) error_ = std::move(s);
  return error_;
}

absl::Status AtomicFile::Open(bool create) {
  const int flags = O_WRONLY | O_CLOEXEC | (create ? O_CREAT | O_EXCL : 0);
  // 0666 less the umask, as any tool that creates a file.
  fd_ = ::open(temp_path_.c_str(), flags, 0666);
  if (fd_ < 0) {
    return Fail(Errno(create ? "cannot create" : "cannot open", temp_path_));
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::Append(absl::string_view data) {
  if (!error_.ok()) return error_;
  if (fd_ < 0) {
    if (absl::Status s = Open(/*create=*/true); !s.ok()) return s;
  }
  while (!data.empty()) {
    const ssize_t n = ::write(fd_, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return Fail(Errno("cannot write", temp_path_));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

absl::Status AtomicFile::Commit() {
  if (!error_.ok()) return error_;
  if (committed_) return absl::FailedPreconditionError("committed already");
  // Written by name (or nothing appended yet): the file is the writer's.
  if (fd_ < 0) {
    if (absl::Status s = Open(/*create=*/false); !s.ok()) return s;
  }
  if (::fsync(fd_) != 0) return Fail(Errno("cannot fsync", temp_path_));
  const int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0) return Fail(Errno("cannot close", temp_path_));
  if (::rename(temp_path_.c_str(), path_.c_str()) != 0) {
    return Fail(
        Errno(absl::StrCat("cannot rename ", temp_path_, " into"), path_));
  }
  committed_ = true;
  // The file is in place; this makes the rename survive a power loss.
  return SyncDirectory(DirectoryOf(path_));
}

absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents) {
  AtomicFile file(path);
  if (absl::Status s = file.Append(contents); !s.ok()) return s;
  return file.Commit();
}

}  // namespace ringleader
