// ArgMax/ArgMin and CumSum kernels over [outer, axis, inner]: rows with
// inner == 1 are scanned directly; otherwise blocks of kBlock inner elements
// keep their running state in a small array, so the loop over the axis reads
// contiguous memory. Semantics follow reference/ops/reduce.cc.
#include "runtime/kernels/cpu/reduce_axis.h"

#include <algorithm>
#include <type_traits>

#include "reference/ops/op_utils.h"
#include "reference/ops/reduce_utils.h"
#include "support/error.h"
#include "support/parallel.h"

namespace orchid::runtime::cpu {

namespace {

constexpr int64_t kBlock = 256;
constexpr int64_t kElementsPerTask = 32768;

// Tasks: each (outer row, block of inner) pair, sized to roughly
// kElementsPerTask input elements per thread.
int64_t task_grain(const AxisSplit& s) {
  return std::max<int64_t>(1, kElementsPerTask / std::max<int64_t>(1, s.axis * std::min(s.inner, kBlock)));
}

bool supported_dtype(DType dtype) {
  return dtype == DType::Float32 || dtype == DType::Float64 || dtype == DType::Int32 || dtype == DType::Int64;
}

// ------------------------------------------------------------ ArgMax / ArgMin
// NaN wins and ties keep the first (or, select_last, the last) index: the
// interpreter's arg_better, on keys that compare exactly like its doubles.
template <typename T>
void arg_rows(const AxisSplit& s, bool want_max, bool select_last, const T* x, int64_t* y) {
  int64_t blocks = (s.inner + kBlock - 1) / kBlock;
  parallel_for(s.outer * blocks, task_grain(s), [&](int64_t begin, int64_t end) {
    T best[kBlock];
    for (int64_t t = begin; t < end; ++t) {
      int64_t o = t / blocks, i0 = (t % blocks) * kBlock, n = std::min(kBlock, s.inner - i0);
      const T* row = x + o * s.axis * s.inner + i0;
      int64_t* out = y + o * s.inner + i0;
      for (int64_t i = 0; i < n; ++i) {
        best[i] = row[i];
        out[i] = 0;
      }
      for (int64_t r = 1; r < s.axis; ++r) {
        const T* src = row + r * s.inner;
        for (int64_t i = 0; i < n; ++i) {
          if (reference::arg_better(src[i], best[i], want_max, select_last)) {
            best[i] = src[i];
            out[i] = r;
          }
        }
      }
    }
  });
}

class ArgKernel : public Kernel {
 public:
  ArgKernel(DType dtype, AxisSplit split, bool want_max, bool select_last)
      : dtype_(dtype), split_(split), want_max_(want_max), select_last_(select_last) {}

  void run(const KernelArgs& args) override {
    if (split_.outer * split_.inner == 0) return;
    const void* x = args.inputs[0];
    int64_t* y = static_cast<int64_t*>(args.outputs[0]);
    switch (dtype_) {
      case DType::Float32: return typed<float>(x, y);
      case DType::Float64: return typed<double>(x, y);
      case DType::Int32: return typed<int32_t>(x, y);
      case DType::Int64: return typed<int64_t>(x, y);
      default: ORCHID_CHECK(false) << "arg kernel made for " << dtype_name(dtype_);
    }
  }

  std::string implementation() const override { return want_max_ ? "reduce ArgMax" : "reduce ArgMin"; }

 private:
  template <typename T>
  void typed(const void* x, int64_t* y) {
    arg_rows(split_, want_max_, select_last_, static_cast<const T*>(x), y);
  }

