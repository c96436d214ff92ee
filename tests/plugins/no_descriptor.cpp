// A shared library that is not a ckhost plugin: it exports no descriptor.
#include "ck/plugin.hpp"

CK_PLUGIN_EXPORT int not_a_plugin() {
    return 7;
}
