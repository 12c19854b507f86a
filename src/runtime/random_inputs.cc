#include "runtime/random_inputs.h"

namespace orchid::runtime {

Tensor random_tensor(const TensorType& type, std::mt19937_64& rng) {
  Tensor tensor(type);
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  std::uniform_int_distribution<int> small(0, 3);
  for (int64_t i = 0; i < tensor.numel(); ++i) {
    if (is_float(type.dtype)) {
      tensor.set_f64(i, real(rng));
    } else if (type.dtype == DType::Bool) {
      tensor.set_f64(i, small(rng) & 1);
    } else {
      tensor.set_f64(i, small(rng));
    }
  }
  return tensor;
}

std::map<std::string, Tensor> random_inputs(const Graph& graph, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::map<std::string, Tensor> feeds;
  for (ValueId id : graph.inputs()) feeds[graph.value(id).name] = random_tensor(graph.type(id), rng);
  return feeds;
}

}  // namespace orchid::runtime
