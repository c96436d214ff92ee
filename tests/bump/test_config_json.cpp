// config.json byte for byte as Python's json.dump(indent=2) writes it: floats as Python's
// repr of the shortest round-trip decimal (of the f32 when the metadata was f32).
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <limits>

#include "bump_test_models.hpp"
#include "config_json.hpp"
#include "test_support.hpp"

// This file's own names: the suites are compiled in unity batches (tests/CMakeLists.txt).
namespace unity_test_config_json {

using ckplugin::bump::python_float_repr;

BOOST_AUTO_TEST_SUITE(config_json)

BOOST_AUTO_TEST_CASE(floats_print_like_python_repr) {
    // From f32 metadata: shortest digits of the f32, not of the widened double.
    BOOST_TEST(python_float_repr(double(1e-5f), true) == "1e-05");
    BOOST_TEST(python_float_repr(double(1e-6f), true) == "1e-06");
    BOOST_TEST(python_float_repr(double(1e-6f), false) == "9.999999974752427e-07");
    BOOST_TEST(python_float_repr(double(10000.0f), true) == "10000.0");
    BOOST_TEST(python_float_repr(double(500000.0f), true) == "500000.0");
    BOOST_TEST(python_float_repr(double(0.1f), true) == "0.1");
    BOOST_TEST(python_float_repr(double(1.0f / 3), true) == "0.33333334");
    BOOST_TEST(python_float_repr(double(1.5e-7f), true) == "1.5e-07");
    // Python's switch points: fixed from 1e-4 up to 1e16 (exclusive).
    BOOST_TEST(python_float_repr(1e-4, false) == "0.0001");
    BOOST_TEST(python_float_repr(0.00012345, false) == "0.00012345");
    BOOST_TEST(python_float_repr(9.99e-5, false) == "9.99e-05");
    BOOST_TEST(python_float_repr(1e15, false) == "1000000000000000.0");
    BOOST_TEST(python_float_repr(1e16, false) == "1e+16");
    BOOST_TEST(python_float_repr(1.25e17, false) == "1.25e+17");
    BOOST_TEST(python_float_repr(123.456, false) == "123.456");
    BOOST_TEST(python_float_repr(0.1 + 0.2, false) == "0.30000000000000004");
    BOOST_TEST(python_float_repr(1e-300, false) == "1e-300");
    BOOST_TEST(python_float_repr(0.0, false) == "0.0");
    BOOST_TEST(python_float_repr(-0.0, false) == "-0.0");
    BOOST_TEST(python_float_repr(-2.5, true) == "-2.5");
    BOOST_TEST(python_float_repr(std::numeric_limits<double>::quiet_NaN(), false) == "NaN");
    BOOST_TEST(python_float_repr(-INFINITY, false) == "-Infinity");
}

BOOST_AUTO_TEST_CASE(strings_are_escaped_like_python_json) {
    using ckplugin::bump::python_json_string;
    BOOST_TEST(python_json_string("llama") == "\"llama\"");
    BOOST_TEST(python_json_string("a\"b\\c\n\t\x01\x7f") == "\"a\\\"b\\\\c\\n\\t\\u0001\\u007f\"");
    BOOST_TEST(python_json_string("caf\xc3\xa9") == "\"caf\\u00e9\"");
    BOOST_TEST(python_json_string("\xf0\x9f\xa6\x99") == "\"\\ud83e\\udd99\"");
}

BOOST_AUTO_TEST_CASE(render_matches_the_reference_file) {
    ckplugin::bump::Config c;
    c.model_type = "llama";
    c.num_hidden_layers = 2;
    c.hidden_size = 256;
    c.intermediate_size = 768;
    c.num_attention_heads = 4;
    c.num_key_value_heads = 2;
    c.vocab_size = 1024;
    c.max_position_embeddings = 512;
    c.rms_norm_eps = {double(1e-6f), true};
    c.rope_theta = {double(10000.0f), true};
    BOOST_TEST(
        ckplugin::bump::render_config_json(c) ==
        cktest::read_text(cktest::test_data() / "golden" / "micro-llama-q4_k_m" / "config.json"));
}

BOOST_AUTO_TEST_SUITE_END()
}  // namespace unity_test_config_json
