// Fingerprints: 64-bit hashes of expressions that ignore iterator names, used
// to deduplicate derivation states (OLLIE's search cut its states 40-70x).
//
// For a scope:
//  - loop iterators are identified by position and range;
//  - sum iterators by range and by the role they play in the body, not by
//    their order in Sum<...>: each gets a signature (the body hashed with it
//    marked and the other sum iterators anonymous), sum iterators are ranked
//    by (range, signature), and the body is hashed with every sum iterator
//    named by its rank. Reordering Sum<...> therefore keeps the fingerprint,
//    while swapping roles (A[k1,k2] vs A[k2,k1]) changes it;
//  - chains of float + and of float * are flattened and their operands sorted
//    by fingerprint (commutative and associative for the search's purpose);
//    affine terms are sorted by fingerprint too;
//  - tensors by name, shape and padding; nested scopes by their own
//    fingerprint. Everything else (ranges, offsets, coefficients, constants,
//    functions, padding) is hashed.
// Equal fingerprints mean alpha-equivalent up to commutativity, except for
// 64-bit collisions. Deterministic across runs.
#pragma once

#include <cstdint>

#include "ir/expr.h"

namespace orchid::expr {

// A scope's fingerprint is cached in the node. For an open expression (a
// body), free iterators are hashed by name.
uint64_t fingerprint(Expr e);

namespace detail {
uint64_t compute_scope_fingerprint(const ScopeNode& scope);
}  // namespace detail

}  // namespace orchid::expr
