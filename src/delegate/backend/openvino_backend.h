// The ExecuTorch backend registered under EXECUTORCH_OPENVINO_BACKEND_ID.
#pragma once

#include <executorch/runtime/backend/interface.h>
#include <executorch_openvino/backend.h>

namespace executorch_openvino {

// Exported so tools and tests can see which library defines the backend.
class EXECUTORCH_OPENVINO_API OpenvinoDelegateBackend final
    : public executorch::runtime::BackendInterface {
 public:
  // Blobs are our container, or, for the instance registered under ExecuTorch's own OpenVINO
  // delegate's name (when no one else holds it), compiled models that delegate's partitioner made.
  enum class BlobKind { kOwn, kUpstream };
  explicit OpenvinoDelegateBackend(BlobKind blobs = BlobKind::kOwn) : blobs_(blobs) {}
  ~OpenvinoDelegateBackend() override;

  // Runs on every delegate load, so it stays cheap: the runtime is loaded once per process (and a
  // failure is remembered); no core is created here.
  bool is_available() const override;

  executorch::runtime::Result<executorch::runtime::DelegateHandle*> init(
      executorch::runtime::BackendInitContext& context, executorch::runtime::FreeableBuffer* processed,
      executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs) const override;

  executorch::runtime::Error execute(executorch::runtime::BackendExecutionContext& context,
                                     executorch::runtime::DelegateHandle* handle,
                                     executorch::runtime::Span<executorch::runtime::EValue*> args) const override;

  void destroy(executorch::runtime::DelegateHandle* handle) const override;

  // Process-wide defaults for later loads (runtime_options.h: keys, channels, precedence). An
  // unknown key or a bad value is InvalidArgument and changes nothing; an empty string value
  // removes the key.
  executorch::runtime::Error set_option(
      executorch::runtime::BackendOptionContext& context,
      const executorch::runtime::Span<executorch::runtime::BackendOption>& options) override;
  // Fills each option's value with what a load would use from set_option or the environment: an
  // int or bool where the caller's value holds one and the value is one, else text ("" when
  // unset: each program's compile spec decides).
  executorch::runtime::Error get_option(executorch::runtime::BackendOptionContext& context,
                                        executorch::runtime::Span<executorch::runtime::BackendOption>& options) override;

 private:
  executorch::runtime::Result<executorch::runtime::DelegateHandle*> init_upstream(
      executorch::runtime::BackendInitContext& context, executorch::runtime::FreeableBuffer* processed,
      executorch::runtime::ArrayRef<executorch::runtime::CompileSpec> compile_specs) const;

  BlobKind blobs_;
};

// ExecuTorch's own OpenVINO delegate's backend id.
inline constexpr const char kUpstreamBackendId[] = "OpenvinoBackend";

// What registering the backend returned when the library was loaded.
extern const executorch::runtime::Error registration_status;
// Whether the library also registered under kUpstreamBackendId (the name was free).
bool registered_upstream_name();

}  // namespace executorch_openvino
