// One registration function per operator family; op_registry.cc calls them
// all. Add a family here and in op_registry.cc's list.
#pragma once

#include "reference/op_registry.h"

namespace orchid::reference {

void register_elementwise_ops(OpRegistry& registry);   // unary math, binary arithmetic, logic, compare, Where, Clip, Cast
void register_activation_ops(OpRegistry& registry);    // Relu, Sigmoid, Gelu, HardSwish, Elu, Selu, PRelu, Softplus, ...
void register_reduce_ops(OpRegistry& registry);        // ReduceX, ArgMax/ArgMin, CumSum, TopK
void register_normalization_ops(OpRegistry& registry); // Softmax, LogSoftmax, Hardmax, LayerNorm, BatchNorm, InstanceNorm, GroupNorm, LRN, LpNormalization
void register_linear_ops(OpRegistry& registry);        // MatMul, Gemm, Conv, ConvTranspose, Einsum, MatMulInteger-free
void register_pool_ops(OpRegistry& registry);          // AveragePool, MaxPool, GlobalX, LpPool
void register_layout_ops(OpRegistry& registry);        // Reshape, Transpose, Squeeze, Unsqueeze, Flatten, Concat, Split, Slice, Pad, Tile, Expand, DepthToSpace, SpaceToDepth
void register_index_ops(OpRegistry& registry);         // Gather, GatherElements, GatherND, ScatterElements, ScatterND, OneHot, NonZero, Trilu, Compress
void register_resize_ops(OpRegistry& registry);        // Resize (and Upsample, canonicalized to Resize by the importer)
void register_misc_ops(OpRegistry& registry);          // Identity, Dropout, Shape, Size, Constant, ConstantOfShape, Range, EyeLike
void register_loss_ops(OpRegistry& registry);          // NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss
void register_recurrent_ops(OpRegistry& registry);     // RNN, GRU, LSTM
void register_quantize_ops(OpRegistry& registry);      // QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul, QLinearConv
void register_signal_ops(OpRegistry& registry);        // DFT, STFT, Hann/Hamming/BlackmanWindow, MelWeightMatrix, Det
void register_detection_ops(OpRegistry& registry);     // NonMaxSuppression, GridSample, RoiAlign
void register_banded_ops(OpRegistry& registry);        // ai.orchid G2BMM, GBMM (OLLIE's banded matmuls, banded.h)

}  // namespace orchid::reference
