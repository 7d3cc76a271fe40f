#include "delegate/conversation/saved_states.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "delegate/execution/compiled_method.h"

namespace executorch_openvino::delegate {

namespace {

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::vector<CompiledMethod*>& registry() {
  static std::vector<CompiledMethod*> methods;
  return methods;
}

Failure none_loaded() {
  return Failure{FailureKind::kInvalidArgument,
                 "no loaded program keeps a conversation state this library controls (a program whose KV "
                 "caches grow, exported by executorch_openvino, with the state helper "
                 "libexecutorch_openvino_state beside this library)"};
}

template <typename Act>
Outcome<size_t> for_each_method(Act&& act) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  if (registry().empty()) return none_loaded();
  for (CompiledMethod* method : registry()) {
    if (Status done = act(*method); !done.ok()) return done.failure();
  }
  return registry().size();
}

}  // namespace

void register_method(CompiledMethod* method) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().push_back(method);
}

void unregister_method(CompiledMethod* method) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().erase(std::remove(registry().begin(), registry().end(), method), registry().end());
}

Outcome<size_t> save_states(const std::string& name) {
  return for_each_method([&](CompiledMethod& method) { return method.save_state(name); });
}

Outcome<size_t> restore_states(const std::string& name) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  if (registry().empty()) return none_loaded();
  size_t restored = 0;
  for (CompiledMethod* method : registry()) {
    if (!method->has_saved_state(name)) continue;  // loaded after the save: left as it is
    if (Status done = method->restore_state(name); !done.ok()) return done.failure();
    ++restored;
  }
  if (restored == 0) return Failure{FailureKind::kInvalidArgument, "no state saved as '" + name + "'"};
  return restored;
}

size_t forget_states(const std::string& name) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  size_t forgotten = 0;
  for (CompiledMethod* method : registry()) forgotten += method->forget_state(name) ? 1 : 0;
  return forgotten;
}

}  // namespace executorch_openvino::delegate
