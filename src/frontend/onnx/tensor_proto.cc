#include "frontend/onnx/tensor_proto.h"

#include <onnx/onnx_pb.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "support/error.h"

namespace orchid::onnx_frontend {

namespace fs = std::filesystem;

namespace {

Shape proto_shape(const onnx::TensorProto& proto, const std::string& context) {
  Shape shape;
  for (int64_t d : proto.dims()) {
    if (d < 0) ORCHID_FAIL() << context << ": negative dimension " << d;
    shape.push_back(d);
  }
  // Guard against absurd sizes from corrupt files before allocating. Zero
  // dimensions count as 1: [0, 2^62] holds no data, yet loops over it would
  // not end.
  long double size = 1;
  for (int64_t d : shape) size *= (long double)std::max<int64_t>(d, 1);
  if (size > (long double)(int64_t(1) << 40)) {
    ORCHID_FAIL() << context << ": shape " << shape_to_string(shape) << " is too large (more than 2^40 elements)";
  }
  return shape;
}

std::string read_external(const onnx::TensorProto& proto, const std::string& base_dir,
                          size_t expected_bytes, const std::string& context) {
  std::string location;
  int64_t offset = 0;
  int64_t length = -1;
  for (const auto& entry : proto.external_data()) {
    if (entry.key() == "location") location = entry.value();
    try {
      if (entry.key() == "offset") offset = std::stoll(entry.value());
      if (entry.key() == "length") length = std::stoll(entry.value());
    } catch (const std::exception&) {
      ORCHID_FAIL() << context << ": external data " << entry.key() << " '" << entry.value()
                    << "' is not a number";
    }
  }
  if (location.empty()) ORCHID_FAIL() << context << ": external data without a location";
  fs::path relative(location);
  if (relative.is_absolute() || location.find("..") != std::string::npos) {
    ORCHID_FAIL() << context << ": external data location '" << location
                  << "' must be a relative path inside the model's folder";
  }
  if (offset < 0) ORCHID_FAIL() << context << ": external data offset " << offset << " is negative";
  fs::path path = fs::path(base_dir) / relative;
  std::ifstream file(path, std::ios::binary);
  std::error_code ec;
  if (!file || !fs::is_regular_file(path, ec)) {
    ORCHID_FAIL() << context << ": cannot open external data file " << path.string();
  }
  if (length < 0) length = int64_t(expected_bytes);
  if (size_t(length) != expected_bytes) {
    ORCHID_FAIL() << context << ": external data length " << length << " does not match the "
                  << expected_bytes << " bytes of the tensor";
  }
  // Checked before allocating, so a corrupt length cannot ask for terabytes.
  uintmax_t file_size = fs::file_size(path, ec);
  if (ec || uintmax_t(offset) > file_size || file_size - uintmax_t(offset) < uintmax_t(length)) {
    ORCHID_FAIL() << context << ": external data file " << path.string() << " is too short (need "
                  << length << " bytes at offset " << offset << ", the file has "
                  << (ec ? 0 : file_size) << ")";
  }
  file.seekg(offset);
  std::string bytes(size_t(length), '\0');
  file.read(bytes.data(), length);
  if (!file) {
    ORCHID_FAIL() << context << ": external data file " << path.string() << " is too short (need "
                  << length << " bytes at offset " << offset << ")";
  }
  return bytes;
}

template <typename Field>
void check_count(const Field& field, int64_t numel, const std::string& context) {
  if (int64_t(field.size()) != numel) {
    ORCHID_FAIL() << context << ": has " << field.size() << " values but its shape needs " << numel;
  }
}

// The number of values in the typed repeated field that ONNX uses for `dtype`.
int64_t typed_field_size(const onnx::TensorProto& proto, DType dtype) {
  switch (dtype) {
    case DType::Float32: return proto.float_data_size();
    case DType::Float64: return proto.double_data_size();
    case DType::Int64: return proto.int64_data_size();
    case DType::UInt32:
    case DType::UInt64: return proto.uint64_data_size();
    default: return proto.int32_data_size();
  }
}

// Fills `tensor` from the typed repeated field that ONNX uses for its dtype.
void copy_typed_fields(const onnx::TensorProto& proto, Tensor& tensor, const std::string& context) {
  int64_t n = tensor.numel();
  if (n == 0) return;  // an empty repeated field's data() may be null
  switch (tensor.dtype()) {
    case DType::Float32:
      check_count(proto.float_data(), n, context);
      std::memcpy(tensor.raw(), proto.float_data().data(), size_t(n) * 4);
      return;
    case DType::Float64:
      check_count(proto.double_data(), n, context);
      std::memcpy(tensor.raw(), proto.double_data().data(), size_t(n) * 8);
      return;
    case DType::Int64:
      check_count(proto.int64_data(), n, context);
      std::memcpy(tensor.raw(), proto.int64_data().data(), size_t(n) * 8);
      return;
    case DType::UInt32:
    case DType::UInt64:
      check_count(proto.uint64_data(), n, context);
      for (int64_t i = 0; i < n; ++i) {
        uint64_t v = proto.uint64_data(int(i));
        if (tensor.dtype() == DType::UInt32) tensor.data<uint32_t>()[i] = uint32_t(v);
        else tensor.data<uint64_t>()[i] = v;
      }
      return;
    default:  // int32, int16, int8, uint16, uint8, bool, float16, bfloat16 travel in int32_data
      check_count(proto.int32_data(), n, context);
      visit_dtype(tensor.dtype(), [&]<typename T>() {
        for (int64_t i = 0; i < n; ++i) {
          int32_t v = proto.int32_data(int(i));
          if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
            tensor.data<T>()[i].bits = uint16_t(v);
          } else {
            tensor.data<T>()[i] = T(v);
          }
        }
      });
      return;
  }
}

}  // namespace

