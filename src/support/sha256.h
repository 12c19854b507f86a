// SHA-256 of a file (OpenSSL's libcrypto): the identity of a generated kernel
// library, checked before it is loaded (the library is code Orchid runs); of a
// text: a key of the plan cache.
#pragma once

#include <string>

namespace orchid {

// Lower-case hex digest; orchid::Error naming the file when it cannot be read.
std::string sha256_of_file(const std::string& path);
// Lower-case hex digest of a text (a cache key).
std::string sha256_of_text(const std::string& text);

}  // namespace orchid
