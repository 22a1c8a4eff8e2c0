#ifndef RINGLEADER_WORKER_TRAIN_STEP_TOKEN_VOCABULARY_H_
#define RINGLEADER_WORKER_TRAIN_STEP_TOKEN_VOCABULARY_H_

// A token file's ids held to the model's vocabulary. An id at or past it
// would fail inside the model's embedding, as a TorchScript traceback that
// names no token; with the limit set, reading the window fails instead:
// "token id X at position P is >= the model's vocabulary size V", which the
// trainer reports as the job's error.

#include <c10/core/Device.h>

#include <cstdint>

#include "ringleader/v1/job.pb.h"
#include "worker/data/dataset.h"
#include "worker/model/model.h"
#include "worker/train/step/task.h"

namespace ringleader {

// The vocabulary a language model predicts over: the last dimension of its
// logits ([B, T, V]) for two windows of token 0 (an id every vocabulary
// has), run in eval mode without gradients (the model is back in training
// mode after). 0 when the model shows none: it returns only a loss, or
// fails on that input (the model probe then reports why).
int64_t ModelVocabulary(Model& model, const Task& task, int64_t block_size,
                        const c10::Device& device);

// For a TOKENS dataset, sets the limit of `train` and `test` (those that are
// token files) to the spec's task.num_classes when given, else to
// ModelVocabulary; nothing for other datasets or an unknown vocabulary.
// Returns the limit set (0: none).
int64_t LimitTokenVocabulary(const v1::JobSpec& spec, Model& model,
                             const Task& task, Dataset& train, Dataset& test,
                             const c10::Device& device);

}  // namespace ringleader

#endif  // RINGLEADER_WORKER_TRAIN_STEP_TOKEN_VOCABULARY_H_
