// The loader on Windows (src/loader/dynamic_library_win.cpp and the layers above it), run under
// Wine against the real OpenVINO DLLs of the pinned Windows wheel and against stand-in DLLs built
// from tests/cpp/support/stand_in_openvino_c.cpp.
//
// Every TEST here runs in a process of its own (see CMakeLists.txt): a module already loaded in a
// process is returned for its base name without any search, so a case that loaded the runtime
// would hide what a later case's search finds. Error CODES are asserted, never the system's
// wording, which differs between Windows and Wine.
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "loader/dynamic_library.h"
#include "loader/runtime_locator.h"
#include "openvino_api/objects.h"
#include "openvino_api/runtime.h"
#include "windows_test_paths.h"

namespace executorch_openvino {
namespace {

namespace fs = std::filesystem;
using loader::DynamicLibrary;
using openvino_api::Runtime;

constexpr char kPlantedVersion[] = "2026.4.1-planted-stand-in";

// ---- helpers ----

// A Linux path from windows_test_paths.h as the Windows program sees it: Wine maps / to drive Z:.
fs::path win(const std::string& unix_path) {
  std::string text = "Z:" + unix_path;
  std::replace(text.begin(), text.end(), '/', '\\');
  return fs::u8path(text);
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

// Windows paths compare case-insensitively (ASCII is enough here).
bool same_path(const fs::path& a, const fs::path& b) {
  return lower(loader::to_utf8(a.lexically_normal())) == lower(loader::to_utf8(b.lexically_normal()));
}

fs::path module_file(HMODULE module) {
  std::wstring buffer(32768, L'\0');
  const DWORD length = GetModuleFileNameW(module, &buffer[0], static_cast<DWORD>(buffer.size()));
  buffer.resize(length);
  return fs::path(buffer);
}

// The file a module of this base name was loaded from in this process, or nullopt.
std::optional<fs::path> loaded_module(const wchar_t* name) {
  HMODULE module = GetModuleHandleW(name);
  if (module == nullptr) return std::nullopt;
  return module_file(module);
}

// The build number an OpenVINO C library (real or stand-in) reports, through its own export.
std::string reported_version(void* get_version) {
  if (get_version == nullptr) return "<no ov_get_openvino_version>";
  openvino_api::Version version{nullptr, nullptr};
  if (reinterpret_cast<openvino_api::ov_get_openvino_version_fn>(get_version)(&version) != openvino_api::kOk ||
      version.build_number == nullptr) {
    return "<ov_get_openvino_version failed>";
  }
  return version.build_number;  // static storage in the stand-in and in OpenVINO
}

std::string reported_version(HMODULE module) {
  return reported_version(reinterpret_cast<void*>(
      reinterpret_cast<void (*)()>(GetProcAddress(module, "ov_get_openvino_version"))));
}

// Makes `folder` the current folder for the rest of the test (each test is its own process).
void change_current_folder(const fs::path& folder) {
  ASSERT_TRUE(SetCurrentDirectoryW(folder.wstring().c_str())) << "error " << GetLastError();
}

void set_variable(const wchar_t* name, const std::optional<fs::path>& value) {
  ASSERT_TRUE(SetEnvironmentVariableW(name, value ? value->wstring().c_str() : nullptr) || !value);
}

void expect_cpu_listed(Runtime& runtime) {
  auto devices = runtime.available_devices();
  ASSERT_TRUE(devices.ok()) << devices.failure().message;
  EXPECT_EQ(std::set<std::string>(devices->begin(), devices->end()).count("CPU"), 1u);
}

void expect_wheel_version(const Runtime& runtime) {
  EXPECT_EQ(runtime.version().to_string(), EOV_OPENVINO_VERSION);
  EXPECT_EQ(runtime.build_number().rfind(std::string(EOV_OPENVINO_VERSION) + "-", 0), 0u) << runtime.build_number();
}

// openvino.dll and tbb12.dll came from `folder`: dependencies are searched beside the library.
void expect_dependencies_from(const fs::path& folder) {
  for (const wchar_t* name : {L"openvino_c.dll", L"openvino.dll", L"tbb12.dll"}) {
    std::optional<fs::path> file = loaded_module(name);
    ASSERT_TRUE(file.has_value()) << loader::to_utf8(name) << " is not loaded";
    EXPECT_TRUE(same_path(file->parent_path(), folder))
        << loader::to_utf8(name) << " came from " << loader::to_utf8(*file) << ", not " << loader::to_utf8(folder);
  }
}

const fs::path& wheel_libs() {
  static const fs::path path = win(EOV_WHEEL_LIBS_DIR);
  return path;
}

// Add of two f32 [2,2] parameters, in OpenVINO IR v11; no weights.
constexpr char kAddIr[] = R"(<?xml version="1.0"?>
<net name="add" version="11">
  <layers>
    <layer id="0" name="a" type="Parameter" version="opset1">
      <data shape="2,2" element_type="f32"/>
      <output><port id="0" precision="FP32" names="a"><dim>2</dim><dim>2</dim></port></output>
    </layer>
    <layer id="1" name="b" type="Parameter" version="opset1">
      <data shape="2,2" element_type="f32"/>
      <output><port id="0" precision="FP32" names="b"><dim>2</dim><dim>2</dim></port></output>
    </layer>
    <layer id="2" name="sum" type="Add" version="opset1">
      <data auto_broadcast="numpy"/>
      <input>
        <port id="0" precision="FP32"><dim>2</dim><dim>2</dim></port>
        <port id="1" precision="FP32"><dim>2</dim><dim>2</dim></port>
      </input>
      <output><port id="2" precision="FP32" names="sum"><dim>2</dim><dim>2</dim></port></output>
    </layer>
    <layer id="3" name="sum/result" type="Result" version="opset1">
      <input><port id="0" precision="FP32"><dim>2</dim><dim>2</dim></port></input>
    </layer>
  </layers>
  <edges>
    <edge from-layer="0" from-port="0" to-layer="2" to-port="0"/>
    <edge from-layer="1" from-port="0" to-layer="2" to-port="1"/>
    <edge from-layer="2" from-port="2" to-layer="3" to-port="0"/>
  </edges>
</net>
)";

// ---- 1. The real runtime by its full path ----

TEST(RealRuntime, LoadsByFullPathReportsTheWheelVersionAndListsTheCpu) {
  const fs::path library = wheel_libs() / "openvino_c.dll";
  auto runtime = Runtime::load(library);
  ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
  expect_wheel_version(*runtime.value());
  EXPECT_EQ(runtime.value()->library_path(), library);
  expect_dependencies_from(wheel_libs());
  expect_cpu_listed(*runtime.value());
}

TEST(RealRuntime, RunsATinyModelWithCorrectNumbers) {
  auto loaded = Runtime::load(wheel_libs() / "openvino_c.dll");
  ASSERT_TRUE(loaded.ok()) << loaded.failure().message;
  Runtime& runtime = *loaded.value();

  auto model = openvino_api::read_model(runtime, kAddIr, std::strlen(kAddIr), nullptr, 0);
  ASSERT_TRUE(model.ok()) << model.failure().message;
  // f32 precision explicitly (the CPU plugin may default to bf16), which also passes a property
  // through the variadic ov_core_compile_model across the MinGW/MSVC boundary.
  auto compiled = openvino_api::compile_model(runtime, model->get(), "CPU", {{"INFERENCE_PRECISION_HINT", "f32"}});
  ASSERT_TRUE(compiled.ok()) << compiled.failure().message;

  auto inputs = openvino_api::input_ports(runtime, compiled->get());
  ASSERT_TRUE(inputs.ok()) << inputs.failure().message;
  ASSERT_EQ(inputs->size(), 2u);
  EXPECT_EQ(inputs->at(0).name, "a");
  EXPECT_EQ(inputs->at(0).type, openvino_api::ElementType::kF32);
  EXPECT_EQ(inputs->at(0).shape_text(), "[2,2]");
  auto outputs = openvino_api::output_ports(runtime, compiled->get());
  ASSERT_TRUE(outputs.ok()) << outputs.failure().message;
  ASSERT_EQ(outputs->size(), 1u);
  EXPECT_EQ(outputs->at(0).shape_text(), "[2,2]");

  auto request = openvino_api::create_infer_request(runtime, compiled->get());
  ASSERT_TRUE(request.ok()) << request.failure().message;
  float a[4] = {1.5f, -2.0f, 3.25f, 100.0f};
  float b[4] = {0.5f, 2.0f, -1.25f, 0.125f};
  float sum[4] = {-1.0f, -1.0f, -1.0f, -1.0f};
  const int64_t dims[2] = {2, 2};
  auto a_tensor = openvino_api::wrap_host_memory(runtime, openvino_api::ElementType::kF32, dims, 2, a);
  auto b_tensor = openvino_api::wrap_host_memory(runtime, openvino_api::ElementType::kF32, dims, 2, b);
  auto sum_tensor = openvino_api::wrap_host_memory(runtime, openvino_api::ElementType::kF32, dims, 2, sum);
  ASSERT_TRUE(a_tensor.ok() && b_tensor.ok() && sum_tensor.ok());
  ASSERT_TRUE(openvino_api::set_input(runtime, request->get(), 0, a_tensor->get()).ok());
  ASSERT_TRUE(openvino_api::set_input(runtime, request->get(), 1, b_tensor->get()).ok());
  ASSERT_TRUE(openvino_api::set_output(runtime, request->get(), 0, sum_tensor->get()).ok());
  auto ran = openvino_api::infer(runtime, request->get());
  ASSERT_TRUE(ran.ok()) << ran.failure().message;
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(sum[i], a[i] + b[i]) << "element " << i;

  // Again with new numbers in the same memory: the request reads the caller's memory each time.
  a[3] = -7.5f;
  ASSERT_TRUE(openvino_api::infer(runtime, request->get()).ok());
  EXPECT_FLOAT_EQ(sum[3], -7.375f);
}

// ---- 2. Path forms ----

TEST(PathForms, ForwardSlashPathLoads) {
  std::string text = loader::to_utf8(wheel_libs() / "openvino_c.dll");
  std::replace(text.begin(), text.end(), '\\', '/');
  ASSERT_EQ(text.find('\\'), std::string::npos);
  auto runtime = Runtime::load(fs::u8path(text));
  ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
  expect_wheel_version(*runtime.value());
  expect_dependencies_from(wheel_libs());
}

TEST(PathForms, RelativePathLoads) {
  // From the test programs' folder: ..\..\wheel\openvino\libs\openvino_c.dll
  change_current_folder(win(EOV_TEST_BIN_DIR));
  const fs::path relative = fs::path(L"..") / L".." / L"wheel" / L"openvino" / L"libs" / L"openvino_c.dll";
  ASSERT_TRUE(relative.is_relative());
  auto runtime = Runtime::load(relative);
  ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
  expect_wheel_version(*runtime.value());
  expect_dependencies_from(wheel_libs());
}

TEST(PathForms, RelativePathToAMissingFileIs126) {
  // Made absolute first, so it is not 87 (invalid parameter), which a relative path with
  // LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR gives.
  change_current_folder(win(EOV_EMPTY_DIR));
  auto library = DynamicLibrary::open(fs::path(L"nowhere") / L"openvino_c.dll");
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.failure().system_code, ERROR_MOD_NOT_FOUND) << library.failure().message;
}

TEST(PathForms, FolderPathLoadsTheDllInIt) {
  auto runtime = Runtime::load(wheel_libs());
  ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
  expect_wheel_version(*runtime.value());
  EXPECT_EQ(runtime.value()->library_path(), wheel_libs() / "openvino_c.dll");
}

TEST(PathForms, NonAsciiFolderLoads) {
  const fs::path folder = win(EOV_NON_ASCII_DIR);
  ASSERT_NE(folder.wstring().find(L"w\u00f6rk_\u76ee\u5f55"), std::wstring::npos);
  auto runtime = Runtime::load(folder);
  ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
  expect_wheel_version(*runtime.value());
  EXPECT_NE(loader::to_utf8(runtime.value()->library_path()).find(u8"w\u00f6rk_\u76ee\u5f55"), std::string::npos);
  expect_dependencies_from(folder);
  expect_cpu_listed(*runtime.value());  // the CPU plugin loads from the non-ASCII folder too
}

// ---- 3. OPENVINO_LIB_PATH set inside the process ----

TEST(Environment, ReadAtCallTimeWideAndEmptyMeansUnset) {
  const wchar_t* name = L"EOV_WINDOWS_TEST_VARIABLE";
  set_variable(name, std::nullopt);
  EXPECT_FALSE(loader::read_environment_path("EOV_WINDOWS_TEST_VARIABLE").has_value());
  ASSERT_TRUE(SetEnvironmentVariableW(name, L""));
  EXPECT_FALSE(loader::read_environment_path("EOV_WINDOWS_TEST_VARIABLE").has_value());
  const fs::path value = win(EOV_NON_ASCII_DIR);
  set_variable(name, value);
  EXPECT_EQ(loader::read_environment_path("EOV_WINDOWS_TEST_VARIABLE"), value);
  // Longer than the first guess of any fixed buffer.
  const std::wstring long_value = L"C:\\" + std::wstring(1000, L'x');
  ASSERT_TRUE(SetEnvironmentVariableW(name, long_value.c_str()));
  EXPECT_EQ(loader::read_environment_path("EOV_WINDOWS_TEST_VARIABLE"), fs::path(long_value));
  set_variable(name, std::nullopt);
  EXPECT_FALSE(loader::read_environment_path("EOV_WINDOWS_TEST_VARIABLE").has_value());
}

TEST(Environment, VariableSetAfterStartIsHonouredByInstance) {
  set_variable(L"OPENVINO_LIB_PATH", std::nullopt);
  EXPECT_FALSE(Runtime::configured_path().has_value());

  // A wrong value first: refused, and tried anew once the value changes.
  set_variable(L"OPENVINO_LIB_PATH", win(EOV_EMPTY_DIR));
  auto refused = Runtime::instance();
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.failure().kind, FailureKind::kRuntimeUnavailable);

