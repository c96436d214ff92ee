# ckhost_add_plugin(NAME SOURCES...): builds a ckhost plugin. Used by the plugins in this tree
# and, installed beside ckhostConfig.cmake, by third-party plugin projects, so both are built
# the same way:
#   - a MODULE library named exactly NAME.so (no "lib" prefix): the host takes the plugin's
#     name from the file name and checks that the descriptor declares the same name;
#   - hidden visibility, so only ckhost_plugin_descriptor is exported and two plugins never
#     resolve each other's inline functions or templates;
#   - linked against ckhost::sdk (C++20, the same standard library as the host) and the
#     support library ckhost::support (static: file destinations, cursors, JSON strings);
#   - installed into CKHOST_PLUGIN_INSTALL_DIR (default: lib/ckhost/plugins under the prefix).
# Set CKHOST_PLUGIN_OUTPUT_DIR to choose where the build puts the library.
function(ckhost_add_plugin name)
  add_library(${name} MODULE ${ARGN})
  set_target_properties(${name} PROPERTIES
    PREFIX ""
    CXX_VISIBILITY_PRESET hidden
    VISIBILITY_INLINES_HIDDEN ON
    # An installed plugin finds libcksdk two levels up (lib/ckhost/plugins -> lib).
    INSTALL_RPATH "$ORIGIN/../..")
  if(CKHOST_PLUGIN_OUTPUT_DIR)
    set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CKHOST_PLUGIN_OUTPUT_DIR})
  endif()
  target_link_libraries(${name} PRIVATE ckhost::sdk ckhost::support)
  if(NOT CKHOST_PLUGIN_INSTALL_DIR)
    include(GNUInstallDirs)
    set(CKHOST_PLUGIN_INSTALL_DIR ${CMAKE_INSTALL_LIBDIR}/ckhost/plugins)
  endif()
  install(TARGETS ${name} LIBRARY DESTINATION ${CKHOST_PLUGIN_INSTALL_DIR})
endfunction()
