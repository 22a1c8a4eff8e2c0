#ifndef RINGLEADER_WORKER_DATA_IMAGE_FOLDER_H_
#define RINGLEADER_WORKER_DATA_IMAGE_FOLDER_H_

// A torchvision ImageFolder: root/<class>/.../<image>. Listed once per job
// in torchvision 0.14's order, so sample i and its class id are what
// datasets.ImageFolder(root)[i] is: classes are the sorted names of root's
// subfolders (symbolic links followed), numbered from 0; each class's files
// are found by walking its folder (links followed, as os.walk(followlinks=
// True)), folders in sorted path order, files sorted within a folder, with
// torchvision's image extensions (.jpg .jpeg .png .ppm .bmp .pgm .tif .tiff
// .webp, any case). Every worker lists the same folder the same way, so
// every rank holds the same list.
//
// Checked while listing, so that a bad file fails the job before it trains
// (or is left out, with skip_corrupt): a class folder without images
// (torchvision refuses it too), a format other than JPEG or PNG, an empty
// file, a file whose first and last bytes are not a whole JPEG or PNG
// (encoded_samples.h). Corruption inside a file shows when it is decoded.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "worker/data/encoded_samples.h"

namespace ringleader {

class ImageFolderSamples : public EncodedSamples {
 public:
  // NotFound or InvalidArgument naming `root` when it is missing or holds
  // no class folder; DataLoss naming the file (or class folder) for the
  // first bad one unless `skip_corrupt`, which leaves them out, counted.
  static absl::StatusOr<std::unique_ptr<ImageFolderSamples>> Open(
      const std::string& root, bool skip_corrupt);

  int64_t size() const override { return static_cast<int64_t>(files_.size()); }
  int64_t label(int64_t i) const override { return files_[i].label; }
  absl::StatusOr<absl::string_view> Read(int64_t i,
                                         std::string& buffer) const override;
  std::string Name(int64_t i) const override { return files_[i].path; }
  std::string Describe() const override;
  const std::vector<std::string>& class_names() const override {
    return classes_;
  }
  int64_t num_classes() const override {
    return static_cast<int64_t>(classes_.size());
  }
  const SkippedFiles& skipped() const override { return skipped_; }

  struct File {
    std::string path;
    int64_t label = 0;
    uint64_t size = 0;
  };

 private:
  ImageFolderSamples() = default;

  std::string root_;
  std::vector<std::string> classes_;
  std::vector<File> files_;
  SkippedFiles skipped_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_IMAGE_FOLDER_H_
