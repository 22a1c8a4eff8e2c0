// With a CPU-only LibTorch, cuda:N is refused up front, saying how to build
// with CUDA; the CPU keeps working.
#include "gtest/gtest.h"
#include "worker/device/communicator_factory.h"

namespace ringleader {
namespace {

TEST(CudaUnavailableTest, CudaDevicesAreRefusedWithTheSettingToUse) {
  absl::Status s = CheckDevice("cuda:0");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("RINGLEADER_LIBTORCH"), std::string::npos) << s;

  CoordinatorClient client(
      grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials()),
      CoordinatorClient::Options{});
  CommunicatorRequest request;
  request.client = &client;
  request.device = Device{true, 1};
  absl::StatusOr<std::unique_ptr<Communicator>> comm =
      CreateCommunicator(request);
  EXPECT_EQ(comm.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(comm.status().message().find("cuda:1"), std::string::npos);
}

TEST(CudaUnavailableTest, CpuAndBadNamesAreAnsweredAsUsual) {
  EXPECT_TRUE(CheckDevice("cpu").ok());
  EXPECT_EQ(CheckDevice("tpu:0").code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace ringleader
