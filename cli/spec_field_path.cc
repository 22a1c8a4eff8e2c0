#include "cli/spec_field_path.h"

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace ringleader::cli {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

absl::StatusOr<FieldPath> ResolveFieldPath(const Descriptor* root,
                                           absl::string_view path) {
  FieldPath fields;
  const Descriptor* message = root;
  for (absl::string_view name : absl::StrSplit(path, '.')) {
    if (message == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": ", FieldPathName(fields),
                       " is not a singular message field"));
    }
    const FieldDescriptor* field = message->FindFieldByName(std::string(name));
    if (field == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ": ", message->full_name(), " has no field ", name));
    }
    fields.push_back(field);
    const bool singular_message =
        field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE &&
        !field->is_repeated();
    message = singular_message ? field->message_type() : nullptr;
  }
  return fields;
}

std::string FieldPathName(const FieldPath& path) {
  return absl::StrJoin(path, ".",
                       [](std::string* out, const FieldDescriptor* field) {
                         out->append(field->name());
                       });
}

Message* MutableParent(Message* root, const FieldPath& path) {
  Message* message = root;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    message = message->GetReflection()->MutableMessage(message, path[i]);
  }
  return message;
}

template <typename T>
void SetField(Message* root, const FieldPath& path, const T& value) {
  Message* parent = MutableParent(root, path);
  const Reflection* r = parent->GetReflection();
  const FieldDescriptor* field = path.back();
  if constexpr (std::is_same_v<T, bool>) {
    r->SetBool(parent, field, value);
  } else if constexpr (std::is_same_v<T, int32_t>) {
    if (field->cpp_type() == FieldDescriptor::CPPTYPE_ENUM) {
      r->SetEnumValue(parent, field, value);
    } else {
      r->SetInt32(parent, field, value);
    }
  } else if constexpr (std::is_same_v<T, int64_t>) {
    r->SetInt64(parent, field, value);
  } else if constexpr (std::is_same_v<T, uint32_t>) {
    r->SetUInt32(parent, field, value);
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    r->SetUInt64(parent, field, value);
  } else if constexpr (std::is_same_v<T, float>) {
    r->SetFloat(parent, field, value);
  } else if constexpr (std::is_same_v<T, double>) {
    r->SetDouble(parent, field, value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    r->SetString(parent, field, value);
  }
}

template void SetField<bool>(Message*, const FieldPath&, const bool&);
template void SetField<int32_t>(Message*, const FieldPath&, const int32_t&);
template void SetField<int64_t>(Message*, const FieldPath&, const int64_t&);
template void SetField<uint32_t>(Message*, const FieldPath&, const uint32_t&);
template void SetField<uint64_t>(Message*, const FieldPath&, const uint64_t&);
template void SetField<float>(Message*, const FieldPath&, const float&);
template void SetField<double>(Message*, const FieldPath&, const double&);
template void SetField<std::string>(Message*, const FieldPath&,
                                    const std::string&);

void CopyField(const Message& from, Message* to, const FieldPath& path) {
  const Message* from_parent = &from;
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    from_parent =
        &from_parent->GetReflection()->GetMessage(*from_parent, path[i]);
  }
  // Reflection copies one field generically only by swapping it between two
  // messages of a type, so the field goes through a copy of its parent.
  std::unique_ptr<Message> source(from_parent->New());
  source->CopyFrom(*from_parent);
  Message* to_parent = MutableParent(to, path);
  to_parent->GetReflection()->SwapFields(source.get(), to_parent,
                                         {path.back()});
}

}  // namespace ringleader::cli
