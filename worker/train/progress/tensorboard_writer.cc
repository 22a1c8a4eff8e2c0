#include "worker/train/progress/tensorboard_writer.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <utility>

#include "absl/strings/str_cat.h"
#include "common/crc32c.h"
#include "common/eval_metrics.h"
#include "glog/logging.h"

namespace ringleader {
namespace {

constexpr char kFileVersion[] = "brain.Event:2";

void PutVarint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7F) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

// Little-endian, whatever the host's order.
void PutFixed(std::string& out, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) {
    out.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
}

// A length-delimited field (wire type 2).
void PutBytes(std::string& out, int field, absl::string_view bytes) {
  PutVarint(out, (static_cast<uint64_t>(field) << 3) | 2);
  PutVarint(out, bytes.size());
  out.append(bytes.data(), bytes.size());
}

std::string EncodeValue(const TensorBoardScalar& s) {
  std::string v;
  PutBytes(v, 1, s.tag);
  uint32_t bits;
  std::memcpy(&bits, &s.value, sizeof(bits));
  PutVarint(v, (2 << 3) | 5);  // simple_value, fixed32.
  PutFixed(v, bits, 4);
  return v;
}

std::string HostName() {
  char host[256] = {};
  if (gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') {
    return "localhost";
  }
  return host;
}

// Every metric of the task from one rank's sums.
std::vector<TensorBoardScalar> EvalScalars(const MetricSums& sums,
                                           const v1::TaskSpec& task) {
  MetricPool pool;
  pool.AddRank(sums);
  std::vector<TensorBoardScalar> out;
  for (const v1::Metric& m : pool.Metrics(task)) {
    out.push_back(
        {absl::StrCat("eval/", m.name()), static_cast<float>(m.value())});
  }
  return out;
}

}  // namespace

std::string EncodeTensorBoardEvent(
    double wall_time, int64_t step, absl::string_view file_version,
    const std::vector<TensorBoardScalar>& values) {
  std::string event;
  uint64_t bits;
  std::memcpy(&bits, &wall_time, sizeof(bits));
  PutVarint(event, (1 << 3) | 1);  // wall_time, fixed64.
  PutFixed(event, bits, 8);
  PutVarint(event, 2 << 3);  // step, varint.
  PutVarint(event, static_cast<uint64_t>(step));
  if (!file_version.empty()) {
    PutBytes(event, 3, file_version);
    return event;
  }
  std::string summary;
  for (const TensorBoardScalar& s : values)
    PutBytes(summary, 1, EncodeValue(s));
  PutBytes(event, 5, summary);
  return event;
}

std::string TfRecord(absl::string_view data) {
  std::string record;
  PutFixed(record, data.size(), 8);
  PutFixed(record, MaskCrc32c(Crc32c(record)), 4);
  record.append(data.data(), data.size());
  PutFixed(record, MaskCrc32c(Crc32c(data)), 4);
  return record;
}

absl::StatusOr<std::unique_ptr<TensorBoardWriter>> TensorBoardWriter::Open(
    const std::string& dir, const v1::TaskSpec& task, absl::Time now) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot create the TensorBoard directory ", dir, ": ", ec.message()));
  }
  const std::string base = absl::StrCat(
      dir, "/events.out.tfevents.", absl::ToUnixSeconds(now), ".", HostName());
  for (int n = 0; n < 100; ++n) {
    std::string path = n == 0 ? base : absl::StrCat(base, ".", n);
    // O_EXCL: never append to another writer's file.
    const int fd =
        ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot create TensorBoard event file ", path, ": ",
                       std::strerror(errno)));
    }
    std::FILE* file = ::fdopen(fd, "wb");
    if (file == nullptr) {
      ::close(fd);
      return absl::InternalError(absl::StrCat("fdopen ", path));
    }
    std::unique_ptr<TensorBoardWriter> w(
        new TensorBoardWriter(file, std::move(path), task));
    if (absl::Status s = w->Append(EncodeTensorBoardEvent(
            absl::ToDoubleSeconds(now - absl::UnixEpoch()), 0, kFileVersion,
            {}));
        !s.ok()) {
      return s;
    }
    return w;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("cannot create a new TensorBoard event file ", base,
                   ".*: 100 names taken"));
}

TensorBoardWriter::~TensorBoardWriter() { std::fclose(file_); }

absl::Status TensorBoardWriter::Append(absl::string_view event) {
  const std::string record = TfRecord(event);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size() ||
      std::fflush(file_) != 0) {
    return absl::DataLossError(
        absl::StrCat("cannot write TensorBoard events to ", path_, ": ",
                     std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status TensorBoardWriter::Write(
    int64_t step, absl::Time now,
    const std::vector<TensorBoardScalar>& values) {
  if (values.empty()) return absl::OkStatus();
  return Append(EncodeTensorBoardEvent(
      absl::ToDoubleSeconds(now - absl::UnixEpoch()), step, "", values));
}

void TensorBoardWriter::Record(const v1::ReportProgressRequest& report) {
  if (broken_) return;
  absl::Status s = WriteReport(report, absl::Now());
  if (s.ok()) return;
  broken_ = true;
  LOG(WARNING) << "TensorBoard events stop here (training goes on): " << s;
}

absl::Status TensorBoardWriter::WriteReport(const v1::ReportProgressRequest& r,
                                            absl::Time now) {
  // A training window's report: evaluations and the final report carry no
  // step time (ProgressWindow).
  if (!r.finished() && r.step_time_ms() > 0) {
    std::vector<TensorBoardScalar> train = {
        {"train/loss", static_cast<float>(r.loss())},
        {"train/learning_rate", static_cast<float>(r.learning_rate())},
        {"train/samples_per_sec", static_cast<float>(r.samples_per_sec())}};
    if (r.grad_norm() > 0) {
      train.push_back({"train/grad_norm", static_cast<float>(r.grad_norm())});
    }
    if (absl::Status s = Write(r.step(), now, train); !s.ok()) return s;
  }
  if (r.finished() && !final_written_) {
    final_written_ = true;
    return Write(r.step(), now, EvalScalars(r.test_metrics(), task_));
  }
  if (!r.finished() && r.eval_epoch() > eval_epoch_) {
    eval_epoch_ = r.eval_epoch();
    return Write(r.step(), now, EvalScalars(r.eval_metrics(), task_));
  }
  return absl::OkStatus();
}

}  // namespace ringleader
