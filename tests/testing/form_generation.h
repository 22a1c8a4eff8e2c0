#ifndef RINGLEADER_TESTS_TESTING_FORM_GENERATION_H_
#define RINGLEADER_TESTS_TESTING_FORM_GENERATION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/worker_credential.h"
#include "ringleader/v1/job.pb.h"
#include "ringleader/v1/worker_service.grpc.pb.h"
#include "tests/testing/in_process_coordinator.h"

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

// A job submitted to an in-process coordinator and its first generation,
// one worker per stub, each stub on its own channel.
struct FormedJob {
  std::string job_id;
  std::vector<std::unique_ptr<v1::WorkerService::Stub>> stubs;
  FormedGeneration formed;
};

// Submits `spec` and forms its first generation of `world` workers as
// FormGeneration does ("host", pids from 100, 20 s to join). What goes
// wrong is a gtest failure.
FormedJob SubmitAndForm(InProcessCoordinator& coordinator,
                        const v1::JobSpec& spec, int world);

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_FORM_GENERATION_H_
