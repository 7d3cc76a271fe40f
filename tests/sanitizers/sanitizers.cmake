# Instrumented builds, for testing only: `make test-asan` (EXECUTORCH_OPENVINO_SANITIZE) and
# `make fuzz` (EXECUTORCH_OPENVINO_FUZZ, clang). Included by the top-level CMakeLists.txt before any
# target, so every layer, the delegate library and the tests are instrumented alike. What ships
# sets neither option.

set(EXECUTORCH_OPENVINO_SANITIZE "" CACHE STRING
    "Sanitizers to build everything with, as for -fsanitize= (e.g. address,undefined); testing only")
option(EXECUTORCH_OPENVINO_FUZZ "Build the libFuzzer targets in tests/fuzz (needs clang); testing only" OFF)

if(EXECUTORCH_OPENVINO_SANITIZE)
  # Stop at the first finding (a report that scrolls by while the test passes is no check), and
  # keep frames so reports name our functions.
  add_compile_options(-fsanitize=${EXECUTORCH_OPENVINO_SANITIZE} -fno-sanitize-recover=all
                      -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=${EXECUTORCH_OPENVINO_SANITIZE})
endif()

if(EXECUTORCH_OPENVINO_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "EXECUTORCH_OPENVINO_FUZZ needs clang (libFuzzer): configure with "
                        "-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang")
  endif()
  # Coverage feedback for every library the fuzzers reach; the fuzzers link libFuzzer's main.
  add_compile_options(-fsanitize=fuzzer-no-link)
endif()

# clang links the sanitizer runtimes into executables only, so a shared library refers to them as
# undefined symbols that the executable provides at run time.
if((EXECUTORCH_OPENVINO_SANITIZE OR EXECUTORCH_OPENVINO_FUZZ) AND CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  set(EXECUTORCH_OPENVINO_ALLOW_UNDEFINED ON)
else()
  set(EXECUTORCH_OPENVINO_ALLOW_UNDEFINED OFF)
endif()

# Linked into every instrumented test binary (and, with fast unwinding, every fuzzer): the
# sanitizers' options and the leak suppressions (see sanitizer_options.cpp and lsan.supp).
if(EXECUTORCH_OPENVINO_SANITIZE)
  add_library(eov_sanitizer_options OBJECT "${CMAKE_CURRENT_LIST_DIR}/sanitizer_options.cpp")
  target_compile_definitions(eov_sanitizer_options PRIVATE
    EOV_LSAN_SUPPRESSIONS="${CMAKE_CURRENT_LIST_DIR}/lsan.supp")
  add_library(eov_fuzzer_sanitizer_options OBJECT "${CMAKE_CURRENT_LIST_DIR}/sanitizer_options.cpp")
  target_compile_definitions(eov_fuzzer_sanitizer_options PRIVATE
    EOV_LSAN_SUPPRESSIONS="${CMAKE_CURRENT_LIST_DIR}/lsan.supp" EOV_FAST_UNWIND)
endif()
