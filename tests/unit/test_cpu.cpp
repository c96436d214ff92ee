// CPU detection and the CKHOST_ISA override: never above what the CPU supports.
#include <boost/test/unit_test.hpp>

#include <cstdlib>

#include "ck/cpu.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_cpu {

BOOST_AUTO_TEST_SUITE(cpu)

BOOST_AUTO_TEST_CASE(features_are_consistent) {
    const ck::CpuFeatures& f = ck::cpu_features();
    // Register state the OS does not save makes the instruction set unusable.
    if (f.avx2) BOOST_TEST(f.os_avx);
    if (f.avx512f) BOOST_TEST(f.os_avx512);
    if (f.os_avx512) BOOST_TEST(f.os_avx);
#if defined(__x86_64__)
    BOOST_TEST(f.sse2);  // baseline of x86-64
#endif
    ck::Isa best = ck::best_supported_isa(f);
    if (best == ck::Isa::avx512) BOOST_TEST((f.avx512bw && f.avx512vl && f.avx2));
}

BOOST_AUTO_TEST_CASE(environment_lowers_but_never_raises) {
    const ck::Isa best = ck::best_supported_isa(ck::cpu_features());
    // The highest ISA of this architecture, and one of the other.
#if defined(__aarch64__)
    BOOST_TEST((best == ck::Isa::neon));  // part of every ARM64 CPU
    const char* own_top = "neon";
    const char* foreign = "avx512";
#else
    const char* own_top = "avx512";
    const char* foreign = "neon";
#endif
    ::setenv("CKHOST_ISA", "scalar", 1);
    BOOST_TEST((ck::selected_isa() == ck::Isa::scalar));
    ::setenv("CKHOST_ISA", own_top, 1);
    BOOST_TEST((ck::selected_isa() == best));
    // Another architecture's ISA cannot run here: scalar (the host refuses it with a message).
    ::setenv("CKHOST_ISA", foreign, 1);
    BOOST_TEST((ck::selected_isa() == ck::Isa::scalar));
    BOOST_TEST(!ck::isa_of_this_architecture(*ck::isa_from_name(foreign)));
    BOOST_TEST(ck::isa_of_this_architecture(ck::Isa::scalar));
    ::setenv("CKHOST_ISA", "nonsense", 1);
    BOOST_TEST((ck::selected_isa() == best));
    ::unsetenv("CKHOST_ISA");
    BOOST_TEST((ck::selected_isa() == best));
    BOOST_TEST(ck::isa_name(ck::Isa::avx2) == "avx2");
    BOOST_TEST(ck::isa_name(ck::Isa::neon) == "neon");
    BOOST_TEST((ck::isa_from_name("avx512") == ck::Isa::avx512));
    BOOST_TEST((ck::isa_from_name("neon") == ck::Isa::neon));
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_cpu
