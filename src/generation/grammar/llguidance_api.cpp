#include "generation/grammar/llguidance_api.h"

#include <string>
#include <utility>

namespace executorch_openvino::generation::grammar {
namespace {

#if defined(_WIN32)
constexpr const char* kDefaultLibraryName = "llguidance.dll";
#elif defined(__APPLE__)
constexpr const char* kDefaultLibraryName = "libllguidance.dylib";
#else
constexpr const char* kDefaultLibraryName = "libllguidance.so";
#endif

constexpr const char* kHowToGetIt =
    "install llguidance (`pip install llguidance`) and set LLGUIDANCE_LIB_PATH to a libllguidance "
    "built from its C API (cargo build --release in llguidance's parser/ folder); the wheel's "
    "llguidance/_lib.abi3.so exports the same functions but opens only inside a Python process";

std::string where_from(const std::optional<std::filesystem::path>& given) {
  if (given) return "given by the caller";
  if (loader::read_environment_path(kLlguidanceLibraryVariable)) return "from LLGUIDANCE_LIB_PATH";
  return "by the system's library search, as LLGUIDANCE_LIB_PATH is not set";
}

}  // namespace

Outcome<LlguidanceSymbols> resolve_llguidance_symbols(const loader::DynamicLibrary& library) {
  LlguidanceSymbols symbols;
#define EXECUTORCH_OPENVINO_RESOLVE_LLG_SYMBOL(name)                                                     \
  symbols.name = reinterpret_cast<name##_fn>(library.symbol(#name));                                    \
  if (symbols.name == nullptr) {                                                                        \
    return Failure{FailureKind::kUnsupportedRuntime, "the library does not export " #name " (it is not " \
                                                     "llguidance, or a release older than 1.0)"};       \
  }
  EXECUTORCH_OPENVINO_LLGUIDANCE_SYMBOLS(EXECUTORCH_OPENVINO_RESOLVE_LLG_SYMBOL)
#undef EXECUTORCH_OPENVINO_RESOLVE_LLG_SYMBOL
  return symbols;
}

Outcome<std::shared_ptr<const LlguidanceLibrary>> LlguidanceLibrary::open(
    const std::optional<std::filesystem::path>& path) {
  std::filesystem::path chosen;
  if (path && !path->empty()) {
    chosen = *path;
  } else if (auto from_environment = loader::read_environment_path(kLlguidanceLibraryVariable)) {
    chosen = *from_environment;
  } else {
    chosen = kDefaultLibraryName;
  }
  const std::string origin = where_from(path && !path->empty() ? path : std::nullopt);

  Outcome<loader::DynamicLibrary> opened = loader::DynamicLibrary::open(chosen);
  if (!opened) {
    std::string message = "cannot open the llguidance library " + loader::to_utf8(chosen) + " (" + origin +
                          "): " + opened.failure().message;
    if (opened.failure().message.find("undefined symbol: Py") != std::string::npos) {
      message += "; this is the Python wheel's module, which needs a Python process";
    }
    return Failure{FailureKind::kRuntimeUnavailable, message + "; " + kHowToGetIt, opened.failure().system_code};
  }
  Outcome<LlguidanceSymbols> symbols = resolve_llguidance_symbols(opened.value());
  if (!symbols) {
    return Failure{symbols.failure().kind,
                   "cannot use " + loader::to_utf8(chosen) + " (" + origin + ") as llguidance: " +
                       symbols.failure().message + "; " + kHowToGetIt};
  }
  const char* version = symbols->llg_get_version();
  opened->keep_loaded_forever();
  return std::shared_ptr<const LlguidanceLibrary>(
      new LlguidanceLibrary(chosen, symbols.value(), version != nullptr ? version : "llguidance (unknown version)"));
}

}  // namespace executorch_openvino::generation::grammar
