// Paged attention for a model whose KV caches grow (state_abi.h: eov_state_page_attention).
//
// OpenVINO's PagedAttentionExtension cannot travel in an IR file (the reader does not know the op,
// and the CPU plugin needs per-node run-time info that IR files drop), so the delegate blob keeps
// the grown form and this rewrite runs at load, in memory, with OpenVINO's own SDPAToPagedAttention
// pass; what follows the pass fits its result to the delegate's programs:
//   - the pass makes every token a batch row of its own; ExecuTorch's Llama reshapes with a batch of
//     one, so the token input keeps its shape, and each attention's query, key and value become one
//     row a token, its output [1, tokens, heads, width] again;
//   - the integer inputs the pass adds (past_lens, block tables, ...) stay inputs, named
//     kPlanPrefix..., after the program's own: the delegate feeds them, so one call may carry several
//     conversations' tokens, each in its own blocks; the rotary embedding reads the program's positions
//     when it gives one a token;
//   - the caches become inputs named kPagedCachePrefix..., last, of any number of blocks and the
//     element type asked; the delegate allocates and keeps them;
//   - paged attention is causal and reads no mask, so the model's mask is kept for the delegate to
//     check on every call: a mask the call gives stays an input (named kCausalMaskInput); one the
//     model computes from the call's position and tokens (Hugging Face programs) becomes the model's
//     last output (kCausalMaskOutput), once sample positions have shown it causal at load
//     (attention_mask.h); the token input is named kTokensInput so the delegate can check that a
//     call fits the caches.
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

#include "openvino_state/attention_mask.h"
#include "openvino_state/error_text.h"
#include "openvino_state/left.h"
#include "openvino_state/state_abi.h"

// OpenVINO's C-API handle holds the C++ model (src/bindings/c/src/common.h); see state_library.cpp.
struct ov_model {
  std::shared_ptr<ov::Model> object;
};

