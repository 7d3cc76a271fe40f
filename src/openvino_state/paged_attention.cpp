// Paged attention for a model whose KV caches grow (state_abi.h: eov_state_page_attention).
//
// OpenVINO's PagedAttentionExtension cannot travel in an IR file (the reader does not know the op,
// and the CPU plugin needs per-node run-time info that IR files drop), so the delegate blob keeps
// the grown form and this rewrite runs at load, in memory, with OpenVINO's own SDPAToPagedAttention
// pass; what follows the pass fits its result to the delegate's programs:
//   - the pass makes every token a batch row of its own; ExecuTorch's Llama reshapes with a batch of
//     one, so the token input keeps its shape, and each attention's query, key and value become one
//     row a token, its output [1, tokens, heads, width] again;
//   - the integer inputs the pass adds (past_lens, block tables, ...) are computed in the graph from
//     the first position and the token count: one conversation, in blocks 0, 1, ... in order;
//   - the caches become inputs named kPagedCachePrefix..., last, as long as the context, of the
//     element type asked; the delegate allocates and keeps them;
//   - paged attention is causal and reads no mask, so the model's mask stays an input (named
//     kCausalMaskInput) that the delegate checks on every call, and the token input is named
//     kTokensInput so the delegate can check that a call fits the caches.
#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <openvino/core/model.hpp>
#include <openvino/op/ops.hpp>
#include <openvino/pass/manager.hpp>
#include <openvino/pass/sdpa_to_paged_attention.hpp>

#include "openvino_state/error_text.h"
#include "openvino_state/state_abi.h"

// OpenVINO's C-API handle holds the C++ model (src/bindings/c/src/common.h); see state_library.cpp.
struct ov_model {
  std::shared_ptr<ov::Model> object;
};

