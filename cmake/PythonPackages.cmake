# Locates the pip-installed ExecuTorch and OpenVINO packages through the chosen Python, without
# importing them (importing executorch takes seconds and pulls in torch).
#
# Sets: EXECUTORCH_OPENVINO_ET_CMAKE_PREFIX  (<site-packages>/executorch/share/cmake)
#       EXECUTORCH_OPENVINO_OV_PACKAGE_DIR    (<site-packages>/openvino, empty when not installed)
#       EXECUTORCH_OPENVINO_OV_VERSION        (the openvino distribution's version, e.g. 2026.4.1)

find_package(Python3 3.10 REQUIRED COMPONENTS Interpreter)

function(_executorch_openvino_python_query out code)
  execute_process(
    COMMAND "${Python3_EXECUTABLE}" -c "${code}"
    OUTPUT_VARIABLE value
    OUTPUT_STRIP_TRAILING_WHITESPACE
    RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    set(value "")
  endif()
  set(${out} "${value}" PARENT_SCOPE)
endfunction()

set(_package_dir_code
    "import importlib.util, sys; s = importlib.util.find_spec(sys.argv[1] if len(sys.argv) > 1 else '@NAME@'); print(s.submodule_search_locations[0] if s else '')")

string(REPLACE "@NAME@" "executorch" _code "${_package_dir_code}")
_executorch_openvino_python_query(_et_dir "${_code}")
if(NOT _et_dir)
  message(FATAL_ERROR "The executorch Python package is not installed in ${Python3_EXECUTABLE}; run `make setup`.")
endif()
set(EXECUTORCH_OPENVINO_ET_CMAKE_PREFIX "${_et_dir}/share/cmake")

string(REPLACE "@NAME@" "openvino" _code "${_package_dir_code}")
_executorch_openvino_python_query(EXECUTORCH_OPENVINO_OV_PACKAGE_DIR "${_code}")
_executorch_openvino_python_query(EXECUTORCH_OPENVINO_OV_VERSION
  "import importlib.metadata as m; print(m.version('openvino'))")
