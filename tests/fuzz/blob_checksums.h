// Rewrites the checksums of a (possibly malformed) delegate blob so they match its bytes. A byte
// fuzzer almost never guesses a CRC-32, so without this every mutated input would stop at the
// checksum checks and the range, overlap and section checks behind them would go unexplored.
#pragma once

#include <cstdint>
#include <vector>

namespace executorch_openvino::fuzz {

// Sets the CRC of every section-table entry whose range lies inside the buffer, then the header
// CRC when the declared header size fits. Fields that cannot be computed are left as they are.
// Returns whether anything changed.
bool repair_checksums(std::vector<uint8_t>& blob);

}  // namespace executorch_openvino::fuzz
