// The ExecuTorch backend: init / execute / destroy, and registration. Orchestrates only; the work
// is in model_compiler (compile), compiled_method (execute) and openvino_api (every OpenVINO call).
#include "delegate/openvino_backend.h"

#include <executorch/runtime/platform/log.h>

#include <executorch_openvino/backend.h>

#include "blob/delegate_blob.h"
#include "delegate/compile_options.h"
#include "delegate/compiled_method.h"
#include "delegate/errors.h"
#include "delegate/model_compiler.h"
#include "openvino_api/runtime.h"

namespace executorch_openvino {

using executorch::runtime::ArrayRef;
using executorch::runtime::BackendExecutionContext;
using executorch::runtime::BackendInitContext;
using executorch::runtime::CompileSpec;
using executorch::runtime::DelegateHandle;
using executorch::runtime::Error;
using executorch::runtime::EValue;
using executorch::runtime::FreeableBuffer;
using executorch::runtime::Result;
using executorch::runtime::Span;

OpenvinoDelegateBackend::~OpenvinoDelegateBackend() = default;

bool OpenvinoDelegateBackend::is_available() const {
  Outcome<ov::Runtime*> runtime = ov::Runtime::instance();
  if (!runtime.ok()) {
    delegate::report(runtime.failure());
    return false;
  }
  return true;
}

Result<DelegateHandle*> OpenvinoDelegateBackend::init(BackendInitContext& context, FreeableBuffer* processed,
                                                      ArrayRef<CompileSpec> compile_specs) const {
  delegate::clear_last_error();
  Outcome<ov::Runtime*> runtime = ov::Runtime::instance();
  if (!runtime.ok()) return delegate::report(runtime.failure());

  blob::ParseResult parsed = blob::parse(processed->data(), processed->size());
  if (!parsed.blob) {
    return delegate::report(Failure{FailureKind::kInvalidBlob, "invalid delegate blob: " + parsed.error});
  }
  Outcome<delegate::CompileOptions> options = delegate::parse_compile_specs(compile_specs);
  if (!options.ok()) return delegate::report(options.failure());
  if (std::string warning = delegate::apply_defaults(options.value()); !warning.empty()) {
    ET_LOG(Info, "executorch_openvino: %s", warning.c_str());
  }

  Outcome<delegate::CompiledModel> compiled = delegate::compile(*runtime.value(), *parsed.blob, options.value());
  if (!compiled.ok()) return delegate::report(compiled.failure());

  void* storage =
      context.get_runtime_allocator()->allocate(sizeof(delegate::CompiledMethod), alignof(delegate::CompiledMethod));
  if (storage == nullptr) return Error::MemoryAllocationFailed;
  // Without weights nothing can point into the blob any more, so release it now; otherwise the
  // compiled model may use constants in place, and the CompiledMethod frees the blob after it.
  FreeableBuffer* keep = parsed.blob->ir_weights.size > 0 ? processed : nullptr;
  Outcome<delegate::CompiledMethod*> method =
      delegate::CompiledMethod::create(storage, *runtime.value(), std::move(compiled).value(), keep);
  if (!method.ok()) return delegate::report(method.failure());
  if (keep == nullptr) processed->Free();
  return method.value();
}

Error OpenvinoDelegateBackend::execute(BackendExecutionContext& /*context*/, DelegateHandle* handle,
                                       Span<EValue*> args) const {
  delegate::clear_last_error();
  if (handle == nullptr) return Error::DelegateInvalidHandle;
  Status done = static_cast<delegate::CompiledMethod*>(handle)->execute(args);
  return done.ok() ? Error::Ok : delegate::report(done.failure());
}

void OpenvinoDelegateBackend::destroy(DelegateHandle* handle) const {
  // The storage belongs to the method's allocator; only the object's own resources are ours.
  if (handle != nullptr) static_cast<delegate::CompiledMethod*>(handle)->~CompiledMethod();
}

namespace {

OpenvinoDelegateBackend& backend_instance() {
  // Never destroyed: the registry keeps a raw pointer to it for the life of the process.
  static auto* backend = new OpenvinoDelegateBackend();
  return *backend;
}

Error register_once() {
  static const executorch::runtime::Backend entry{EXECUTORCH_OPENVINO_BACKEND_ID, &backend_instance()};
  const Error status = executorch::runtime::register_backend(entry);
  if (status != Error::Ok) {
    ET_LOG(Error, "executorch_openvino: registering backend %s failed with error 0x%x", EXECUTORCH_OPENVINO_BACKEND_ID,
           static_cast<unsigned>(status));
  }
  return status;
}

}  // namespace

// Registers when the library is loaded, as ExecuTorch's own backends do.
const Error registration_status = register_once();

}  // namespace executorch_openvino
