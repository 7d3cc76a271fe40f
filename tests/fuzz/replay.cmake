# The fuzz targets built with a plain main() (replay_main.cpp) for ctest, included by
# tests/cpp/CMakeLists.txt: every seed and every saved regression input runs on each `make test`,
# in the normal build and under the sanitizers (`make test-asan`), with no clang needed.
set(_fuzz_dir "${PROJECT_SOURCE_DIR}/tests/fuzz")

function(add_fuzz_replay name)
  add_executable(${name}_replay "${_fuzz_dir}/replay_main.cpp" ${ARGN})
  if(TARGET eov_sanitizer_options)
    target_link_libraries(${name}_replay PRIVATE eov_sanitizer_options)
  endif()
  # The seeds are valid inputs and must be accepted; the regression inputs must merely not crash.
  add_test(NAME FuzzReplay.${name}.seeds COMMAND ${name}_replay "${_fuzz_dir}/corpus/${name}")
  set_tests_properties(FuzzReplay.${name}.seeds PROPERTIES ENVIRONMENT EOV_FUZZ_SEEDS_ARE_VALID=1)
  if(IS_DIRECTORY "${_fuzz_dir}/regressions/${name}")
    add_test(NAME FuzzReplay.${name}.regressions COMMAND ${name}_replay "${_fuzz_dir}/regressions/${name}")
  endif()
endfunction()

add_fuzz_replay(blob_parse "${_fuzz_dir}/blob_parse_fuzzer.cpp" "${_fuzz_dir}/blob_checksums.cpp")
target_link_libraries(blob_parse_replay PRIVATE eov_blob)

add_fuzz_replay(backend_init "${_fuzz_dir}/backend_init_fuzzer.cpp")
target_link_libraries(backend_init_replay PRIVATE eov_test_support eov_blob)
target_compile_definitions(backend_init_replay PRIVATE EOV_FUZZ_OPENVINO_LIB_PATH="${OV_C_LIBRARY}")

add_fuzz_replay(state_file "${_fuzz_dir}/state_file_fuzzer.cpp")
target_link_libraries(state_file_replay PRIVATE eov_state_file)

add_fuzz_replay(text_stream "${_fuzz_dir}/text_stream_fuzzer.cpp" "${PROJECT_SOURCE_DIR}/src/generation/text_stream.cpp")
target_include_directories(text_stream_replay PRIVATE "${PROJECT_SOURCE_DIR}/src")
