// Compiled models kept in the cache folder chosen at run time (the cache_dir option): one file per
// compiled model, named by a hash of everything that decides it, so that a later load (in this
// process or another) imports the compiled model instead of reading and compiling the IR.
//
// OpenVINO's own CACHE_DIR does the same, but only after reading the IR and hashing the whole model
// on every load; this cache is looked up by the key the delegate computes anyway, so a warm load
// costs what importing the compiled model costs.
//
// A file is the exported model followed by a 64-byte trailer: magic, format version, the model's
// size and hash, and a second hash of the key (the name holds the first). A file that fails any
// check, or that OpenVINO cannot import, is ignored (with a log line) and replaced by a fresh one.
// Files are written beside their final name and renamed, so a reader never sees half a file.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

#include "delegate/compiling/model_bytes.h"
#include "openvino_api/objects.h"

namespace executorch_openvino::delegate {

struct CacheEntry {
  std::filesystem::path file;
  uint64_t key_check = 0;
  uint64_t key_size = 0;
};

// `key`: everything that decides the compiled model (OpenVINO build, device, compilation
// properties, the model's content). `folder` is UTF-8.
CacheEntry cache_entry(const std::string& folder, const std::string& key);

struct CachedModel {
  ModelBytes bytes;       // the whole file: mapped, or read where it cannot be mapped
  size_t model_size = 0;  // the exported model is bytes[0, model_size)
};

// The entry's compiled model, or nullopt: with `problem` empty when there is no file, otherwise
// saying what is wrong with it.
std::optional<CachedModel> read_cached_model(const CacheEntry& entry, std::string* problem);

// Makes the file `written` (an exported model, in the entry's folder) the entry's cache file: appends
// the trailer and renames it to the entry's name; removes it on failure. Returns what went wrong, or
// an empty string. (Tests use it to plant files.)
std::string seal_cache_file(const std::filesystem::path& written, const CacheEntry& entry);

// Exports `compiled` into the entry. Returns what went wrong, or an empty string.
std::string store_compiled_model(openvino_api::Runtime& runtime, const openvino_api::ov_compiled_model* compiled,
                                 const CacheEntry& entry);

}  // namespace executorch_openvino::delegate
