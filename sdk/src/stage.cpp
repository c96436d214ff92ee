// The row-block defaults of the stage interfaces: a stage whose row_granule is 0 is never asked
// for rows, so reaching one of these means a plugin offered rows without taking them.
#include "ck/stage.hpp"

#include "ck/error.hpp"

namespace ck {

namespace {

[[noreturn]] void rows_not_offered(const char* call) {
    throw plugin_bug(std::string(call) +
                     " was called on a stage that does not override it: its row_granule must "
                     "be 0 then (a plugin bug)");
}

}  // namespace

TensorView Reader::tensor_rows(std::size_t /*index*/, RowRange /*rows*/) {
    rows_not_offered("Reader::tensor_rows");
}

TensorView Transform::apply_rows(std::size_t /*index*/, RowRange /*rows*/,
                                 const UpstreamRows& /*upstream*/) {
    rows_not_offered("Transform::apply_rows");
}

void Writer::write_rows(std::size_t /*index*/, RowRange /*rows*/, const TensorView& /*block*/) {
    rows_not_offered("Writer::write_rows");
}

}  // namespace ck
