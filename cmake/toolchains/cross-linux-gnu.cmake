# Cross-compiling for another Linux target (scripts/test-cross.sh): Debian's cross g++ for
# CKHOST_CROSS_TRIPLET (aarch64-linux-gnu, s390x-linux-gnu), the target's libraries unpacked
# from Debian's packages into CKHOST_CROSS_SYSROOT, and qemu-user to run what is built (CTest's
# emulator for test executables; the processes they start run through binfmt_misc).
if(NOT CKHOST_CROSS_TRIPLET OR NOT CKHOST_CROSS_SYSROOT)
  message(FATAL_ERROR "give -DCKHOST_CROSS_TRIPLET=... and -DCKHOST_CROSS_SYSROOT=... (scripts/test-cross.sh does)")
endif()
# try_compile projects read this file again: hand them the two settings.
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES CKHOST_CROSS_TRIPLET CKHOST_CROSS_SYSROOT)

set(CMAKE_SYSTEM_NAME Linux)
string(REGEX MATCH "^[^-]+" CMAKE_SYSTEM_PROCESSOR "${CKHOST_CROSS_TRIPLET}")
set(CMAKE_C_COMPILER ${CKHOST_CROSS_TRIPLET}-gcc)
set(CMAKE_CXX_COMPILER ${CKHOST_CROSS_TRIPLET}-g++)
set(CMAKE_LIBRARY_ARCHITECTURE ${CKHOST_CROSS_TRIPLET})

# Libraries, headers and CMake packages from the target's sysroot only; programs from the host.
set(CMAKE_FIND_ROOT_PATH ${CKHOST_CROSS_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# Debian's multiarch headers (openssl/opensslconf.h) live in include/TRIPLET, which the cross
# compiler searches under its own root only.
set(CMAKE_C_FLAGS_INIT "-isystem ${CKHOST_CROSS_SYSROOT}/usr/include/${CKHOST_CROSS_TRIPLET}")
set(CMAKE_CXX_FLAGS_INIT "${CMAKE_C_FLAGS_INIT}")
# The sysroot's libraries at link time (their own dependencies, found through their paths).
set(CMAKE_EXE_LINKER_FLAGS_INIT "-Wl,-rpath-link,${CKHOST_CROSS_SYSROOT}/usr/lib/${CKHOST_CROSS_TRIPLET}")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "${CMAKE_EXE_LINKER_FLAGS_INIT}")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "${CMAKE_EXE_LINKER_FLAGS_INIT}")

set(CMAKE_CROSSCOMPILING_EMULATOR qemu-${CMAKE_SYSTEM_PROCESSOR} -L ${CKHOST_CROSS_SYSROOT})
