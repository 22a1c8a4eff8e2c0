#include "worker/worker_metrics.h"

namespace ringleader {

WorkerMetrics::WorkerMetrics(metrics::Registry* r)
    : step_seconds(r->AddHistogram("ringleader_worker_step_seconds",
                                   "Time of one optimizer step (data, "
                                   "forward, backward, all-reduce, update).",
                                   {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                    0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30})
                       .Get()),
      steps(r->AddCounter("ringleader_worker_steps_total",
                          "Optimizer steps taken.")
                .Get()),
      samples_per_second(
          r->AddGauge("ringleader_worker_samples_per_second",
                      "Training samples per second of this rank over the "
                      "last progress window.")
              .Get()),
      allreduce_bytes(r->AddCounter("ringleader_worker_allreduce_bytes_total",
                                    "Bytes of gradient buckets all-reduced.")
                          .Get()),
      allreduce_seconds(
          r->AddHistogram("ringleader_worker_allreduce_seconds",
                          "One bucket's all-reduce, from launch to done.",
                          {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                           0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10})
              .Get()),
      rejoins(r->AddCounter("ringleader_worker_rejoins_total",
                            "Generations that ended under this worker, "
                            "after which it rejoined.")
                  .Get()),
      generations(r->AddCounter("ringleader_worker_generations_total",
                                "Generations this worker trained in.")
                      .Get()),
      job_restarts(r->AddGauge("ringleader_worker_job_restarts",
                               "Restarts the current job has spent, as the "
                               "coordinator said at the last join.")
                       .Get()),
      jobs_done(r->AddCounter("ringleader_worker_jobs_total",
                              "Jobs this worker finished.")
                    .Get()),
      rank(r->AddGauge("ringleader_worker_rank",
                       "Rank in the current generation.")
               .Get()),
      world_size(r->AddGauge("ringleader_worker_world_size",
                             "Ranks in the current generation.")
                     .Get()),
      epoch(r->AddGauge("ringleader_worker_epoch", "Current epoch (from 0).")
                .Get()),
      step(r->AddGauge("ringleader_worker_step",
                       "Optimizer steps of the current job so far.")
               .Get()),
      total_steps(r->AddGauge("ringleader_worker_total_steps",
                              "Optimizer steps the current job takes.")
                      .Get()) {}

}  // namespace ringleader
