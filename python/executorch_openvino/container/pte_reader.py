"""Our delegate's blobs read back out of a written program (a .pte), for tools and tests.

ExecuTorch keeps a delegate's data either inline in the program's flatbuffer or in a segment after
it (ExecutorchBackendConfig(extract_delegate_segments=...), segments by default); both read the same
here. A blob whose weights went to ExecuTorch's named data (blob section 7) keeps only their key: its
weights() reads them from the data file (.ptd) the program was written with.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, List, Optional, Union

from ..backend_id import BACKEND_ID
from .blob import ParsedBlob, parse_blob


@dataclass(frozen=True)
class DelegateBlob:
    """One call of our delegate in a program: the method it is in, ExecuTorch's record of it and of
    that method (their schema objects, for the compile specs, the call's place and the method's
    inputs), and the blob's bytes."""

    method: str
    data: bytes = field(repr=False)
    delegate: Any = field(repr=False, compare=False)  # executorch.exir.schema.BackendDelegate
    plan: Any = field(repr=False, compare=False)  # executorch.exir.schema.ExecutionPlan of `method`

    @cached_property
    def parsed(self) -> ParsedBlob:
        return parse_blob(self.data)

    def weights(self, data_file: Union[str, Path, None] = None) -> bytes:
        """The IR's weights: the blob's own, or those it names, read and checked from `data_file`."""
        named = self.parsed.named_weights
        if named is None:
            return self.parsed.ir_weights
        if data_file is None:
            raise ValueError(f"the {self.method!r} method's weights are in a data file ({named.key}): pass it "
                             "(the .ptd written beside the .pte)")
        from .named_weights import read_from_file

        return read_from_file(data_file, named)


def delegate_blobs(pte: Union[bytes, str, Path], method: Optional[str] = None) -> List[DelegateBlob]:
    """Every call of our delegate (BACKEND_ID; other backends' are passed over) in the program `pte`
    (its bytes or its path), in program order: methods as the program lists them, a method's calls
    in its order. `method` keeps that method's only."""
    from executorch.exir._serialize._program import deserialize_pte_binary

    data = pte if isinstance(pte, (bytes, bytearray, memoryview)) else Path(pte).read_bytes()
    # Deserializing moves segment data back inline, so every delegate's data is in backend_delegate_data.
    program = deserialize_pte_binary(bytes(data)).program
    return [DelegateBlob(plan.name, bytes(program.backend_delegate_data[delegate.processed.index].data), delegate,
                         plan)
            for plan in program.execution_plan if method is None or plan.name == method
            for delegate in plan.delegates if delegate.id == BACKEND_ID]
