#include "coordinator/server/coordinator_metrics.h"

#include <malloc.h>

#include <map>
#include <string>
#include <vector>

#include "common/enum_names.h"
#include "common/job_over.h"

namespace ringleader {
namespace {

using metrics::CallbackFamily;

// Jobs by state, workers alive, restarts.
void RegisterJobMetrics(Coordinator* coordinator, metrics::Registry* registry) {
  registry->AddCallback(
      "ringleader_jobs", "Jobs known to the coordinator, by state.",
      metrics::Type::kGauge, {"state"}, [coordinator] {
        std::map<v1::JobState, int> counts;
        for (int s = v1::JobState_MIN; s <= v1::JobState_MAX; ++s) {
          if (v1::JobState_IsValid(s) && s != v1::JOB_STATE_UNSPECIFIED) {
            counts[static_cast<v1::JobState>(s)] = 0;
          }
        }
        for (const v1::Job& job : coordinator->jobs().List({})) {
          ++counts[job.state()];
        }
        std::vector<CallbackFamily::Sample> out;
        for (const auto& [state, n] : counts) {
          // JOB_STATE_RUNNING is "running".
          out.push_back({{EnumValueName(state)}, static_cast<double>(n)});
        }
        return out;
      });
  registry->AddCallback(
      "ringleader_workers_alive",
      "Registered workers whose lease has not expired.", metrics::Type::kGauge,
      {}, [coordinator] {
        return std::vector<CallbackFamily::Sample>{
            {{}, static_cast<double>(coordinator->workers().List().size())}};
      });
  registry->AddCallback(
      "ringleader_job_restarts",
      "Restarts (failed generations) spent by each job that has not ended.",
      metrics::Type::kGauge, {"job_id", "job_name"}, [coordinator] {
        std::vector<CallbackFamily::Sample> out;
        for (const v1::Job& job : coordinator->jobs().List({})) {
          if (IsJobOver(job.state())) continue;
          out.push_back({{job.job_id(), job.spec().name()},
                         static_cast<double>(job.restarts())});
        }
        return out;
      });
  registry->AddCallback(
      "ringleader_job_restarts_total",
      "Restarts spent by all jobs, ended ones included.",
      metrics::Type::kCounter, {}, [coordinator] {
        // Deleted jobs' restarts still count: a counter never goes down.
        double total =
            static_cast<double>(coordinator->jobs().DeletedJobRestarts());
        for (const v1::Job& job : coordinator->jobs().List({})) {
          total += job.restarts();
        }
        return std::vector<CallbackFamily::Sample>{{{}, total}};
      });
}

// What the coordinator holds: waiting calls and heap.
void RegisterLoadMetrics(Coordinator* coordinator,
                         metrics::Registry* registry) {
  registry->AddCallback(
      "ringleader_pending_waits",
      "Calls waiting in the coordinator, by kind (kv, barrier, join): each "
      "holds memory until answered, cancelled or timed out.",
      metrics::Type::kGauge, {"kind"}, [coordinator] {
        return std::vector<CallbackFamily::Sample>{
            {{"kv"}, static_cast<double>(coordinator->kv().waiter_count())},
            {{"barrier"},
             static_cast<double>(coordinator->barriers().pending_arrivals())},
            {{"join"},
             static_cast<double>(coordinator->rendezvous().waiter_count())}};
      });
  registry->AddCallback(
      "ringleader_heap_in_use_bytes",
      "Bytes the coordinator's allocator has handed out and not got back "
      "(glibc mallinfo2: what leaks show in, unlike the resident memory, "
      "which also keeps freed pages).",
      metrics::Type::kGauge, {}, [] {
        const struct mallinfo2 m = mallinfo2();
        return std::vector<CallbackFamily::Sample>{
            {{}, static_cast<double>(m.uordblks + m.hblkhd)}};
      });
}

// The rendezvous' and the barriers' latencies, from their hooks.
void RegisterLatencyMetrics(Coordinator* coordinator, Clock* clock,
                            metrics::Registry* registry) {
  metrics::Counter* formed =
      registry
          ->AddCounter("ringleader_generations_formed_total",
                       "Generations formed by the rendezvous, all jobs.")
          .Get();
  metrics::Histogram* rendezvous =
      registry
          ->AddHistogram(
              "ringleader_rendezvous_latency_seconds",
              "From the start of a rendezvous round (first join, or the end "
              "of the previous generation) to the generation formed.",
              {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
               120, 300, 600})
          .Get();
  metrics::Histogram* barrier =
      registry
          ->AddHistogram("ringleader_barrier_latency_seconds",
                         "From the first rank's arrival at a barrier to its "
                         "release.",
                         {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
                          0.25, 0.5, 1, 2.5, 5, 10, 30, 60})
          .Get();
  coordinator->rendezvous().SetLatencyHook(
      [formed, rendezvous](const std::string&, absl::Duration took) {
        formed->Increment();
        rendezvous->Observe(absl::ToDoubleSeconds(took));
      });
  coordinator->barriers().SetLatencyHook(clock, [barrier](absl::Duration took) {
    barrier->Observe(absl::ToDoubleSeconds(took));
  });
}

}  // namespace

void RegisterCoordinatorMetrics(Coordinator* coordinator, Clock* clock,
                                metrics::Registry* registry) {
  RegisterJobMetrics(coordinator, registry);
  RegisterLoadMetrics(coordinator, registry);
  RegisterLatencyMetrics(coordinator, clock, registry);
}

}  // namespace ringleader
