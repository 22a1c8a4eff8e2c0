#include "cli/rpc_error.h"

#include "gtest/gtest.h"

namespace ringleader::cli {
namespace {

RpcCallInfo Call(bool connected) {
  RpcCallInfo call;
  call.address = "10.0.0.1:7070";
  call.timeout = absl::Seconds(10);
  call.connected = connected;
  return call;
}

TEST(RpcErrorTest, OkIsOk) {
  EXPECT_TRUE(RpcErrorToStatus(grpc::Status::OK, Call(true)).ok());
}

TEST(RpcErrorTest, UnavailableCannotReach) {
  const absl::Status s =
      RpcErrorToStatus(grpc::Status(grpc::StatusCode::UNAVAILABLE,
                                    "failed to connect to all "
                                    "addresses\nmore"),
                       Call(false));
  EXPECT_EQ(s.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(s.message(),
            "cannot reach coordinator at 10.0.0.1:7070 (is it running?)");
}

TEST(RpcErrorTest, DeadlineWhileConnectingCannotReach) {
  const absl::Status s = RpcErrorToStatus(
      grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"),
      Call(false));
  EXPECT_EQ(s.code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_EQ(s.message(),
            "cannot reach coordinator at 10.0.0.1:7070 (is it running?)");
}

TEST(RpcErrorTest, DeadlineOnceConnectedSaysSo) {
  const absl::Status s = RpcErrorToStatus(
      grpc::Status(grpc::StatusCode::DEADLINE_EXCEEDED, "Deadline Exceeded"),
      Call(true));
  EXPECT_EQ(s.message(),
            "coordinator at 10.0.0.1:7070 did not answer within 10s");
}

TEST(RpcErrorTest, ApplicationErrorsKeepTheServerMessage) {
  const absl::Status s = RpcErrorToStatus(
      grpc::Status(grpc::StatusCode::NOT_FOUND, "job foo-9 does not exist"),
      Call(true));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "job foo-9 does not exist");
  EXPECT_EQ(RpcErrorToStatus(grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                          "invalid job spec: epochs ..."),
                             Call(true))
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RpcErrorTest, ApplicationErrorsKeepTheirLines) {
  // A refused job spec lists every violation on a line of its own.
  const absl::Status s = RpcErrorToStatus(
      grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                   "invalid job spec: name must match x (got \"\")\r\n"
                   "invalid job spec: epochs must be in [1, 9] (got -3)\n"),
      Call(true));
  EXPECT_EQ(s.message(),
            "invalid job spec: name must match x (got \"\")\n"
            "invalid job spec: epochs must be in [1, 9] (got -3)");
  // Other codes' messages go into one sentence.
  EXPECT_EQ(
      RpcErrorToStatus(grpc::Status(grpc::StatusCode::INTERNAL, "disk\nfull"),
                       Call(true))
          .message(),
      "coordinator at 10.0.0.1:7070 failed: INTERNAL: disk full");
}

TEST(RpcErrorTest, UnexpectedCodesNameTheCoordinatorAndCode) {
  EXPECT_EQ(RpcErrorToStatus(
                grpc::Status(grpc::StatusCode::INTERNAL, "sqlite: disk full"),
                Call(true))
                .message(),
            "coordinator at 10.0.0.1:7070 failed: INTERNAL: sqlite: disk full");
  EXPECT_EQ(RpcErrorToStatus(grpc::Status(grpc::StatusCode::NOT_FOUND, ""),
                             Call(true))
                .message(),
            "coordinator at 10.0.0.1:7070 failed: NOT_FOUND");
}

TEST(TidyLinesTest, OneLineEachTrimmedWithoutEmptyOnes) {
  EXPECT_EQ(TidyLines("  a \r\n\n b\rc\n  \n"), "a\nb\nc");
  EXPECT_EQ(TidyLines("plain"), "plain");
  EXPECT_EQ(TidyLines(" \n "), "");
}

TEST(OneLineTest, JoinsLinesAndTrims) {
  EXPECT_EQ(OneLine("  a\nb\r\nc\r "), "a b c");
  EXPECT_EQ(OneLine("plain"), "plain");
}

}  // namespace
}  // namespace ringleader::cli