namespace {

// Named by python/executorch_openvino/ir_passes/grown_cache.py.
constexpr const char* kCachePositionInput = "!executorch_openvino.cache_position";
constexpr const char* kGrownPrefix = "executorch_openvino.grown/";
constexpr const char* kLengthVariable = "executorch_openvino.length";
constexpr const char* kPagedCachePrefix = EOV_PAGED_CACHE_PREFIX;
constexpr const char* kCausalMaskInput = EOV_PAGED_MASK_INPUT;
constexpr const char* kTokensInput = EOV_PAGED_TOKENS_INPUT;

// Why the model is left grown (EOV_STATE_LEFT), as an exception caught by the entry point.
struct Left {
  std::string why;
};

bool has_name(const ov::Output<ov::Node>& port, const std::string& name) { return port.get_names().count(name) > 0; }

std::shared_ptr<ov::op::v0::Parameter> parameter_named(const ov::Model& model, const std::string& name) {
  for (const auto& parameter : model.get_parameters()) {
    if (has_name(parameter->output(0), name)) return parameter;
  }
  return nullptr;
}

// The Parameter a mask comes from through the nodes that only select or reshape it (the grown
// rewrite's cut and its boolean-to-additive Select included); null when it is computed.
std::shared_ptr<ov::op::v0::Parameter> mask_source(ov::Output<ov::Node> mask) {
  static const std::set<std::string> kCarriers = {"Slice",     "StridedSlice", "Convert", "Unsqueeze",
                                                  "Squeeze",   "Reshape",      "Broadcast", "Select"};
  for (int depth = 0; depth < 16; ++depth) {
    const std::shared_ptr<ov::Node> node = mask.get_node_shared_ptr();
    if (auto parameter = ov::as_type_ptr<ov::op::v0::Parameter>(node)) return parameter;
    if (!kCarriers.count(node->get_type_name()) || node->get_input_size() == 0) return nullptr;
    // A Select turns the boolean mask into the additive one; with anything but constants on its
    // branches (a bias, say) it computes more than the mask.
    if (ov::is_type<ov::op::v1::Select>(node) && (!ov::is_type<ov::op::v0::Constant>(node->get_input_node_ptr(1)) ||
                                                  !ov::is_type<ov::op::v0::Constant>(node->get_input_node_ptr(2)))) {
      return nullptr;
    }
    mask = node->input_value(0);  // the data (a Select's condition)
  }
  return nullptr;
}

std::shared_ptr<ov::Node> i32_constant(const std::vector<int32_t>& values, bool scalar = false) {
  return ov::op::v0::Constant::create(ov::element::i32, scalar ? ov::Shape{} : ov::Shape{values.size()}, values);
}

int64_t static_dimension(const ov::PartialShape& shape, size_t axis, const std::string& what) {
  if (shape.rank().is_dynamic() || shape.rank().get_length() <= static_cast<int64_t>(axis) || shape[axis].is_dynamic()) {
    throw Left{what + " has no static dimension " + std::to_string(axis) + " (" + shape.to_string() + ")"};
  }
  return shape[axis].get_length();
}

void page(std::shared_ptr<ov::Model>& model, const eov_paging& options) {
  const auto position = parameter_named(*model, kCachePositionInput);
  if (!position) throw Left{"the model has no cache position input (its caches do not grow)"};
  bool grown = false;
  for (const auto& variable : model->get_variables()) {
    const std::string& id = variable->get_info().variable_id;
    if (id.rfind(kGrownPrefix, 0) == 0) {
      grown = true;
    } else if (id != kLengthVariable) {
      throw Left{"the model keeps other state than its grown caches ('" + id + "')"};
    }
  }
  if (!grown) throw Left{"the model has no grown caches"};

  // Every attention's mask must be one boolean input, [new positions, context], for the delegate to
  // check.
  std::shared_ptr<ov::op::v0::Parameter> mask;
  size_t attentions = 0;
  for (const auto& node : model->get_ordered_ops()) {
    if (!ov::is_type<ov::op::v13::ScaledDotProductAttention>(node)) continue;
    ++attentions;
    if (node->get_input_size() < 4) throw Left{"an attention has no mask"};
    auto source = mask_source(node->input_value(3));
    if (!source || (mask && source != mask)) throw Left{"an attention's mask is computed in the model, not given"};
    mask = source;
  }
  if (attentions == 0) throw Left{"the model has no attention"};
  if (mask->get_element_type() != ov::element::boolean || mask->get_partial_shape().rank().get_length() != 2) {
    throw Left{"the attention mask is not a boolean [positions, context] input"};
  }
  const int64_t context = static_dimension(mask->get_partial_shape(), 1, "the attention mask");

  std::shared_ptr<ov::op::v0::Parameter> tokens;
  for (const char* name : {"input_ids", "tokens"}) {
    if ((tokens = parameter_named(*model, name))) break;
  }
  if (!tokens || tokens->get_partial_shape().rank().get_length() != 2 || !tokens->get_element_type().is_integral()) {
    throw Left{"the model has no [1, tokens] token input named tokens or input_ids"};
  }
  const ov::PartialShape token_shape = tokens->get_partial_shape();
  const std::unordered_set<std::string> token_names = tokens->output(0).get_names();
  const std::string token_friendly = tokens->get_friendly_name();
  const ov::ParameterVector before = model->get_parameters();

  // The pass finds the token input by this name.
  tokens->set_friendly_name("input_ids");
  tokens->output(0).set_names({"input_ids"});
  ov::pass::Manager manager;
  manager.register_pass<ov::pass::SDPAToPagedAttention>();
  manager.run_passes(model);

  for (const auto& target : tokens->output(0).get_target_inputs()) {
    ov::Node* unsqueeze = target.get_node();
    if (std::string(unsqueeze->get_type_name()) != "Unsqueeze") continue;
    for (const auto& user : unsqueeze->output(0).get_target_inputs()) user.replace_source_output(tokens);
  }
  tokens->set_partial_shape(token_shape);
  tokens->set_friendly_name(token_friendly);
  std::unordered_set<std::string> names = token_names;
  names.insert(kTokensInput);
  tokens->output(0).set_names(names);

  // The integer inputs, from the first position and the token count.
  const auto first = std::make_shared<ov::op::v0::Convert>(position, ov::element::i32);
  const auto count = std::make_shared<ov::op::v8::Gather>(std::make_shared<ov::op::v3::ShapeOf>(tokens, ov::element::i32),
                                                          i32_constant({1}, true), i32_constant({0}, true));
  const auto end = std::make_shared<ov::op::v1::Add>(first, count);
  const int32_t block = options.block_size;
  const auto blocks = std::make_shared<ov::op::v1::Divide>(std::make_shared<ov::op::v1::Add>(end, i32_constant({block - 1}, true)),
                                                           i32_constant({block}, true));
  auto vector = [](const std::shared_ptr<ov::Node>& scalar) {
    return std::make_shared<ov::op::v0::Unsqueeze>(scalar, i32_constant({0}, true));
  };
  const std::vector<std::pair<std::string, ov::Output<ov::Node>>> computed = {
      {"past_lens", vector(first)},
      {"subsequence_begins", std::make_shared<ov::op::v0::Concat>(ov::OutputVector{i32_constant({0}), vector(count)}, 0)},
      {"block_indices", std::make_shared<ov::op::v4::Range>(i32_constant({0}, true), blocks, i32_constant({1}, true),
                                                            ov::element::i32)},
      {"block_indices_begins", std::make_shared<ov::op::v0::Concat>(ov::OutputVector{i32_constant({0}), vector(blocks)}, 0)},
      {"max_context_len", end},
      {"position_ids", std::make_shared<ov::op::v4::Range>(std::make_shared<ov::op::v0::Convert>(first, ov::element::i64),
                                                           std::make_shared<ov::op::v0::Convert>(end, ov::element::i64),
                                                           ov::op::v0::Constant::create(ov::element::i64, {}, {1}),
                                                           ov::element::i64)},
  };
  for (const auto& [name, value] : computed) {
    auto parameter = parameter_named(*model, name);
    if (!parameter) continue;
    ov::Output<ov::Node> replacement = value;
    if (parameter->get_element_type() != replacement.get_element_type()) {
      replacement = std::make_shared<ov::op::v0::Convert>(replacement, parameter->get_element_type());
    }
    parameter->output(0).replace(replacement);
    model->remove_parameter(parameter);
  }

  const int64_t blocks_held = (context + block - 1) / block;
  const ov::element::Type cache_type(options.cache_type);
  size_t paged = 0;
  for (const auto& node : model->get_ordered_ops()) {
    if (std::string(node->get_type_name()) != "PagedAttentionExtension") continue;
    ++paged;
    int64_t kv_heads = 0, width = 0;
    for (size_t port = 0; port < 3; ++port) {
      auto reshape = ov::as_type_ptr<ov::op::v1::Reshape>(node->get_input_node_shared_ptr(port));
      if (!reshape) throw Left{"input " + std::to_string(port) + " of a paged attention is no Reshape"};
      const ov::PartialShape rows = reshape->get_input_partial_shape(0);  // [1, tokens, heads, width]
      const int64_t heads = static_dimension(rows, 2, "an attention's heads");
      width = static_dimension(rows, 3, "an attention's heads");
      if (port == 1) kv_heads = heads;
      reshape->input(1).replace_source_output(
          ov::op::v0::Constant::create(ov::element::i64, {2}, std::vector<int64_t>{-1, heads * width}));
      if (port == 0) {
        for (const auto& target : node->output(0).get_target_inputs()) {
          auto back = ov::as_type<ov::op::v1::Reshape>(target.get_node());
          if (back == nullptr) throw Left{"a paged attention's output goes to no Reshape"};
          back->input(1).replace_source_output(
              ov::op::v0::Constant::create(ov::element::i64, {4}, std::vector<int64_t>{1, -1, heads, width}));
        }
      }
    }
    auto& info = node->get_rt_info();  // the CPU plugin reads the caches' geometry from these
    info["num_k_heads"] = kv_heads;
    info["k_head_size"] = width;
    info["num_v_heads"] = kv_heads;
    info["v_head_size"] = width;
    for (size_t port : {size_t{3}, size_t{4}}) {
      auto cache = ov::as_type_ptr<ov::op::v0::Parameter>(node->get_input_node_shared_ptr(port));
      if (!cache) throw Left{"a paged attention's cache is not an input"};
      const std::string name = kPagedCachePrefix + cache->get_friendly_name();
      cache->set_friendly_name(name);
      cache->output(0).set_names({name});
      cache->set_partial_shape(ov::PartialShape{blocks_held, kv_heads, block, width});
      cache->set_element_type(cache_type);
    }
  }
  if (paged != attentions) {
    throw Left{"OpenVINO's pass made " + std::to_string(paged) + " paged attentions of " + std::to_string(attentions)};
  }
  for (const auto& node : model->get_ops()) {
    if (ov::is_type<ov::op::v13::ScaledDotProductAttention>(node)) throw Left{"an attention was left unpaged"};
  }
  // The caches are inputs now; the count of positions held (whose Assign the pass may leave) goes too.
  for (const auto& sink : model->get_sinks()) model->remove_sink(sink);
  for (const auto& variable : model->get_variables()) model->remove_variable(variable);
  names = mask->output(0).get_names();
  names.insert(kCausalMaskInput);
  mask->output(0).set_names(names);

  // The call's inputs keep their places; the caches follow them.
  const ov::ParameterVector after = model->get_parameters();
  if (after.size() <= before.size() || !std::equal(before.begin(), before.end(), after.begin())) {
    throw Left{"the inputs moved"};
  }
  for (size_t i = before.size(); i < after.size(); ++i) {
    if (after[i]->get_friendly_name().rfind(kPagedCachePrefix, 0) != 0) {
      throw Left{"OpenVINO's pass added an input the delegate would not feed: " + after[i]->get_friendly_name()};
    }
  }
  model->validate_nodes_and_infer_types();
}

}  // namespace

extern "C" int eov_state_page_attention(ov_model* handle, const eov_paging* options, char* error, size_t error_size) {
  if (handle == nullptr || !handle->object || options == nullptr || options->block_size <= 0 ||
      options->cache_type == nullptr) {
    executorch_openvino::state::write_error("paging the attention: no model or options", error, error_size);
    return EOV_STATE_FAILED;
  }
  try {
    std::shared_ptr<ov::Model> model = handle->object->clone();  // on refusal the model is unchanged
    page(model, *options);
    handle->object = std::move(model);
    return EOV_STATE_OK;
  } catch (const Left& left) {
    executorch_openvino::state::write_error(left.why, error, error_size);
    return EOV_STATE_LEFT;
  } catch (const std::exception& e) {
    executorch_openvino::state::write_error(std::string("paging the attention: ") + e.what(), error, error_size);
    return EOV_STATE_FAILED;
  } catch (...) {
    executorch_openvino::state::write_error("paging the attention: an unknown exception", error, error_size);
    return EOV_STATE_FAILED;
  }
}