  const fs::path folder = win(EOV_NON_ASCII_DIR);
  set_variable(L"OPENVINO_LIB_PATH", folder);
  EXPECT_EQ(Runtime::configured_path(), folder);
  auto runtime = Runtime::instance();
  ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
  expect_wheel_version(*runtime.value());
  EXPECT_TRUE(same_path(runtime.value()->library_path(), folder / "openvino_c.dll"));
  expect_dependencies_from(folder);
}

TEST(Environment, RelativeVariableIsResolvedAgainstTheCurrentFolder) {
  change_current_folder(win(EOV_BUILD_DIR));
  set_variable(L"OPENVINO_LIB_PATH", fs::path(L"wheel\\openvino\\libs\\openvino_c.dll"));
  auto runtime = Runtime::instance();
  ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
  expect_wheel_version(*runtime.value());
  expect_dependencies_from(wheel_libs());
}

// ---- 4. A bare name is not looked up in the current folder or along PATH ----

void expect_planted_is_refused_by_the_loader() {
  ASSERT_EQ(GetModuleHandleW(L"openvino_c.dll"), nullptr) << "precondition: nothing of that name loaded yet";
  const fs::path exe_folder = module_file(nullptr).parent_path();
  ASSERT_FALSE(fs::exists(exe_folder / "openvino_c.dll")) << "precondition: the application folder is searched";

  auto library = DynamicLibrary::open(loader::kBareLibraryName);
  ASSERT_FALSE(library.ok()) << "the bare name loaded "
                             << loader::to_utf8(loaded_module(L"openvino_c.dll").value_or(fs::path()));
  EXPECT_EQ(library.failure().system_code, ERROR_MOD_NOT_FOUND) << library.failure().message;

  // The whole policy with OPENVINO_LIB_PATH unset: whatever it finds, it is not the planted one.
  auto located = loader::open_openvino_c(std::nullopt);
  if (located.ok()) {
    EXPECT_NE(reported_version(located->library.symbol("ov_get_openvino_version")), kPlantedVersion)
        << "loaded the planted DLL from " << loader::to_utf8(located->path);
  }
  std::optional<fs::path> loaded = loaded_module(L"openvino_c.dll");
  if (loaded) {
    EXPECT_FALSE(same_path(loaded->parent_path(), win(EOV_PLANTED_DIR))) << loader::to_utf8(*loaded);
  }
}

