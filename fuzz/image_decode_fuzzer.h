#ifndef RINGLEADER_FUZZ_IMAGE_DECODE_FUZZER_H_
#define RINGLEADER_FUZZ_IMAGE_DECODE_FUZZER_H_

#include <cstddef>
#include <cstdint>

// The libFuzzer entry point over the image decoders and transform
// (image_decode_fuzzer.cc); the clang-built fuzzer (scripts/fuzz.sh) and
// image_decode_corpus_test call the same function.
extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

#endif  // RINGLEADER_FUZZ_IMAGE_DECODE_FUZZER_H_
