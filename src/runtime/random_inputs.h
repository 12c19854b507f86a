// Random inputs for running a program without data (`orchid run
// --random-inputs`, `orchid bench`, the plan report): floats uniform in
// [-1, 1], integers in [0, 4), booleans fair coin flips.
#pragma once

#include <cstdint>
#include <map>
#include <random>
#include <string>

#include "ir/graph.h"

namespace orchid::runtime {

Tensor random_tensor(const TensorType& type, std::mt19937_64& rng);
// One random tensor per graph input, by name.
std::map<std::string, Tensor> random_inputs(const Graph& graph, uint64_t seed);

}  // namespace orchid::runtime
