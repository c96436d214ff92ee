#pragma once

#include <filesystem>
#include <string>

namespace ckhost {

// Lower-case hex SHA-256 of a file (OpenSSL EVP), read in chunks.
std::string sha256_file(const std::filesystem::path& path);

}  // namespace ckhost
