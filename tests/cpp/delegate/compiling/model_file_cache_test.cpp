// The model cache in the run-time cache folder (src/delegate/compiling/model_file_cache.h): a warm load imports
// the file a cold load stored, each model and set of options has its own file, and a file that is
// damaged, belongs to another model or cannot be imported is never used but replaced. Against the
// real OpenVINO runtime, through the backend as ExecuTorch drives it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <executorch_openvino/backend.h>

#include "case_helpers.h"
#include "delegate/compiling/model_file_cache.h"
#include "delegate_harness.h"
#include "ir_case.h"
#include "scratch_path.h"

namespace executorch_openvino::testing {
namespace {

namespace fs = std::filesystem;
using executorch::runtime::BackendOption;

std::vector<uint8_t> read_bytes(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const fs::path& file, const std::vector<uint8_t>& bytes) {
  std::ofstream(file, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

uint64_t read_u64(const std::vector<uint8_t>& bytes, size_t offset) {
  uint64_t value = 0;
  for (size_t i = 0; i < 8; ++i) value |= static_cast<uint64_t>(bytes[offset + i]) << (8 * i);
  return value;
}

class ModelFileCacheTest : public ::testing::Test {
 protected:
  void TearDown() override { harness_.destroy(); }

  // Loads `name` with the cache folder (and `more` options), runs it and checks the outputs against
  // NumPy's; returns where the compiled model came from ("ir", "cache", "precompiled"), or "" when
  // the load failed. The previous load is destroyed first, so its compiled model is gone.
  std::string load(const char* name, std::vector<BackendOption> more = {}) {
    harness_.destroy();
    const IrCase c = load_ir_case(name);
    more.push_back(text_option("cache_dir", folder_.c_str()));
    const Error status = harness_.init(c.blob, c.specs, more);
    EXPECT_EQ(status, Error::Ok) << last_error();
    if (status != Error::Ok) return "";
    expect_runs_correctly(harness_, c);
    return only_model()["source"];
  }

  // Every file in the cache folder.
  std::vector<fs::path> files() const {
    std::vector<fs::path> found;
    if (fs::is_directory(folder_)) {
      for (const auto& item : fs::directory_iterator(folder_)) found.push_back(item.path());
    }
    std::sort(found.begin(), found.end());
    return found;
  }

  // The one cached model (fails the test when there is not exactly one file).
  fs::path only_file() const {
    auto found = files();
    EXPECT_EQ(found.size(), 1u);
    return found.empty() ? fs::path() : found.front();
  }

  ScratchPath scratch_{"eov_model_cache"};  // the delegate creates the folder
  const fs::path& folder_ = scratch_.path();
  DelegateHarness harness_;
};

TEST_F(ModelFileCacheTest, AWarmLoadImportsTheFileTheColdLoadStored) {
  EXPECT_EQ(load("conv2d"), "ir");
  const fs::path file = only_file();  // ours alone: OpenVINO's own cache is not written beside it
  EXPECT_EQ(file.filename().string().rfind("executorch_openvino-", 0), 0u) << file;
  EXPECT_EQ(file.extension(), ".model");
  const auto stored = read_bytes(file);

  EXPECT_EQ(load("conv2d"), "cache");
  EXPECT_TRUE(harness_.blob_freed());  // and poisoned: the imported model must not read the IR
  // The import has the options the IR was compiled with (the CPU plugin would import in bf16).
  EXPECT_EQ(only_model()["INFERENCE_PRECISION_HINT"], "f32");
  EXPECT_EQ(only_model()["PERFORMANCE_HINT"], "LATENCY");
  EXPECT_EQ(read_bytes(only_file()), stored) << "a warm load rewrote the file";
}

TEST_F(ModelFileCacheTest, EachModelAndEachSetOfOptionsHasItsOwnFile) {
  EXPECT_EQ(load("conv2d"), "ir");
  EXPECT_EQ(load("conv2d", {int_option("num_threads", 1)}), "ir");
  EXPECT_EQ(load("add_broadcast"), "ir");
  EXPECT_EQ(files().size(), 3u);
  EXPECT_EQ(load("conv2d"), "cache");
  EXPECT_EQ(load("conv2d", {int_option("num_threads", 1)}), "cache");
  EXPECT_EQ(only_model()["INFERENCE_NUM_THREADS"], "1");
  EXPECT_EQ(load("add_broadcast"), "cache");
  EXPECT_EQ(files().size(), 3u);
}

// A warm load maps the file instead of reading it into memory: no copy, and no memory of the process's own
// (the page cache's pages, shared by every process that loads the model). The model keeps running when the
// cache replaces the file (by renaming, as it writes files) or the file is removed. Fails on a delegate that
// reads the file ("copy").
TEST_F(ModelFileCacheTest, AWarmLoadMapsTheFileAndOutlivesItsReplacement) {
  EXPECT_EQ(load("conv2d"), "ir");
  EXPECT_EQ(only_model()["imported_bytes"], "none");
  const fs::path file = only_file();
  EXPECT_EQ(load("conv2d"), "cache");
  EXPECT_EQ(only_model()["imported_bytes"], "mapped");
  const IrCase c = load_ir_case("conv2d");
  const fs::path replacement = folder_ / "replacement.tmp";
  write_bytes(replacement, std::vector<uint8_t>(4096, 0x5a));
  fs::rename(replacement, file);
  expect_runs_correctly(harness_, c);
  fs::remove(file);
  expect_runs_correctly(harness_, c);
}

// Each damage: the load compiles the IR (correct outputs), and the file is replaced by a good one.
TEST_F(ModelFileCacheTest, ADamagedFileIsIgnoredAndReplaced) {
  struct Damage {
    const char* what;
    void (*apply)(std::vector<uint8_t>&);
  };
  const Damage damages[] = {
      // Bytes OpenVINO does not check on import (weights): only the file's own checksum sees these.
      {"a byte of the model flipped, a third in", [](std::vector<uint8_t>& b) { b[b.size() / 3] ^= 0x40; }},
      {"a byte of the model flipped, halfway", [](std::vector<uint8_t>& b) { b[b.size() / 2] ^= 0x40; }},
      {"a byte of the model flipped, near its end", [](std::vector<uint8_t>& b) { b[b.size() - 64 - 8] ^= 0x40; }},
      {"cut short", [](std::vector<uint8_t>& b) { b.resize(10); }},
      {"its last byte cut", [](std::vector<uint8_t>& b) { b.pop_back(); }},
      {"empty", [](std::vector<uint8_t>& b) { b.clear(); }},
      {"magic overwritten", [](std::vector<uint8_t>& b) { b[b.size() - 64] = 'X'; }},
      {"a newer format version", [](std::vector<uint8_t>& b) { b[b.size() - 56] = 2; }},
  };
  EXPECT_EQ(load("conv2d"), "ir");
  const fs::path file = only_file();
  const auto good = read_bytes(file);
  for (const Damage& damage : damages) {
    SCOPED_TRACE(damage.what);
    auto bytes = good;
    damage.apply(bytes);
    write_bytes(file, bytes);
    EXPECT_EQ(load("conv2d"), "ir");
    EXPECT_EQ(read_bytes(file), good) << "the damaged file was not replaced";
    EXPECT_EQ(load("conv2d"), "cache");
  }
}

// A file named like this model's but holding another model (what a collision of the 64-bit name
// would look like) is recognised by the key check inside it.
TEST_F(ModelFileCacheTest, AnotherModelsFileUnderThisName) {
  EXPECT_EQ(load("conv2d"), "ir");
  const fs::path conv2d_file = only_file();
  EXPECT_EQ(load("add_broadcast"), "ir");
  fs::path add_file;
  for (const fs::path& f : files()) {
    if (f != conv2d_file) add_file = f;
  }
  ASSERT_FALSE(add_file.empty());
  fs::copy_file(conv2d_file, add_file, fs::copy_options::overwrite_existing);
  EXPECT_EQ(load("add_broadcast"), "ir");  // conv2d's model would fail on these inputs, or give wrong outputs
  EXPECT_EQ(load("add_broadcast"), "cache");
}

// A well-formed file (checks pass) whose content OpenVINO refuses to import.
TEST_F(ModelFileCacheTest, AFileOpenVinoCannotImportIsReplaced) {
  EXPECT_EQ(load("conv2d"), "ir");
  const fs::path file = only_file();
  const auto good = read_bytes(file);
  ASSERT_GE(good.size(), 64u);
  delegate::CacheEntry entry;
  entry.file = file;
  entry.key_check = read_u64(good, good.size() - 32);
  entry.key_size = read_u64(good, good.size() - 24);
  const fs::path planted = folder_ / "planted.tmp";
  write_bytes(planted, std::vector<uint8_t>(4096, 0x5a));
  ASSERT_EQ(delegate::seal_cache_file(planted, entry), "");
  ASSERT_NE(read_bytes(file), good);

  EXPECT_EQ(load("conv2d"), "ir");
  EXPECT_EQ(read_bytes(file), good);
  EXPECT_EQ(load("conv2d"), "cache");
}

TEST_F(ModelFileCacheTest, TheProgramsOwnPrecompiledModelComesFirst) {
  EXPECT_EQ(load("conv2d_precompiled"), "precompiled");
  EXPECT_TRUE(files().empty()) << "a program with a fitting precompiled model needs no cache file";
}

// AUTO and other virtual devices choose devices as they load: their caching is left to OpenVINO's
// own CACHE_DIR, which stores what each underlying device compiled.
TEST_F(ModelFileCacheTest, VirtualDevicesLeaveCachingToOpenVino) {
  EXPECT_EQ(load("conv2d", {text_option("device", "AUTO")}), "ir");
  for (const fs::path& f : files()) {
    EXPECT_NE(f.filename().string().rfind("executorch_openvino-", 0), 0u) << f;
  }
  EXPECT_FALSE(files().empty()) << "OpenVINO's own cache wrote nothing";
}

}  // namespace
}  // namespace executorch_openvino::testing
