#include "worker/data/image_folder.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "glog/logging.h"

namespace ringleader {
namespace {

// Folders deeper than this under a class are not walked: os.walk would
// follow a link cycle forever.
constexpr int kMaxDepth = 32;

// torchvision's IMG_EXTENSIONS; only the first three are decoded here.
constexpr const char* kImageExtensions[] = {
    ".jpg", ".jpeg", ".png", ".ppm", ".bmp", ".pgm", ".tif", ".tiff", ".webp"};
constexpr int kDecodedExtensions = 3;

// -1: not an image name; else the index in kImageExtensions.
int ExtensionIndex(const std::string& name) {
  const std::string lower = absl::AsciiStrToLower(name);
  for (int i = 0; i < 9; ++i) {
    if (absl::EndsWith(lower, kImageExtensions[i])) return i;
  }
  return -1;
}

absl::Status ErrnoError(int err, const std::string& what) {
  const std::string msg = absl::StrCat(what, ": ", std::strerror(err));
  return err == ENOENT ? absl::NotFoundError(msg)
                       : absl::PermissionDeniedError(msg);
}

// The names in `dir`, without "." and "..".
absl::StatusOr<std::vector<std::string>> Entries(const std::string& dir) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) return ErrnoError(errno, dir);
  std::vector<std::string> names;
  while (dirent* e = readdir(d)) {
    if (std::strcmp(e->d_name, ".") && std::strcmp(e->d_name, "..")) {
      names.push_back(e->d_name);
    }
  }
  closedir(d);
  return names;
}

// One file found under a class: its path, size, and what kind of name.
struct Candidate {
  std::string path;
  uint64_t size = 0;
  int extension = -1;
  bool regular = true;
};

// os.walk(folder, followlinks=True), sorted by folder path, each folder's
// image files sorted: appended to `out`.
absl::Status Walk(const std::string& folder, std::vector<Candidate>& out) {
  std::vector<std::pair<std::string, int>> pending = {{folder, 0}};
  std::set<std::pair<dev_t, ino_t>> seen;
  std::vector<std::pair<std::string, std::vector<Candidate>>> folders;
  while (!pending.empty()) {
    auto [dir, depth] = pending.back();
    pending.pop_back();
    struct stat st;
    if (stat(dir.c_str(), &st) != 0 ||
        !seen.insert({st.st_dev, st.st_ino}).second) {
      continue;
    }
    absl::StatusOr<std::vector<std::string>> names = Entries(dir);
    if (!names.ok()) return names.status();
    std::vector<Candidate> files;
    for (const std::string& n : *names) {
      const std::string path = absl::StrCat(dir, "/", n);
      struct stat s;
      const bool ok = stat(path.c_str(), &s) == 0;
      if (ok && S_ISDIR(s.st_mode)) {
        if (depth < kMaxDepth) pending.push_back({path, depth + 1});
        continue;
      }
      const int ext = ExtensionIndex(n);
      if (ext < 0) continue;
      files.push_back(Candidate{path, ok ? uint64_t(s.st_size) : 0, ext,
                                ok && S_ISREG(s.st_mode)});
    }
    std::sort(
        files.begin(), files.end(),
        [](const Candidate& a, const Candidate& b) { return a.path < b.path; });
    folders.push_back({dir, std::move(files)});
  }
  std::sort(folders.begin(), folders.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  for (auto& f : folders) {
    for (Candidate& c : f.second) out.push_back(std::move(c));
  }
  return absl::OkStatus();
}

// The first bytes and the last kImageTailBytes of a file, then the check.
absl::Status CheckFile(const Candidate& c) {
  if (!c.regular) return absl::DataLossError("not a regular file");
  if (c.extension >= kDecodedExtensions) {
    return absl::DataLossError(
        absl::StrCat("a ", kImageExtensions[c.extension] + 1,
                     " file: only JPEG and PNG images are decoded"));
  }
  if (c.size == 0) return CheckEncodedImageEnds("", "", 0);
  const int fd = open(c.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, "cannot open");
  char head[16], tail[kImageTailBytes];
  const size_t tail_n = std::min<uint64_t>(c.size, kImageTailBytes);
  const ssize_t h = pread(fd, head, sizeof(head), 0);
  const ssize_t t =
      pread(fd, tail, tail_n, static_cast<off_t>(c.size - tail_n));
  close(fd);
  if (h < 0 || t < 0) return absl::DataLossError("cannot read");
  return CheckEncodedImageEnds(absl::string_view(head, size_t(h)),
                               absl::string_view(tail, size_t(t)), c.size);
}

// The class folders of `root`: its subfolders (links followed), sorted.
absl::StatusOr<std::vector<std::string>> ClassFolders(const std::string& root) {
  absl::StatusOr<std::vector<std::string>> names = Entries(root);
  if (!names.ok()) return names.status();
  std::vector<std::string> classes;
  for (const std::string& n : *names) {
    struct stat s;
    const std::string path = absl::StrCat(root, "/", n);
    if (stat(path.c_str(), &s) == 0 && S_ISDIR(s.st_mode)) classes.push_back(n);
  }
  std::sort(classes.begin(), classes.end());
  if (classes.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        root, " holds no class folder (an ImageFolder is ROOT/CLASS/IMAGE)"));
  }
  return classes;
}

}  // namespace

absl::StatusOr<std::unique_ptr<ImageFolderSamples>> ImageFolderSamples::Open(
    const std::string& root, bool skip_corrupt) {
  std::unique_ptr<ImageFolderSamples> out(new ImageFolderSamples);
  out->root_ = root;
  absl::StatusOr<std::vector<std::string>> classes = ClassFolders(root);
  if (!classes.ok()) return classes.status();
  out->classes_ = *std::move(classes);
  for (size_t c = 0; c < out->classes_.size(); ++c) {
    const std::string folder = absl::StrCat(root, "/", out->classes_[c]);
    std::vector<Candidate> found;
    if (absl::Status s = Walk(folder, found); !s.ok()) return s;
    size_t kept = 0;
    for (const Candidate& f : found) {
      if (absl::Status s = CheckFile(f); !s.ok()) {
        const std::string what = absl::StrCat(f.path, ": ", s.message());
        if (!skip_corrupt) return absl::DataLossError(what);
        LOG(WARNING) << "skipping " << what;
        out->skipped_.Add(what);
        continue;
      }
      out->files_.push_back(File{f.path, static_cast<int64_t>(c), f.size});
      ++kept;
    }
    if (kept == 0) {
      const std::string what =
          absl::StrCat("class folder ", folder,
                       " holds no readable .jpg, .jpeg or .png file");
      if (!skip_corrupt) return absl::DataLossError(what);
      LOG(WARNING) << "skipping " << what;
      out->skipped_.Add(what);
    }
  }
  return out;
}

absl::StatusOr<absl::string_view> ImageFolderSamples::Read(
    int64_t i, std::string& buffer) const {
  const File& f = files_[i];
  const int fd = open(f.path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError(errno, f.path);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return ErrnoError(errno, f.path);
  }
  buffer.resize(static_cast<size_t>(st.st_size));
  size_t done = 0;
  while (done < buffer.size()) {
    const ssize_t n =
        pread(fd, &buffer[done], buffer.size() - done, off_t(done));
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  close(fd);
  buffer.resize(done);
  return absl::string_view(buffer);
}

std::string ImageFolderSamples::Describe() const {
  return absl::StrCat("ImageFolder ", root_, " (", classes_.size(),
                      classes_.size() == 1 ? " class, " : " classes, ",
                      files_.size(), " images)");
}

}  // namespace ringleader
