// Atomic output: temporary files beside the target, renamed only on commit.
#include <boost/test/unit_test.hpp>

#include <filesystem>

#include "ck/error.hpp"
#include "ck/output.hpp"
#include "test_support.hpp"

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

BOOST_AUTO_TEST_SUITE_END()
