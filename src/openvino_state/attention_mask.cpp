// Which mask a model's attentions read, and whether it is a causal mask (attention_mask.h).
#include "openvino_state/attention_mask.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <openvino/op/ops.hpp>

#include "common/causal_mask.h"

namespace executorch_openvino::openvino_state {

bool MaskOrigin::operator==(const MaskOrigin& other) const {
  return given == other.given && computed.get_node() == other.computed.get_node() &&
         computed.get_index() == other.computed.get_index();
}

namespace {

bool spans_a_context(const ov::Output<ov::Node>& value) {
  const ov::PartialShape shape = value.get_partial_shape();
  return value.get_element_type() == ov::element::boolean && shape.rank().is_static() &&
         shape.rank().get_length() >= 2 && shape[shape.rank().get_length() - 1].is_static();
}

// What one branch of a Select is: its constant value(s), or the node computing it.
std::string branch_text(const ov::Output<ov::Node>& value) {
  auto constant = ov::as_type_ptr<ov::op::v0::Constant>(value.get_node_shared_ptr());
  if (!constant) {
    return std::string("a value computed by ") + value.get_node()->get_type_name() + " '" +
           value.get_node()->get_friendly_name() + "'";
  }
  if (!constant->get_element_type().is_real()) {
    return "a constant of type " + constant->get_element_type().get_type_name();
  }
  const std::vector<double> values = constant->cast_vector<double>();
  if (values.empty()) return "an empty constant";
  const auto [low, high] = std::minmax_element(values.begin(), values.end());
  std::ostringstream text;
  if (*low == *high) {
    text << *low;
  } else {
    text << "values from " << *low << " to " << *high;
  }
  return text.str();
}

// A Select that turns the boolean mask into the additive one: 0 where it is true (attended), -inf (or
// a number as low) where false. Any other branches compute more than a mask.
void check_additive(const ov::op::v1::Select& select) {
  auto attended = ov::as_type_ptr<ov::op::v0::Constant>(select.get_input_node_shared_ptr(1));
  auto hidden = ov::as_type_ptr<ov::op::v0::Constant>(select.get_input_node_shared_ptr(2));
  auto all = [](const std::shared_ptr<ov::op::v0::Constant>& constant, bool (*holds)(double)) {
    if (!constant || !constant->get_element_type().is_real()) return false;
    const std::vector<double> values = constant->cast_vector<double>();
    return !values.empty() && std::all_of(values.begin(), values.end(), holds);
  };
  if (!all(attended, [](double v) { return v == 0.0; }) || !all(hidden, [](double v) { return v <= -1e30; })) {
    throw Left{"an attention's mask (Select '" + select.get_friendly_name() + "') adds " +
               branch_text(select.input_value(1)) + " where attended and " + branch_text(select.input_value(2)) +
               " where hidden, not 0 and -inf (or below -1e30)"};
  }
}

MaskOrigin mask_origin(ov::Output<ov::Node> mask) {
  static const std::set<std::string> kCarriers = {"Slice",     "StridedSlice", "Convert", "Unsqueeze",
                                                  "Squeeze",   "Reshape",      "Broadcast", "Select"};
  MaskOrigin origin;
  bool found = false;
  for (int depth = 0; depth < 16; ++depth) {
    const std::shared_ptr<ov::Node> node = mask.get_node_shared_ptr();
    if (auto parameter = ov::as_type_ptr<ov::op::v0::Parameter>(node)) return MaskOrigin{parameter, {}};
    if (!found && spans_a_context(mask)) origin.computed = mask, found = true;
    if (!kCarriers.count(node->get_type_name()) || node->get_input_size() == 0) break;
    if (auto select = ov::as_type_ptr<ov::op::v1::Select>(node)) {
      check_additive(*select);
    } else if (ov::is_type<ov::op::v0::Convert>(node) && node->get_output_element_type(0) != ov::element::boolean) {
      throw Left{"an attention's mask is converted to numbers and added as they are"};
    }
    mask = node->input_value(0);  // the data (a Select's condition)
  }
  if (!found && mask.get_element_type() == ov::element::boolean) {
    throw Left{"an attention's mask has no form over the whole context (" + mask.get_partial_shape().to_string() + ")"};
  }
  if (!found) throw Left{"an attention's mask is computed as numbers, not as booleans over the context"};
  return origin;
}

// Throws Left unless `mask` is computed from `position`, `tokens` and constants alone.
void check_depends_on_the_call(const ov::Output<ov::Node>& mask, const std::shared_ptr<ov::Node>& position,
                               const std::shared_ptr<ov::Node>& tokens) {
  std::vector<std::shared_ptr<ov::Node>> stack = {mask.get_node_shared_ptr()};
  std::set<ov::Node*> seen;
  while (!stack.empty()) {
    const std::shared_ptr<ov::Node> node = stack.back();
    stack.pop_back();
    if (!seen.insert(node.get()).second) continue;
    if (ov::is_type<ov::op::v0::Parameter>(node) && node != position && node != tokens) {
      throw Left{"the attention mask depends on input '" + node->get_friendly_name() + "'"};
    }
    if (ov::is_type<ov::op::util::ReadValueBase>(node)) throw Left{"the attention mask depends on the model's state"};
    for (const auto& input : node->input_values()) stack.push_back(input.get_node_shared_ptr());
  }
}

// The mask's own nodes as a model OpenVINO's reference evaluation can run: ops the PyTorch frontend
// leaves for the plugin to resolve, and bitwise ones on booleans, spelled out as the conversions and
// logical ops they are (on `mask`'s model, a copy).
std::shared_ptr<ov::Model> evaluable_mask(const ov::Output<ov::Node>& mask,
                                          const std::shared_ptr<ov::op::v0::Parameter>& position,
                                          const std::shared_ptr<ov::op::v0::Parameter>& tokens) {
  const auto result = std::make_shared<ov::op::v0::Result>(mask);
  const auto probe = std::make_shared<ov::Model>(ov::ResultVector{result}, ov::ParameterVector{position, tokens});
  for (const auto& node : probe->get_ordered_ops()) {
    const std::string type = node->get_type_name();
    if (type == "ConvertLike" || type == "ConvertPromoteTypes") {
      for (size_t port = 0; port < (type == "ConvertLike" ? 1u : 2u); ++port) {
        node->output(port).replace(
            std::make_shared<ov::op::v0::Convert>(node->input_value(port), node->get_output_element_type(port)));
      }
    } else if (node->get_output_element_type(0) == ov::element::boolean &&
               (type == "BitwiseAnd" || type == "BitwiseOr" || type == "BitwiseXor" || type == "BitwiseNot")) {
      std::shared_ptr<ov::Node> logical;
      if (type == "BitwiseNot") {
        logical = std::make_shared<ov::op::v1::LogicalNot>(node->input_value(0));
      } else if (type == "BitwiseAnd") {
        logical = std::make_shared<ov::op::v1::LogicalAnd>(node->input_value(0), node->input_value(1));
      } else if (type == "BitwiseOr") {
        logical = std::make_shared<ov::op::v1::LogicalOr>(node->input_value(0), node->input_value(1));
      } else {
        logical = std::make_shared<ov::op::v1::LogicalXor>(node->input_value(0), node->input_value(1));
      }
      node->output(0).replace(logical);
    }
  }
  probe->validate_nodes_and_infer_types();
  return probe;
}

// Throws Left unless `probe` (the mask's model) gives a causal [tokens, context] mask at the first
// position, the middle of the context and its last position, with as many tokens as a call there may
// carry.
void check_causal_where_sampled(ov::Model& probe, const ov::Output<ov::Node>& mask,
                                const std::shared_ptr<ov::op::v0::Parameter>& position,
                                const std::shared_ptr<ov::op::v0::Parameter>& tokens) {
  const ov::PartialShape mask_shape = mask.get_partial_shape();
  const int64_t context = mask_shape[mask_shape.rank().get_length() - 1].get_length();
  const ov::Dimension count = tokens->get_partial_shape()[1];
  const ov::PartialShape position_shape = position->get_partial_shape();
  const bool one_position = position_shape.rank().is_static() && position_shape.rank().get_length() <= 1 &&
                            position_shape.is_static() && ov::shape_size(position_shape.to_shape()) == 1;
  for (const auto& [where, wanted] : std::vector<std::pair<int64_t, int64_t>>{{0, 3}, {context / 2, 2}, {context - 1, 1}}) {
    const int64_t most = count.get_max_length() < 0 ? wanted : count.get_max_length();
    int64_t n = std::max<int64_t>(std::max<int64_t>(1, count.get_min_length()), std::min<int64_t>(wanted, most));
    if (one_position && count.is_dynamic()) n = 1;
    const int64_t first = std::min(where, context - n);
    ov::Tensor at(position->get_element_type(), one_position ? position_shape.to_shape() : ov::Shape{size_t(n)});
    for (int64_t i = 0; i < static_cast<int64_t>(at.get_size()); ++i) {
      if (at.get_element_type() == ov::element::i64) {
        at.data<int64_t>()[i] = first + i;
      } else if (at.get_element_type() == ov::element::i32) {
        at.data<int32_t>()[i] = static_cast<int32_t>(first + i);
      } else {
        throw Left{"the cache position is of type " + at.get_element_type().get_type_name()};
      }
    }
    ov::Tensor ids(tokens->get_element_type(), ov::Shape{1, size_t(n)});
    std::memset(ids.data(), 0, ids.get_byte_size());
    ov::TensorVector outputs(1);
    bool evaluated = false;
    try {
      evaluated = probe.evaluate(outputs, ov::TensorVector{at, ids});
    } catch (const std::exception& e) {
      throw Left{std::string("OpenVINO cannot evaluate the attention mask to check it: ") + e.what()};
    }
    if (!evaluated) throw Left{"OpenVINO cannot evaluate the attention mask to check it"};
    const ov::Shape shape = outputs[0].get_shape();
    const bool rows = shape.size() >= 2 && shape[shape.size() - 2] == size_t(n) &&
                      shape.back() == size_t(context) && ov::shape_size(shape) == size_t(n * context);
    if (!rows || outputs[0].get_element_type() != ov::element::boolean) {
      throw Left{"the attention mask is " + shape.to_string() + " for " + std::to_string(n) + " tokens"};
    }
    if (auto cell = executorch_openvino::first_non_causal_cell(outputs[0].data<const bool>(), n, context, first)) {
      const bool* values = outputs[0].data<const bool>();
      const std::string where_text = "for " + std::to_string(n) + " tokens at position " + std::to_string(first) +
                                     ", row " + std::to_string(cell->row) + " (position " +
                                     std::to_string(first + cell->row) + ")";
      if (cell->column >= context) {
        throw Left{"the attention mask is not causal " + where_text + ": it has no column for that position"};
      }
      const bool attended = values[cell->row * context + cell->column];
      throw Left{"the attention mask is not causal " + where_text + ": column " + std::to_string(cell->column) +
                 (attended ? " is attended, which a causal mask hides" : " is hidden, which a causal mask attends")};
    }
  }
}

}  // namespace

namespace {

// The mask an attention reads, named as the model names it: "input 'attention_mask' (boolean[1,128])"
// or "LogicalNot 'aten::logical_not/LogicalNot' (boolean[?,128])".
std::string origin_text(const MaskOrigin& origin) {
  const ov::Output<ov::Node> value = origin.given ? origin.given->output(0) : origin.computed;
  std::string text = origin.given ? "input '" + origin.given->get_friendly_name() + "'"
                                  : std::string(value.get_node()->get_type_name()) + " '" +
                                        value.get_node()->get_friendly_name() + "'" +
                                        (value.get_index() > 0 ? " output " + std::to_string(value.get_index()) : "");
  return text + " (" + value.get_element_type().get_type_name() + value.get_partial_shape().to_string() + ")";
}

}  // namespace

MaskOrigin the_mask(const ov::Model& model, size_t* attentions) {
  std::vector<std::pair<MaskOrigin, size_t>> masks;  // each distinct mask, with how many attentions read it
  *attentions = 0;
  for (const auto& node : model.get_ordered_ops()) {
    if (!ov::is_type<ov::op::v13::ScaledDotProductAttention>(node)) continue;
    ++*attentions;
    if (node->get_input_size() < 4) {
      throw Left{"attention " + std::to_string(*attentions) + " ('" + node->get_friendly_name() + "') has no mask"};
    }
    const MaskOrigin origin = mask_origin(node->input_value(3));
    auto same = std::find_if(masks.begin(), masks.end(), [&](const auto& mask) { return mask.first == origin; });
    if (same == masks.end()) {
      masks.emplace_back(origin, 1);
    } else {
      ++same->second;
    }
  }
  if (masks.empty()) throw Left{"the model has no attention"};
  if (masks.size() > 1) {
    std::string text = "the " + std::to_string(*attentions) + " attentions read " + std::to_string(masks.size()) +
                       " different masks:";
    for (size_t i = 0; i < masks.size(); ++i) {
      text += std::string(i == 0 ? " " : "; ") + std::to_string(masks[i].second) +
              (masks[i].second == 1 ? " reads " : " read ") + origin_text(masks[i].first);
    }
    throw Left{text};
  }
  return masks.front().first;
}

void prove_causal(const ov::Model& model, int64_t position_index, int64_t tokens_index) {
  const std::shared_ptr<ov::Model> copy = model.clone();
  size_t attentions = 0;
  const ov::Output<ov::Node> mask = the_mask(*copy, &attentions).computed;
  const ov::ParameterVector& parameters = copy->get_parameters();
  if (position_index < 0 || tokens_index < 0 || position_index >= static_cast<int64_t>(parameters.size()) ||
      tokens_index >= static_cast<int64_t>(parameters.size())) {
    throw Left{"the model has no cache position or token input"};
  }
  const auto position = parameters[position_index];
  const auto tokens = parameters[tokens_index];
  check_depends_on_the_call(mask, position, tokens);
  const std::shared_ptr<ov::Model> probe = evaluable_mask(mask, position, tokens);
  check_causal_where_sampled(*probe, mask, position, tokens);
}

}  // namespace executorch_openvino::openvino_state
