// ONNX AttributeProto to Orchid attribute values.
#pragma once

#include <string>

#include "ir/graph.h"

namespace onnx {
class AttributeProto;
}

namespace orchid::onnx_frontend {

// `context` names the file and node in errors. Graph-valued attributes are
// rejected (the importer reports such operators as unsupported first).
AttributeValue convert_attribute(const onnx::AttributeProto& attr, const std::string& base_dir,
                                 const std::string& context);

}  // namespace orchid::onnx_frontend
