// Output targets that are not plain files. `--force` used to rename a regular file over a
// device, a FIFO or a symlink (as root, `-o /dev/null --force` replaced /dev/null). Now a
// symlink is written through (the link stays, its target is replaced atomically) and anything
// but a regular file is refused. (`-o -`, once a file named '-': test_standard_streams.cpp.)
#include <boost/test/unit_test.hpp>

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>

#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_output_targets {

namespace fs = std::filesystem;
using cktest::contains;

namespace {

std::string sample() {
    return (cktest::examples_dir() / "micro-llama-q4_k_m.gguf").string();
}

cktest::RunResult copy_to(const fs::path& output, bool force) {
    std::vector<std::string> args = {"--pipeline", "gguf:gguf", "-i",
                                     sample(),     "-o",        output.string()};
    if (force) args.push_back("--force");
    return cktest::run_ckhost(args);
}

bool is_char_device(const fs::path& p) {
    struct stat st {};
    return ::lstat(p.c_str(), &st) == 0 && S_ISCHR(st.st_mode);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(output_targets)

BOOST_AUTO_TEST_CASE(force_writes_through_a_symlink) {
    cktest::TempDir dir;
    cktest::write_file(dir / "real.gguf", {'o', 'l', 'd'});
    fs::create_symlink("real.gguf", dir / "link.gguf");
    ::chmod((dir / "real.gguf").c_str(), 0600);

    auto r = copy_to(dir / "link.gguf", false);
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "--force"), r.err);

    r = copy_to(dir / "link.gguf", true);
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(fs::is_symlink(dir / "link.gguf"));
    BOOST_TEST(fs::read_symlink(dir / "link.gguf") == fs::path("real.gguf"));
    BOOST_TEST(cktest::files_equal(sample(), dir / "real.gguf"));
    // The replaced file keeps its permissions.
    struct stat st {};
    BOOST_TEST_REQUIRE(::stat((dir / "real.gguf").c_str(), &st) == 0);
    BOOST_TEST((st.st_mode & 07777) == 0600u);
    BOOST_TEST(dir.entries().size() == 2u);
}

BOOST_AUTO_TEST_CASE(a_chain_of_links_and_a_dangling_link) {
    cktest::TempDir dir;
    fs::create_directory(dir / "store");
    cktest::write_file(dir / "store" / "blob", {'x'});
    fs::create_symlink("store/blob", dir / "mid");
    fs::create_symlink(dir / "mid", dir / "top.gguf");  // absolute, then relative
    auto r = copy_to(dir / "top.gguf", true);
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(fs::is_symlink(dir / "top.gguf"));
    BOOST_TEST(fs::is_symlink(dir / "mid"));
    BOOST_TEST(cktest::files_equal(sample(), dir / "store" / "blob"));

    // A dangling link: its target is created, the link stays.
    fs::create_symlink("store/new.gguf", dir / "dangling.gguf");
    r = copy_to(dir / "dangling.gguf", false);
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(fs::is_symlink(dir / "dangling.gguf"));
    BOOST_TEST(cktest::files_equal(sample(), dir / "store" / "new.gguf"));
}

BOOST_AUTO_TEST_CASE(a_device_is_never_replaced) {
    BOOST_TEST_REQUIRE(is_char_device("/dev/null"));
    for (bool force : {false, true}) {
        auto r = copy_to("/dev/null", force);
        BOOST_TEST(r.exit_code == 1, r.err);
        BOOST_TEST(contains(r.err, "/dev/null: output is a character device"), r.err);
        BOOST_TEST(is_char_device("/dev/null"));
    }
    // Through a link: the link's target is what counts.
    cktest::TempDir dir;
    fs::create_symlink("/dev/null", dir / "null.gguf");
    auto r = copy_to(dir / "null.gguf", true);
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "character device"), r.err);
    BOOST_TEST(fs::is_symlink(dir / "null.gguf"));
    BOOST_TEST(is_char_device("/dev/null"));
    BOOST_TEST(dir.entries().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_fifo_is_never_replaced) {
    cktest::TempDir dir;
    BOOST_TEST_REQUIRE(::mkfifo((dir / "pipe").c_str(), 0644) == 0);
    auto r = copy_to(dir / "pipe", true);
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, "output is a FIFO"), r.err);
    BOOST_TEST(fs::is_fifo(dir / "pipe"));
    BOOST_TEST(dir.entries().size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_socket_is_never_replaced) {
    cktest::TempDir dir;
    const fs::path socket_path = dir / "s.gguf";
    const int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
    BOOST_TEST_REQUIRE(fd >= 0);
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    BOOST_TEST_REQUIRE(socket_path.string().size() < sizeof(address.sun_path));
    std::strcpy(address.sun_path, socket_path.c_str());
    BOOST_TEST_REQUIRE(::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0);
    auto r = copy_to(socket_path, true);
    ::close(fd);
    BOOST_TEST(r.exit_code == 1, r.err);
    BOOST_TEST(contains(r.err, socket_path.string() + ": output is a socket"), r.err);
    BOOST_TEST(fs::is_socket(socket_path));
    BOOST_TEST(dir.entries().size() == 1u);
}

// An existing directory is a destination, as for cp: the output goes inside it, named after
// the input, and the directory itself is never replaced, with or without --force.
BOOST_AUTO_TEST_CASE(a_directory_is_never_replaced) {
    cktest::TempDir dir;
    const fs::path store = dir / "store";
    fs::create_directory(store);
    auto r = copy_to(store, true);
    BOOST_TEST(r.exit_code == 0, r.err);
    BOOST_TEST(fs::is_directory(store));
    BOOST_TEST(cktest::files_equal(sample(), store / "micro-llama-q4_k_m.gguf"));
    BOOST_TEST(dir.entries().size() == 2u);  // the directory and the one file in it
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_output_targets
