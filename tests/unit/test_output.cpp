// Atomic output: temporary files beside the target, renamed only on commit.
#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "ck/error.hpp"
#include "ck/output.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_output {

namespace fs = std::filesystem;

BOOST_AUTO_TEST_SUITE(output)

BOOST_AUTO_TEST_CASE(commit_renames_into_place) {
    cktest::TempDir dir;
    {
        ck::OutputSet out(false);
        auto& f = out.create(dir / "model.bin");
        f.write("abcd", 4);
        f.write_zeros(2);
        const std::byte patch[] = {std::byte{'X'}};
        f.write_at(1, patch);
        BOOST_TEST(!fs::exists(dir / "model.bin"));  // not there until commit
        BOOST_TEST(dir.entries().size() == 1u);      // only the temporary file
        out.commit();
    }
    auto bytes = cktest::read_file(dir / "model.bin");
    BOOST_TEST(std::string(bytes.begin(), bytes.end()) == std::string("aXcd\0\0", 6));
    BOOST_TEST(dir.entries().size() == 1u);
}

BOOST_AUTO_TEST_CASE(abort_leaves_nothing_not_even_new_directories) {
    cktest::TempDir dir;
    {
        ck::OutputSet out(false);
        auto& f = out.create(dir / "a" / "b" / "model.bin");
        f.write("abcd", 4);
        out.create(dir / "a" / "config.json").write("{}", 2);
    }  // destroyed without commit
    BOOST_TEST(dir.entries().empty());
}

