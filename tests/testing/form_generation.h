#ifndef RINGLEADER_TESTS_TESTING_FORM_GENERATION_H_
#define RINGLEADER_TESTS_TESTING_FORM_GENERATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "common/worker_credential.h"
#include "ringleader/v1/worker_service.grpc.pb.h"

namespace ringleader::testing {

struct FormedGeneration {
  int64_t generation = 0;
  std::vector<std::string> worker_by_rank;  // "" for a rank nobody got.
  std::vector<int> stub_by_rank;            // Index into the stubs; -1 none.
  // What each rank's calls must carry (testing::ClientContext(credential)).
  std::vector<WorkerCredential> credential_by_rank;
};

// Brings one worker per stub into a generation of `job` over real gRPC:
// worker i registers through stubs[i] (`hostname`, pid first_pid + i, cpu,
// 127.0.0.1), its first heartbeat must assign `job`, and all join at once
// (the generation forms when the last one arrives). What goes wrong is a
// gtest failure; the ranks that were given are returned.
FormedGeneration FormGeneration(
    const std::vector<v1::WorkerService::Stub*>& stubs, const std::string& job,
    const std::string& hostname, int first_pid, int64_t join_timeout_ms);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_FORM_GENERATION_H_
