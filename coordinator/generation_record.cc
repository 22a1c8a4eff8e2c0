#include "coordinator/generation_record.h"

#include <utility>

namespace ringleader {

v1::GenerationRecord GenerationRecordOf(const std::string& job_id,
                                        const Rendezvous::Generation& gen,
                                        const WorkerRegistry& workers) {
  v1::GenerationRecord record;
  record.set_job_id(job_id);
  record.set_number(gen.number);
  for (const Rendezvous::Member& m : gen.members) {
    v1::WorkerInfo* w = record.add_members();
    absl::StatusOr<v1::WorkerInfo> info = workers.Get(m.worker_id);
    if (info.ok()) *w = *std::move(info);
    w->set_worker_id(m.worker_id);
    w->set_hostname(m.hostname);
    w->set_address(m.address);
    w->set_job_id(job_id);
    absl::StatusOr<v1::MemberSecret> secret = workers.Secret(m.worker_id);
    *record.add_secrets() =
        secret.ok() ? *std::move(secret) : v1::MemberSecret();
  }
  return record;
}

Rendezvous::Generation GenerationOf(const v1::GenerationRecord& record) {
  Rendezvous::Generation gen;
  gen.number = record.number();
  for (int i = 0; i < record.members_size(); ++i) {
    const v1::WorkerInfo& w = record.members(i);
    Rendezvous::Member m;
    m.worker_id = w.worker_id();
    m.hostname = w.hostname();
    m.address = w.address();
    m.rank = i;
    gen.members.push_back(std::move(m));
  }
  return gen;
}

}  // namespace ringleader
