#include "common/job_spec_io.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "ringleader/v1/job.pb.h"

namespace ringleader {
namespace {

using ::google::protobuf::util::MessageDifferencer;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kTextSpec[] = R"pb(
  # A comment.
  name: "text-job"
  model { arch: MODEL_ARCH_MLP hidden_sizes: 64 hidden_sizes: 32 }
  dataset { format: DATASET_FORMAT_SYNTHETIC synthetic_train_size: 1000 }
  optimizer { kind: OPTIMIZER_KIND_ADAM learning_rate: 0.001 }
  epochs: 3
  batch_size: 16
  min_workers: 1
  max_workers: 4
  seed: 18446744073709551615
  device: DEVICE_KIND_CUDA
)pb";

constexpr char kJsonSpec[] = R"json({
  "name": "json-job",
  "model": {"arch": "MODEL_ARCH_CNN"},
  "dataset": {"format": "DATASET_FORMAT_IDX", "path": "/data", "shuffle": true},
  "optimizer": {"kind": "OPTIMIZER_KIND_SGD", "learningRate": 0.05,
                "momentum": 0.9},
  "epochs": 2,
  "batch_size": 64,
  "minWorkers": 2,
  "maxWorkers": 2,
  "seed": "42",
  "rendezvousTimeoutMs": "60000"
})json";

std::string TempDir() {
  const char* dir = std::getenv("TEST_TMPDIR");  // Set by bazel test.
  return dir != nullptr ? dir : "/tmp";
}

// Writes `content` to a fresh file under TEST_TMPDIR; returns its path.
std::string WriteFile(const std::string& name, const std::string& content) {
  const std::string path = absl::StrCat(TempDir(), "/", name);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << content;
  out.close();
  EXPECT_TRUE(out.good()) << path;
  return path;
}

std::string Message(const absl::Status& s) { return std::string(s.message()); }

// --- ParseJobSpec: text format ---------------------------------------------

TEST(ParseJobSpecTest, ValidTextProto) {
  absl::StatusOr<v1::JobSpec> spec =
      ParseJobSpec(kTextSpec, JobSpecFormat::kTextProto);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name(), "text-job");
  EXPECT_THAT(spec->model().hidden_sizes(), ElementsAre(64, 32));
  EXPECT_EQ(spec->dataset().synthetic_train_size(), 1000);
  EXPECT_EQ(spec->optimizer().kind(), v1::OPTIMIZER_KIND_ADAM);
  EXPECT_DOUBLE_EQ(spec->optimizer().learning_rate(), 0.001);
  EXPECT_EQ(spec->seed(), 18446744073709551615ULL);
  EXPECT_EQ(spec->device(), v1::DEVICE_KIND_CUDA);
}

TEST(ParseJobSpecTest, TextGarbageReportsPosition) {
  absl::StatusOr<v1::JobSpec> spec =
      ParseJobSpec("name: \"a\"\n%%% nonsense", JobSpecFormat::kTextProto);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(spec.status()), StartsWith("line 2 col 1: "));
}

TEST(ParseJobSpecTest, TextTruncated) {
  absl::StatusOr<v1::JobSpec> spec =
      ParseJobSpec("name: \"a\"\nmodel {\n  arch: MODEL_ARCH_MLP\n",
                   JobSpecFormat::kTextProto);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(spec.status()), StartsWith("line "));
}

TEST(ParseJobSpecTest, TextUnterminatedString) {
  absl::StatusOr<v1::JobSpec> spec =
      ParseJobSpec("name: \"abc", JobSpecFormat::kTextProto);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(spec.status()), StartsWith("line 1 col "));
}

TEST(ParseJobSpecTest, TextUnknownFieldIsAnError) {
  absl::StatusOr<v1::JobSpec> spec =
      ParseJobSpec("name: \"a\"\n  nmae: \"b\"\n", JobSpecFormat::kTextProto);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(spec.status()), StartsWith("line 2 col 7: "));
  EXPECT_THAT(Message(spec.status()), HasSubstr("nmae"));
}

TEST(ParseJobSpecTest, TextWrongType) {
  for (const char* text :
       {"epochs: \"ten\"", "epochs: 1.5", "epochs: 99999999999", "model: 3",
        "dataset { shuffle: 7 }"}) {
    SCOPED_TRACE(text);
    absl::StatusOr<v1::JobSpec> spec =
        ParseJobSpec(text, JobSpecFormat::kTextProto);
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Message(spec.status()), StartsWith("line 1 col "));
  }
}

TEST(ParseJobSpecTest, TextUnknownEnumName) {
  absl::StatusOr<v1::JobSpec> spec =
      ParseJobSpec("device: DEVICE_KIND_TPU", JobSpecFormat::kTextProto);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(spec.status()), HasSubstr("DEVICE_KIND_TPU"));
}

TEST(ParseJobSpecTest, TextRepeatedScalarIsAnError) {
  absl::StatusOr<v1::JobSpec> spec =
      ParseJobSpec("epochs: 1\nepochs: 2", JobSpecFormat::kTextProto);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(spec.status()), HasSubstr("epochs"));
}

