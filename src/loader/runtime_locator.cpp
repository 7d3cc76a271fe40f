#include "loader/runtime_locator.h"

#include <algorithm>
#include <cctype>
#include <system_error>

#ifndef EXECUTORCH_OPENVINO_PIP_REQUIREMENT
#define EXECUTORCH_OPENVINO_PIP_REQUIREMENT "openvino"
#endif

namespace executorch_openvino::loader {
namespace {

namespace fs = std::filesystem;

#ifdef _WIN32
bool is_library_name(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower == kBareLibraryName;
}
#else
// "libopenvino_c.so" or "libopenvino_c.so.<digits and dots>"; pip wheels ship only the latter.
bool is_library_name(const std::string& name) {
  const std::string base = kBareLibraryName;
  if (name.compare(0, base.size(), base) != 0) return false;
  if (name.size() == base.size()) return true;
  if (name[base.size()] != '.' || name.size() == base.size() + 1) return false;
  return std::all_of(name.begin() + static_cast<std::ptrdiff_t>(base.size()) + 1, name.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) || c == '.'; });
}
#endif

// Numeric components after the base name: "libopenvino_c.so.2641.1" -> {2641, 1}.
std::vector<unsigned long> version_suffix(const std::string& name) {
  std::vector<unsigned long> parts;
  const std::string base = kBareLibraryName;
  size_t pos = base.size();
  while (pos < name.size()) {
    if (name[pos] == '.') {
      ++pos;
      continue;
    }
    size_t end = pos;
    unsigned long value = 0;
    while (end < name.size() && std::isdigit(static_cast<unsigned char>(name[end]))) {
      value = value * 10 + static_cast<unsigned long>(name[end] - '0');
      ++end;
    }
    if (end == pos) break;
    parts.push_back(value);
    pos = end;
  }
  return parts;
}

std::string fix_hint() {
#ifdef _WIN32
  const std::string file = kBareLibraryName;
#else
  const std::string file = std::string(kBareLibraryName) + "*";
#endif
  return std::string("Fix: set ") + kLibPathVariable + " to the OpenVINO C library (" + file +
         ") or to the folder that holds it, or install the runtime with: pip install '" +
         pip_requirement() + "'";
}

}  // namespace

const char* pip_requirement() { return EXECUTORCH_OPENVINO_PIP_REQUIREMENT; }

bool newer_library_name(const std::string& a, const std::string& b) {
  return version_suffix(a) > version_suffix(b);
}

std::optional<fs::path> sibling_pip_runtime_folder() {
  std::optional<fs::path> self = module_path_of(reinterpret_cast<const void*>(&sibling_pip_runtime_folder));
  if (!self) return std::nullopt;
  std::error_code ec;
  const fs::path folder = self->parent_path() / ".." / ".." / "openvino" / "libs";
  if (!fs::is_directory(folder, ec)) return std::nullopt;
  return fs::weakly_canonical(folder, ec);
}

namespace {

std::vector<fs::path> libraries_in(const fs::path& folder) {
  std::error_code ec;
  std::vector<fs::path> found;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = to_utf8(it->path().filename());
    if (is_library_name(name)) found.push_back(it->path());
  }
  std::sort(found.begin(), found.end(), [](const fs::path& a, const fs::path& b) {
    return newer_library_name(to_utf8(a.filename()), to_utf8(b.filename()));
  });
  return found;
}

}  // namespace

std::vector<fs::path> candidate_paths(const std::optional<fs::path>& configured) {
  if (!configured) {
    std::vector<fs::path> candidates{fs::path(kBareLibraryName)};
    if (std::optional<fs::path> sibling = sibling_pip_runtime_folder()) {
      for (fs::path& library : libraries_in(*sibling)) candidates.push_back(std::move(library));
    }
    return candidates;
  }
  std::error_code ec;
  if (!fs::is_directory(*configured, ec)) return {*configured};
  return libraries_in(*configured);
}

Outcome<LocatedLibrary> open_openvino_c(const std::optional<fs::path>& configured) {
  const std::vector<fs::path> candidates = candidate_paths(configured);
  std::string tried;
  if (candidates.empty()) {
    tried = "  " + to_utf8(*configured) + ": folder holds no " + kBareLibraryName + "* file\n";
  }
  int system_code = 0;
  for (const fs::path& candidate : candidates) {
    Outcome<DynamicLibrary> opened = DynamicLibrary::open(candidate);
    if (opened.ok()) return LocatedLibrary{std::move(opened).value(), candidate};
    system_code = opened.failure().system_code;
    // dlerror() often starts with the path itself; say it once.
    const std::string where = to_utf8(candidate);
    std::string reason = opened.failure().message;
    if (reason.compare(0, where.size() + 2, where + ": ") == 0) reason.erase(0, where.size() + 2);
    tried += "  " + where + ": " + reason + "\n";
  }
  std::string source = configured ? "from " + to_utf8(*configured)
                                  : std::string("(") + kLibPathVariable + " unset; tried the system's search)";
  return Failure{FailureKind::kRuntimeUnavailable,
                 "cannot load the OpenVINO C library " + source + ". Tried:\n" + tried + fix_hint(), system_code};
}

}  // namespace executorch_openvino::loader
