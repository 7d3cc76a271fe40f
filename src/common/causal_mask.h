// What "causal" means for a call's attention mask, in one place: the state helper proves it of a mask
// the model computes (at load, on sample positions) and the delegate checks it of every call's.
// Header only, and free of ExecuTorch and OpenVINO, since both sides read it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>

namespace executorch_openvino {

struct MaskCell {
  int64_t row = 0;
  int64_t column = 0;
};

// The first cell of `values` ([rows, columns] booleans, row-major, true = attended) that a causal mask
// for a call whose first new position is `position` would not have: row i attends to positions
// 0 .. position + i and to none after. nullopt when it is causal.
inline std::optional<MaskCell> first_non_causal_cell(const bool* values, int64_t rows, int64_t columns,
                                                     int64_t position) {
  for (int64_t row = 0; row < rows; ++row) {
    const bool* cells = values + row * columns;
    const int64_t attended = std::min(columns, position + row + 1);
    const bool* wrong = std::find(cells, cells + attended, false);
    if (wrong == cells + attended) wrong = std::find(cells + attended, cells + columns, true);
    if (wrong != cells + columns || position + row + 1 > columns) return MaskCell{row, wrong - cells};
  }
  return std::nullopt;
}

}  // namespace executorch_openvino