// The control: the classic search (LoadLibraryW) does find the planted DLL in this very layout,
// so the refusal above is the loader's doing, not an artefact of the set-up.
void expect_plain_load_library_finds_the_planted_dll() {
  HMODULE planted = LoadLibraryW(L"openvino_c.dll");
  ASSERT_NE(planted, nullptr) << "error " << GetLastError();
  EXPECT_EQ(reported_version(planted), kPlantedVersion);
  EXPECT_TRUE(same_path(module_file(planted).parent_path(), win(EOV_PLANTED_DIR)))
      << loader::to_utf8(module_file(planted));
  FreeLibrary(planted);
}

TEST(BareName, PlantedInTheCurrentFolderIsNotLoaded) {
  set_variable(L"OPENVINO_LIB_PATH", std::nullopt);
  change_current_folder(win(EOV_PLANTED_DIR));
  expect_planted_is_refused_by_the_loader();
  expect_plain_load_library_finds_the_planted_dll();
}

TEST(BareName, PlantedAlongPathIsNotLoaded) {
  set_variable(L"OPENVINO_LIB_PATH", std::nullopt);
  change_current_folder(win(EOV_EMPTY_DIR));
  std::wstring path(32768, L'\0');
  path.resize(GetEnvironmentVariableW(L"PATH", &path[0], static_cast<DWORD>(path.size())));
  ASSERT_TRUE(SetEnvironmentVariableW(L"PATH", (win(EOV_PLANTED_DIR).wstring() + L";" + path).c_str()));
  expect_planted_is_refused_by_the_loader();
  expect_plain_load_library_finds_the_planted_dll();
}

