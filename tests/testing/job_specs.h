#ifndef RINGLEADER_TESTS_TESTING_JOB_SPECS_H_
#define RINGLEADER_TESTS_TESTING_JOB_SPECS_H_

#include <string>

#include "ringleader/v1/job.pb.h"

namespace ringleader::testing {

// The smallest valid job: an MLP on 100 synthetic samples, one epoch, SGD.
// Tests of the control plane start from it and set what they exercise.
inline v1::JobSpec MinimalJobSpec(const std::string& name, int min_workers,
                                  int max_workers) {
  v1::JobSpec s;
  s.set_name(name);
  s.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  s.mutable_dataset()->set_format(v1::DATASET_FORMAT_SYNTHETIC);
  s.mutable_dataset()->set_synthetic_train_size(100);
  s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  s.mutable_optimizer()->set_learning_rate(0.1);
  s.set_epochs(1);
  s.set_batch_size(10);
  s.set_min_workers(min_workers);
  s.set_max_workers(max_workers);
  return s;
}

// Two epochs of an MLP on 30,000 synthetic samples for 2..3 workers, with a
// checkpoint every 50 steps in `checkpoint_dir` and 3 restarts allowed: long
// enough to kill a worker mid-epoch and watch the survivors carry on.
inline v1::JobSpec FailureJobSpec(const std::string& name,
                                  const std::string& checkpoint_dir) {
  v1::JobSpec s;
  s.set_name(name);
  s.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  s.mutable_dataset()->set_format(v1::DATASET_FORMAT_SYNTHETIC);
  s.mutable_dataset()->set_synthetic_train_size(30000);
  s.mutable_dataset()->set_synthetic_test_size(2000);
  s.mutable_dataset()->set_shuffle(true);
  s.mutable_optimizer()->set_kind(v1::OPTIMIZER_KIND_SGD);
  s.mutable_optimizer()->set_learning_rate(0.05);
  s.mutable_optimizer()->set_momentum(0.9);
  s.set_epochs(2);
  s.set_batch_size(32);
  s.set_min_workers(2);
  s.set_max_workers(3);
  s.set_max_restarts(3);
  s.set_rendezvous_last_call_ms(500);
  s.set_progress_every_steps(10);
  s.set_checkpoint_every_steps(50);
  s.set_checkpoint_dir(checkpoint_dir);
  return s;
}

// An MLP (hidden 48, 24) on `train_size` shuffled synthetic samples (256 for
// testing) in batches of `batch_size`, checkpointed every `every_steps` steps
// into `checkpoint_dir`: the tests that kill workers and hold the resumed run
// to a one-process replay start from it and set the optimizer, the epochs
// and the world they exercise. `every_steps` 0: at each epoch's end only.
inline v1::JobSpec CheckpointedMlpJobSpec(const std::string& name,
                                          const std::string& checkpoint_dir,
                                          int train_size, int batch_size,
                                          int every_steps) {
  v1::JobSpec s;
  s.set_name(name);
  s.mutable_model()->set_arch(v1::MODEL_ARCH_MLP);
  s.mutable_model()->add_hidden_sizes(48);
  s.mutable_model()->add_hidden_sizes(24);
  s.mutable_dataset()->set_format(v1::DATASET_FORMAT_SYNTHETIC);
  s.mutable_dataset()->set_synthetic_train_size(train_size);
  s.mutable_dataset()->set_synthetic_test_size(256);
  s.mutable_dataset()->set_shuffle(true);
  s.set_batch_size(batch_size);
  s.set_checkpoint_dir(checkpoint_dir);
  s.set_checkpoint_every_steps(every_steps);
  return s;
}

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_JOB_SPECS_H_