BOOST_AUTO_TEST_CASE(existing_output_needs_overwrite) {
    cktest::TempDir dir;
    cktest::write_file(dir / "x", {1, 2, 3});
    ck::OutputSet careful(false);
    BOOST_CHECK_THROW(careful.create(dir / "x"), ck::Error);
    ck::OutputSet forced(true);
    forced.create(dir / "x").write("z", 1);
    forced.commit();
    BOOST_TEST(cktest::read_file(dir / "x").size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_finished_file_is_still_committed_or_removed_with_the_set) {
    cktest::TempDir dir;
    {
        ck::OutputSet out(false);
        auto& f = out.create(dir / "a.bin");
        f.write("abc", 3);
        f.finish();  // written out and closed before commit
        BOOST_TEST(!fs::exists(dir / "a.bin"));
        BOOST_CHECK_THROW(f.write("d", 1), ck::Error);
        const std::byte patch[] = {std::byte{'X'}};
        BOOST_CHECK_THROW(f.write_at(0, patch), ck::Error);
        out.create(dir / "b.bin").write("b", 1);
        out.commit();
    }
    auto bytes = cktest::read_file(dir / "a.bin");
    BOOST_TEST(std::string(bytes.begin(), bytes.end()) == "abc");
    {
        ck::OutputSet out(false);
        out.create(dir / "c.bin").finish();
    }  // not committed: the finished file goes too
    BOOST_TEST(!fs::exists(dir / "c.bin"));
    BOOST_TEST(dir.entries().size() == 2u);
}

namespace {

std::string host_name() {
    utsname u{};
    BOOST_TEST_REQUIRE(::uname(&u) == 0);
    return u.nodename;
}

// The temporary name a ckhost process `pid` on `host` would give `name`'s target.
std::string temp_name(const std::string& name, long pid, const std::string& host,
                      const std::string& letters = "AbC123") {
    return "." + name + ".ckhost-" + std::to_string(pid) + "-" + host + "-" + letters;
}

// A process id that no process has: a child that has exited and been waited for.
pid_t dead_pid() {
    const pid_t pid = ::fork();
    if (pid == 0) ::_exit(0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    return pid;
}

void set_mtime(const fs::path& p, std::time_t when) {
    const timespec times[2] = {{when, 0}, {when, 0}};
    BOOST_TEST_REQUIRE(::utimensat(AT_FDCWD, p.c_str(), times, 0) == 0);
}

}  // namespace

// The temporary name carries the writer's pid and the machine's host name (durability, issue
// 15): what a later run needs to tell a killed ckhost's file from a running one's.
BOOST_AUTO_TEST_CASE(temporary_names_carry_the_pid_and_the_host) {
    cktest::TempDir dir;
    ck::OutputSet out(false);
    auto& f = out.create(dir / "model.bin");
    const std::string name = f.temp_path().filename().string();
    // Compared by hand, not with std::regex: GCC 12 warns falsely inside it when sanitizing.
    const std::string prefix =
        ".model.bin.ckhost-" + std::to_string(::getpid()) + "-" + host_name() + "-";
    BOOST_TEST(name.starts_with(prefix), name);
    const std::string suffix = name.substr(std::min(prefix.size(), name.size()));
    BOOST_TEST(suffix.size() == 6u, name);
    BOOST_TEST((std::all_of(suffix.begin(), suffix.end(),
                            [](unsigned char c) { return std::isalnum(c) != 0; })),
               name);
    BOOST_TEST(f.temp_path().parent_path() == dir.path());
}

// Only files named exactly like a temporary file of one of the targets, on this machine, whose
// writer has ended (no such pid, or the pid's process started after the file was last written)
// are removed; everything else stays.
BOOST_AUTO_TEST_CASE(stale_temporary_files_of_ended_processes_are_removed) {
    cktest::TempDir dir;
    const std::string host = host_name();
    const pid_t dead = dead_pid();
    const pid_t self = ::getpid();
    auto make = [&](const std::string& name) {
        cktest::write_file(dir / name, {'x'});
        return dir / name;
    };
    const fs::path of_dead = make(temp_name("o.gguf", dead, host));
    const fs::path of_reused = make(temp_name("o.gguf", self, host, "old111"));
    set_mtime(of_reused, 1'000'000'000);  // 2001: written long before this process started
    const fs::path of_live = make(temp_name("o.gguf", self, host, "new222"));
    const fs::path other_host = make(temp_name("o.gguf", dead, host + "x"));
    const fs::path other_target = make(temp_name("p.gguf", dead, host));
    const fs::path old_style = make(".o.gguf.ckhost-AbC123");
    const fs::path bad_suffix = make(temp_name("o.gguf", dead, host, "AbC1234"));
    const fs::path leading_zero =
        make(".o.gguf.ckhost-0" + std::to_string(dead) + "-" + host + "-AbC123");
    fs::create_directory(dir / temp_name("o.gguf", dead, host, "dir999"));
    fs::create_symlink("o.gguf", dir / temp_name("o.gguf", dead, host, "lnk999"));

    const auto removed = ck::remove_stale_temporaries({dir / "o.gguf"});
    BOOST_TEST_REQUIRE(removed.size() == 2u);
    std::set<fs::path> paths = {removed[0].path, removed[1].path};
    BOOST_TEST((paths == std::set<fs::path>{of_dead, of_reused}));
    for (const auto& r : removed) BOOST_TEST((r.pid == dead || r.pid == self));
    BOOST_TEST(!fs::exists(of_dead));
    BOOST_TEST(!fs::exists(of_reused));
    for (const fs::path& kept :
         {of_live, other_host, other_target, old_style, bad_suffix, leading_zero})
        BOOST_TEST(fs::exists(kept), kept);
    BOOST_TEST(fs::is_directory(dir / temp_name("o.gguf", dead, host, "dir999")));
    BOOST_TEST(fs::is_symlink(dir / temp_name("o.gguf", dead, host, "lnk999")));
    // A missing directory is nothing to clean.
    BOOST_TEST(ck::remove_stale_temporaries({dir / "none" / "o.gguf"}).empty());
}

// Through a symbolic link the temporary file lives beside the link's target, and so do the
// stale ones that are looked for.
BOOST_AUTO_TEST_CASE(stale_files_are_looked_for_beside_a_links_target) {
    cktest::TempDir dir;
    fs::create_directory(dir / "store");
    fs::create_symlink("store/blob", dir / "link.gguf");
    const fs::path stale = dir / "store" / temp_name("blob", dead_pid(), host_name());
    cktest::write_file(stale, {'x'});
    const auto removed = ck::remove_stale_temporaries({dir / "link.gguf"});
    BOOST_TEST(removed.size() == 1u);
    BOOST_TEST(!fs::exists(stale));
}

// fsync'ing changes nothing a test can see but the calls (tests/cli/test_durability.cpp); both
// settings produce the same file.
BOOST_AUTO_TEST_CASE(sync_and_no_sync_commit_the_same_bytes) {
    cktest::TempDir dir;
    for (bool sync : {true, false}) {
        ck::OutputSet out(false);
        out.set_sync(sync);
        auto& f = out.create(dir / (sync ? "a" : "b"));
        f.write("abc", 3);
        out.commit();
    }
    BOOST_TEST(cktest::files_equal(dir / "a", dir / "b"));
    BOOST_TEST(dir.entries().size() == 2u);
}

// A target may change between create() and commit(): the rename never replaces a FIFO (or
// anything but a regular file) that appeared there, nor, without overwriting, a regular file.
BOOST_AUTO_TEST_CASE(commit_checks_each_target_again) {
    cktest::TempDir dir;
    {
        ck::OutputSet out(true);
        out.create(dir / "a").write("a", 1);
        out.create(dir / "p").write("p", 1);
        BOOST_TEST_REQUIRE(::mkfifo((dir / "p").c_str(), 0644) == 0);
        BOOST_CHECK_EXCEPTION(out.commit(), ck::Error, [](const ck::Error& e) {
            return cktest::contains(e.what(), "output became a FIFO while converting");
        });
    }
    BOOST_TEST(fs::is_fifo(dir / "p"));
    BOOST_TEST(!fs::exists(dir / "a"));  // checked before the first rename: nothing replaced
    BOOST_TEST(dir.entries().size() == 1u);
    fs::remove(dir / "p");
    {
        ck::OutputSet out(false);
        out.create(dir / "n").write("new", 3);
        cktest::write_file(dir / "n", {'o'});
        BOOST_CHECK_EXCEPTION(out.commit(), ck::Error, [](const ck::Error& e) {
            return cktest::contains(e.what(), "output file appeared while converting");
        });
    }
    BOOST_TEST(cktest::read_file(dir / "n").size() == 1u);
    BOOST_TEST(dir.entries().size() == 1u);
}

// -o -: the one file goes to a descriptor as it is written; a patch or a second file is a
// plugin bug (exit 3), and there is nothing to rename or remove.
BOOST_AUTO_TEST_CASE(a_streamed_file_refuses_patches_and_a_second_file) {
    cktest::TempDir dir;
    const int fd = ::open((dir / "stream").c_str(), O_WRONLY | O_CREAT, 0644);
    BOOST_TEST_REQUIRE(fd >= 0);
    {
        ck::OutputSet out(false);
        out.stream_to(fd);
        auto& f = out.create("-");
        BOOST_TEST(f.temp_path().empty());
        f.write("abc", 3);
        BOOST_TEST(!out.stream_started());  // still in the buffer
        const std::byte patch[] = {std::byte{'X'}};
        BOOST_CHECK_EXCEPTION(f.write_at(0, patch), ck::Error, [](const ck::Error& e) {
            return e.kind() == ck::ErrorKind::plugin &&
                   cktest::contains(e.what(), "standard output: the writer patches");
        });
        BOOST_CHECK_THROW(out.create("other"), ck::Error);
        f.flush();
        BOOST_TEST(out.stream_started());
        out.commit();
    }
    ::close(fd);
    auto bytes = cktest::read_file(dir / "stream");
    BOOST_TEST(std::string(bytes.begin(), bytes.end()) == "abc");
    BOOST_TEST(dir.entries().size() == 1u);
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_output
