#include "delegate/execution/saved_prefixes.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <mutex>
#include <vector>

#include "delegate/execution/partition_handle.h"
#include "state_file/state_file.h"

namespace executorch_openvino::delegate {

namespace {

struct Registered {
  PartitionHandle* handle;
  uint64_t owner;
};

thread_local uint64_t load_owner = 0;

std::mutex& registry_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::vector<Registered>& registry() {
  static std::vector<Registered> handles;
  return handles;
}

Failure none_loaded() {
  return Failure{FailureKind::kInvalidArgument,
                 "no loaded program keeps a conversation state this library controls (a program whose KV "
                 "caches grow, exported by executorch_openvino, with the state helper "
                 "libexecutorch_openvino_state beside this library)"};
}

// The owner's partitions, in the order they loaded. Called with the registry locked.
std::vector<PartitionHandle*> owned(uint64_t owner) {
  std::vector<PartitionHandle*> handles;
  for (const Registered& entry : registry()) {
    if (owner == 0 || entry.owner == owner) handles.push_back(entry.handle);
  }
  return handles;
}

Failure file_failure(const std::string& path, const std::string& why, int system_code = 0) {
  return Failure{FailureKind::kInvalidArgument,
                 path + ": " + why + (system_code != 0 ? std::string(" (") + std::strerror(system_code) + ")" : ""),
                 system_code};
}

}  // namespace

void set_load_owner(uint64_t owner) { load_owner = owner; }

void register_handle(PartitionHandle* handle) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  registry().push_back(Registered{handle, load_owner});
}

void unregister_handle(PartitionHandle* handle) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  auto& entries = registry();
  entries.erase(std::remove_if(entries.begin(), entries.end(),
                               [&](const Registered& entry) { return entry.handle == handle; }),
                entries.end());
}

Outcome<size_t> save_prefixes(const std::string& name, uint64_t owner) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  const std::vector<PartitionHandle*> handles = owned(owner);
  if (handles.empty()) return none_loaded();
  for (PartitionHandle* handle : handles) {
    if (Status done = handle->save_prefix(name); !done.ok()) return done.failure();
  }
  return handles.size();
}

Outcome<size_t> restore_prefixes(const std::string& name, uint64_t owner) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  const std::vector<PartitionHandle*> handles = owned(owner);
  if (handles.empty()) return none_loaded();
  size_t restored = 0;
  for (PartitionHandle* handle : handles) {
    if (!handle->has_prefix(name)) continue;  // loaded after the save: left as it is
    if (Status done = handle->restore_prefix(name); !done.ok()) return done.failure();
    ++restored;
  }
  if (restored == 0) return no_prefix_saved_as(name);
  return restored;
}

size_t forget_prefixes(const std::string& name, uint64_t owner) {
  std::lock_guard<std::mutex> lock(registry_mutex());
  size_t forgotten = 0;
  for (PartitionHandle* handle : owned(owner)) forgotten += handle->forget_prefix(name) ? 1 : 0;
  return forgotten;
}

Status write_prefixes(const std::string& name, uint64_t owner, const std::string& path,
                      const std::vector<uint8_t>& application) {
  state_file::StateFile state;
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    const std::vector<PartitionHandle*> handles = owned(owner);
    if (handles.empty()) return none_loaded();
    for (PartitionHandle* handle : handles) {
      Outcome<Conversation::PrefixImage> image = handle->prefix_image(name);
      if (!image.ok()) return image.failure();
      state.partitions.push_back(state_file::PartitionState{handle->compiled().identity, handle->cache_form(),
                                                            image.value().length, std::move(image.value().parts)});
    }
  }
  state.application = application;
  const std::vector<uint8_t> bytes = state_file::encode(state);
  const std::string partial = path + ".partial";
  {
    errno = 0;
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
    out.flush();
    if (!out) {
      const int code = errno;
      std::remove(partial.c_str());
      return file_failure(partial, "cannot be written (" + std::to_string(bytes.size()) + " bytes)", code);
    }
  }
  if (std::rename(partial.c_str(), path.c_str()) != 0) {
    const int code = errno;
    std::remove(partial.c_str());
    return file_failure(path, "cannot be replaced by " + partial, code);
  }
  return ok_status();
}

Outcome<std::vector<uint8_t>> read_prefixes(const std::string& name, uint64_t owner, const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return file_failure(path, "cannot be opened", errno);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Outcome<state_file::StateFile> decoded = state_file::decode(bytes.data(), bytes.size());
  if (!decoded.ok()) return file_failure(path, decoded.failure().message);
  state_file::StateFile& state = decoded.value();

  std::lock_guard<std::mutex> lock(registry_mutex());
  const std::vector<PartitionHandle*> handles = owned(owner);
  if (handles.empty()) return none_loaded();
  if (handles.size() != state.partitions.size())
    return file_failure(path, "it holds the state of " + std::to_string(state.partitions.size()) +
                                  " partitions and this program has " + std::to_string(handles.size()));
  // Everything is checked before anything is installed: a refused file changes nothing.
  for (size_t i = 0; i < handles.size(); ++i) {
    const state_file::PartitionState& saved = state.partitions[i];
    if (saved.program != handles[i]->compiled().identity)
      return file_failure(path, "it was written by another program, or the same one loaded with other options "
                                "(device, precision, attention, ...)");
    if (const std::string form = handles[i]->cache_form(); saved.form != form)
      return file_failure(path, "its caches are '" + saved.form + "', this program's '" + form + "'");
    if (Status fits = handles[i]->check_image(saved.length, saved.parts); !fits.ok())
      return file_failure(path, fits.failure().message);
  }
  for (size_t i = 0; i < handles.size(); ++i) {
    state_file::PartitionState& saved = state.partitions[i];
    if (Status installed = handles[i]->install_prefix(name, {saved.length, std::move(saved.parts)}); !installed.ok())
      return installed.failure();
  }
  return std::move(state.application);
}

}  // namespace executorch_openvino::delegate
