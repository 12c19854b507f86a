// Conversion between ONNX TensorProto messages and Orchid tensors, and the
// .pb tensor files of the ONNX test-data format.
#pragma once

#include <string>

#include "ir/tensor.h"

namespace onnx {
class TensorProto;
}

namespace orchid::onnx_frontend {

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Decodes a TensorProto: raw_data, the typed repeated fields, or external
// data stored in a file relative to `base_dir`. `context` names the tensor in
// errors ("model.onnx: initializer 'conv1.weight'").
Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir,
                         const std::string& context);
void tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto);

// Reads / writes one serialized TensorProto (input_0.pb, output_0.pb).
NamedTensor read_tensor_file(const std::string& path);
void write_tensor_file(const std::string& path, const Tensor& tensor, const std::string& name);

}  // namespace orchid::onnx_frontend
