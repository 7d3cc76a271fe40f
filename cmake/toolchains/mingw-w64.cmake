# Cross-compiling for Windows x64 from Linux with MinGW-w64 (Debian: g++-mingw-w64-x86-64-posix,
# mingw-w64-x86-64-dev), running the results under Wine (Debian: wine, wine64).
#
#   cmake -S tests/windows -B build/windows -G Ninja \
#         -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/mingw-w64.cmake
#
# The -posix compilers use the POSIX thread model, which libstdc++'s std::thread and std::mutex
# (used by the OpenVINO runtime wrapper) need. Everything is linked statically, so the programs and
# DLLs built import only KERNEL32.dll and msvcrt.dll (no libstdc++-6.dll, libgcc_s_seh-1.dll or
# libwinpthread-1.dll to ship beside them).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)

set(EOV_MINGW_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${EOV_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${EOV_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${EOV_MINGW_TRIPLE}-windres)

# Headers and libraries only from the MinGW sysroot; programs (the build tools) from the host.
set(CMAKE_FIND_ROOT_PATH /usr/${EOV_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static")
set(CMAKE_MODULE_LINKER_FLAGS_INIT "-static")

# ctest runs every add_test(COMMAND <target>) through this. Debian's /usr/bin/wine (package
# `wine`) runs the 64-bit loader when wine32 is missing; without that package the 64-bit loader is
# called directly. Set WINEPREFIX, WINEDEBUG=-all and LANG=C.UTF-8 in the environment that runs
# ctest (scripts/test_windows.sh does).
if(NOT CMAKE_CROSSCOMPILING_EMULATOR)
  find_program(EOV_WINE NAMES wine PATHS /usr/bin NO_CMAKE_FIND_ROOT_PATH)
  if(NOT EOV_WINE AND EXISTS /usr/lib/wine/wine64)
    set(EOV_WINE /usr/lib/wine/wine64)
  endif()
  if(EOV_WINE)
    set(CMAKE_CROSSCOMPILING_EMULATOR "${EOV_WINE}")
  endif()
endif()
