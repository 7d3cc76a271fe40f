"""The serving tests' models, made once per run: ExecuTorch's Llama (two layers, random weights)
lowered to the delegate with BOS/EOS metadata, its byte-level tokenizer and a chat template, in one
folder; the scripted program (serving_support.Scripted); and workers started the way ExecuTorch's
server starts them (its own spawn_worker)."""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from serving_support import TEMPLATE, Scripted, worker_command, worker_environment


@pytest.fixture(scope="session")
def served(tmp_path_factory):
    """(eager model, tokenizer, folder with model.pte, tokenizer.json, tokenizer_config.json)."""
    import executorch_openvino
    from executorch.exir import to_edge_transform_and_lower
    from executorch_openvino.llm.runner_metadata import text_runner_metadata
    from llm_models import CONTEXT, et_llama, export_et_llama
    from llm_tokenizer import BOS, EOS, train

    folder = tmp_path_factory.mktemp("served")
    tokenizer = train(folder / "tokenizer.json")
    (folder / "tokenizer_config.json").write_text(json.dumps({
        "chat_template": TEMPLATE, "bos_token": "<s>", "eos_token": "</s>",
        "tokenizer_class": "PreTrainedTokenizerFast"}))
    vocab = tokenizer.get_vocab_size()
    metadata = text_runner_metadata(max_seq_len=CONTEXT - 1, max_context_len=CONTEXT, n_layers=2, vocab_size=vocab,
                                    bos_id=BOS, eos_ids=[EOS])
    model = et_llama(True, vocab_size=vocab, seed=4)
    program = to_edge_transform_and_lower(export_et_llama(model), partitioner=[executorch_openvino.OpenvinoPartitioner()],
                                          constant_methods=metadata)
    (folder / "model.pte").write_bytes(program.to_executorch().buffer)
    return model, tokenizer, folder


@pytest.fixture
def spawn(served):
    """Starts workers with ExecuTorch's spawn_worker (cancellation pipe and all); closes them after."""
    from executorch.examples.llm_server.python.worker_client import spawn_worker

    started = []

    def start(*options: str):
        # The workers' logs go to EOV_WORKER_LOG when set (the test's own output otherwise).
        log = open(os.environ["EOV_WORKER_LOG"], "a") if os.environ.get("EOV_WORKER_LOG") else None
        client = spawn_worker(worker_command(served[2], *options), env=worker_environment(),
                              popen=lambda *a, **k: subprocess.Popen(*a, stderr=log, **k))
        started.append(client)
        return client

    yield start
    for client in started:
        client.close()


@pytest.fixture(scope="session")
def scripted(tmp_path_factory):
    """A folder with the scripted program (Scripted), its tokenizer and chat template."""
    return Scripted.build(tmp_path_factory.mktemp("scripted"))
