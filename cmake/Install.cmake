# Installation: the layout of the Python wheel, whose install prefix is the package folder
# site-packages/executorch_openvino/ (scikit-build-core's wheel.install-dir):
#   lib/libexecutorch_openvino.so
#   lib/libexecutorch_openvino_state.so (Linux; opened at run time for OpenVINO's variable state)
#   lib/libexecutorch_openvino_generation.so (Linux; the generation engine, include/.../generation.h)
#   include/executorch_openvino/backend.h, generation.h
#   share/cmake/executorch_openvino/executorch_openvino{Config,ConfigVersion}.cmake
#   bin/executorch-openvino-run
include(CMakePackageConfigHelpers)

set(EXECUTORCH_OPENVINO_CMAKE_DIR "share/cmake/executorch_openvino")

install(TARGETS executorch_openvino LIBRARY DESTINATION lib RUNTIME DESTINATION lib)
install(DIRECTORY include/executorch_openvino DESTINATION include)
if(TARGET executorch_openvino_state)
  install(TARGETS executorch_openvino_state LIBRARY DESTINATION lib)
endif()
if(TARGET executorch_openvino_generation)
  install(TARGETS executorch_openvino_generation LIBRARY DESTINATION lib)
endif()
if(TARGET executorch_openvino_run)
  install(TARGETS executorch_openvino_run RUNTIME DESTINATION bin)
endif()

# The exact ExecuTorch release the library was compiled against: its C++ ABI is not stable, so the
# package refuses any other.
set(EXECUTORCH_OPENVINO_EXECUTORCH_VERSION "${EXECUTORCH_BUILD_VERSION}")
if(NOT EXECUTORCH_OPENVINO_EXECUTORCH_VERSION)
  set(EXECUTORCH_OPENVINO_EXECUTORCH_VERSION "${executorch_VERSION}")
endif()
configure_package_config_file(
  cmake/executorch_openvinoConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/executorch_openvinoConfig.cmake"
  INSTALL_DESTINATION "${EXECUTORCH_OPENVINO_CMAKE_DIR}"
  NO_SET_AND_CHECK_MACRO NO_CHECK_REQUIRED_COMPONENTS_MACRO)
write_basic_package_version_file(
  "${CMAKE_CURRENT_BINARY_DIR}/executorch_openvinoConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}" COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/executorch_openvinoConfig.cmake"
              "${CMAKE_CURRENT_BINARY_DIR}/executorch_openvinoConfigVersion.cmake"
        DESTINATION "${EXECUTORCH_OPENVINO_CMAKE_DIR}")
