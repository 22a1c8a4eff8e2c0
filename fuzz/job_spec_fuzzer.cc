// Feeds arbitrary bytes through everything a job file goes through before the
// coordinator accepts it: ParseJobSpec (text format and JSON), LoadJobSpecFile,
// WithDefaults, ValidateJobSpec, and the JSON and text printers. Besides "no
// crash, no sanitizer report", each input must keep these invariants:
//   - a parse error is INVALID_ARGUMENT with a message; LoadJobSpecFile gives
//     the same verdict as ParseJobSpec, its message prefixed with the path;
//   - WithDefaults is idempotent, and validating before or after it gives
//     the same verdict;
//   - a rejected spec is INVALID_ARGUMENT, one line per violation, each
//     starting "invalid job spec: ", and short enough for a gRPC status;
//   - what parses prints as JSON that parses back to the same spec (when its
//     strings are UTF-8, which JSON requires), and as text format likewise;
//     JobToJson of a job holding it is a JSON object, never the error form.
#include "fuzz/job_spec_fuzzer.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "common/job_spec_io.h"
#include "common/job_spec_validator.h"
#include "common/spec_violations.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/field_comparator.h"
#include "google/protobuf/util/message_differencer.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {
namespace {

#define FUZZ_CHECK(cond, detail)                                            \
  do {                                                                      \
    if (!(cond)) {                                                          \
      std::fprintf(stderr, "job_spec_fuzzer: invariant failed: %s\n  %s\n", \
                   #cond, std::string(detail).c_str());                     \
      std::abort();                                                         \
    }                                                                       \
  } while (0)

// The same job: fields compare by value, an unset field as its default.
// Presence means nothing to the job apart from task.ignore_index (the only
// `optional` field, whose presence both printers write and both parsers
// read back), and no reader looks at has_*() of its messages (an empty
// `ddp {}` is the same job as none). It matters here because proto3 counts
// -0.0 as set and +0.0 as unset, and the JSON parser reads the printer's
// "-0" back as +0.0. NaN equals NaN.
bool Same(const v1::JobSpec& a, const v1::JobSpec& b) {
  google::protobuf::util::DefaultFieldComparator comparator;
  comparator.set_treat_nan_as_equal(true);
  google::protobuf::util::MessageDifferencer differencer;
  differencer.set_field_comparator(&comparator);
  differencer.set_message_field_comparison(
      google::protobuf::util::MessageDifferencer::EQUIVALENT);
  return differencer.Compare(a, b);
}

bool IsUtf8(absl::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n;
    uint32_t cp;
    if (c < 0x80) {
      ++i;
      continue;
    } else if ((c & 0xe0) == 0xc0) {
      n = 1;
      cp = c & 0x1f;
    } else if ((c & 0xf0) == 0xe0) {
      n = 2;
      cp = c & 0x0f;
    } else if ((c & 0xf8) == 0xf0) {
      n = 3;
      cp = c & 0x07;
    } else {
      return false;
    }
    if (i + n >= s.size()) return false;  // Cut short.
    for (size_t k = 1; k <= n; ++k) {
      const unsigned char d = static_cast<unsigned char>(s[i + k]);
      if ((d & 0xc0) != 0x80) return false;
      cp = (cp << 6) | (d & 0x3f);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) ||
        (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
        (cp >= 0xd800 && cp <= 0xdfff)) {
      return false;
    }
    i += n + 1;
  }
  return true;
}

// Every string field, found by reflection so that a new one (dataset files,
// export paths) is covered without a list to keep up to date.
bool StringsAreUtf8(const google::protobuf::Message& m) {
  const google::protobuf::Reflection* r = m.GetReflection();
  std::vector<const google::protobuf::FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const google::protobuf::FieldDescriptor* f : fields) {
    using FD = google::protobuf::FieldDescriptor;
    const int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
    for (int i = 0; i < n; ++i) {
      if (f->cpp_type() == FD::CPPTYPE_STRING) {
        const std::string s = f->is_repeated() ? r->GetRepeatedString(m, f, i)
                                               : r->GetString(m, f);
        if (!IsUtf8(s)) return false;
      } else if (f->cpp_type() == FD::CPPTYPE_MESSAGE) {
        const google::protobuf::Message& sub =
            f->is_repeated() ? r->GetRepeatedMessage(m, f, i)
                             : r->GetMessage(m, f);
        if (!StringsAreUtf8(sub)) return false;
      }
    }
  }
  return true;
}

void CheckParseError(const absl::Status& s) {
  FUZZ_CHECK(s.code() == absl::StatusCode::kInvalidArgument, s.ToString());
  FUZZ_CHECK(!s.message().empty(), s.ToString());
}

