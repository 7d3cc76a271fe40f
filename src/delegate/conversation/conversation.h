// What a call does to a partition's KV caches, one implementation per form the caches take, chosen
// once when the partition loads (choose_conversation):
//   no position input             StatelessConversation: nothing (any OpenVINO state is left as it is)
//   grown caches, state helper    GrownConversation: position checks, going back, prefixes
//   grown caches, no helper       GrownConversationWithoutHelper: a new request for a new conversation
//   paged attention               PagedConversation: caches the delegate holds, position and mask checks
// The partition's handle (delegate/execution/partition_handle.h) owns the infer request and calls these
// under its lock, with the call's arguments arranged as the IR takes them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <executorch/runtime/core/evalue.h>
#include <executorch/runtime/core/span.h>

#include "common/outcome.h"
#include "delegate/compiling/compiled_model.h"
#include "openvino_api/objects.h"

namespace executorch_openvino::delegate {

// Where a call's inputs are: the IR input carrying the first position a call writes (named by the
// exporter: state_abi.h), and the call input each IR input is, for messages ("input 3").
struct CallInputs {
  std::optional<size_t> position;
  std::vector<uint32_t> of_ir_input;  // empty: IR input i is call input i
  size_t number(size_t ir_input) const { return of_ir_input.empty() ? ir_input : of_ir_input[ir_input]; }
};

using Arguments = executorch::runtime::Span<executorch::runtime::EValue*>;

// The refusal of a state file by a form whose caches live in OpenVINO's variables.
Failure no_state_files();

class Conversation {
 public:
  virtual ~Conversation() = default;

  // A new request is in place (when the partition loads, and after kNewRequest): it holds nothing
  // written; what the conversation feeds it itself (a paged model's caches) is bound to it.
  virtual Status bind(openvino_api::ov_infer_request* request) { return ok_status(); }

  // Before anything of the call is bound: checks where the call starts (and a paged call's tokens
  // and mask), and goes back or starts anew. kNewRequest: the handle is to take a new request (the
  // only way to start anew without the state helper) and bind everything to it.
  enum class Before { kSameRequest, kNewRequest };
  virtual Outcome<Before> before_call(Arguments args, openvino_api::ov_infer_request* request) = 0;

  // After the inference, `inferred` its outcome: the positions held updated, a failure explained,
  // or a mask the model computed checked (a mask that is not causal fails the call).
  virtual Status after_call(const Status& inferred, openvino_api::ov_infer_request* request) = 0;

  // Saved prefixes (delegate/execution/saved_prefixes.h): the conversation so far kept under `name`
  // (replacing one of the same name), set back (the next call continues at the saved length), and
  // dropped. Only forms whose caches this library controls keep them.
  virtual bool keeps_prefixes() const { return false; }
  virtual Status save_prefix(const std::string& name, openvino_api::ov_infer_request* request);
  virtual Status restore_prefix(const std::string& name, openvino_api::ov_infer_request* request);
  virtual bool forget_prefix(const std::string& name) { return false; }
  virtual bool has_prefix(const std::string& name) const { return false; }

  // A saved prefix as bytes, for a state file (state_file/state_file.h), and one taken back from
  // such bytes under `name`. Only forms whose caches are plain memory here do it (paged ones);
  // install refuses parts that do not fit this partition's caches, and changes nothing then.
  struct PrefixImage {
    int64_t length = 0;
    std::vector<std::vector<uint8_t>> parts;
  };
  virtual Outcome<PrefixImage> prefix_image(const std::string& name) const;
  virtual Status check_image(int64_t length, const std::vector<std::vector<uint8_t>>& parts) const {
    return no_state_files();
  }
  virtual Status install_prefix(const std::string& name, PrefixImage image);
  // How the caches are laid out, in words a refusal can name ("" for forms without files).
  virtual std::string cache_form() const { return ""; }
};

// The form of `compiled`'s caches, for a partition whose request is `request` (bound at once).
Outcome<std::unique_ptr<Conversation>> choose_conversation(openvino_api::Runtime& runtime,
                                                           const CompiledModel& compiled, const CallInputs& inputs,
                                                           openvino_api::ov_infer_request* request);

// The refusal of a restore under a name nothing was saved under.
Failure no_prefix_saved_as(const std::string& name);


// What the implementations share.

// The first position a call writes: an Int scalar, or the first element of an integer tensor.
std::optional<int64_t> first_position(const executorch::runtime::EValue& value);

// The refusal of a call starting past the `held` positions of the conversation so far.
Failure past_the_conversation(size_t call_input, int64_t position, int64_t held);

// A form that keeps prefixes of `Content` by name, each with the positions it holds: it says how to
// take one from the conversation so far and how to put one back.
template <typename Content>
class KeepsPrefixes : public Conversation {
 public:
  bool keeps_prefixes() const final { return true; }
  Status save_prefix(const std::string& name, openvino_api::ov_infer_request* request) final {
    Outcome<Prefix> taken = take(request);
    if (!taken.ok()) return taken.failure();
    kept_.insert_or_assign(name, std::move(taken).value());
    return ok_status();
  }
  Status restore_prefix(const std::string& name, openvino_api::ov_infer_request* request) final {
    auto found = kept_.find(name);
    if (found == kept_.end()) return no_prefix_saved_as(name);
    return put_back(found->second, request);
  }
  bool forget_prefix(const std::string& name) final { return kept_.erase(name) > 0; }
  bool has_prefix(const std::string& name) const final { return kept_.count(name) > 0; }
  Outcome<PrefixImage> prefix_image(const std::string& name) const final {
    auto found = kept_.find(name);
    if (found == kept_.end()) return no_prefix_saved_as(name);
    return image_of(found->second);
  }
  Status install_prefix(const std::string& name, PrefixImage image) final {
    Outcome<Prefix> prefix = from_image(std::move(image));
    if (!prefix.ok()) return prefix.failure();
    kept_.insert_or_assign(name, std::move(prefix).value());
    return ok_status();
  }

 protected:
  struct Prefix {
    Content content;
    int64_t length;  // positions it holds
  };
  virtual Outcome<Prefix> take(openvino_api::ov_infer_request* request) = 0;
  // The next call continues at the prefix's length.
  virtual Status put_back(const Prefix& prefix, openvino_api::ov_infer_request* request) = 0;
  // A prefix as bytes and back (state files); by default the form does not write files.
  virtual Outcome<PrefixImage> image_of(const Prefix& prefix) const { return no_state_files(); }
  virtual Outcome<Prefix> from_image(PrefixImage image) const { return no_state_files(); }

 private:
  std::map<std::string, Prefix> kept_;
};

}  // namespace executorch_openvino::delegate
