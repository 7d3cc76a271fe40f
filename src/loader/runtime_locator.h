// Policy: which file is the OpenVINO C library. Reads OPENVINO_LIB_PATH (a file or a folder),
// falls back to the system's bare name, and reports every path it tried with the reason.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/outcome.h"
#include "loader/dynamic_library.h"

namespace executorch_openvino::loader {

inline constexpr const char kLibPathVariable[] = "OPENVINO_LIB_PATH";

#ifdef _WIN32
inline constexpr const char kBareLibraryName[] = "openvino_c.dll";
#else
inline constexpr const char kBareLibraryName[] = "libopenvino_c.so";
#endif

struct LocatedLibrary {
  DynamicLibrary library;
  std::filesystem::path path;  // the path (or bare name) that loaded
};

// The candidates to try, best first. `configured` is OPENVINO_LIB_PATH's value (nullopt: unset).
// A folder yields its libopenvino_c.so* files, highest version first; a folder holding none yields
// nothing, which the caller reports. Unset, the system's bare name comes first, then the
// `openvino` pip package installed beside ours (site-packages/openvino/libs), if there is one.
std::vector<std::filesystem::path> candidate_paths(const std::optional<std::filesystem::path>& configured);

// site-packages/openvino/libs beside the folder holding this library in site-packages
// (site-packages/executorch_openvino/lib), when it exists.
std::optional<std::filesystem::path> sibling_pip_runtime_folder();

// Tries the candidates for `configured` in order and returns the first that loads. The failure
// message names every path tried, the system's reason for each, and how to fix it.
Outcome<LocatedLibrary> open_openvino_c(const std::optional<std::filesystem::path>& configured);

// The pip requirement that installs a runtime this build was tested with, e.g. "openvino>=2026.4,<2026.5".
const char* pip_requirement();

// Orders versioned file names: "libopenvino_c.so.2641" > "libopenvino_c.so.2541" > "libopenvino_c.so".
bool newer_library_name(const std::string& a, const std::string& b);

}  // namespace executorch_openvino::loader
