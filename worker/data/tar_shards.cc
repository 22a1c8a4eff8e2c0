#include "worker/data/tar_shards.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "common/shard_pattern.h"
#include "glog/logging.h"
#include "worker/data/tar_reader.h"

namespace ringleader {
namespace {

// WebDataset's base_plus_ext: key = the path up to the first dot of its
// last component, extension = the rest (lower-cased).
bool SplitKey(const std::string& name, std::string* key, std::string* ext) {
  const size_t slash = name.rfind('/');
  const size_t dot = name.find('.', slash == std::string::npos ? 0 : slash + 1);
  if (dot == std::string::npos || dot == 0) return false;
  *key = name.substr(0, dot);
  *ext = absl::AsciiStrToLower(name.substr(dot + 1));
  return true;
}

// One sample's members as they are gathered.
struct Group {
  std::string key;
  std::optional<TarMember> image;
  std::optional<TarMember> cls;
  std::string other_image;  // An image extension that is not decoded.
};

bool IsDecodedImage(const std::string& ext) {
  return ext == "jpg" || ext == "jpeg" || ext == "png";
}

bool IsOtherImage(const std::string& ext) {
  return ext == "ppm" || ext == "pgm" || ext == "pbm" || ext == "pnm" ||
         ext == "bmp" || ext == "tif" || ext == "tiff" || ext == "webp";
}

// The label of a .cls member: ASCII decimal, whitespace around allowed.
absl::StatusOr<int64_t> ParseLabel(absl::string_view text) {
  int64_t v = 0;
  if (text.size() > 64 || !absl::SimpleAtoi(text, &v) || v < 0) {
    return absl::DataLossError(
        absl::StrCat("its .cls is not a class id (a non-negative integer): \"",
                     absl::CHexEscape(text.substr(0, 32)), "\""));
  }
  return v;
}

}  // namespace

absl::StatusOr<std::unique_ptr<TarShardSamples>> TarShardSamples::Open(
    const std::vector<std::string>& shards, bool skip_corrupt) {
  std::unique_ptr<TarShardSamples> out(new TarShardSamples);
  for (const std::string& pattern : shards) {
    absl::StatusOr<std::vector<std::string>> names =
        ExpandShardPattern(pattern);
    if (!names.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shard pattern ", pattern, ": ", names.status().message()));
    }
    for (const std::string& path : *names) {
      absl::StatusOr<MappedFile> f = MappedFile::Open(path);
      if (!f.ok()) return f.status();
      if (absl::Status s = out->AddShard(*std::move(f), skip_corrupt);
          !s.ok()) {
        return s;
      }
    }
  }
  if (out->samples_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(out->Describe(), " hold no sample"));
  }
  return out;
}

absl::Status TarShardSamples::AddShard(MappedFile shard, bool skip_corrupt) {
  const int32_t index = static_cast<int32_t>(shards_.size());
  const uint8_t* base = shard.data();
  absl::StatusOr<std::vector<TarMember>> members =
      ListTarMembers(base, shard.size());
  if (!members.ok()) {
    return absl::DataLossError(
        absl::StrCat("shard ", shard.path(), ": ", members.status().message()));
  }
  const auto bytes = [base](const TarMember& m) {
    return absl::string_view(reinterpret_cast<const char*>(base) + m.offset,
                             m.size);
  };
  // Closes one sample: checks it and appends it, or says what is wrong.
  const auto close = [&](const Group& g) -> absl::Status {
    if (g.key.empty()) return absl::OkStatus();
    absl::Status bad;
    int64_t label = 0;
    if (!g.image.has_value()) {
      bad = absl::DataLossError(
          g.other_image.empty()
              ? "no image (.jpg, .jpeg or .png)"
              : absl::StrCat("a .", g.other_image,
                             " image: only JPEG and PNG images are decoded"));
    } else if (!g.cls.has_value()) {
      bad = absl::DataLossError("no label (.cls)");
    } else if (absl::StatusOr<int64_t> l = ParseLabel(bytes(*g.cls)); !l.ok()) {
      bad = l.status();
    } else {
      label = *l;
      const absl::string_view img = bytes(*g.image);
      const size_t tail = std::min(img.size(), kImageTailBytes);
      bad = CheckEncodedImageEnds(img.substr(0, 16),
                                  img.substr(img.size() - tail), img.size());
    }
    if (bad.ok()) {
      samples_.push_back(
          Sample{index, g.image->offset, g.image->size, label, g.key});
      num_classes_ = std::max(num_classes_, label + 1);
      return absl::OkStatus();
    }
    const std::string what = absl::StrCat("sample ", g.key, " of shard ",
                                          shard.path(), ": ", bad.message());
    if (!skip_corrupt) return absl::DataLossError(what);
    LOG(WARNING) << "skipping " << what;
    skipped_.Add(what);
    return absl::OkStatus();
  };
  Group g;
  for (const TarMember& m : *members) {
    std::string key, ext;
    if (!SplitKey(m.name, &key, &ext)) continue;
    if (key != g.key) {
      if (absl::Status s = close(g); !s.ok()) return s;
      g = Group{key, std::nullopt, std::nullopt, ""};
    }
    if (IsDecodedImage(ext) && !g.image.has_value()) g.image = m;
    if (IsOtherImage(ext)) g.other_image = ext;
    if (ext == "cls") g.cls = m;
  }
  if (absl::Status s = close(g); !s.ok()) return s;
  shards_.push_back(std::move(shard));
  return absl::OkStatus();
}

absl::StatusOr<absl::string_view> TarShardSamples::Read(int64_t i,
                                                        std::string&) const {
  const Sample& s = samples_[i];
  return absl::string_view(
      reinterpret_cast<const char*>(shards_[s.shard].data()) + s.offset,
      s.size);
}

std::string TarShardSamples::Name(int64_t i) const {
  const Sample& s = samples_[i];
  return absl::StrCat("sample ", s.key, " of shard ", shards_[s.shard].path());
}

std::string TarShardSamples::Describe() const {
  if (shards_.empty()) return "the tar shards";
  return absl::StrCat(
      shards_.size(), shards_.size() == 1 ? " tar shard (" : " tar shards (",
      shards_.front().path(),
      shards_.size() > 1 ? absl::StrCat(" ... ", shards_.back().path()) : "",
      ", ", samples_.size(), " samples)");
}

}  // namespace ringleader
