#include "openvino_api/symbol_table.h"

namespace executorch_openvino::openvino_api {

Outcome<SymbolTable> resolve_symbols(const loader::DynamicLibrary& library) {
  SymbolTable table;
#define EXECUTORCH_OPENVINO_RESOLVE_REQUIRED(name)                                                  \
  table.name = reinterpret_cast<name##_fn>(library.symbol(#name));                                \
  if (table.name == nullptr) {                                                                     \
    return Failure{FailureKind::kRuntimeUnavailable, "required symbol " #name " is not exported"}; \
  }
  EXECUTORCH_OPENVINO_REQUIRED_SYMBOLS(EXECUTORCH_OPENVINO_RESOLVE_REQUIRED)
#undef EXECUTORCH_OPENVINO_RESOLVE_REQUIRED

#define EXECUTORCH_OPENVINO_RESOLVE_OPTIONAL(name) \
  table.name = reinterpret_cast<name##_fn>(library.symbol(#name));
  EXECUTORCH_OPENVINO_OPTIONAL_SYMBOLS(EXECUTORCH_OPENVINO_RESOLVE_OPTIONAL)
#undef EXECUTORCH_OPENVINO_RESOLVE_OPTIONAL
  return table;
}

}  // namespace executorch_openvino::openvino_api
