#include "common/job_spec_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {
namespace {

// Keeps the parser's first error with its position instead of letting the
// parser print to stderr (its default), so the caller can show one line.
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (!first_.empty()) return;
    // The parser counts from 0; editors count from 1. A negative line means
    // the error has no position.
    first_ = line < 0 ? message
                      : absl::StrCat("line ", line + 1, " col ", column + 1,
                                     ": ", message);
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

absl::StatusOr<v1::JobSpec> ParseText(absl::string_view text) {
  google::protobuf::TextFormat::Parser parser;
  FirstErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  // Both are already the defaults; stated because strictness is the point.
  parser.AllowUnknownField(false);
  parser.AllowUnknownExtension(false);
  v1::JobSpec spec;
  if (!parser.ParseFromString(std::string(text), &spec)) {
    return absl::InvalidArgumentError(errors.first().empty()
                                          ? "cannot parse text-format job spec"
                                          : errors.first());
  }
  return spec;
}

absl::StatusOr<v1::JobSpec> ParseJson(absl::string_view text) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  v1::JobSpec spec;
  const google::protobuf::util::Status status =
      google::protobuf::util::JsonStringToMessage(
          google::protobuf::StringPiece(text.data(), text.size()), &spec,
          options);
  if (!status.ok()) {
    // The JSON parser gives no line/column; for syntax errors it appends the
    // input around the error and a caret line. The CLI prints one line, so
    // keep the message and the context, drop the caret.
    const std::vector<absl::string_view> lines = absl::StrSplit(
        absl::string_view(status.message().data(), status.message().size()),
        '\n');
    std::string message(lines[0]);
    if (lines.size() > 1) {
      const absl::string_view context = absl::StripAsciiWhitespace(lines[1]);
      if (!context.empty()) {
        absl::StrAppend(&message, " near \"", absl::CHexEscape(context), "\"");
      }
    }
    return absl::InvalidArgumentError(
        absl::StrCat("invalid JSON job spec: ", message));
  }
  return spec;
}

// Closes the descriptor on every return path.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  ~FdCloser() { close(fd_); }

 private:
  int fd_;
};

absl::StatusOr<std::string> ReadSmallFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not hang; fstat rejects it next. It
  // changes nothing for regular files.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot open"));
  }
  FdCloser closer(fd);
  struct stat st;
  if (fstat(fd, &st) != 0) {
    return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot stat"));
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a regular file"));
  }
  auto too_large = [&path](int64_t size) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: file is %d bytes, more than the %d-byte limit for a job spec",
        path, size, kMaxJobSpecFileBytes));
  };
  if (st.st_size > kMaxJobSpecFileBytes) return too_large(st.st_size);
  // Read up to one byte past the limit so a file that grew since fstat is
  // caught. The buffer starts at the size fstat saw (plus the byte that
  // detects growth) and only grows for a file that did grow: a spec is a few
  // hundred bytes, and zeroing a whole mebibyte per load is what a fuzzer
  // spent most of its time on.
  const size_t cap = static_cast<size_t>(kMaxJobSpecFileBytes) + 1;
  std::string content(static_cast<size_t>(st.st_size) + 1, '\0');
  size_t got = 0;
  while (got < cap) {
    if (got == content.size()) content.resize(std::min(cap, 2 * got));
    const ssize_t n = read(fd, &content[got], content.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      return absl::ErrnoToStatus(errno, absl::StrCat(path, ": cannot read"));
    }
    if (n == 0) break;
    got += static_cast<size_t>(n);
  }
  if (got > static_cast<size_t>(kMaxJobSpecFileBytes)) {
    return too_large(static_cast<int64_t>(got));
  }
  content.resize(got);
  return content;
}

// A JSON string literal for `s` (RFC 8259 escapes), for the error fallback.
std::string JsonQuote(absl::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20) {
      out += absl::StrFormat("\\u%04x", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "\"";
}

std::string MessageToJson(const google::protobuf::Message& message,
                          JsonStyle style) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = style == JsonStyle::kPretty;
  options.always_print_primitive_fields = false;
  options.always_print_enums_as_ints = false;
  options.preserve_proto_field_names = false;
  std::string out;
  const google::protobuf::util::Status status =
      google::protobuf::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) {
    return absl::StrCat("{\"error\": ",
                        JsonQuote(absl::string_view(status.message().data(),
                                                    status.message().size())),
                        "}");
  }
  // The pretty printer ends with a newline and the compact one does not;
  // callers add their own.
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

absl::StatusOr<v1::JobSpec> ParseJobSpec(absl::string_view text,
                                         JobSpecFormat format) {
  // An empty text-format message parses fine and would only fail later, in
  // validation, with a confusing "name must match ..." line.
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError("job spec is empty");
  }
  return format == JobSpecFormat::kJson ? ParseJson(text) : ParseText(text);
}

absl::StatusOr<JobSpecFormat> JobSpecFormatForPath(absl::string_view path) {
  const size_t slash = path.rfind('/');
  const absl::string_view base =
      slash == absl::string_view::npos ? path : path.substr(slash + 1);
  const size_t dot = base.rfind('.');
  const std::string ext = absl::AsciiStrToLower(
      dot == absl::string_view::npos ? "" : base.substr(dot));
  if (ext == ".json") return JobSpecFormat::kJson;
  if (ext == ".textproto" || ext == ".txtpb" || ext == ".pbtxt" ||
      ext == ".txt") {
    return JobSpecFormat::kTextProto;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": unsupported job spec extension \"", ext,
                   "\"; use .json, .textproto, .txtpb, .pbtxt or .txt"));
}

absl::StatusOr<v1::JobSpec> LoadJobSpecFile(const std::string& path) {
  absl::StatusOr<JobSpecFormat> format = JobSpecFormatForPath(path);
  if (!format.ok()) return format.status();
  absl::StatusOr<std::string> content = ReadSmallFile(path);
  if (!content.ok()) return content.status();
  absl::StatusOr<v1::JobSpec> spec = ParseJobSpec(*content, *format);
  if (!spec.ok()) {
    return absl::Status(spec.status().code(),
                        absl::StrCat(path, ": ", spec.status().message()));
  }
  return spec;
}

std::string JobSpecToJson(const v1::JobSpec& spec, JsonStyle style) {
  return MessageToJson(spec, style);
}

std::string JobToJson(const v1::Job& job, JsonStyle style) {
  return MessageToJson(job, style);
}

}  // namespace ringleader
