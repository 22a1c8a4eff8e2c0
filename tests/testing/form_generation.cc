#include "tests/testing/form_generation.h"

#include <thread>

#include "gtest/gtest.h"
#include "tests/testing/in_process_coordinator.h"

namespace ringleader::testing {

FormedGeneration FormGeneration(
    const std::vector<v1::WorkerService::Stub*>& stubs, const std::string& job,
    const std::string& hostname, int first_pid, int64_t join_timeout_ms) {
  const int world = static_cast<int>(stubs.size());
  std::vector<std::string> ids(world);
  std::vector<WorkerCredential> credentials(world);
  for (int i = 0; i < world; ++i) {
    v1::RegisterRequest reg;
    reg.set_hostname(hostname);
    reg.set_pid(first_pid + i);
    reg.set_device("cpu");
    reg.set_address("127.0.0.1");
    v1::RegisterResponse rr;
    grpc::Status s = stubs[i]->Register(ClientContext().get(), reg, &rr);
    EXPECT_TRUE(s.ok()) << s.error_message();
    ids[i] = rr.worker_id();
    credentials[i] = CredentialOf(rr);
    v1::HeartbeatRequest hb;
    hb.set_worker_id(ids[i]);
    v1::HeartbeatResponse hr;
    s = stubs[i]->Heartbeat(ClientContext(credentials[i]).get(), hb, &hr);
    EXPECT_TRUE(s.ok()) << s.error_message();
    EXPECT_EQ(hr.assignment().job_id(), job) << "worker " << i;
  }
  std::vector<v1::JoinRendezvousResponse> joined(world);
  std::vector<grpc::Status> status(world);
  std::vector<std::thread> threads;
  for (int i = 0; i < world; ++i) {
    threads.emplace_back([&, i] {
      v1::JoinRendezvousRequest req;
      req.set_job_id(job);
      req.set_worker_id(ids[i]);
      req.set_timeout_ms(join_timeout_ms);
      status[i] = stubs[i]->JoinRendezvous(ClientContext(credentials[i]).get(),
                                           req, &joined[i]);
    });
  }
  for (std::thread& t : threads) t.join();
  FormedGeneration f;
  f.worker_by_rank.resize(world);
  f.stub_by_rank.assign(world, -1);
  f.credential_by_rank.resize(world);
  for (int i = 0; i < world; ++i) {
    EXPECT_TRUE(status[i].ok()) << status[i].error_message();
    f.generation = joined[i].generation();
    const int rank = joined[i].rank();
    EXPECT_TRUE(rank >= 0 && rank < world) << "worker " << i << ": " << rank;
    if (rank >= 0 && rank < world) {
      f.worker_by_rank[rank] = ids[i];
      f.stub_by_rank[rank] = i;
      f.credential_by_rank[rank] = credentials[i];
    }
  }
  return f;
}

FormedJob SubmitAndForm(InProcessCoordinator& coordinator,
                        const v1::JobSpec& spec, int world) {
  FormedJob out;
  v1::SubmitJobRequest sub;
  *sub.mutable_spec() = spec;
  v1::SubmitJobResponse sresp;
  const grpc::Status s =
      coordinator.users().SubmitJob(ClientContext().get(), sub, &sresp);
  EXPECT_TRUE(s.ok()) << s.error_message();
  if (!s.ok()) return out;
  out.job_id = sresp.job_id();
  std::vector<v1::WorkerService::Stub*> raw;
  for (int i = 0; i < world; ++i) {
    out.stubs.push_back(v1::WorkerService::NewStub(coordinator.NewChannel()));
    raw.push_back(out.stubs.back().get());
  }
  out.formed = FormGeneration(raw, out.job_id, "host", 100, 20000);
  return out;
}

}  // namespace ringleader::testing
