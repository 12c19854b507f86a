// Orchid's version: printed by `orchid --version` and stamped into compiled
// artifacts, which only the same version loads.
#pragma once

namespace orchid {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace orchid
