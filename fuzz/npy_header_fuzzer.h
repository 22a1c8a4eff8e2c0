#ifndef RINGLEADER_FUZZ_NPY_HEADER_FUZZER_H_
#define RINGLEADER_FUZZ_NPY_HEADER_FUZZER_H_

#include <cstddef>
#include <cstdint>

// The libFuzzer entry point over .npy parsing (npy_header_fuzzer.cc). The
// clang-built fuzzer (scripts/fuzz.sh) and the corpus replay test call the
// same function. An input that breaks one of its invariants aborts the
// process with the invariant on stderr.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#endif  // RINGLEADER_FUZZ_NPY_HEADER_FUZZER_H_
