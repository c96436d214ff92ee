// The one translation unit per suite that defines Boost.Test's main.
#define BOOST_TEST_MODULE ckhost
#include <boost/test/unit_test.hpp>
