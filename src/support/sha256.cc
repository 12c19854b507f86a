#include "support/sha256.h"

#include <openssl/evp.h>

#include <fstream>
#include <memory>
#include <vector>

#include "support/error.h"

namespace orchid {

std::string sha256_of_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) ORCHID_FAIL() << path << ": cannot open the file";
  std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  ORCHID_CHECK(context && EVP_DigestInit_ex(context.get(), EVP_sha256(), nullptr) == 1) << "SHA-256 unavailable";
  std::vector<char> buffer(1 << 16);
  while (file) {
    file.read(buffer.data(), std::streamsize(buffer.size()));
    if (file.gcount() > 0) EVP_DigestUpdate(context.get(), buffer.data(), size_t(file.gcount()));
  }
  if (file.bad()) ORCHID_FAIL() << path << ": cannot read the file";
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  ORCHID_CHECK(EVP_DigestFinal_ex(context.get(), digest, &length) == 1) << "SHA-256 failed";
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 15];
  }
  return hex;
}

}  // namespace orchid
