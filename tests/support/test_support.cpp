#include "test_support.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <openssl/evp.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "ck/support/little_endian.hpp"

extern char** environ;

namespace fs = std::filesystem;

namespace cktest {
namespace {

fs::path from_env(const char* name) {
    const char* v = std::getenv(name);
    if (!v)
        throw std::runtime_error(std::string(name) + " is not set (run the tests through ctest)");
    return v;
}

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

pid_t spawn(const fs::path& program, const std::vector<std::string>& args, const std::string& out,
            const std::string& err, const std::string& in = "/dev/null") {
    std::vector<std::string> argv_storage = {program.string()};
    argv_storage.insert(argv_storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, in.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    pid_t pid = 0;
    int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start " + argv_storage[0]);
    return pid;
}

}  // namespace

fs::path ckhost_binary() {
    return from_env("CKHOST_BIN");
}
fs::path test_data() {
    return from_env("CKHOST_TEST_DATA");
}
fs::path examples_dir() {
    return from_env("CKHOST_EXAMPLES");
}
fs::path sample_model() {
    return examples_dir() / "micro-llama-q4_k_m.gguf";
}
fs::path test_plugin_dir() {
    return from_env("CKHOST_TEST_PLUGINS");
}

std::optional<fs::path> shared_data() {
    const char* v = std::getenv("CKHOST_SHARED_TESTDATA");
    if (!v || !fs::is_directory(v)) return std::nullopt;
    return fs::path(v);
}

bool have_shared_data() {
    return shared_data().has_value();
}

boost::test_tools::assertion_result SharedDataPresent::operator()(
    boost::unit_test::test_unit_id) const {
    boost::test_tools::assertion_result ok(have_shared_data());
    ok.message() << "../shared/testdata is absent: skipping the tests on large ground-truth files";
    return ok;
}

std::optional<std::string> emulator() {
    const char* name = std::getenv("CKHOST_TEST_EMULATOR");
    if (!name || !*name) return std::nullopt;
    return std::string(name);
}

boost::test_tools::assertion_result SigbusAddressReported::operator()(
    boost::unit_test::test_unit_id) const {
    boost::test_tools::assertion_result ok(emulator() != "qemu-s390x");
    ok.message() << "qemu-s390x reports a SIGBUS's address with its halves swapped: the "
                    "mapped-file guard cannot be tested under it";
    return ok;
}

std::size_t random_block_count(std::size_t native) {
    const char* text = std::getenv("CKHOST_TEST_RANDOM_BLOCKS");
    if (!text || !*text) return native;
    char* end = nullptr;
    const unsigned long long count = std::strtoull(text, &end, 10);
    if (*end != '\0' || count < 64 || count > native)
        throw std::runtime_error(std::string("CKHOST_TEST_RANDOM_BLOCKS=") + text +
                                 ": expected a count from 64 to " + std::to_string(native));
    return static_cast<std::size_t>(count);
}

bool sanitizer_build() {
#ifdef CKHOST_TEST_SANITIZED
    return true;
#else
    return false;
#endif
}

boost::test_tools::assertion_result NotASanitizerRun::operator()(
    boost::unit_test::test_unit_id) const {
    boost::test_tools::assertion_result ok(!sanitizer_build());
    ok.message() << "run by the Release suite only (decision 0064): skipped in the sanitizer tree";
    return ok;
}

RunResult run_program(const fs::path& program, const std::vector<std::string>& args,
                      const std::optional<std::string>& input) {
    TempDir capture;
    const std::string out = (capture / "stdout").string(), err = (capture / "stderr").string();
    std::string in = "/dev/null";
    if (input) {
        in = (capture / "stdin").string();
        std::ofstream(in, std::ios::binary) << *input;
    }
    pid_t pid = spawn(program, args, out, err, in);
    RunResult r;
    r.exit_code = wait_exit_code(pid);
    r.out = slurp(out);
    r.err = slurp(err);
    return r;
}

RunResult run_ckhost(const std::vector<std::string>& args) {
    return run_program(ckhost_binary(), args);
}

RunResult run_ckhost_with_stdin(const std::vector<std::string>& args, const std::string& input) {
    return run_program(ckhost_binary(), args, input);
}

std::set<std::string> options_in_help(const std::string& command) {
    auto r = run_ckhost({command, "--help"});
    BOOST_TEST_REQUIRE(r.exit_code == 0, r.err);
    std::set<std::string> names;
    const std::regex option(R"(^  (?:-\w \[ )?(--[a-z-]+))");
    std::istringstream lines(r.out);
    for (std::string line; std::getline(lines, line);)
        if (std::smatch m; std::regex_search(line, m, option)) names.insert(m[1]);
    return names;
}

pid_t spawn_ckhost(const std::vector<std::string>& args) {
    return spawn(ckhost_binary(), args, "/dev/null", "/dev/null");
}

pid_t spawn_ckhost(const std::vector<std::string>& args, const std::string& input,
                   const std::string& output, const std::string& error) {
    return spawn(ckhost_binary(), args, output, error, input);
}

ScopedEnv::ScopedEnv(const std::string& name, const std::string& value) : name_(name) {
    if (const char* old = std::getenv(name.c_str())) old_ = old;
    ::setenv(name.c_str(), value.c_str(), 1);
}

ScopedEnv::~ScopedEnv() {
    if (old_)
        ::setenv(name_.c_str(), old_->c_str(), 1);
    else
        ::unsetenv(name_.c_str());
}

int wait_exit_code(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return -1;
}

TempDir::TempDir() {
    std::string pattern = (fs::temp_directory_path() / "cktest-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
}

TempDir::~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
}

std::vector<std::string> TempDir::entries() const {
    std::vector<std::string> names;
    for (const auto& e : fs::recursive_directory_iterator(path_))
        names.push_back(fs::relative(e.path(), path_).string());
    return names;
}

fs::path wait_for_temporary(const fs::path& dir, const std::string& name) {
    const std::string prefix = "." + name + ".ckhost-";
    for (int i = 0; i < 1000; ++i) {
        std::error_code ec;
        for (const auto& e : fs::directory_iterator(dir, ec))
            if (e.path().filename().string().starts_with(prefix)) return e.path();
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    BOOST_FAIL("no temporary file of " << name << " appeared in " << dir);
    return {};
}

pid_t pid_of_temporary(const fs::path& temp) {
    // No std::regex: GCC 12 warns falsely inside it in the sanitizer build (-Werror).
    const std::string name = temp.filename().string();
    const std::string marker = ".ckhost-";
    const std::size_t at = name.find(marker);
    BOOST_TEST_REQUIRE(at != std::string::npos, name);
    const std::size_t digits = at + marker.size();
    const std::size_t end = name.find_first_not_of("0123456789", digits);
    BOOST_TEST_REQUIRE((end != std::string::npos && end > digits && name[end] == '-'), name);
    return static_cast<pid_t>(std::stol(name.substr(digits, end - digits)));
}

// One read of the whole file, not a byte at a time through an iterator: golden files run to
// hundreds of MB, and the sanitizer tree builds test code unoptimized.
std::vector<unsigned char> read_file(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + path.string());
    std::vector<unsigned char> bytes(fs::file_size(path));
    in.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    if (in.gcount() != static_cast<std::streamsize>(bytes.size()))
        throw std::runtime_error("short read of " + path.string());
    return bytes;
}

std::vector<float> floats_of(std::span<const std::byte> bytes) {
    std::vector<float> values(bytes.size() / sizeof(float));
    ck::le::load_array(bytes.data(), values.data(), values.size());
    return values;
}

std::vector<float> read_floats(const fs::path& path) {
    const std::vector<unsigned char> bytes = read_file(path);
    BOOST_TEST_REQUIRE(bytes.size() % sizeof(float) == 0u,
                       path << " is not a whole number of floats");
    return floats_of(std::as_bytes(std::span(bytes)));
}

void write_file(const fs::path& path, const std::vector<unsigned char>& bytes) {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
}

// Piece by piece: two multi-GB outputs need not fit in memory at once.
bool files_equal(const fs::path& a, const fs::path& b) {
    if (fs::file_size(a) != fs::file_size(b)) return false;
    std::ifstream in_a(a, std::ios::binary), in_b(b, std::ios::binary);
    if (!in_a || !in_b) throw std::runtime_error("cannot read " + a.string() + " or " + b.string());
    constexpr std::size_t piece = 1 << 20;
    std::vector<char> buf_a(piece), buf_b(piece);
    while (in_a && in_b) {
        in_a.read(buf_a.data(), piece);
        in_b.read(buf_b.data(), piece);
        const auto got = in_a.gcount();
        if (got != in_b.gcount() || !std::equal(buf_a.begin(), buf_a.begin() + got, buf_b.begin()))
            return false;
    }
    return true;
}

bool contains(const std::string& haystack, const std::string& needle) {
    return haystack.find(needle) != std::string::npos;
}

std::string sha256_hex(const void* data, std::size_t size) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    if (EVP_Digest(data, size, digest, &length, EVP_sha256(), nullptr) != 1)
        throw std::runtime_error("EVP_Digest(sha256) failed");
    static const char hex[] = "0123456789abcdef";
    std::string text;
    for (unsigned int i = 0; i < length; ++i) {
        text += hex[digest[i] >> 4];
        text += hex[digest[i] & 15];
    }
    return text;
}

std::string sha256_of_file(const fs::path& path) {
    const std::vector<unsigned char> bytes = read_file(path);
    return sha256_hex(bytes.data(), bytes.size());
}

}  // namespace cktest