namespace {

using executorch_openvino::openvino_state::Left;
using executorch_openvino::openvino_state::MaskOrigin;

constexpr const char* kCachePositionInput = EOV_CACHE_POSITION_INPUT;
constexpr const char* kGrownPrefix = EOV_GROWN_VARIABLE_PREFIX;
constexpr const char* kLengthVariable = EOV_LENGTH_VARIABLE;
constexpr const char* kPagedCachePrefix = EOV_PAGED_CACHE_PREFIX;
constexpr const char* kCausalMaskInput = EOV_PAGED_MASK_INPUT;
constexpr const char* kCausalMaskOutput = EOV_PAGED_MASK_OUTPUT;
constexpr const char* kTokensInput = EOV_PAGED_TOKENS_INPUT;
constexpr const char* kPlanPrefix = EOV_PAGED_PLAN_PREFIX;

bool has_name(const ov::Output<ov::Node>& port, const std::string& name) { return port.get_names().count(name) > 0; }

std::shared_ptr<ov::op::v0::Parameter> parameter_named(const ov::Model& model, const std::string& name) {
  for (const auto& parameter : model.get_parameters()) {
    if (has_name(parameter->output(0), name)) return parameter;
  }
  return nullptr;
}

std::shared_ptr<ov::op::v0::Parameter> token_input(const ov::Model& model) {
  for (const char* name : {"input_ids", "tokens"}) {
    if (auto tokens = parameter_named(model, name)) return tokens;
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

  const std::shared_ptr<ov::op::v0::Parameter> tokens = token_input(*model);
  if (!tokens || tokens->get_partial_shape().rank().get_length() != 2 || !tokens->get_element_type().is_integral()) {
    throw Left{"the model has no [1, tokens] token input named tokens or input_ids"};
  }

  // Every attention's mask must be one boolean [new positions, context] value the delegate can check:
  // an input, or computed from the call's position and tokens alone.
  size_t attentions = 0;
  const MaskOrigin mask = executorch_openvino::openvino_state::the_mask(*model, &attentions);
  int64_t context = 0;
  if (mask.given) {
    if (mask.given->get_element_type() != ov::element::boolean || mask.given->get_partial_shape().rank().get_length() != 2) {
      throw Left{"the attention mask is not a boolean [positions, context] input"};
    }
    context = static_dimension(mask.given->get_partial_shape(), 1, "the attention mask");
  } else {
    executorch_openvino::openvino_state::prove_causal(*model, model->get_parameter_index(position),
                                             model->get_parameter_index(tokens));
    const ov::PartialShape shape = mask.computed.get_partial_shape();
    context = shape[shape.rank().get_length() - 1].get_length();
  }

  // Heads as the model states them (a Hugging Face program's projections are viewed with -1 heads,
  // which the pass's reshapes keep open): the query's at its attention, the caches' in their variables.
  std::set<int64_t> query_heads, cache_heads;
  for (const auto& node : model->get_ordered_ops()) {
    if (!ov::is_type<ov::op::v13::ScaledDotProductAttention>(node)) continue;
    const ov::PartialShape query = node->get_input_partial_shape(0);
    if (query.rank().is_static() && query.rank().get_length() == 4 && query[1].is_static()) {
      query_heads.insert(query[1].get_length());
    }
  }
  for (const auto& variable : model->get_variables()) {
    const ov::PartialShape cache = variable->get_info().data_shape;
    if (variable->get_info().variable_id.rfind(kGrownPrefix, 0) == 0 && cache.rank().is_static() &&
        cache.rank().get_length() == 4 && cache[1].is_static()) {
      cache_heads.insert(cache[1].get_length());
    }
  }

  const ov::PartialShape token_shape = tokens->get_partial_shape();
  const std::unordered_set<std::string> token_names = tokens->output(0).get_names();
  const std::string token_friendly = tokens->get_friendly_name();
  const ov::ParameterVector before = model->get_parameters();
  if (mask.computed.get_node() != nullptr) {
    // Kept for the delegate as the last output, one row a token; the pass then leaves it computed.
    const auto rows = std::make_shared<ov::op::v1::Reshape>(
        mask.computed, ov::op::v0::Constant::create(ov::element::i64, {2}, std::vector<int64_t>{-1, context}), false);
    rows->output(0).set_names({kCausalMaskOutput});
    model->add_results({std::make_shared<ov::op::v0::Result>(rows)});
  }

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

  // Where each of the call's sequences sits in the caches (past_lens, the block tables, ...) stays an
  // input, which the delegate feeds: one call can then carry several conversations' tokens. The
  // positions the rotary embedding reads: the program's own when it gives one a token (a Hugging Face
  // program's), so that such a call carries each token's; else from the first position on (ExecuTorch's
  // Llama, whose calls are one sequence).
  const ov::PartialShape position_shape = position->get_partial_shape();
  const bool start_only = position_shape.rank().is_static() && position_shape.rank().get_length() == 1 &&
                          position_shape[0].is_static() && position_shape[0].get_length() == 1;
  const auto positions = std::make_shared<ov::op::v0::Convert>(
      std::make_shared<ov::op::v1::Reshape>(
          position, ov::op::v0::Constant::create(ov::element::i64, {1}, std::vector<int64_t>{-1}), false),
      ov::element::i64);
  ov::Output<ov::Node> position_ids = positions;
  if (start_only) {
    const auto first = std::make_shared<ov::op::v8::Gather>(positions, i32_constant({0}, true), i32_constant({0}, true));
    const auto count = std::make_shared<ov::op::v0::Convert>(
        std::make_shared<ov::op::v8::Gather>(std::make_shared<ov::op::v3::ShapeOf>(tokens, ov::element::i64),
                                             i32_constant({1}, true), i32_constant({0}, true)),
        ov::element::i64);
    position_ids = std::make_shared<ov::op::v4::Range>(first, std::make_shared<ov::op::v1::Add>(first, count),
                                                       ov::op::v0::Constant::create(ov::element::i64, {}, {1}),
                                                       ov::element::i64);
  }
  if (auto parameter = parameter_named(*model, "position_ids")) {
    ov::Output<ov::Node> replacement = position_ids;
    if (parameter->get_element_type() != ov::element::i64) {
      replacement = std::make_shared<ov::op::v0::Convert>(replacement, parameter->get_element_type());
    }
    parameter->output(0).replace(replacement);
    model->remove_parameter(parameter);
  }
  ov::ParameterVector plan;
  for (const char* name : {"past_lens", "subsequence_begins", "block_indices", "block_indices_begins", "max_context_len"}) {
    auto parameter = parameter_named(*model, name);
    if (!parameter) throw Left{std::string("OpenVINO's pass made no ") + name + " input"};
    if (parameter->get_element_type() != ov::element::i32) throw Left{std::string("the pass's ") + name + " is not i32"};
    const std::string renamed = std::string(kPlanPrefix) + name;
    parameter->set_friendly_name(renamed);
    parameter->output(0).set_names({renamed});
    plan.push_back(parameter);
  }

  const int64_t block = options.block_size;
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
      const std::set<int64_t>& stated = port == 0 ? query_heads : cache_heads;
      const int64_t heads = rows.rank().is_static() && rows.rank().get_length() == 4 && rows[2].is_dynamic() &&
                                    stated.size() == 1
                                ? *stated.begin()
                                : static_dimension(rows, 2, "an attention's heads");
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
      // As many blocks as the delegate gives: one conversation's context, or several's.
      cache->set_partial_shape(ov::PartialShape{ov::Dimension::dynamic(), kv_heads, block, width});
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
  if (mask.given) {
    names = mask.given->output(0).get_names();
    names.insert(kCausalMaskInput);
    mask.given->output(0).set_names(names);
  }

  // The call's inputs keep their places; the plan follows them, then the caches.
  const ov::ParameterVector after = model->get_parameters();
  if (after.size() <= before.size() || !std::equal(before.begin(), before.end(), after.begin())) {
    throw Left{"the inputs moved"};
  }
  ov::ParameterVector caches;
  for (size_t i = before.size(); i < after.size(); ++i) {
    const bool planned = std::find(plan.begin(), plan.end(), after[i]) != plan.end();
    if (!planned && after[i]->get_friendly_name().rfind(kPagedCachePrefix, 0) != 0) {
      throw Left{"OpenVINO's pass added an input the delegate would not feed: " + after[i]->get_friendly_name()};
    }
    if (!planned) caches.push_back(after[i]);
  }
  for (size_t i = before.size(); i < after.size(); ++i) model->remove_parameter(after[i]);
  model->add_parameters(plan);
  model->add_parameters(caches);
  model->validate_nodes_and_infer_types();
}

}  // namespace

extern "C" int eov_state_page_attention(ov_model* handle, const eov_paging* options, char* error, size_t error_size) {
  if (handle == nullptr || !handle->object || options == nullptr || options->block_size <= 0 ||
      options->cache_type == nullptr) {
    executorch_openvino::openvino_state::write_error("paging the attention: no model or options", error, error_size);
    return EOV_STATE_FAILED;
  }
  try {
    std::shared_ptr<ov::Model> model = handle->object->clone();  // on refusal the model is unchanged
    page(model, *options);
    handle->object = std::move(model);
    return EOV_STATE_OK;
  } catch (const Left& left) {
    executorch_openvino::openvino_state::write_error(left.why, error, error_size);
    return EOV_STATE_LEFT;
  } catch (const std::exception& e) {
    // OpenVINO's pass or checks refused this model: it runs as exported (the clone is dropped).
    executorch_openvino::openvino_state::write_error(std::string("OpenVINO could not rewrite it: ") + e.what(), error,
                                            error_size);
    return EOV_STATE_LEFT;
  } catch (...) {
    executorch_openvino::openvino_state::write_error("paging the attention: an unknown exception", error, error_size);
    return EOV_STATE_FAILED;
  }
}
