#!/usr/bin/env bash
# Builds ckhost for another architecture with Debian's cross compiler and runs its test suite
# under qemu-user (issue 34):
#   scripts/test-cross.sh aarch64 [CTEST ARGS...]   ARM64, little-endian (g++-aarch64-linux-gnu)
#   scripts/test-cross.sh s390x [CTEST ARGS...]     IBM Z, big-endian (g++-s390x-linux-gnu)
#   scripts/test-cross.sh ARCH --ci                 the subset .ci/run runs (docs/platforms.md):
#       the program, its plugins and the SDK and kernel suites only; test_sdk, test_narrow and
#       (aarch64, whose NEON variants it compares with scalar) test_kernels_variants under qemu;
#       then tests/cross/same_outputs.sh against the native Release build in build/
#       (scripts/test.sh makes it), every output compared byte for byte.
#   scripts/test-cross.sh ARCH --ci build|test      only that half of the subset: .ci/run builds
#       s390x while aarch64's suites run under qemu, mostly in one process.
#   scripts/test-cross.sh ARCH --prepare            only the installs and registrations the others
#       begin with: .ci/run prepares both targets first (apt and dpkg take one caller at a time),
#       so that its overlapping steps only check.
# Extra arguments go to ctest (-R REGEX for a subset). It installs what it needs: the native
# packages (install-deps.sh), the cross compiler and qemu-user, and the target's libraries,
# unpacked from Debian's packages into a sysroot (~/.cache/ckhost/sysroot-ARCH) rather than
# installed, so that no package of the host is held to the target's version. Test executables
# run through CMake's emulator setting; the ckhost processes they start run through binfmt_misc,
# which the script registers for the target when the kernel has no handler for it.
set -euo pipefail
cd "$(dirname "$0")/.."

arch=${1:-}
case "$arch" in
  aarch64) debarch=arm64 ;;
  s390x) debarch=s390x ;;
  *) echo "usage: scripts/test-cross.sh aarch64|s390x [ctest arguments...]" >&2; exit 2 ;;
esac
shift
ci=false
prepare_only=false
if [ "${1:-}" = "--prepare" ]; then
  prepare_only=true
  shift
elif [ "${1:-}" = "--ci" ]; then
  ci=true
  shift
  ci_steps=${1:-all}
  case "$ci_steps" in
    build | test) shift ;;
    all) ;;
    *) echo "test-cross --ci: expected build, test or nothing after --ci, not '$ci_steps'" >&2; exit 2 ;;
  esac
  [ -x build/bin/ckhost ] || { echo "test-cross --ci: no build/bin/ckhost (run scripts/test.sh first)" >&2; exit 1; }
fi
triplet=$arch-linux-gnu
sysroot=${CKHOST_CROSS_CACHE:-$HOME/.cache/ckhost}/sysroot-$debarch
dir=build-$arch
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive

bash scripts/install-deps.sh
host_packages=("g++-$triplet" qemu-user)
missing=()
for p in "${host_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "test-cross: installing ${missing[*]}"
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The target's libraries: what ckhost links (Boost, OpenSSL, TBB, libyaml, nlohmann-json's
# headers) and what its programs need at run time (libc, libstdc++), at the versions Debian has
# for that architecture.
target_packages=(
  libc6 libstdc++6 libgcc-s1
  libboost1.74-dev libboost-program-options1.74.0 libboost-program-options1.74-dev
  libboost-test1.74.0 libboost-test1.74-dev
  libssl3 libssl-dev libtbb12 libtbbmalloc2 libtbbbind-2-5 libtbb-dev libyaml-0-2 libyaml-dev
  nlohmann-json3-dev
)
stamp=$sysroot/.ckhost-packages
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "${target_packages[*]}" ]; then
  echo "test-cross: unpacking the $debarch libraries into $sysroot"
  if ! dpkg --print-foreign-architectures | grep -qx "$debarch"; then
    $sudo dpkg --add-architecture "$debarch"
    $sudo apt-get update -qq
  fi
  debs=$(mktemp -d)
  trap 'rm -rf "$debs"' EXIT
  names=()
  for p in "${target_packages[@]}"; do
    case "$p" in nlohmann-json3-dev) names+=("$p") ;; *) names+=("$p:$debarch") ;; esac
  done
  (cd "$debs" && chmod 777 . && apt-get download -qq "${names[@]}")
  rm -rf "$sysroot"
  mkdir -p "$sysroot"
  for deb in "$debs"/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
  echo "${target_packages[*]}" > "$stamp"