Tensor tensor_from_proto(const onnx::TensorProto& proto, const std::string& base_dir,
                         const std::string& context) {
  DType dtype;
  if (!dtype_from_onnx(proto.data_type(), &dtype)) {
    ORCHID_FAIL() << context << ": unsupported element type " << onnx_dtype_name(proto.data_type());
  }
  // The data's size is checked against the shape before the tensor is
  // allocated: a corrupt shape must not allocate terabytes.
  Shape shape = proto_shape(proto, context);
  int64_t numel = shape_numel(shape);
  size_t bytes = size_t(numel) * dtype_size(dtype);
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    std::string data = read_external(proto, base_dir, bytes, context);
    Tensor tensor(dtype, shape);
    std::memcpy(tensor.raw(), data.data(), bytes);
    return tensor;
  }
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != bytes) {
      ORCHID_FAIL() << context << ": raw data has " << proto.raw_data().size()
                    << " bytes but its shape and type need " << bytes;
    }
    Tensor tensor(dtype, shape);
    std::memcpy(tensor.raw(), proto.raw_data().data(), bytes);
    return tensor;
  }
  if (typed_field_size(proto, dtype) != numel) {
    ORCHID_FAIL() << context << ": has " << typed_field_size(proto, dtype) << " values but its shape needs "
                  << numel;
  }
  Tensor tensor(dtype, shape);
  copy_typed_fields(proto, tensor, context);
  return tensor;
}

void tensor_to_proto(const Tensor& tensor, const std::string& name, onnx::TensorProto* proto) {
  proto->Clear();
  proto->set_name(name);
  proto->set_data_type(dtype_to_onnx(tensor.dtype()));
  for (int64_t d : tensor.shape()) proto->add_dims(d);
  proto->set_raw_data(tensor.raw(), tensor.nbytes());
}

NamedTensor read_tensor_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) ORCHID_FAIL() << path << ": cannot open tensor file";
  onnx::TensorProto proto;
  if (!proto.ParseFromIstream(&file)) {
    ORCHID_FAIL() << path << ": not a valid ONNX TensorProto file (corrupt or truncated)";
  }
  std::string base = fs::path(path).parent_path().string();
  return {proto.name(), tensor_from_proto(proto, base, path)};
}

void write_tensor_file(const std::string& path, const Tensor& tensor, const std::string& name) {
  onnx::TensorProto proto;
  tensor_to_proto(tensor, name, &proto);
  std::ofstream file(path, std::ios::binary);
  if (!file || !proto.SerializeToOstream(&file)) ORCHID_FAIL() << path << ": cannot write tensor file";
}

}  // namespace orchid::onnx_frontend
