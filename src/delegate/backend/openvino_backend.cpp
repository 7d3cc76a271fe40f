// The ExecuTorch backend: init / execute / destroy, and registration. Orchestrates only; the work
// is in compiling/ (compile), execution/ (execute) and openvino_api (every OpenVINO call).
#include "delegate/backend/openvino_backend.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <executorch/runtime/platform/log.h>

#include <executorch_openvino/backend.h>

#include "blob/delegate_blob.h"
#include "delegate/options/compile_options.h"
#include "delegate/compiling/compiled_model_cache.h"
#include "delegate/execution/partition_handle.h"
#include "delegate/backend/errors.h"
#include "delegate/compiling/model_compiler.h"
#include "delegate/compiling/named_weights.h"
#include "delegate/options/runtime_options.h"
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

namespace {

// Says what the layers below had to say, once.
void log_notes(delegate::Notes& notes) {
  for (const std::string& note : notes) delegate::log_info(note);
  notes.clear();
}

// The handle of one delegated partition: its own infer request on the (shared) compiled model, in
// the method's allocator.
Result<DelegateHandle*> make_handle(BackendInitContext& context, openvino_api::Runtime& runtime,
                                    std::shared_ptr<const delegate::CompiledModel> compiled,
                                    std::optional<blob::InputArguments> arguments = std::nullopt,
                                    std::vector<blob::InputBound> bounds = {}) {
  void* storage =
      context.get_runtime_allocator()->allocate(sizeof(delegate::PartitionHandle), alignof(delegate::PartitionHandle));
  if (storage == nullptr) return Error::MemoryAllocationFailed;
  Outcome<delegate::PartitionHandle*> handle = delegate::PartitionHandle::create(
      storage, runtime, std::move(compiled), std::move(arguments), std::move(bounds));
  if (!handle.ok()) return delegate::report(handle.failure());
  return handle.value();
}

}  // namespace

OpenvinoDelegateBackend::~OpenvinoDelegateBackend() = default;

bool OpenvinoDelegateBackend::is_available() const {
  Outcome<openvino_api::Runtime*> runtime = openvino_api::Runtime::instance();
  if (!runtime.ok()) {
    delegate::report(runtime.failure());
    return false;
  }
  return true;
}

Result<DelegateHandle*> OpenvinoDelegateBackend::init(BackendInitContext& context, FreeableBuffer* processed,
                                                      ArrayRef<CompileSpec> compile_specs) const {
  if (blobs_ == BlobKind::kUpstream) return init_upstream(context, processed, compile_specs);
  delegate::clear_last_error();
  Outcome<openvino_api::Runtime*> runtime = openvino_api::Runtime::instance();
  if (!runtime.ok()) return delegate::report(runtime.failure());

  blob::ParseResult parsed = blob::parse(processed->data(), processed->size());
  if (!parsed.blob) {
    return delegate::report(Failure{FailureKind::kInvalidBlob, "invalid delegate blob: " + parsed.error});
  }
  delegate::Notes notes;
  Outcome<delegate::CompileOptions> options = delegate::parse_compile_specs(compile_specs, notes);
  log_notes(notes);
  if (!options.ok()) return delegate::report(options.failure());
  if (Status applied = delegate::apply_runtime_options(options.value(), context.runtime_specs()); !applied.ok()) {
    return delegate::report(applied.failure());
  }
  if (std::string warning = delegate::apply_defaults(options.value()); !warning.empty()) delegate::log_info(warning);

  // Weights kept in the program's named data (a .ptd) are fetched only if the IR is compiled.
  Outcome<delegate::IrWeights> weights = delegate::IrWeights::of(*parsed.blob, context.get_named_data_map());
  if (!weights.ok()) return delegate::report(weights.failure());
  auto release = [processed, &weights] {
    processed->Free();
    weights->release();
  };

  auto take = [&weights, processed] { return weights->take(*processed); };
  Outcome<std::shared_ptr<const delegate::CompiledModel>> compiled =
      delegate::shared_compiled_model(*runtime.value(), {*parsed.blob, options.value(), take, release}, notes);
  log_notes(notes);
  if (!compiled.ok()) return delegate::report(compiled.failure());
  // Copied: the blob goes.
  std::optional<blob::InputArguments> arguments = parsed.blob->input_arguments;
  std::vector<blob::InputBound> bounds = parsed.blob->input_bounds;
  // The compiled model owns what it still needs (the weights it took over, in place), so the rest of
  // ExecuTorch's buffers goes now (if compile() has not already released it) instead of living as
  // long as the method.
  release();
  return make_handle(context, *runtime.value(), std::move(compiled).value(), std::move(arguments), std::move(bounds));
}

