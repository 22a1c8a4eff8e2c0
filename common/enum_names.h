#ifndef RINGLEADER_COMMON_ENUM_NAMES_H_
#define RINGLEADER_COMMON_ENUM_NAMES_H_

// The one way a proto enum value becomes a word for people, and back: its
// descriptor name in lower case without the type's prefix
// (MODEL_ARCH_TORCHSCRIPT -> "torchscript", JOB_STATE_RUNNING -> "running").
// The prefix is the type name in UPPER_SNAKE_CASE, as the proto style guide
// has every value begin; the names come from the descriptors, so a value
// added to a .proto file needs no table here. ringctl's flags and output
// and the coordinator's metric labels all read them.
//
// Pure functions; thread-safe.

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/generated_enum_reflection.h"

namespace ringleader {

// "mlp" for MODEL_ARCH_MLP; the number in decimal for a value the type does
// not define (a newer peer's), so nothing is shown as an empty word.
std::string EnumValueName(const google::protobuf::EnumDescriptor* type,
                          int number);

template <typename E>
std::string EnumValueName(E value) {
  return EnumValueName(google::protobuf::GetEnumDescriptor<E>(),
                       static_cast<int>(value));
}

// The value named `name`, in any case, by its short name ("mlp") or its full
// one ("MODEL_ARCH_MLP"); nullopt when the type has no such value.
std::optional<int> ParseEnumValueName(
    const google::protobuf::EnumDescriptor* type, absl::string_view name);

// The short names of the values a user chooses from, in declaration order:
// every value but a zero one named *_UNSPECIFIED (which means "not set").
// A zero value with a name of its own (CPU_TRANSPORT_AUTO) is a choice.
std::vector<std::string> ChoosableEnumValueNames(
    const google::protobuf::EnumDescriptor* type);

}  // namespace ringleader

#endif  // RINGLEADER_COMMON_ENUM_NAMES_H_
