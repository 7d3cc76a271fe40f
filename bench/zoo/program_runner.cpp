#include "program_runner.h"

#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>

#include <dlfcn.h>

#include <executorch/extension/data_loader/buffer_data_loader.h>

namespace executorch_openvino::bench {
namespace {

using executorch::extension::Module;
using executorch::runtime::Error;

void ours_clear_last_error() {
  using Function = void (*)();
  const auto function = reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, "executorch_openvino_clear_last_error"));
  if (function != nullptr) function();
}

std::string error_text(Error error) {
  char code[16];
  std::snprintf(code, sizeof code, "0x%x", static_cast<unsigned>(error));
  std::string text = std::string("ExecuTorch error ") + code + " (" + executorch::runtime::to_string(error) + ")";
  const std::string ours = ours_last_error();
  if (!ours.empty()) text += "; executorch_openvino: " + ours;
  return text;
}

}  // namespace

std::string ours_last_error() {
  using Function = const char* (*)();
  const auto function = reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, "executorch_openvino_last_error"));
  const char* text = function != nullptr ? function() : nullptr;
  return text != nullptr ? text : "";
}

std::vector<uint8_t> read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

ProgramRunner::ProgramRunner(const std::filesystem::path& pte, Loader loader,
                             const std::vector<std::string>& input_files, const std::string& method) {
  const std::string where = pte.filename().string() + ": ";
  switch (loader) {
    case Loader::kFile: module_ = std::make_unique<Module>(pte.string(), Module::LoadMode::File); break;
    case Loader::kBuffer:
      bytes_ = read_file(pte);
      module_ = std::make_unique<Module>(
          std::make_unique<executorch::extension::BufferDataLoader>(bytes_.data(), bytes_.size()));
      break;
  }
  ours_clear_last_error();
  if (const Error error = module_->load(); error != Error::Ok) {
    throw std::runtime_error(where + "loading the program: " + error_text(error));
  }
  if (const Error error = module_->load_method(method); error != Error::Ok) {
    throw std::runtime_error(where + "loading method " + method + ": " + error_text(error));
  }
  // Module hides its Methods behind execute(), which re-sets inputs and copies the outputs into a
  // new vector on every call; the bare Method is what a caller that keeps its inputs in place runs.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  auto found = module_->method(method);
#pragma GCC diagnostic pop
  if (!found.ok()) throw std::runtime_error(where + "getting method " + method + ": " + error_text(found.error()));
  method_ = found.get();

  auto meta = module_->method_meta(method);
  if (!meta.ok()) throw std::runtime_error(where + "reading the method's description: " + error_text(meta.error()));
  try {
    inputs_ = runner::prepare_inputs(*meta, input_files);
  } catch (const std::exception& error) {
    throw std::runtime_error(where + error.what());
  }
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (const Error error = method_->set_input(inputs_[i].value, i); error != Error::Ok) {
      throw std::runtime_error(where + "setting input " + std::to_string(i) + ": " + error_text(error));
    }
  }
}

bool ProgramRunner::check(Error error, const char* what) {
  if (error == Error::Ok) return true;
  failure_ = std::string(what) + ": " + error_text(error);
  return false;
}

bool ProgramRunner::run() {
  if (inputs_clobbered_) return run_setting_inputs();
  return execute_checking_inputs();
}

bool ProgramRunner::execute_checking_inputs() {
  if (!check(method_->execute(), "execute")) return false;
  if (!checked_inputs_) {
    checked_inputs_ = true;
    inputs_clobbered_ = !inputs_intact();
  }
  return true;
}

bool ProgramRunner::inputs_intact() const {
  for (size_t i = 0; i < inputs_.size(); ++i) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"  // deprecated for users; the Method's own input
    const executorch::runtime::EValue& value = method_->get_input(i);
#pragma GCC diagnostic pop
    if (!value.isTensor() || !inputs_[i].value.isTensor()) continue;
    const executorch::aten::Tensor& now = value.toTensor();
    const executorch::aten::Tensor& given = inputs_[i].value.toTensor();
    if (now.nbytes() != given.nbytes() || std::memcmp(now.const_data_ptr(), given.const_data_ptr(), now.nbytes()) != 0) {
      return false;
    }
  }
  return true;
}

bool ProgramRunner::run_setting_inputs() {
  for (size_t i = 0; i < inputs_.size(); ++i) {
    if (!check(method_->set_input(inputs_[i].value, i), "set_input")) return false;
  }
  return execute_checking_inputs();
}

size_t ProgramRunner::output_count() const { return method_->outputs_size(); }

std::pair<const uint8_t*, size_t> ProgramRunner::output_bytes(size_t index) const {
  const executorch::runtime::EValue& value = method_->get_output(index);
  if (!value.isTensor()) return {nullptr, 0};
  const executorch::aten::Tensor& tensor = value.toTensor();
  return {static_cast<const uint8_t*>(tensor.const_data_ptr()), tensor.nbytes()};
}

}  // namespace executorch_openvino::bench
