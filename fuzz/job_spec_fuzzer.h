#ifndef RINGLEADER_FUZZ_JOB_SPEC_FUZZER_H_
#define RINGLEADER_FUZZ_JOB_SPEC_FUZZER_H_

#include <cstddef>
#include <cstdint>

// The libFuzzer entry point over job-spec parsing and validation
// (job_spec_fuzzer.cc). The clang-built fuzzer (scripts/fuzz.sh) and the
// corpus replay test call the same function. An input that breaks one of its
// invariants aborts the process with the invariant on stderr.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#endif  // RINGLEADER_FUZZ_JOB_SPEC_FUZZER_H_
