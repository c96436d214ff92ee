// Helpers shared by the test suites: where things are, and running the real ckhost binary.
#pragma once

#include <sys/types.h>

#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "ck/cpu.hpp"

namespace cktest {

// Whether this build has the AVX2 and AVX-512 kernel variants: x86-64 builds do, a build for
// another target (scripts/test-cross.sh) has the scalar kernels only.
#ifdef CKHOST_X86_SIMD
inline constexpr bool x86_simd_built = true;
#else
inline constexpr bool x86_simd_built = false;
#endif

// The kernel variants --isa accepts on this build's architecture, as its messages list them.
#if defined(__aarch64__)
inline const std::string isa_choices = "scalar or neon";
#elif defined(__x86_64__)
inline const std::string isa_choices = "scalar, avx2 or avx512";
#else
inline const std::string isa_choices = "scalar";
#endif

// Whether this build has the NEON kernel variants (ARM64 builds).
#ifdef CKHOST_ARM_NEON
inline constexpr bool neon_built = true;
#else
inline constexpr bool neon_built = false;
#endif

// The kernel variants this CPU runs: scalar, then AVX2 and AVX-512 when it has them, or NEON.
inline std::vector<ck::Isa> supported_isas() {
    std::vector<ck::Isa> out{ck::Isa::scalar};
    const ck::Isa best = ck::best_supported_isa(ck::cpu_features());
    if (best == ck::Isa::neon) return {ck::Isa::scalar, ck::Isa::neon};
    if (best >= ck::Isa::avx2) out.push_back(ck::Isa::avx2);
    if (best >= ck::Isa::avx512) out.push_back(ck::Isa::avx512);
    return out;
}

std::filesystem::path ckhost_binary();
std::filesystem::path test_data();        // tests/data (committed)
std::filesystem::path examples_dir();     // examples/
std::filesystem::path test_plugin_dir();  // the test-only plugins built beside the suite
// examples/micro-llama-q4_k_m.gguf: 1.3 MB, 21 tensors, Q4_K_M (what most CLI tests convert).
std::filesystem::path sample_model();
// ../shared/testdata, or nullopt when it is not there (tests that need it are skipped).
std::optional<std::filesystem::path> shared_data();
bool have_shared_data();

// Boost.Test precondition: `*boost::unit_test::precondition(cktest::SharedDataPresent())`
// skips a test, saying why, when ../shared/testdata is absent.
struct SharedDataPresent {
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const;
};

// Boost.Test precondition for a test that qemu-user cannot run on this target:
// scripts/test-cross.sh names the emulator in CKHOST_TEST_EMULATOR (qemu-aarch64, qemu-s390x).
// qemu-s390x 7.2 hands a SIGBUS handler the faulting address with its two 32-bit halves
// swapped, so the mapped-file guard (which checks the address is in its mapping) cannot be
// exercised under it; real s390x hardware reports the address as it is.
struct SigbusAddressReported {
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const;
};

// The emulator the suite runs under (CKHOST_TEST_EMULATOR, set by scripts/test-cross.sh:
// "qemu-aarch64", "qemu-s390x"), or nullopt when it runs natively.
std::optional<std::string> emulator();

// Whether this is the sanitizer tree (CKHOST_SANITIZE): the product it runs is instrumented.
// The suites' own code is not (decision 0064), so a compiler's __SANITIZE_ADDRESS__ cannot say.
bool sanitizer_build();

// How many random blocks a kernel suite draws per distribution: `native` (sized for a native
// CPU) unless CKHOST_TEST_RANDOM_BLOCKS names a smaller count (64 at least). scripts/test.sh
// --sanitize and scripts/test-cross.sh --ci set it: the same families of inputs, fewer of each,
// where the code runs instrumented or emulated; the Release suite and the whole-suite cross run
// keep the native count (decision 0064).
std::size_t random_block_count(std::size_t native);

// Boost.Test precondition for a case the sanitizers have nothing to check in: a sweep that
// repeats, over every shared file or every thread count, code paths the suite's other tests
// already run, or a comparison of files ckhost wrote by an outside tool (Node, Python). It runs
// in the Release suite and is skipped, saying so, in the sanitizer tree (docs/decisions, 0064).
struct NotASanitizerRun {
    boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const;
};

struct RunResult {
    int exit_code = -1;
    std::string out;
    std::string err;
};

// Runs `program` (a path, or a name looked up in PATH) with these arguments (no shell), with
// `input` (if any) on its stdin, capturing stdout and stderr.
RunResult run_program(const std::filesystem::path& program, const std::vector<std::string>& args,
                      const std::optional<std::string>& input = std::nullopt);
// Runs the ckhost under test the same way.
RunResult run_ckhost(const std::vector<std::string>& args);
// The same with `input` on its standard input.
RunResult run_ckhost_with_stdin(const std::vector<std::string>& args, const std::string& input);
// The long options `ckhost COMMAND --help` lists ("--dry-run").
std::set<std::string> options_in_help(const std::string& command);

// Starts ckhost in the background with output discarded; returns its pid.
pid_t spawn_ckhost(const std::vector<std::string>& args);
// The same with standard input, output and error opened from these paths. (A FIFO for `input`
// must already be open for writing: posix_spawn waits for the child, which waits for a writer.)
pid_t spawn_ckhost(const std::vector<std::string>& args, const std::string& input,
                   const std::string& output, const std::string& error);
int wait_exit_code(pid_t pid);

// Sets an environment variable (which children inherit) for the object's lifetime.
class ScopedEnv {
  public:
    ScopedEnv(const std::string& name, const std::string& value);
    ~ScopedEnv();
    ScopedEnv(const ScopedEnv&) = delete;
    ScopedEnv& operator=(const ScopedEnv&) = delete;

  private:
    std::string name_;
    std::optional<std::string> old_;
};

// A fresh empty directory, removed when the object goes away.
class TempDir {
  public:
    TempDir();
    ~TempDir();
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
    // Names of everything inside (to check that nothing was left behind).
    std::vector<std::string> entries() const;

  private:
    std::filesystem::path path_;
};

// Waits (up to 10 s) for ckhost's temporary file of NAME (".NAME.ckhost-PID-HOST-XXXXXX") to
// appear in `dir`, and returns its path; fails the test when none does.
std::filesystem::path wait_for_temporary(const std::filesystem::path& dir, const std::string& name);
// The process id in a temporary file's name.
pid_t pid_of_temporary(const std::filesystem::path& temp);

std::vector<unsigned char> read_file(const std::filesystem::path& path);
void write_file(const std::filesystem::path& path, const std::vector<unsigned char>& bytes);
bool files_equal(const std::filesystem::path& a, const std::filesystem::path& b);
// Little-endian F32 values (an F32 tensor's bytes, a reference .f32 file) as host floats: files
// keep their byte order on every host, so a big-endian test run reads them the same way.
std::vector<float> floats_of(std::span<const std::byte> bytes);
// The F32 values of a whole file (ggml's raw .f32 references); fails the test when its size is not
// a whole number of floats.
std::vector<float> read_floats(const std::filesystem::path& path);
// SHA-256 of bytes / of a file, lowercase hex (OpenSSL).
std::string sha256_hex(const void* data, std::size_t size);
std::string sha256_of_file(const std::filesystem::path& path);
bool contains(const std::string& haystack, const std::string& needle);

}  // namespace cktest
