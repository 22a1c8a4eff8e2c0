#ifndef RINGLEADER_WORKER_DATA_EMPTY_DATASET_H_
#define RINGLEADER_WORKER_DATA_EMPTY_DATASET_H_

// A split with no samples but the fields of another (the test split a job
// did not give: nothing to evaluate, yet code that looks at the split's
// fields sees the same ones as training).

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "worker/data/dataset.h"

namespace ringleader {

class EmptyDataset final : public Dataset {
 public:
  EmptyDataset(std::vector<FieldShape> input_fields, FieldShape target_field,
               std::string description)
      : input_fields_(std::move(input_fields)),
        target_field_(std::move(target_field)),
        description_(std::move(description)) {}

  int64_t size() const override { return 0; }
  std::vector<FieldShape> input_fields() const override {
    return input_fields_;
  }
  FieldShape target_field() const override { return target_field_; }
  // No samples show no classes.
  int64_t num_classes() const override { return 0; }
  std::string Describe() const override { return description_; }
  // OutOfRange for any index; n == 0 is fine.
  absl::Status GatherFields(const int64_t* indices, size_t n,
                            const std::vector<void*>& inputs_out,
                            void* targets_out) const override;

 private:
  const std::vector<FieldShape> input_fields_;
  const FieldShape target_field_;
  const std::string description_;
};

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_DATA_EMPTY_DATASET_H_
