// Folds an inference BatchNormalization into the Conv or ConvTranspose that
// feeds it, a constant rewrite run before fission (Korch folds BatchNorm into
// the preceding convolution's weights instead of keeping a per-channel
// Mul/Add kernel).
#pragma once

#include "ir/graph.h"

namespace orchid::fission {

// For every Conv/ConvTranspose with a constant weight (and a constant bias or
// none) whose output feeds only an inference BatchNormalization with constant
// parameters: one convolution with
//   W' = W * s[oc],  b' = (b - mean) * s + beta,  s = gamma / sqrt(var + eps),
// s taken along the weight's output-channel axis (axis 0 for Conv; for
// ConvTranspose, axis 1 within each group). Exact up to float rounding; the
// BatchNormalization node disappears. Other nodes are copied unchanged.
Graph fold_batchnorm_into_conv(const Graph& graph);

}  // namespace orchid::fission
