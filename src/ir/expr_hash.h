// Small deterministic 64-bit hashing for the expr module (interning and
// fingerprints). Deterministic across runs and platforms, unlike std::hash,
// so fingerprints can key caches on disk.
#pragma once

#include <bit>
#include <cstdint>
#include <string_view>

namespace orchid::expr::detail {

inline uint64_t mix64(uint64_t x) {  // splitmix64 finalizer
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline uint64_t hash_combine(uint64_t seed, uint64_t value) {
  return mix64(seed ^ (mix64(value) + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)));
}

inline uint64_t hash_string(std::string_view s) {  // FNV-1a, then mixed
  uint64_t h = 0xcbf29ce484222325ULL;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return mix64(h);
}

inline uint64_t hash_double(double d) { return mix64(std::bit_cast<uint64_t>(d)); }

}  // namespace orchid::expr::detail
