// The event file read back by a reader of its own (the record framing, both
// CRCs, and the Event/Summary wire format decoded field by field).
#include "worker/train/progress/tensorboard_writer.h"

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "common/crc32c.h"
#include "gtest/gtest.h"

namespace ringleader {
namespace {

struct Event {
  double wall_time = 0;
  int64_t step = 0;
  std::string file_version;
  std::map<std::string, float> values;
};

uint64_t Fixed(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i) {
    v |= static_cast<uint64_t>(static_cast<unsigned char>(s[at + i]))
         << (8 * i);
  }
  return v;
}

uint64_t Varint(const std::string& s, size_t& at) {
  uint64_t v = 0;
  for (int shift = 0; at < s.size() && shift < 64; shift += 7) {
    const unsigned char b = s[at++];
    v |= static_cast<uint64_t>(b & 0x7F) << shift;
    if ((b & 0x80) == 0) break;
  }
  return v;
}

// Calls `field(number, wire type, position)` per field; the callback
// advances past the value.
template <typename F>
void Fields(const std::string& m, F field) {
  size_t at = 0;
  while (at < m.size()) {
    const uint64_t key = Varint(m, at);
    field(static_cast<int>(key >> 3), static_cast<int>(key & 7), at);
  }
}

std::string Bytes(const std::string& m, size_t& at) {
  const uint64_t n = Varint(m, at);
  std::string out = m.substr(at, n);
  at += n;
  return out;
}

Event Decode(const std::string& data) {
  Event e;
  Fields(data, [&](int number, int type, size_t& at) {
    if (number == 1 && type == 1) {
      const uint64_t bits = Fixed(data, at, 8);
      std::memcpy(&e.wall_time, &bits, 8);
      at += 8;
    } else if (number == 2 && type == 0) {
      e.step = static_cast<int64_t>(Varint(data, at));
    } else if (number == 3 && type == 2) {
      e.file_version = Bytes(data, at);
    } else if (number == 5 && type == 2) {
      const std::string summary = Bytes(data, at);
      Fields(summary, [&](int, int, size_t& sat) {
        const std::string value = Bytes(summary, sat);
        std::string tag;
        float v = 0;
        Fields(value, [&](int vn, int vt, size_t& vat) {
          if (vn == 1) {
            tag = Bytes(value, vat);
          } else {
            ASSERT_EQ(vn, 2);
            ASSERT_EQ(vt, 5);
            const uint32_t bits = static_cast<uint32_t>(Fixed(value, vat, 4));
            std::memcpy(&v, &bits, 4);
            vat += 4;
          }
        });
        e.values[tag] = v;
      });
    } else {
      ADD_FAILURE() << "unexpected field " << number;
      at = data.size();
    }
  });
  return e;
}

std::vector<Event> ReadEvents(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string file = buf.str();
  std::vector<Event> out;
  size_t at = 0;
  while (at < file.size()) {
    EXPECT_GE(file.size() - at, 16u);
    const uint64_t length = Fixed(file, at, 8);
    EXPECT_EQ(Fixed(file, at + 8, 4),
              MaskCrc32c(Crc32c(absl::string_view(file).substr(at, 8))));
    const std::string data = file.substr(at + 12, length);
    EXPECT_EQ(Fixed(file, at + 12 + length, 4), MaskCrc32c(Crc32c(data)));
    out.push_back(Decode(data));
    at += 12 + length + 4;
  }
  return out;
}

std::string TempDir(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  const std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
  std::filesystem::remove_all(path);
  return path;
}

v1::ReportProgressRequest Window(int64_t step) {
  v1::ReportProgressRequest r;
  r.set_step(step);
  r.set_loss(0.1 + step);
  r.set_learning_rate(0.01);
  r.set_grad_norm(1.5);
  r.set_samples_per_sec(1234.5);
  r.set_step_time_ms(3);
  return r;
}

void AddSum(google::protobuf::RepeatedPtrField<v1::MetricSum>* sums,
            const std::string& name, double sum, int64_t count) {
  v1::MetricSum* m = sums->Add();
  m->set_name(name);
  m->set_sum(sum);
  m->set_count(count);
}

TEST(TensorBoardWriterTest, ScalarsOfEachReportReadBack) {
  const std::string dir = TempDir("tb") + "/nested/run";  // Created.
  const absl::Time t0 = absl::FromUnixSeconds(1'700'000'000);
  absl::StatusOr<std::unique_ptr<TensorBoardWriter>> w =
      TensorBoardWriter::Open(dir, v1::TaskSpec(), t0);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_NE((*w)->path().find("/events.out.tfevents.1700000000."),
            std::string::npos);
  ASSERT_TRUE((*w)->WriteReport(Window(10), t0 + absl::Seconds(1)).ok());
  v1::ReportProgressRequest eval = Window(20);
  eval.set_step_time_ms(0);  // An evaluation's report.
  eval.set_eval_epoch(1);
  AddSum(eval.mutable_eval_metrics(), "accuracy", 9, 10);
  AddSum(eval.mutable_eval_metrics(), "loss", 5, 10);
  ASSERT_TRUE((*w)->WriteReport(eval, t0 + absl::Seconds(2)).ok());
  // A later window carries the same evaluation: not written again.
  v1::ReportProgressRequest later = Window(30);
  later.set_eval_epoch(1);
  *later.mutable_eval_metrics() = eval.eval_metrics();
  ASSERT_TRUE((*w)->WriteReport(later, t0 + absl::Seconds(3)).ok());
  v1::ReportProgressRequest final_report = Window(40);
  final_report.set_step_time_ms(0);
  final_report.set_finished(true);
  AddSum(final_report.mutable_test_metrics(), "accuracy", 19, 20);
  ASSERT_TRUE((*w)->WriteReport(final_report, t0 + absl::Seconds(4)).ok());

  const std::vector<Event> events = ReadEvents((*w)->path());
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events[0].file_version, "brain.Event:2");
  EXPECT_EQ(events[1].step, 10);
  EXPECT_DOUBLE_EQ(events[1].wall_time, 1'700'000'001.0);
  EXPECT_EQ(events[1].values.at("train/loss"), static_cast<float>(10.1));
  EXPECT_EQ(events[1].values.at("train/learning_rate"), 0.01f);
  EXPECT_EQ(events[1].values.at("train/grad_norm"), 1.5f);
  EXPECT_EQ(events[1].values.at("train/samples_per_sec"), 1234.5f);
  EXPECT_EQ(events[2].step, 20);
  EXPECT_EQ(events[2].values.at("eval/accuracy"), 0.9f);
  EXPECT_EQ(events[2].values.at("eval/loss"), 0.5f);
  EXPECT_EQ(events[2].values.count("train/loss"), 0u);
  EXPECT_EQ(events[3].step, 30);
  EXPECT_EQ(events[3].values.size(), 4u);  // Train scalars only.
  EXPECT_EQ(events[4].step, 40);
  EXPECT_EQ(events[4].values.at("eval/accuracy"), 0.95f);
}

TEST(TensorBoardWriterTest, ANewWriterInTheSameSecondGetsItsOwnFile) {
  const std::string dir = TempDir("tb2");
  const absl::Time t0 = absl::FromUnixSeconds(1'700'000'000);
  auto a = TensorBoardWriter::Open(dir, v1::TaskSpec(), t0);
  auto b = TensorBoardWriter::Open(dir, v1::TaskSpec(), t0);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE((*a)->path(), (*b)->path());
  ASSERT_TRUE((*b)->WriteReport(Window(1), t0).ok());
  EXPECT_EQ(ReadEvents((*a)->path()).size(), 1u);  // Its version only.
  EXPECT_EQ(ReadEvents((*b)->path()).size(), 2u);
}

TEST(TensorBoardWriterTest, AnUnwritableDirectoryIsAClearError) {
  const std::string dir = TempDir("tb3");
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/file") << "x";
  auto w =
      TensorBoardWriter::Open(dir + "/file/run", v1::TaskSpec(), absl::Now());
  ASSERT_FALSE(w.ok());
  EXPECT_NE(w.status().message().find("TensorBoard"), std::string::npos)
      << w.status();
}

}  // namespace
}  // namespace ringleader