// ---- 5. A copy of the runtime elsewhere ----

TEST(Elsewhere, CopyLoadsByItsFullPathNotByBareName) {
  const fs::path folder = win(EOV_ELSEWHERE_DIR);
  change_current_folder(folder);  // even as the current folder
  auto bare = DynamicLibrary::open(loader::kBareLibraryName);
  ASSERT_FALSE(bare.ok());
  EXPECT_EQ(bare.failure().system_code, ERROR_MOD_NOT_FOUND) << bare.failure().message;

  auto runtime = Runtime::load(folder / "openvino_c.dll");
  ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
  expect_wheel_version(*runtime.value());
  expect_dependencies_from(folder);
  expect_cpu_listed(*runtime.value());
}

// ---- 6. Clear errors ----

TEST(Errors, AFileThatIsNotADllIs193) {
  const fs::path file = win(EOV_NOT_A_DLL_DIR) / "openvino_c.dll";
  auto library = DynamicLibrary::open(file);
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.failure().system_code, ERROR_BAD_EXE_FORMAT) << library.failure().message;
  EXPECT_NE(library.failure().message.find("193"), std::string::npos) << library.failure().message;

  auto runtime = Runtime::load(file);
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.failure().kind, FailureKind::kRuntimeUnavailable);
  EXPECT_NE(runtime.failure().message.find(loader::to_utf8(file)), std::string::npos) << runtime.failure().message;
  EXPECT_NE(runtime.failure().message.find("193"), std::string::npos) << runtime.failure().message;
}

