// Methods of one program on many threads: loaded at the same moment they compile once and share
// the compiled model; executed at the same time, each with its own infer request and inputs, every
// output is right.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <executorch_openvino/backend.h>

#include "case_helpers.h"
#include "delegate_harness.h"
#include "ir_case.h"

namespace executorch_openvino::testing {
namespace {

size_t runtime_count(const std::string& key) {
  std::istringstream lines(executorch_openvino_describe_runtime());
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind(key + "=", 0) == 0) return std::stoul(line.substr(key.size() + 1));
  }
  return 0;
}

TEST(ConcurrencyTest, EightThreadsLoadAtOnceCompileOnceAndRunAThousandCallsEachCorrectly) {
  constexpr int kThreads = 8;
  constexpr int kCalls = 1000;
  const IrCase c = load_ir_case("add_broadcast");  // x [2,3,4] + y [1,3,1]
  const size_t created_before = runtime_count("compiled_models_created");

  std::vector<std::unique_ptr<DelegateHarness>> harnesses;
  for (int t = 0; t < kThreads; ++t) harnesses.push_back(std::make_unique<DelegateHarness>());
  std::atomic<int> ready{0};
  std::vector<Error> loaded(kThreads, Error::Internal);
  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();  // all init at the same moment
      loaded[t] = harnesses[t]->init(c.blob, c.specs);
      if (loaded[t] != Error::Ok) return;
      std::mt19937 random(static_cast<unsigned>(t));
      std::uniform_real_distribution<float> value(-10.f, 10.f);
      HostTensor x(ScalarType::Float, {2, 3, 4}), y(ScalarType::Float, {1, 3, 1}), out(ScalarType::Float, {2, 3, 4});
      auto* xs = reinterpret_cast<float*>(x.data());
      auto* ys = reinterpret_cast<float*>(y.data());
      const auto* outs = reinterpret_cast<const float*>(out.data());
      for (int call = 0; call < kCalls && failures[t].empty(); ++call) {
        for (int i = 0; i < 24; ++i) xs[i] = value(random);
        for (int i = 0; i < 3; ++i) ys[i] = value(random);
        if (harnesses[t]->execute({&x, &y, &out}) != Error::Ok) {
          failures[t] = "call " + std::to_string(call) + ": " + executorch_openvino_last_error();
          break;
        }
        for (int i = 0; i < 24; ++i) {
          const float expected = xs[i] + ys[(i / 4) % 3];
          if (outs[i] != expected) {
            failures[t] = "call " + std::to_string(call) + " element " + std::to_string(i) + ": " +
                          std::to_string(outs[i]) + " != " + std::to_string(expected);
            break;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(loaded[t], Error::Ok) << "thread " << t;
    EXPECT_EQ(failures[t], "") << "thread " << t;
  }
  EXPECT_EQ(runtime_count("compiled_models_created") - created_before, 1u);
  EXPECT_EQ(runtime_count("compiled_models_live"), 1u);
  harnesses.clear();
  EXPECT_EQ(runtime_count("compiled_models_live"), 0u);
}

}  // namespace
}  // namespace executorch_openvino::testing