// --- ParseJobSpec: JSON -----------------------------------------------------

TEST(ParseJobSpecTest, ValidJsonAcceptsBothFieldNameStyles) {
  absl::StatusOr<v1::JobSpec> spec =
      ParseJobSpec(kJsonSpec, JobSpecFormat::kJson);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name(), "json-job");
  EXPECT_EQ(spec->model().arch(), v1::MODEL_ARCH_CNN);
  EXPECT_TRUE(spec->dataset().shuffle());
  EXPECT_DOUBLE_EQ(spec->optimizer().learning_rate(), 0.05);
  EXPECT_EQ(spec->batch_size(), 64);  // Written as batch_size.
  EXPECT_EQ(spec->min_workers(), 2);  // Written as minWorkers.
  EXPECT_EQ(spec->seed(), 42u);
  EXPECT_EQ(spec->rendezvous_timeout_ms(), 60000);
}

TEST(ParseJobSpecTest, JsonErrors) {
  for (const char* text : {
           "not json at all",
           "{\"name\": \"a\",",                  // truncated
           "{\"name\": \"a\", \"nmae\": 1}",     // unknown field
           "{\"epochs\": \"ten\"}",              // wrong type
           "{\"epochs\": 1.5}",                  // wrong type
           "{\"model\": 3}",                     // wrong type
           "{\"device\": \"DEVICE_KIND_TPU\"}",  // unknown enum name
           "[]",
       }) {
    SCOPED_TRACE(text);
    absl::StatusOr<v1::JobSpec> spec = ParseJobSpec(text, JobSpecFormat::kJson);
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Message(spec.status()), StartsWith("invalid JSON job spec: "));
    EXPECT_THAT(Message(spec.status()), Not(HasSubstr("\n")));
  }
}

TEST(ParseJobSpecTest, JsonUnknownFieldIsNamed) {
  absl::StatusOr<v1::JobSpec> spec =
      ParseJobSpec("{\"name\": \"a\", \"nmae\": 1}", JobSpecFormat::kJson);
  EXPECT_THAT(Message(spec.status()), HasSubstr("nmae"));
}

TEST(ParseJobSpecTest, JsonSyntaxErrorKeepsContextOnOneLine) {
  absl::StatusOr<v1::JobSpec> spec =
      ParseJobSpec("{\"name\": \"a\" \"epochs\": 1}", JobSpecFormat::kJson);
  EXPECT_THAT(Message(spec.status()), HasSubstr(" near \""));
  EXPECT_THAT(Message(spec.status()), HasSubstr("epochs"));
}

TEST(ParseJobSpecTest, EmptyInputIsAnErrorInBothFormats) {
  for (JobSpecFormat format :
       {JobSpecFormat::kTextProto, JobSpecFormat::kJson}) {
    for (const char* text : {"", "  \n\t\n"}) {
      absl::StatusOr<v1::JobSpec> spec = ParseJobSpec(text, format);
      EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
      EXPECT_EQ(Message(spec.status()), "job spec is empty");
    }
  }
}

// --- LoadJobSpecFile --------------------------------------------------------

TEST(LoadJobSpecFileTest, ChoosesFormatByExtension) {
  for (const char* ext : {".textproto", ".txtpb", ".pbtxt", ".txt", ".PBTXT"}) {
    SCOPED_TRACE(ext);
    absl::StatusOr<v1::JobSpec> spec =
        LoadJobSpecFile(WriteFile(absl::StrCat("spec", ext), kTextSpec));
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(spec->name(), "text-job");
  }
  for (const char* ext : {".json", ".Json"}) {
    SCOPED_TRACE(ext);
    absl::StatusOr<v1::JobSpec> spec =
        LoadJobSpecFile(WriteFile(absl::StrCat("spec", ext), kJsonSpec));
    ASSERT_TRUE(spec.ok()) << spec.status();
    EXPECT_EQ(spec->name(), "json-job");
  }
}

TEST(LoadJobSpecFileTest, UnsupportedExtensionNamesTheSupportedOnes) {
  for (const char* name :
       {"spec.yaml", "spec", "dir.json/spec", "spec.json.bak"}) {
    SCOPED_TRACE(name);
    const std::string path = absl::StrCat(TempDir(), "/", name);
    absl::StatusOr<v1::JobSpec> spec = LoadJobSpecFile(path);
    EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(Message(spec.status()), StartsWith(path + ": "));
    EXPECT_THAT(Message(spec.status()),
                HasSubstr(".json, .textproto, .txtpb, .pbtxt or .txt"));
  }
}

TEST(LoadJobSpecFileTest, MissingFileIsNotFoundWithPathAndReason) {
  const std::string path = absl::StrCat(TempDir(), "/does-not-exist.json");
  absl::StatusOr<v1::JobSpec> spec = LoadJobSpecFile(path);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(Message(spec.status()), StartsWith(path + ": "));
  EXPECT_THAT(Message(spec.status()), HasSubstr("No such file or directory"));
}