  DType dtype_;
  AxisSplit split_;
  bool want_max_, select_last_;
};

// ------------------------------------------------------------ CumSum
// Floats accumulate in double and integers wrap modulo 2^64 (computed in the
// unsigned type of their width, which wraps alike), as the interpreter does.

template <typename T>
void cumsum_rows(const AxisSplit& s, bool exclusive, bool reverse, const T* x, T* y) {
  using Acc = WideAcc<T>;
  int64_t blocks = (s.inner + kBlock - 1) / kBlock;
  parallel_for(s.outer * blocks, task_grain(s), [&](int64_t begin, int64_t end) {
    Acc acc[kBlock];
    for (int64_t t = begin; t < end; ++t) {
      int64_t o = t / blocks, i0 = (t % blocks) * kBlock, n = std::min(kBlock, s.inner - i0);
      std::fill_n(acc, n, Acc(0));
      for (int64_t k = 0; k < s.axis; ++k) {
        int64_t r = reverse ? s.axis - 1 - k : k;
        int64_t offset = (o * s.axis + r) * s.inner + i0;
        const T* src = x + offset;
        T* dst = y + offset;
        for (int64_t i = 0; i < n; ++i) {
          Acc next = acc[i] + Acc(src[i]);
          dst[i] = T(exclusive ? acc[i] : next);
          acc[i] = next;
        }
      }
    }
  });
}

class CumSumKernel : public Kernel {
 public:
  CumSumKernel(DType dtype, AxisSplit split, bool exclusive, bool reverse)
      : dtype_(dtype), split_(split), exclusive_(exclusive), reverse_(reverse) {}

  void run(const KernelArgs& args) override {
    const void* x = args.inputs[0];
    void* y = args.outputs[0];
    switch (dtype_) {
      case DType::Float32: return typed<float>(x, y);
      case DType::Float64: return typed<double>(x, y);
      case DType::Int32: return typed<int32_t>(x, y);
      case DType::Int64: return typed<int64_t>(x, y);
      default: ORCHID_CHECK(false) << "CumSum kernel made for " << dtype_name(dtype_);
    }
  }

  std::string implementation() const override { return "reduce CumSum"; }

 private:
  template <typename T>
  void typed(const void* x, void* y) {
    cumsum_rows(split_, exclusive_, reverse_, static_cast<const T*>(x), static_cast<T*>(y));
  }

  DType dtype_;
  AxisSplit split_;
  bool exclusive_, reverse_;
};

}  // namespace

AxisSplit split_at_axis(const Shape& shape, size_t axis) {
  AxisSplit s;
  s.outer = shape_numel(Shape(shape.begin(), shape.begin() + int64_t(axis)));
  s.axis = shape[axis];
  s.inner = shape_numel(Shape(shape.begin() + int64_t(axis) + 1, shape.end()));
  return s;
}

std::unique_ptr<Kernel> make_arg_kernel(const Graph& graph, const KernelGroup& group, const Node& node) {
  const TensorType& x = graph.type(node.inputs[0]);
  if (!supported_dtype(x.dtype) || x.rank() == 0 || group.inputs.size() != 1) return nullptr;
  size_t axis = size_t(reference::normalize_axis(node.attrs.get_int("axis", 0), int64_t(x.rank())));
  if (x.shape[axis] == 0) return nullptr;  // the interpreter reports the error, or the output is empty
  bool select_last = node.attrs.get_int("select_last_index", 0) != 0;
  return std::make_unique<ArgKernel>(x.dtype, split_at_axis(x.shape, axis), node.op == "ArgMax", select_last);
}

std::unique_ptr<Kernel> make_cumsum_kernel(const Graph& graph, const KernelGroup& group, const Node& node) {
  const TensorType& x = graph.type(node.inputs[0]);
  if (!supported_dtype(x.dtype) || x.rank() == 0 || node.inputs.size() != 2) return nullptr;
  // The axis input decides the loop nest: only a constant one is planned here.
  const Value& axis_value = graph.value(node.inputs[1]);
  if (!axis_value.is_constant() || axis_value.constant->numel() != 1 || !is_integer(axis_value.type.dtype)) {
    return nullptr;
  }
  if (group.inputs.empty() || group.inputs[0] != node.inputs[0]) return nullptr;
  size_t axis = size_t(reference::normalize_axis(axis_value.constant->at_i64(0), int64_t(x.rank())));
  bool exclusive = node.attrs.get_int("exclusive", 0) != 0;
  bool reverse = node.attrs.get_int("reverse", 0) != 0;
  return std::make_unique<CumSumKernel>(x.dtype, split_at_axis(x.shape, axis), exclusive, reverse);
}

}  // namespace orchid::runtime::cpu
