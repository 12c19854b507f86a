#include "support/sha256.h"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <vector>

#include "support/error.h"

namespace orchid {

namespace {

using DigestContext = std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)>;

DigestContext start_digest() {
  DigestContext context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  ORCHID_CHECK(context && EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) == 1) << "SHA-256 unavailable";
  return context;
}

std::string hex_digest(EVP_MD_CTX* context) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  ORCHID_CHECK(EVP_DigestFinal_ex(context, digest, &length) == 1) << "SHA-256 failed";
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

}  // namespace

std::string sha256_of_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) ORCHID_FAIL() << path << ": cannot open the file";
  DigestContext context = start_digest();
  std::vector<char> buffer(1 << 16);
  while (file) {
    file.read(buffer.data(), std::streamsize(buffer.size()));
    if (file.gcount() > 0) EVP_DigestUpdate(context.get(), buffer.data(), size_t(file.gcount()));
  }
  if (file.bad()) ORCHID_FAIL() << path << ": cannot read the file";
  return hex_digest(context.get());
}

std::string sha256_of_text(const std::string& text) {
  DigestContext context = start_digest();
  EVP_DigestUpdate(context.get(), text.data(), text.size());
  return hex_digest(context.get());
}

}  // namespace orchid