Result<DelegateHandle*> OpenvinoDelegateBackend::init_upstream(BackendInitContext& context, FreeableBuffer* processed,
                                                               ArrayRef<CompileSpec> compile_specs) const {
  delegate::clear_last_error();
  Outcome<openvino_api::Runtime*> runtime = openvino_api::Runtime::instance();
  if (!runtime.ok()) return delegate::report(runtime.failure());
  // That partitioner records the device it compiled for; other specs configured its compilation.
  delegate::CompileOptions options;
  options.device = delegate::upstream_device(compile_specs);
  const std::string compiled_for = options.device;
  if (Status applied = delegate::apply_runtime_options(options, context.runtime_specs()); !applied.ok()) {
    return delegate::report(applied.failure());
  }
  if (options.device != compiled_for) {
    delegate::log_info("this blob was compiled for " + compiled_for +
                       " by ExecuTorch's own OpenVINO partitioner and holds no IR to compile for " + options.device +
                       "; running it on " + compiled_for);
    options.device = compiled_for;
  }
  if (std::string warning = delegate::apply_defaults(options); !warning.empty()) delegate::log_info(warning);
  Outcome<std::shared_ptr<const delegate::CompiledModel>> compiled =
      delegate::shared_upstream_model(*runtime.value(), processed->data(), processed->size(), options);
  if (!compiled.ok()) return delegate::report(compiled.failure());
  processed->Free();
  return make_handle(context, *runtime.value(), std::move(compiled).value());
}

Error OpenvinoDelegateBackend::execute(BackendExecutionContext& context, DelegateHandle* handle,
                                       Span<EValue*> args) const {
  delegate::clear_last_error();
  if (handle == nullptr) return Error::DelegateInvalidHandle;
  Status done = static_cast<delegate::PartitionHandle*>(handle)->execute(args, context.event_tracer());
  return done.ok() ? Error::Ok : delegate::report(done.failure());
}

void OpenvinoDelegateBackend::destroy(DelegateHandle* handle) const {
  // The storage belongs to the method's allocator; only the object's own resources are ours.
  if (handle != nullptr) static_cast<delegate::PartitionHandle*>(handle)->~PartitionHandle();
}

Error OpenvinoDelegateBackend::set_option(executorch::runtime::BackendOptionContext& /*context*/,
                                          const Span<executorch::runtime::BackendOption>& options) {
  delegate::clear_last_error();
  // Check all first, so a bad option changes nothing.
  std::vector<std::pair<std::string, std::string>> accepted;
  for (const executorch::runtime::BackendOption& option : options) {
    auto read = delegate::read_backend_option(option);
    if (!read.ok()) return delegate::report(read.failure());
    if (!read->second.empty()) {
      auto normalized = delegate::normalize_option(*read->first, read->second);
      if (!normalized.ok()) return delegate::report(normalized.failure());
    }
    accepted.emplace_back(read->first->key, read->second);
  }
  for (const auto& [key, value] : accepted) {
    if (Status set = delegate::set_process_option(key, value); !set.ok()) return delegate::report(set.failure());
  }
  return Error::Ok;
}

Error OpenvinoDelegateBackend::get_option(executorch::runtime::BackendOptionContext& /*context*/,
                                          Span<executorch::runtime::BackendOption>& options) {
  delegate::clear_last_error();
  for (executorch::runtime::BackendOption& option : options) {
    const std::string key = delegate::backend_option_key(option);
    if (auto known = delegate::known_option(key); !known.ok()) return delegate::report(known.failure());
    delegate::write_backend_option(option, delegate::effective_process_option(key).value_or(""));
  }
  return Error::Ok;
}

namespace {

OpenvinoDelegateBackend& backend_instance() {
  // Never destroyed: the registry keeps a raw pointer to it for the life of the process.
  static auto* backend = new OpenvinoDelegateBackend();
  return *backend;
}

bool upstream_registered = false;

Error register_once() {
  static const executorch::runtime::Backend entry{EXECUTORCH_OPENVINO_BACKEND_ID, &backend_instance()};
  const Error status = executorch::runtime::register_backend(entry);
  if (status != Error::Ok) {
    ET_LOG(Error, "executorch_openvino: registering backend %s failed with error 0x%x", EXECUTORCH_OPENVINO_BACKEND_ID,
           static_cast<unsigned>(status));
    return status;
  }
  // ExecuTorch's own OpenVINO delegate's name, only while nobody holds it: then its programs run
  // here; when it is taken, that library keeps it.
  if (executorch::runtime::get_backend_class(kUpstreamBackendId) == nullptr) {
    static auto* upstream = new OpenvinoDelegateBackend(OpenvinoDelegateBackend::BlobKind::kUpstream);
    static const executorch::runtime::Backend upstream_entry{kUpstreamBackendId, upstream};
    upstream_registered = executorch::runtime::register_backend(upstream_entry) == Error::Ok;
  }
  return status;
}

}  // namespace

bool registered_upstream_name() { return upstream_registered; }

// Registers when the library is loaded, as ExecuTorch's own backends do.
const Error registration_status = register_once();

}  // namespace executorch_openvino
