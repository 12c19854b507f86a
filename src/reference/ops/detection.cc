// Detection and sampling operators: NonMaxSuppression, GridSample, RoiAlign.
// (MaxUnpool lives in pool.cc.)
//
// NonMaxSuppression's output shape [num_selected, 3] depends on the values
// of all its inputs. Inference therefore needs them (ctx.require_value): the
// importer folds the node when they are constants, and `orchid check`
// specializes the graph on the test's inputs; otherwise loading fails with an
// orchid::Error that says why.
//
// The computations follow the ONNX reference and onnxruntime's CPU kernels
// (the node tests' expected outputs come from them), in double precision.
#include <algorithm>
#include <array>
#include <cmath>

#include "reference/ops/extra_utils.h"
#include "reference/ops/op_utils.h"
#include "reference/ops/ops.h"

namespace orchid::reference {
namespace {

using extra::f64;

// ---- NonMaxSuppression -------------------------------------------------------

// NonMaxSuppression(boxes [B, S, 4], scores [B, K, S], max_output_boxes_per_class?,
// iou_threshold?, score_threshold?) -> selected_indices [num_selected, 3] int64
// of (batch, class, box). Per batch and class, boxes whose score exceeds
// score_threshold (when given) are taken by decreasing score (the lower box
// index first on ties); a box is dropped when its IoU with an already selected
// box exceeds iou_threshold; at most max_output_boxes_per_class (default 0:
// none) are selected. center_point_box = 0: boxes are [y1, x1, y2, x2] of any
// two opposite corners; 1: [x_center, y_center, width, height].
struct NmsInputs {
  const Tensor* boxes;
  const Tensor* scores;
  const Tensor* max_per_class;
  const Tensor* iou_threshold;
  const Tensor* score_threshold;
};

void check_nms_types(const TensorType& boxes, const TensorType& scores) {
  require_dtype(boxes.dtype, TypeClass::Float, 0, "boxes");
  require_dtype(scores.dtype, TypeClass::Float, 1, "scores");
  if (boxes.rank() != 3 || boxes.shape[2] != 4) {
    ORCHID_FAIL() << "input 0 (boxes) must have shape [num_batches, spatial_dimension, 4], got "
                  << shape_to_string(boxes.shape);
  }
  if (scores.rank() != 3 || scores.shape[0] != boxes.shape[0] || scores.shape[2] != boxes.shape[1]) {
    ORCHID_FAIL() << "input 1 (scores) must have shape [" << boxes.shape[0] << ", num_classes, " << boxes.shape[1]
                  << "] for boxes of shape " << shape_to_string(boxes.shape) << ", got "
                  << shape_to_string(scores.shape);
  }
}

double scalar_input(const Tensor* t, size_t index, const char* name, double fallback) {
  if (!t) return fallback;
  if (t->numel() != 1) {
    ORCHID_FAIL() << "input " << index << " (" << name << ") must hold one value, got shape "
                  << shape_to_string(t->shape());
  }
  return t->at_f64(0);
}

std::vector<std::array<int64_t, 3>> run_nms(const NmsInputs& in, bool center_point_box) {
  int64_t batches = in.boxes->dim(0), spatial = in.boxes->dim(1), classes = in.scores->dim(1);
  scalar_input(in.max_per_class, 2, "max_output_boxes_per_class", 0);  // checks it holds one value
  int64_t max_per_class = in.max_per_class ? in.max_per_class->at_i64(0) : 0;
  double iou_threshold = scalar_input(in.iou_threshold, 3, "iou_threshold", 0);
  bool has_score_threshold = in.score_threshold != nullptr;
  double score_threshold = scalar_input(in.score_threshold, 4, "score_threshold", 0);
  std::vector<double> boxes = f64(*in.boxes);
  std::vector<double> scores = f64(*in.scores);

  // Corners (y_min, x_min, y_max, x_max) of a box.
  auto corners = [&](int64_t b, int64_t i) {
    const double* p = &boxes[size_t((b * spatial + i) * 4)];
    if (center_point_box) {
      double xc = p[0], yc = p[1], w = p[2], h = p[3];
      return std::array<double, 4>{yc - h / 2, xc - w / 2, yc + h / 2, xc + w / 2};
    }
    return std::array<double, 4>{std::min(p[0], p[2]), std::min(p[1], p[3]), std::max(p[0], p[2]),
                                 std::max(p[1], p[3])};
  };
  auto suppresses = [&](const std::array<double, 4>& a, const std::array<double, 4>& b) {
    double ih = std::min(a[2], b[2]) - std::max(a[0], b[0]);
    double iw = std::min(a[3], b[3]) - std::max(a[1], b[1]);
    if (ih <= 0 || iw <= 0) return false;
    double area_a = (a[2] - a[0]) * (a[3] - a[1]);
    double area_b = (b[2] - b[0]) * (b[3] - b[1]);
    if (area_a <= 0 || area_b <= 0) return false;
    double inter = ih * iw;
    return inter / (area_a + area_b - inter) > iou_threshold;
  };

  std::vector<std::array<int64_t, 3>> selected;
  if (max_per_class <= 0) return selected;
  for (int64_t b = 0; b < batches; ++b) {
    for (int64_t k = 0; k < classes; ++k) {
      const double* s = &scores[size_t((b * classes + k) * spatial)];
      std::vector<int64_t> order;
      for (int64_t i = 0; i < spatial; ++i) {
        if (!has_score_threshold || s[i] > score_threshold) order.push_back(i);
      }
      std::stable_sort(order.begin(), order.end(), [&](int64_t x, int64_t y) { return s[x] > s[y]; });
      std::vector<std::array<double, 4>> kept;
      for (int64_t i : order) {
        if (int64_t(kept.size()) >= max_per_class) break;
        std::array<double, 4> c = corners(b, i);
        bool drop = false;
        for (const auto& other : kept) drop = drop || suppresses(c, other);
        if (drop) continue;
        kept.push_back(c);
        selected.push_back({b, k, i});
      }
    }
  }
  return selected;
}

OpSchema nms_schema() {
  OpSchema s;
  s.op = "NonMaxSuppression";
  s.min_inputs = 2;
  s.max_inputs = 5;
  s.infer = [](const InferContext& ctx) {
    check_nms_types(ctx.input(0), ctx.input(1));
    if (ctx.has_input(2) && ctx.input(2).dtype != DType::Int64) {
      ORCHID_FAIL() << "expected an int64 tensor for input 2 (max_output_boxes_per_class), got "
                    << dtype_name(ctx.input(2).dtype);
    }
    for (size_t i : {size_t(3), size_t(4)}) {
      if (ctx.has_input(i)) require_dtype(ctx.input(i).dtype, TypeClass::Float, i, i == 3 ? "iou_threshold" : "score_threshold");
    }
    static const char* names[] = {"boxes", "scores", "max_output_boxes_per_class", "iou_threshold",
                                  "score_threshold"};
    std::array<const Tensor*, 5> values{};
    for (size_t i = 0; i < 5; ++i) {
      if (!ctx.has_input(i)) continue;
      try {
        values[i] = &ctx.require_value(i, names[i]);
      } catch (const Error&) {
        ORCHID_FAIL() << "the output shape [num_selected_indices, 3] depends on the values of the inputs, so input "
                      << i << " (" << names[i]
                      << ") must be known when the model is loaded (a constant or computable from constants); "
                         "Orchid needs static shapes";
      }
    }
    int64_t count = int64_t(run_nms({values[0], values[1], values[2], values[3], values[4]},
                                    ctx.attrs().get_int("center_point_box", 0) != 0)
                                .size());
    return one(DType::Int64, {count, 3});
  };
  s.eval = [](const EvalContext& ctx) {
    auto opt = [&](size_t i) { return ctx.has_input(i) ? ctx.inputs[i] : nullptr; };
    auto selected = run_nms({&ctx.input(0), &ctx.input(1), opt(2), opt(3), opt(4)},
                            ctx.attrs().get_int("center_point_box", 0) != 0);
    if (Shape{int64_t(selected.size()), 3} != ctx.output_types[0].shape) {
      ORCHID_FAIL() << "NonMaxSuppression selected " << selected.size()
                    << " boxes but the graph was specialized for " << ctx.output_types[0].shape[0];
    }
    Tensor out(ctx.output_types[0]);
    int64_t* p = out.data<int64_t>();
    for (size_t i = 0; i < selected.size(); ++i) {
      for (size_t j = 0; j < 3; ++j) p[i * 3 + j] = selected[i][j];
    }
    return std::vector<Tensor>{out};
  };
  return s;
}

// ---- GridSample --------------------------------------------------------------

// GridSample(X [N, C, H, W], grid [N, Ho, Wo, 2]) -> [N, C, Ho, Wo] (opset 16;
// opset 20's names "linear"/"cubic" are accepted for "bilinear"/"bicubic").
// grid[..., 0] is x (width) and grid[..., 1] is y, normalized to [-1, 1]:
// align_corners = 1 maps -1/1 to the centres of the corner pixels, 0 to their
// outer edges. padding_mode: zeros (outside pixels read 0), border (clamp),
// reflection (reflect the location at the borders).
enum class SampleMode { Nearest, Linear, Cubic };
enum class PadMode { Zeros, Border, Reflection };

double reflect(double x, double lo, double hi) {
  double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    double d = lo - x;
    int64_t n = int64_t(d / range);
    double r = d - double(n) * range;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double d = x - hi;
    int64_t n = int64_t(d / range);
    double r = d - double(n) * range;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

void cubic_coeffs(double x, double c[4]) {
  const double a = -0.75;
  x = std::abs(x);
  c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

OpSchema grid_sample_schema() {
  OpSchema s;
  s.op = "GridSample";
  s.min_inputs = 2;
  s.max_inputs = 2;
  s.infer = [](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    const TensorType& g = ctx.input(1);
    require_dtype(x.dtype, TypeClass::Float, 0, "X");
    require_dtype(g.dtype, TypeClass::Float, 1, "grid");
    if (x.rank() != 4) {
      ORCHID_FAIL() << "only 2-D sampling is supported: input 0 (X) must have shape [N, C, H, W], got "
                    << shape_to_string(x.shape);
    }
    if (g.rank() != 4 || g.shape[0] != x.shape[0] || g.shape[3] != 2) {
      ORCHID_FAIL() << "input 1 (grid) must have shape [" << x.shape[0] << ", H_out, W_out, 2], got "
                    << shape_to_string(g.shape);
    }
    extra::string_choice(ctx.attrs(), "mode", "bilinear", {"bilinear", "linear", "nearest", "bicubic", "cubic"});
    extra::string_choice(ctx.attrs(), "padding_mode", "zeros", {"zeros", "border", "reflection"});
    return one(x.dtype, {x.shape[0], x.shape[1], g.shape[1], g.shape[2]});
  };
  s.eval = [](const EvalContext& ctx) {
    const Tensor& xt = ctx.input(0);
    std::string mode_name = ctx.attrs().get_string("mode", "bilinear");
    SampleMode mode = mode_name == "nearest"                          ? SampleMode::Nearest
                      : (mode_name == "bicubic" || mode_name == "cubic") ? SampleMode::Cubic
                                                                        : SampleMode::Linear;
    std::string pad_name = ctx.attrs().get_string("padding_mode", "zeros");
    PadMode pad = pad_name == "border" ? PadMode::Border : pad_name == "reflection" ? PadMode::Reflection : PadMode::Zeros;
    bool align = ctx.attrs().get_int("align_corners", 0) != 0;
    int64_t n = xt.dim(0), c = xt.dim(1), h = xt.dim(2), w = xt.dim(3);
    const Shape& os = ctx.output_types[0].shape;
    int64_t ho = os[2], wo = os[3];
    std::vector<double> x = f64(xt), grid = f64(ctx.input(1));
    std::vector<double> y(size_t(shape_numel(os)));
    double x_min = align ? 0 : -0.5, x_max = align ? double(w - 1) : double(w) - 0.5;
    double y_min = align ? 0 : -0.5, y_max = align ? double(h - 1) : double(h) - 0.5;
    auto denormalize = [&](double v, int64_t len) {
      return align ? (v + 1) / 2 * double(len - 1) : ((v + 1) * double(len) - 1) / 2;
    };
    for (int64_t b = 0; b < n; ++b) {
      for (int64_t ch = 0; ch < c; ++ch) {
        const double* img = &x[size_t((b * c + ch) * h * w)];
        auto pixel = [&](int64_t r, int64_t col) {
          if (pad == PadMode::Zeros) {
            return (r >= 0 && r < h && col >= 0 && col < w) ? img[r * w + col] : 0.0;
          }
          if (pad == PadMode::Border) {
            r = std::clamp<int64_t>(r, 0, h - 1);
            col = std::clamp<int64_t>(col, 0, w - 1);
          } else {
            col = std::clamp<int64_t>(int64_t(reflect(double(col), x_min, x_max)), 0, w - 1);
            r = std::clamp<int64_t>(int64_t(reflect(double(r), y_min, y_max)), 0, h - 1);
          }
          return img[r * w + col];
        };
        for (int64_t oy = 0; oy < ho; ++oy) {
          for (int64_t ox = 0; ox < wo; ++ox) {
            const double* g = &grid[size_t(((b * ho + oy) * wo + ox) * 2)];
            double gx = denormalize(g[0], w), gy = denormalize(g[1], h);
            if (mode == SampleMode::Nearest) {
              gx = std::nearbyint(gx);  // round half to even
              gy = std::nearbyint(gy);
            }
            if (gx < x_min || gx > x_max || gy < y_min || gy > y_max) {
              if (pad == PadMode::Border) {
                gx = std::clamp(gx, 0.0, double(w - 1));
                gy = std::clamp(gy, 0.0, double(h - 1));
              } else if (pad == PadMode::Reflection) {
                gx = reflect(gx, x_min, x_max);
                gy = reflect(gy, y_min, y_max);
              }
            }
            double value = 0;
            if (mode == SampleMode::Nearest) {
              value = pixel(int64_t(gy), int64_t(gx));
            } else if (mode == SampleMode::Linear) {
              int64_t x1 = int64_t(std::floor(gx)), y1 = int64_t(std::floor(gy));
              double dx1 = gx - double(x1), dy1 = gy - double(y1);
              double dx2 = 1 - dx1, dy2 = 1 - dy1;
              value = dy2 * (dx2 * pixel(y1, x1) + dx1 * pixel(y1, x1 + 1)) +
                      dy1 * (dx2 * pixel(y1 + 1, x1) + dx1 * pixel(y1 + 1, x1 + 1));
            } else {
              int64_t x0 = int64_t(std::floor(gx)) - 1, y0 = int64_t(std::floor(gy)) - 1;
              double cx[4], cy[4];
              cubic_coeffs(gx - double(x0) - 1, cx);
              cubic_coeffs(gy - double(y0) - 1, cy);
              for (int64_t i = 0; i < 4; ++i) {
                double row = 0;
                for (int64_t j = 0; j < 4; ++j) row += cx[j] * pixel(y0 + i, x0 + j);
                value += cy[i] * row;
              }
            }
            y[size_t(((b * c + ch) * ho + oy) * wo + ox)] = value;
          }
        }
      }
    }
    return std::vector<Tensor>{extra::make_tensor(ctx.output_types[0], y)};
  };
  return s;
}

// ---- RoiAlign ----------------------------------------------------------------

// RoiAlign(X [N, C, H, W], rois [R, 4] (x1, y1, x2, y2), batch_indices [R])
// -> [R, C, output_height, output_width] (opset 16). Each output bin averages
// (mode avg) or maxes (mode max, as onnxruntime: the max over samples of the
// largest weighted corner) sampling_ratio^2 bilinear samples (adaptive
// ceil(roi_size / output_size) when sampling_ratio is 0).
// coordinate_transformation_mode half_pixel (default) shifts the scaled ROI by
// -0.5; output_half_pixel (opset 10 behaviour) does not, and makes ROIs at
// least 1x1.
OpSchema roi_align_schema() {
  OpSchema s;
  s.op = "RoiAlign";
  s.min_inputs = 3;
  s.max_inputs = 3;
  s.infer = [](const InferContext& ctx) {
    const TensorType& x = ctx.input(0);
    const TensorType& rois = ctx.input(1);
    const TensorType& idx = ctx.input(2);
    require_dtype(x.dtype, TypeClass::Float, 0, "X");
    require_dtype(rois.dtype, TypeClass::Float, 1, "rois");
    require_dtype(idx.dtype, TypeClass::Integer, 2, "batch_indices");
    extra::require_rank(x, 4, 0, "X");
    if (rois.rank() != 2 || rois.shape[1] != 4) {
      ORCHID_FAIL() << "input 1 (rois) must have shape [num_rois, 4], got " << shape_to_string(rois.shape);
    }
    if (idx.shape != Shape{rois.shape[0]}) {
      ORCHID_FAIL() << "input 2 (batch_indices) must have shape [" << rois.shape[0] << "], got "
                    << shape_to_string(idx.shape);
    }
    extra::string_choice(ctx.attrs(), "mode", "avg", {"avg", "max"});
    extra::string_choice(ctx.attrs(), "coordinate_transformation_mode", "half_pixel",
                         {"half_pixel", "output_half_pixel"});
    int64_t oh = ctx.attrs().get_int("output_height", 1), ow = ctx.attrs().get_int("output_width", 1);
    if (oh < 1 || ow < 1) ORCHID_FAIL() << "output_height and output_width must be positive, got " << oh << ", " << ow;
    return one(x.dtype, {rois.shape[0], x.shape[1], oh, ow});
  };
  s.eval = [](const EvalContext& ctx) {
    const Tensor& xt = ctx.input(0);
    int64_t n = xt.dim(0), c = xt.dim(1), h = xt.dim(2), w = xt.dim(3);
    const Shape& os = ctx.output_types[0].shape;
    int64_t num_rois = os[0], oh = os[2], ow = os[3];
    bool max_mode = ctx.attrs().get_string("mode", "avg") == "max";
    bool half_pixel = ctx.attrs().get_string("coordinate_transformation_mode", "half_pixel") == "half_pixel";
    double scale = ctx.attrs().get_float("spatial_scale", 1.0);
    int64_t sampling = ctx.attrs().get_int("sampling_ratio", 0);
    std::vector<double> x = f64(xt), rois = f64(ctx.input(1));
    std::vector<double> y(size_t(shape_numel(os)));
    double offset = half_pixel ? 0.5 : 0.0;
    for (int64_t r = 0; r < num_rois; ++r) {
      int64_t b = ctx.input(2).at_i64(r);
      if (b < 0 || b >= n) ORCHID_FAIL() << "batch_indices[" << r << "] = " << b << " is out of range [0, " << n << ")";
      const double* roi = &rois[size_t(r * 4)];
      double start_w = roi[0] * scale - offset, start_h = roi[1] * scale - offset;
      double roi_w = roi[2] * scale - offset - start_w, roi_h = roi[3] * scale - offset - start_h;
      if (!half_pixel) {
        roi_w = std::max(roi_w, 1.0);
        roi_h = std::max(roi_h, 1.0);
      }
      double bin_h = roi_h / double(oh), bin_w = roi_w / double(ow);
      int64_t grid_h = sampling > 0 ? sampling : int64_t(std::ceil(roi_h / double(oh)));
      int64_t grid_w = sampling > 0 ? sampling : int64_t(std::ceil(roi_w / double(ow)));
      double count = double(std::max<int64_t>(grid_h * grid_w, 1));
      for (int64_t ch = 0; ch < c; ++ch) {
        const double* img = &x[size_t((b * c + ch) * h * w)];
        for (int64_t ph = 0; ph < oh; ++ph) {
          for (int64_t pw = 0; pw < ow; ++pw) {
            double acc = 0;
            bool first = true;
            for (int64_t iy = 0; iy < grid_h; ++iy) {
              for (int64_t ix = 0; ix < grid_w; ++ix) {
                double yy = start_h + double(ph) * bin_h + (double(iy) + 0.5) * bin_h / double(grid_h);
                double xx = start_w + double(pw) * bin_w + (double(ix) + 0.5) * bin_w / double(grid_w);
                // Bilinear weights of the four neighbours (all 0 outside the map).
                std::array<double, 4> wts{0, 0, 0, 0};
                std::array<int64_t, 4> pos{0, 0, 0, 0};
                if (!(yy < -1.0 || yy > double(h) || xx < -1.0 || xx > double(w))) {
                  yy = std::max(yy, 0.0);
                  xx = std::max(xx, 0.0);
                  int64_t y_lo = int64_t(yy), x_lo = int64_t(xx), y_hi, x_hi;
                  if (y_lo >= h - 1) {
                    y_hi = y_lo = h - 1;
                    yy = double(y_lo);
                  } else {
                    y_hi = y_lo + 1;
                  }
                  if (x_lo >= w - 1) {
                    x_hi = x_lo = w - 1;
                    xx = double(x_lo);
                  } else {
                    x_hi = x_lo + 1;
                  }
                  double ly = yy - double(y_lo), lx = xx - double(x_lo), hy = 1 - ly, hx = 1 - lx;
                  wts = {hy * hx, hy * lx, ly * hx, ly * lx};
                  pos = {y_lo * w + x_lo, y_lo * w + x_hi, y_hi * w + x_lo, y_hi * w + x_hi};
                }
                if (max_mode) {
                  double v = wts[0] * img[pos[0]];
                  for (size_t k = 1; k < 4; ++k) v = std::max(v, wts[k] * img[pos[k]]);
                  acc = first ? v : std::max(acc, v);
                  first = false;
                } else {
                  for (size_t k = 0; k < 4; ++k) acc += wts[k] * img[pos[k]];
                }
              }
            }
            y[size_t(((r * c + ch) * oh + ph) * ow + pw)] = max_mode ? acc : acc / count;
          }
        }
      }
    }
    return std::vector<Tensor>{extra::make_tensor(ctx.output_types[0], y)};
  };
  return s;
}

}  // namespace

void register_detection_ops(OpRegistry& registry) {
  registry.add(nms_schema());
  registry.add(grid_sample_schema());
  registry.add(roi_align_schema());
}

}  // namespace orchid::reference
