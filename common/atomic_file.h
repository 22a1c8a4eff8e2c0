#ifndef RINGLEADER_COMMON_ATOMIC_FILE_H_
#define RINGLEADER_COMMON_ATOMIC_FILE_H_

// Files replaced whole: a reader, or the same path after a crash or a power
// loss, finds the old file or the whole new one, never a part. LevelDB's
// recipe: the bytes go to a temporary file in the target's directory (a
// rename is atomic only within one filesystem), which is fsync'ed, renamed
// over the target, and then the directory is fsync'ed, so that the rename
// itself is on disk when the call returns. A failed write leaves the old
// file as it was and removes its temporary file; a crash may leave one
// behind, named "<path>.tmp.<pid>.<n>", which nothing reads.
//
// Every file the system writes for someone else to read goes through here:
// checkpoints, exports (safetensors, TorchScript), timelines, port files.

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ringleader {

// Writes `contents` to `path` as above. Errors name the file and what
// failed ("cannot create", "cannot write", "cannot fsync", "cannot rename
// ... into"): NOT_FOUND when the directory does not exist, INTERNAL for
// any other failure.
absl::Status WriteFileAtomically(const std::string& path,
                                 absl::string_view contents);

// The same for a writer that produces the file in pieces (Append), or by
// name (a library that saves to a path: write to temp_path(), then
// Commit). Not thread-safe; one object per write.
class AtomicFile {
 public:
  explicit AtomicFile(std::string path);
  // Removes the temporary file unless Commit succeeded.
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  const std::string& path() const { return path_; }
  // Unique to this object, in path()'s directory.
  const std::string& temp_path() const { return temp_path_; }

  // Appends `data` to the temporary file, created by the first call.
  absl::Status Append(absl::string_view data);
  // Makes what was written (by Append, or to temp_path() by name) the file
  // at path(): fsync, rename, fsync of the directory. Once only.
  absl::Status Commit();

 private:
  // Opens the temporary file for writing, creating it when `create`.
  absl::Status Open(bool create);
  // The first error of the write, kept: a later Append or Commit returns it.
  absl::Status Fail(absl::Status s);

  const std::string path_;
  const std::string temp_path_;
  int fd_ = -1;
  bool committed_ = false;
  absl::Status error_;
};

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_ATOMIC_FILE_H_
