#include "delegate/execution/saved_prefixes.h"

#include <algorithm>
#include <mutex>
#include <vector>

#include "delegate/execution/partition_handle.h"

namespace executorch_openvino::delegate {

namespace {

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::vector<PartitionHandle*>& registry() {
  static std::vector<PartitionHandle*> handles;
  return handles;
}

Failure none_loaded() {
  return Failure{FailureKind::kInvalidArgument,
                 "no loaded program keeps a conversation state this library controls (a program whose KV "
                 "caches grow, exported by executorch_openvino, with the state helper "
                 "libexecutorch_openvino_state beside this library)"};
}

template <typename Act>
Outcome<size_t> for_each_handle(Act&& act) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  if (registry().empty()) return none_loaded();
  for (PartitionHandle* handle : registry()) {
    if (Status done = act(*handle); !done.ok()) return done.failure();
  }
  return registry().size();
}

}  // namespace

void register_handle(PartitionHandle* handle) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().push_back(handle);
}

void unregister_handle(PartitionHandle* handle) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().erase(std::remove(registry().begin(), registry().end(), handle), registry().end());
}

Outcome<size_t> save_prefixes(const std::string& name) {
  return for_each_handle([&](PartitionHandle& handle) { return handle.save_prefix(name); });
}

Outcome<size_t> restore_prefixes(const std::string& name) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  if (registry().empty()) return none_loaded();
  size_t restored = 0;
  for (PartitionHandle* handle : registry()) {
    if (!handle->has_prefix(name)) continue;  // loaded after the save: left as it is
    if (Status done = handle->restore_prefix(name); !done.ok()) return done.failure();
    ++restored;
  }
  if (restored == 0) return no_prefix_saved_as(name);
  return restored;
}

size_t forget_prefixes(const std::string& name) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  size_t forgotten = 0;
  for (PartitionHandle* handle : registry()) forgotten += handle->forget_prefix(name) ? 1 : 0;
  return forgotten;
}

}  // namespace executorch_openvino::delegate
