#include "frontend/onnx/attributes.h"

#include <onnx/onnx_pb.h>

#include "frontend/onnx/tensor_proto.h"
#include "support/error.h"

namespace orchid::onnx_frontend {

AttributeValue convert_attribute(const onnx::AttributeProto& attr, const std::string& base_dir,
                                 const std::string& context) {
  using A = onnx::AttributeProto;
  if (!attr.ref_attr_name().empty()) {
    ORCHID_FAIL() << context << ": attribute '" << attr.name()
                  << "' refers to a function attribute; ONNX functions are not supported";
  }
  switch (attr.type()) {
    case A::INT: return int64_t(attr.i());
    case A::FLOAT: return double(attr.f());
    case A::STRING: return attr.s();
    case A::INTS: return std::vector<int64_t>(attr.ints().begin(), attr.ints().end());
    case A::FLOATS: return std::vector<double>(attr.floats().begin(), attr.floats().end());
    case A::STRINGS: return std::vector<std::string>(attr.strings().begin(), attr.strings().end());
    case A::TENSOR:
      return tensor_from_proto(attr.t(), base_dir, context + ": attribute '" + attr.name() + "'");
    default:
      ORCHID_FAIL() << context << ": attribute '" << attr.name() << "' has an unsupported type ("
                    << A::AttributeType_Name(attr.type()) << ")";
  }
}

}  // namespace orchid::onnx_frontend
