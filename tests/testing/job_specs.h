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

}  // namespace ringleader::testing

#endif  // RINGLEADER_TESTS_TESTING_JOB_SPECS_H_
