// Floats as Python prints them: the config.json files ckhost writes (bump's, the hf writer's)
// are read by Python code and compared with the files Python's json module writes.
#pragma once

#include <string>

namespace ck::support {

// Python's repr() of a float: the shortest digits that read back to the same value (of the
// f32 when single_precision), fixed notation for 1e-4 <= |x| < 1e16 with at least one digit
// after the point, otherwise d.ddde-XX. NaN and infinities as Python's json writes them.
std::string python_float_repr(double value, bool single_precision);

}  // namespace ck::support