TEST(Errors, AMissingFileIs126) {
  const fs::path file = win(EOV_EMPTY_DIR) / "openvino_c.dll";
  auto library = DynamicLibrary::open(file);
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.failure().system_code, ERROR_MOD_NOT_FOUND) << library.failure().message;
}

TEST(Errors, AMissingDependencyIs126) {
  // openvino_c.dll alone: openvino.dll (and tbb12.dll) are not beside it.
  const fs::path file = win(EOV_MISSING_DEPENDENCY_DIR) / "openvino_c.dll";
  ASSERT_TRUE(fs::exists(file));
  auto library = DynamicLibrary::open(file);
  ASSERT_FALSE(library.ok());
  EXPECT_EQ(library.failure().system_code, ERROR_MOD_NOT_FOUND) << library.failure().message;
  EXPECT_NE(library.failure().message.find("126"), std::string::npos) << library.failure().message;

  auto runtime = Runtime::load(file);
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.failure().kind, FailureKind::kRuntimeUnavailable);
  EXPECT_NE(runtime.failure().message.find(loader::to_utf8(file)), std::string::npos) << runtime.failure().message;

  // Control: the same file loads where its dependencies are beside it.
  auto complete = DynamicLibrary::open(wheel_libs() / "openvino_c.dll");
  EXPECT_TRUE(complete.ok()) << complete.failure().message;
}

