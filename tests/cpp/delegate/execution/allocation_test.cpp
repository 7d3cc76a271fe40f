// Heap allocations per execute in steady state: the delegate must add none to what OpenVINO itself
// does for one inference. Counted with a replacement global operator new (which also sees the
// allocations OpenVINO's C++ code makes on the calling thread), on the calling thread only, for the
// delegate's execute() and for a native infer on the same model, same number of calls.
#include <gtest/gtest.h>

#include <algorithm>
#include <limits>
#include <map>
#include <string>

#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

#include <executorch_openvino/backend.h>

#include "blob/delegate_blob.h"
#include "case_helpers.h"
#include "delegate_harness.h"
#include "ir_case.h"
#include "openvino_api/objects.h"
#include "openvino_api/runtime.h"

namespace {

thread_local bool counting = false;
thread_local long allocations = 0;

void* counted_allocation(std::size_t size) {
  if (counting) ++allocations;
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}

}  // namespace

void* operator new(std::size_t size) { return counted_allocation(size); }
void* operator new[](std::size_t size) { return counted_allocation(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

namespace executorch_openvino::testing {
namespace {

constexpr int kCalls = 200;

template <typename Call>
long count_allocations(Call&& call) {
  allocations = 0;
  counting = true;
  for (int i = 0; i < kCalls; ++i) call();
  counting = false;
  return allocations;
}

TEST(AllocationTest, SteadyStateExecuteAllocatesNothingBeyondOpenVinosOwnInference) {
  const IrCase c = load_ir_case("multi_io");  // three inputs, four outputs

  // The delegate, driven as ExecuTorch's Method drives it.
  DelegateHarness harness;
  ASSERT_EQ(harness.init(c.blob, c.specs), Error::Ok) << executorch_openvino_last_error();
  std::vector<std::unique_ptr<HostTensor>> tensors;
  std::vector<executorch::runtime::EValue*> args;
  for (const TensorFile& f : c.inputs) tensors.push_back(std::make_unique<HostTensor>(f.type, f.sizes, f.bytes));
  for (const TensorFile& f : c.expected_outputs) tensors.push_back(std::make_unique<HostTensor>(f.type, f.sizes));
  for (auto& t : tensors) args.push_back(t->value());
  executorch::runtime::BackendExecutionContext context;
  auto* backend = registered_backend();
  executorch::runtime::Span<executorch::runtime::EValue*> span(args.data(), args.size());
  ASSERT_EQ(backend->execute(context, harness.handle(), span), Error::Ok);  // first call binds

  // Native OpenVINO on the same IR, compiled with what the delegate's compiled model reports (its
  // defaults included: LATENCY, f32), tensors set once. With OpenVINO's own defaults instead, a
  // processor where the CPU defaults to bf16 runs other kernels, which allocate differently.
  const std::map<std::string, std::string> delegate_model = only_model();
  auto runtime = openvino_api::Runtime::instance();
  ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
  auto parsed = blob::parse(c.blob.data(), c.blob.size());
  ASSERT_TRUE(parsed.blob.has_value()) << parsed.error;
  auto model = openvino_api::read_model(*runtime.value(), reinterpret_cast<const char*>(parsed.blob->ir_xml.data),
                              parsed.blob->ir_xml.size, parsed.blob->ir_weights.data, parsed.blob->ir_weights.size);
  ASSERT_TRUE(model.ok()) << model.failure().message;
  const char* const kSettable[] = {"PERFORMANCE_HINT", "INFERENCE_NUM_THREADS", "NUM_STREAMS",
                                    "INFERENCE_PRECISION_HINT"};
  std::vector<openvino_api::Property> properties;
  for (const char* key : kSettable) {
    auto it = delegate_model.find(key);
    ASSERT_NE(it, delegate_model.end()) << key << " not reported: " << executorch_openvino_describe_compiled_models();
    properties.push_back({key, it->second});
  }
  auto compiled = openvino_api::compile_model(*runtime.value(), model->get(), "CPU", properties);
  ASSERT_TRUE(compiled.ok()) << compiled.failure().message;
  for (const char* key : kSettable) {
    auto native_value = openvino_api::compiled_model_property(*runtime.value(), compiled->get(), key);
    ASSERT_TRUE(native_value.ok()) << key;
    EXPECT_EQ(native_value.value(), delegate_model.at(key)) << key;
  }
  auto request = openvino_api::create_infer_request(*runtime.value(), compiled->get());
  ASSERT_TRUE(request.ok());
  auto inputs = openvino_api::input_ports(*runtime.value(), compiled->get());
  auto outputs = openvino_api::output_ports(*runtime.value(), compiled->get());
  ASSERT_TRUE(inputs.ok() && outputs.ok());
  std::vector<openvino_api::TensorPtr> wrapped;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const bool is_input = i < inputs->size();
    const openvino_api::PortInfo& port = is_input ? inputs.value()[i] : outputs.value()[i - inputs->size()];
    std::vector<int64_t> dims;
    for (const auto& d : port.dims) dims.push_back(d.max);
    auto tensor = openvino_api::wrap_host_memory(*runtime.value(), port.type, dims.data(), dims.size(), tensors[i]->data());
    ASSERT_TRUE(tensor.ok());
    const size_t index = is_input ? i : i - inputs->size();
    ASSERT_TRUE((is_input ? openvino_api::set_input(*runtime.value(), request->get(), index, tensor->get())
                          : openvino_api::set_output(*runtime.value(), request->get(), index, tensor->get()))
                    .ok());
    wrapped.push_back(std::move(tensor).value());
  }
  ASSERT_TRUE(openvino_api::infer(*runtime.value(), request->get()).ok());

  // OpenVINO's own count wobbles by a fraction of an allocation per call (its thread pool
  // sometimes allocates on the calling thread, more so on a busy machine), so the two are measured
  // in interleaved rounds and the least difference counts, against half an allocation per call:
  // one allocation per call of ours adds kCalls in every round, re-binding a tensor several times that.
  long least_difference = std::numeric_limits<long>::max();
  int failed_calls = 0;  // counted inside the measured loops, checked after them
  for (int round = 0; round < 5; ++round) {
    const long native = count_allocations([&] { failed_calls += !openvino_api::infer(*runtime.value(), request->get()).ok(); });
    const long delegate = count_allocations(
        [&] { failed_calls += backend->execute(context, harness.handle(), span) != Error::Ok; });
    std::printf("round %d: operator new calls per call on the calling thread: native %.2f, delegate %.2f\n", round,
                static_cast<double>(native) / kCalls, static_cast<double>(delegate) / kCalls);
    least_difference = std::min(least_difference, delegate - native);
  }
  ASSERT_EQ(failed_calls, 0) << "a measured call failed: its allocations say nothing";
  EXPECT_LT(least_difference, kCalls / 2) << "the delegate allocates on every execute";
}

}  // namespace
}  // namespace executorch_openvino::testing
