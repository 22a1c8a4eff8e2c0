#ifndef RINGLEADER_WORKER_WORKER_METRICS_H_
#define RINGLEADER_WORKER_WORKER_METRICS_H_

#include "common/metrics.h"

namespace ringleader {

// A worker's Prometheus metrics (README, "Metrics"), registered on one
// registry; the daemon and the trainer record into them. One process is one
// rank, so no metric has labels.
struct WorkerMetrics {
  explicit WorkerMetrics(metrics::Registry* registry);

  metrics::Histogram* step_seconds;       // One optimizer step, data included.
  metrics::Counter* steps;                // Optimizer steps taken.
  metrics::Gauge* samples_per_second;     // Of the last progress window.
  metrics::Counter* allreduce_bytes;      // Gradient buckets all-reduced.
  metrics::Histogram* allreduce_seconds;  // Per bucket, launch to done.
  metrics::Counter* rejoins;              // Generations that ended under it.
  metrics::Counter* generations;          // Generations joined.
  metrics::Gauge* job_restarts;           // The job's restarts, at join.
  metrics::Counter* jobs_done;            // Jobs finished on this worker.
  metrics::Gauge* rank;
  metrics::Gauge* world_size;
  metrics::Gauge* epoch;
  metrics::Gauge* step;
  metrics::Gauge* total_steps;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_WORKER_METRICS_H_