void CheckSpec(const v1::JobSpec& spec) {
  const v1::JobSpec defaulted = WithDefaults(spec);
  FUZZ_CHECK(Same(WithDefaults(defaulted), defaulted),
             defaulted.ShortDebugString());
  const absl::Status raw = ValidateJobSpec(spec);
  const absl::Status valid = ValidateJobSpec(defaulted);
  FUZZ_CHECK(raw.ok() == valid.ok(),
             absl::StrCat(raw.ToString(), " vs ", valid.ToString()));
  if (!valid.ok()) {
    FUZZ_CHECK(valid.code() == absl::StatusCode::kInvalidArgument,
               valid.ToString());
    // The budget of common/spec_violations.h, and its last "... and N
    // more" line.
    FUZZ_CHECK(valid.message().size() <= SpecViolations::kMaxBytes + 64,
               valid.ToString());
    for (absl::string_view line : absl::StrSplit(valid.message(), '\n')) {
      FUZZ_CHECK(absl::StartsWith(line, kInvalidSpecPrefix), valid.ToString());
    }
  }

  // JSON: what ringctl --output=json prints must read back.
  for (JsonStyle style : {JsonStyle::kCompact, JsonStyle::kPretty}) {
    const std::string json = JobSpecToJson(spec, style);
    FUZZ_CHECK(
        absl::StartsWith(json, "{") && !absl::StartsWith(json, "{\"error"),
        json);
    if (!StringsAreUtf8(spec)) continue;
    absl::StatusOr<v1::JobSpec> back = ParseJobSpec(json, JobSpecFormat::kJson);
    FUZZ_CHECK(back.ok(),
               absl::StrCat(back.status().ToString(), " for ", json));
    FUZZ_CHECK(Same(*back, spec), json);
  }
  // Text format round trip (an empty spec prints as nothing, which
  // ParseJobSpec refuses on purpose).
  std::string text;
  FUZZ_CHECK(google::protobuf::TextFormat::PrintToString(spec, &text), "");
  if (!text.empty()) {
    absl::StatusOr<v1::JobSpec> back =
        ParseJobSpec(text, JobSpecFormat::kTextProto);
    FUZZ_CHECK(back.ok(),
               absl::StrCat(back.status().ToString(), " for ", text));
    FUZZ_CHECK(Same(*back, spec), text);
  }
  // A job holding the spec, as `ringctl get --output=json` prints it.
  v1::Job job;
  job.set_job_id(absl::StrCat(defaulted.name(), "-1"));
  *job.mutable_spec() = defaulted;
  job.set_state(valid.ok() ? v1::JOB_STATE_PENDING : v1::JOB_STATE_FAILED);
  job.set_message(std::string(valid.message()));
  const std::string job_json = JobToJson(job, JsonStyle::kCompact);
  FUZZ_CHECK(absl::StartsWith(job_json, "{") &&
                 !absl::StartsWith(job_json, "{\"error"),
             job_json);
}

// One scratch file per process for the LoadJobSpecFile path.
const std::string& ScratchBase() {
  static const std::string* base = [] {
    const char* tmp = std::getenv("TEST_TMPDIR");
    std::string dir =
        absl::StrCat(tmp != nullptr ? tmp : "/tmp", "/job_spec_fuzzer.XXXXXX");
    FUZZ_CHECK(mkdtemp(&dir[0]) != nullptr, dir);
    return new std::string(absl::StrCat(dir, "/spec"));
  }();
  return *base;
}

void CheckFile(absl::string_view text, JobSpecFormat format,
               const absl::StatusOr<v1::JobSpec>& direct) {
  const std::string path = absl::StrCat(
      ScratchBase(), format == JobSpecFormat::kJson ? ".json" : ".textproto");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    FUZZ_CHECK(out.good(), path);
  }
  const absl::StatusOr<v1::JobSpec> loaded = LoadJobSpecFile(path);
  FUZZ_CHECK(loaded.ok() == direct.ok(), loaded.status().ToString());
  if (loaded.ok()) {
    FUZZ_CHECK(Same(*loaded, *direct), loaded->ShortDebugString());
  } else {
    FUZZ_CHECK(loaded.status().code() == direct.status().code(),
               loaded.status().ToString());
    FUZZ_CHECK(loaded.status().message() ==
                   absl::StrCat(path, ": ", direct.status().message()),
               loaded.status().ToString());
  }
}

}  // namespace
}  // namespace ringleader

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ringleader;  // NOLINT: the entry point is global.
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  for (JobSpecFormat format :
       {JobSpecFormat::kTextProto, JobSpecFormat::kJson}) {
    const absl::StatusOr<v1::JobSpec> spec = ParseJobSpec(text, format);
    if (spec.ok()) {
      CheckSpec(*spec);
    } else {
      CheckParseError(spec.status());
    }
    if (size <= static_cast<size_t>(kMaxJobSpecFileBytes)) {
      CheckFile(text, format, spec);
    }
  }
  return 0;
}