TEST(Errors, AMissingSymbolIs127AndTheRuntimeNamesIt) {
  const fs::path file = win(EOV_STAND_INS_DIR) / "missing_symbol.dll";
  auto library = DynamicLibrary::open(file);
  ASSERT_TRUE(library.ok()) << library.failure().message;
  EXPECT_NE(library->symbol("ov_core_create"), nullptr);
  SetLastError(0);
  EXPECT_EQ(library->symbol("ov_infer_request_infer"), nullptr);
  EXPECT_EQ(GetLastError(), static_cast<DWORD>(ERROR_PROC_NOT_FOUND));

  auto runtime = Runtime::load(file);
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.failure().kind, FailureKind::kRuntimeUnavailable);
  EXPECT_NE(runtime.failure().message.find("ov_infer_request_infer"), std::string::npos) << runtime.failure().message;
  EXPECT_NE(runtime.failure().message.find("missing_symbol.dll"), std::string::npos) << runtime.failure().message;
}

TEST(Errors, AnUnsupportedVersionIsRefusedNamingIt) {
  auto runtime = Runtime::load(win(EOV_STAND_INS_DIR) / "old_version.dll");
  ASSERT_FALSE(runtime.ok());
  EXPECT_EQ(runtime.failure().kind, FailureKind::kUnsupportedRuntime);
  EXPECT_NE(runtime.failure().message.find("2023.3.0-13775-stand-in"), std::string::npos) << runtime.failure().message;
}

TEST(Errors, AFolderWithoutTheDllSaysSo) {
  auto runtime = Runtime::load(win(EOV_EMPTY_DIR));
  ASSERT_FALSE(runtime.ok());
  EXPECT_NE(runtime.failure().message.find("holds no openvino_c.dll"), std::string::npos) << runtime.failure().message;
}

// ---- 7. Lifetime: the runtime outlives whoever loaded it ----

using ProbeFunction = int (*)(char*, size_t);

// Loads the probe DLL (loader + openvino_api, placed as in site-packages), has it load the
// process-wide runtime, frees it, and checks the runtime stayed. Returns the probe's report.
std::string load_runtime_through_the_probe_then_free_it() {
  const fs::path probe_file = win(EOV_SITE_DIR) / "executorch_openvino" / "lib" / "eov_runtime_probe.dll";
  EXPECT_EQ(GetModuleHandleW(L"openvino_c.dll"), nullptr) << "precondition";
  HMODULE probe = LoadLibraryW(probe_file.wstring().c_str());
  EXPECT_NE(probe, nullptr) << "error " << GetLastError();
  if (probe == nullptr) return {};
  auto load = reinterpret_cast<ProbeFunction>(
      reinterpret_cast<void (*)()>(GetProcAddress(probe, "eov_probe_load_runtime")));
  EXPECT_NE(load, nullptr);
  if (load == nullptr) return {};
  char report[4096] = {};
  const int status = load(report, sizeof(report));
  EXPECT_EQ(status, 0) << report;

  EXPECT_TRUE(FreeLibrary(probe));
  EXPECT_EQ(GetModuleHandleW(L"eov_runtime_probe.dll"), nullptr) << "the probe DLL was not unloaded";
  HMODULE runtime = GetModuleHandleW(L"openvino_c.dll");
  EXPECT_NE(runtime, nullptr) << "the runtime was unloaded with the DLL that loaded it";
  if (runtime != nullptr) {
    EXPECT_EQ(reported_version(runtime).rfind(std::string(EOV_OPENVINO_VERSION) + "-", 0), 0u);
  }
  return report;
}

TEST(Lifetime, RuntimeStaysLoadedAfterTheDllThatLoadedItIsFreed) {
  set_variable(L"OPENVINO_LIB_PATH", wheel_libs());
  const std::string report = load_runtime_through_the_probe_then_free_it();
  EXPECT_EQ(report.rfind(std::string(EOV_OPENVINO_VERSION) + "-", 0), 0u) << report;
  expect_dependencies_from(wheel_libs());
}

TEST(Lifetime, ADllInSitePackagesFindsTheRuntimeBesideIt) {
  // Unset: the bare name finds nothing, then site-packages/openvino/libs beside
  // site-packages/executorch_openvino/lib is tried (sibling_pip_runtime_folder).
  set_variable(L"OPENVINO_LIB_PATH", std::nullopt);
  const std::string report = load_runtime_through_the_probe_then_free_it();
  const fs::path folder = win(EOV_SITE_DIR) / "openvino" / "libs";
  EXPECT_NE(lower(report).find(lower(loader::to_utf8(folder))), std::string::npos) << report;
  expect_dependencies_from(folder);
}