fi

# binfmt_misc: a test starts ckhost as a program, which the kernel must hand to qemu.
register_binfmt() {
  local magic mask
  case "$arch" in
    aarch64)
      magic='\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00'
      mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff' ;;
    s390x)
      magic='\x7fELF\x02\x02\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\x16'
      mask='\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff' ;;
  esac
  local binfmt=/proc/sys/fs/binfmt_misc
  [ -e "$binfmt/register" ] || $sudo mount -t binfmt_misc binfmt_misc "$binfmt"
  # Any handler for the target will do (qemu-user-static's, systemd's); else ours.
  if ! grep -qs "^interpreter .*qemu-$arch" "$binfmt"/*; then
    printf '%s' ":ckhost-qemu-$arch:M::$magic:$mask:$(command -v "qemu-$arch"):F" |
      $sudo tee "$binfmt/register" > /dev/null
  fi
}
if ! register_binfmt; then
  echo "test-cross: cannot register qemu-$arch with binfmt_misc (no privileges?): the tests that" \
    "start ckhost as a program cannot run" >&2
  exit 1
fi
# qemu finds the target's loader and libraries here (binfmt starts it without -L).
if $prepare_only; then exit 0; fi
export QEMU_LD_PREFIX=$sysroot
# For the tests: the one case qemu-s390x cannot run skips, naming it (tests/support).
export CKHOST_TEST_EMULATOR=qemu-$arch
export PKG_CONFIG_LIBDIR=$sysroot/usr/lib/$triplet/pkgconfig:$sysroot/usr/share/pkgconfig
export PKG_CONFIG_SYSROOT_DIR=$sysroot

# The whole suite builds as users do (Release, -O3). CI's subset builds at -O1 with strict
# aliasing kept (decision 0064): it asks whether byte order, the portable paths and the NEON
# variants hold on the target, which the optimization level does not change for correct code, and
# -O1 compiles the product a third faster; the native Release suite covers -O3's transformations
# of the same sources. Explicit both ways, so a tree moves between the two modes.
configure() {
  local optimization="-O3 -DNDEBUG"
  if $ci; then optimization="-O1 -fstrict-aliasing -DNDEBUG"; fi
  cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCKHOST_WERROR=ON \
    -DCMAKE_CXX_FLAGS_RELEASE="$optimization" \
    -DCMAKE_TOOLCHAIN_FILE="$PWD/cmake/toolchains/cross-linux-gnu.cmake" \
    -DCKHOST_CROSS_TRIPLET="$triplet" -DCKHOST_CROSS_SYSROOT="$sysroot" -DCKHOST_BUILD_BENCH=OFF
}
if $ci; then
  # s390x has no SIMD variant, so test_kernels_variants would compare nothing there.
  suites=(test_sdk test_narrow)
  if [ "$arch" = aarch64 ]; then suites+=(test_kernels_variants); fi
  if [ "$ci_steps" != test ]; then
    configure
    cmake --build "$dir" --target ckhost ckhost_plugins "${suites[@]}"
  fi
  if [ "$ci_steps" != build ]; then
    # quantize_variants' random blocks are sized for a native CPU (4096 per distribution);
    # under qemu a sixteenth keeps every family of inputs (docs/platforms.md).
    export CKHOST_TEST_RANDOM_BLOCKS=256
    ctest --test-dir "$dir" --output-on-failure -j2 -R "^($(IFS='|'; echo "${suites[*]}"))\$"
    bash tests/cross/same_outputs.sh build/bin/ckhost "$dir/bin/ckhost"
  fi
else
  configure
  cmake --build "$dir"
  ctest --test-dir "$dir" --output-on-failure -j2 "$@"
fi
