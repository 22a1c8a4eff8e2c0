#ifndef RINGLEADER_CLI_SPEC_FIELD_PATH_H_
#define RINGLEADER_CLI_SPEC_FIELD_PATH_H_

// A field of a message named by its path, as the validator and the flag
// table write it ("dataset.transform.mean"), and the protobuf reflection
// that writes and copies it, so that one generic piece of code serves every
// job flag instead of a setter call per field.
//
// Pure functions; thread-compatible (they write only the messages given).

#include <string>
#include <type_traits>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/reflection.h"

namespace ringleader::cli {

// The fields from `root` down to the named one: every step but the last is
// a singular message field.
using FieldPath = std::vector<const google::protobuf::FieldDescriptor*>;

// InvalidArgument when a step names no field, or passes through a field that
// is not a singular message.
absl::StatusOr<FieldPath> ResolveFieldPath(
    const google::protobuf::Descriptor* root, absl::string_view path);

// "dataset.transform.mean".
std::string FieldPathName(const FieldPath& path);

// The message that holds the path's last field, its parents created on the
// way as the generated mutable_*() accessors create them.
google::protobuf::Message* MutableParent(google::protobuf::Message* root,
                                         const FieldPath& path);

// Sets the path's field (singular) to `value`. T is the field's C++ type
// (int32_t for int32, std::string for string, ...); an enum takes its
// value's number as int32_t.
template <typename T>
void SetField(google::protobuf::Message* root, const FieldPath& path,
              const T& value);

// Replaces the path's list (a repeated scalar field) with `values`.
template <typename T>
void SetList(google::protobuf::Message* root, const FieldPath& path,
             const std::vector<T>& values) {
  google::protobuf::Message* parent = MutableParent(root, path);
  auto list = parent->GetReflection()->GetMutableRepeatedFieldRef<T>(
      parent, path.back());
  list.Clear();
  for (const T& v : values) list.Add(v);
}

// Makes the path's field of `to` what it is in `from` (same type): its
// value and, for a field with presence, whether it is set; a list replaces
// the list. Sub-messages on the way are created in `to` only.
void CopyField(const google::protobuf::Message& from,
               google::protobuf::Message* to, const FieldPath& path);

}  // namespace ringleader::cli

#endif  // RINGLEADER_CLI_SPEC_FIELD_PATH_H_
