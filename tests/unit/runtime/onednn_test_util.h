// Tensors converted between oneDNN layouts by oneDNN itself (the oracle
// the native-layout kernel tests compare against).
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <vector>

#include "runtime/kernels/cpu/onednn_common.h"

namespace orchid::runtime::testing {

// `data` (a buffer in layout `from`) converted into layout `to` by oneDNN's reorder.
inline std::vector<float> onednn_convert(const std::vector<float>& data, const dnnl::memory::desc& from,
                                         const dnnl::memory::desc& to) {
  dnnl::engine& engine = cpu::onednn::cpu_engine();
  std::vector<float> source(from.get_size() / sizeof(float), 0.f);
  std::copy(data.begin(), data.end(), source.begin());
  std::vector<float> out(to.get_size() / sizeof(float), 0.f);
  dnnl::memory a(from, engine, source.data()), b(to, engine, out.data());
  dnnl::stream stream(engine);
  dnnl::reorder(a, b).execute(stream, a, b);
  stream.wait();
  return out;
}

}  // namespace orchid::runtime::testing