TEST(LoadJobSpecFileTest, UnreadableFileIsPermissionDenied) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  const std::string path = WriteFile("unreadable.json", kJsonSpec);
  ASSERT_EQ(chmod(path.c_str(), 0), 0);
  absl::StatusOr<v1::JobSpec> spec = LoadJobSpecFile(path);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(Message(spec.status()), StartsWith(path + ": "));
  EXPECT_THAT(Message(spec.status()), HasSubstr("Permission denied"));
}

TEST(LoadJobSpecFileTest, DirectoryIsRejected) {
  const std::string path = absl::StrCat(TempDir(), "/a-directory.json");
  ASSERT_TRUE(mkdir(path.c_str(), 0755) == 0 || errno == EEXIST);
  absl::StatusOr<v1::JobSpec> spec = LoadJobSpecFile(path);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(spec.status()), path + ": not a regular file");
}

TEST(LoadJobSpecFileTest, EmptyFile) {
  const std::string path = WriteFile("empty.textproto", "");
  absl::StatusOr<v1::JobSpec> spec = LoadJobSpecFile(path);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(spec.status()), path + ": job spec is empty");
}

TEST(LoadJobSpecFileTest, SizeLimitIsOneMebibyte) {
  // Exactly at the limit: a valid spec padded with a comment.
  std::string at_limit = absl::StrCat(kTextSpec, "#");
  at_limit.resize(kMaxJobSpecFileBytes, 'x');
  absl::StatusOr<v1::JobSpec> spec =
      LoadJobSpecFile(WriteFile("at-limit.textproto", at_limit));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name(), "text-job");

  const std::string path = WriteFile("too-large.textproto", at_limit + "x");
  spec = LoadJobSpecFile(path);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(Message(spec.status()),
            path +
                ": file is 1048577 bytes, more than the 1048576-byte limit "
                "for a job spec");
}

TEST(LoadJobSpecFileTest, ParseErrorsStartWithThePath) {
  std::string path = WriteFile("bad.pbtxt", "name: \"a\"\nepochs: x\n");
  absl::StatusOr<v1::JobSpec> spec = LoadJobSpecFile(path);
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Message(spec.status()), StartsWith(path + ": line 2 col 9: "));

  path = WriteFile("bad.json", "{\"epochs\": }");
  spec = LoadJobSpecFile(path);
  EXPECT_THAT(Message(spec.status()),
              StartsWith(path + ": invalid JSON job spec: "));
}

// --- JSON output ------------------------------------------------------------

TEST(JobSpecToJsonTest, LowerCamelNamesEnumNamesAndNoZeroFields) {
  absl::StatusOr<v1::JobSpec> spec =
      ParseJobSpec(kTextSpec, JobSpecFormat::kTextProto);
  ASSERT_TRUE(spec.ok());
  const std::string json = JobSpecToJson(*spec);
  EXPECT_THAT(json, HasSubstr("\"learningRate\":0.001"));
  EXPECT_THAT(json, HasSubstr("\"device\":\"DEVICE_KIND_CUDA\""));
  EXPECT_THAT(json, HasSubstr("\"seed\":\"18446744073709551615\""));
  EXPECT_THAT(json, Not(HasSubstr("checkpointDir")));  // Empty: omitted.
  EXPECT_THAT(json, Not(HasSubstr("\n")));
}

TEST(JobSpecToJsonTest, RoundTripsThroughParse) {
  absl::StatusOr<v1::JobSpec> spec =
      ParseJobSpec(kJsonSpec, JobSpecFormat::kJson);
  ASSERT_TRUE(spec.ok());
  for (JsonStyle style : {JsonStyle::kCompact, JsonStyle::kPretty}) {
    const std::string json = JobSpecToJson(*spec, style);
    EXPECT_NE(json.back(), '\n');
    absl::StatusOr<v1::JobSpec> again =
        ParseJobSpec(json, JobSpecFormat::kJson);
    ASSERT_TRUE(again.ok()) << again.status() << "\n" << json;
    EXPECT_TRUE(MessageDifferencer::Equals(*spec, *again)) << json;
  }
  EXPECT_THAT(JobSpecToJson(*spec, JsonStyle::kPretty), HasSubstr("\n"));
}

TEST(JobToJsonTest, PrintsJobFields) {
  v1::Job job;
  job.set_job_id("job-1");
  job.set_state(v1::JOB_STATE_RUNNING);
  job.set_world_size(2);
  job.mutable_spec()->set_name("fashion");
  job.mutable_progress()->set_total_steps(938);
  const std::string json = JobToJson(job);
  EXPECT_EQ(json,
            "{\"jobId\":\"job-1\",\"spec\":{\"name\":\"fashion\"},"
            "\"state\":\"JOB_STATE_RUNNING\",\"worldSize\":2,"
            "\"progress\":{\"totalSteps\":\"938\"}}");
}

}  // namespace
}  // namespace ringleader
