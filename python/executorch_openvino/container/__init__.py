"""Stage 5 of lowering: the delegate's container. The IR serialised with what the runtime library
needs beside it (compiled models, which call inputs the IR reads, input bounds, where external
weights are), as the blob format of docs/delegate-blob-format.md, which src/blob/ parses. blob.py
needs only the standard library, so tools read blobs without importing ExecuTorch;
delegate_blobs(pte) reads them back out of a written program."""

from .pte_reader import DelegateBlob, delegate_blobs

__all__ = ["DelegateBlob", "delegate_blobs"]