TEST(Lifetime, TheProcessRuntimeIsPinned) {
  set_variable(L"OPENVINO_LIB_PATH", wheel_libs());
  auto runtime = Runtime::instance();
  ASSERT_TRUE(runtime.ok()) << runtime.failure().message;
  HMODULE module = GetModuleHandleW(L"openvino_c.dll");
  ASSERT_NE(module, nullptr);
  // Someone else's stray FreeLibrary calls (more than any reference count we could hold).
  for (int i = 0; i < 4; ++i) FreeLibrary(module);
  EXPECT_EQ(GetModuleHandleW(L"openvino_c.dll"), module) << "the runtime was unloaded";
  expect_cpu_listed(*runtime.value());
}

TEST(Lifetime, KeepLoadedForeverPinsAnyLibrary) {
  const fs::path file = win(EOV_STAND_INS_DIR) / "old_version.dll";
  {
    auto library = DynamicLibrary::open(file);
    ASSERT_TRUE(library.ok()) << library.failure().message;
    library->keep_loaded_forever();
    EXPECT_EQ(library->symbol("ov_core_create"), nullptr) << "the handle is forgotten";
  }
  HMODULE module = GetModuleHandleW(L"old_version.dll");
  ASSERT_NE(module, nullptr) << "kept library was freed";
  for (int i = 0; i < 4; ++i) FreeLibrary(module);
  EXPECT_NE(GetModuleHandleW(L"old_version.dll"), nullptr) << "kept library was not pinned";
}

TEST(Lifetime, ALibraryNotKeptIsFreedByItsDestructor) {
  const fs::path file = win(EOV_STAND_INS_DIR) / "old_version.dll";
  {
    auto library = DynamicLibrary::open(file);
    ASSERT_TRUE(library.ok()) << library.failure().message;
    EXPECT_NE(GetModuleHandleW(L"old_version.dll"), nullptr);
    DynamicLibrary moved = std::move(library).value();
    EXPECT_NE(moved.symbol("ov_core_create"), nullptr);
  }
  EXPECT_EQ(GetModuleHandleW(L"old_version.dll"), nullptr);
}

// ---- Path helpers of the shim ----

void function_in_this_program() {}

TEST(Shim, ModulePathOfNamesTheFileHoldingAnAddress) {
  const fs::path file = win(EOV_STAND_INS_DIR) / "old_version.dll";
  auto library = DynamicLibrary::open(file);
  ASSERT_TRUE(library.ok()) << library.failure().message;
  std::optional<fs::path> holder = loader::module_path_of(library->symbol("ov_core_create"));
  ASSERT_TRUE(holder.has_value());
  EXPECT_TRUE(same_path(*holder, file)) << loader::to_utf8(*holder);

  std::optional<fs::path> self = loader::module_path_of(reinterpret_cast<const void*>(&function_in_this_program));
  ASSERT_TRUE(self.has_value());
  EXPECT_TRUE(same_path(*self, module_file(nullptr))) << loader::to_utf8(*self);
}

TEST(Shim, ToUtf8ConvertsTheWideForm) {
  const fs::path path(L"Z:\\w\u00f6rk_\u76ee\u5f55\\openvino_c.dll");
  EXPECT_EQ(loader::to_utf8(path), u8"Z:\\w\u00f6rk_\u76ee\u5f55\\openvino_c.dll");
  EXPECT_EQ(loader::to_utf8(fs::path()), "");
}

TEST(Shim, FolderCandidatesAreTheDllInIt) {
  const auto candidates = loader::candidate_paths(wheel_libs());
  ASSERT_EQ(candidates.size(), 1u);
  EXPECT_EQ(candidates[0], wheel_libs() / "openvino_c.dll");
  const auto unset = loader::candidate_paths(std::nullopt);
  ASSERT_FALSE(unset.empty());
  EXPECT_EQ(unset[0], fs::path("openvino_c.dll"));
}

}  // namespace
}  // namespace executorch_openvino
