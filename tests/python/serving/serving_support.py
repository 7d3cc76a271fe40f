"""What the serving tests share: the chat template, the worker's command line, a scripted program
whose answers are known, and `executorch-openvino serve` started as a user starts it."""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import List, Optional

# A ChatML-shaped template of our own; the server renders it with transformers.
TEMPLATE = ("{% for m in messages %}<s>{{ m['role'] }}\n{{ m['content'] }}</s>\n{% endfor %}"
            "{% if add_generation_prompt %}<s>assistant\n{% endif %}")


def worker_command(folder: Path, *options: str):
    return [sys.executable, "-m", "executorch_openvino.serving.worker", "--model_path", str(folder / "model.pte"),
            "--tokenizer_path", str(folder / "tokenizer.json"), *options]


def worker_environment():
    return dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))


# What the scripted program says, one added token each, then its end-of-sequence id: a line of text
# with characters of two, three and four bytes, then a tool call as the server's Hermes parser reads it.
SCRIPT = ("Sunny in Paris, 21 °C — ☀ 🌍 café. ",
          '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>')


class Scripted:
    """A program that says SCRIPT whatever it is asked: a bigram table (the next token's logits from
    the last token's row), so that the OpenAI contract suite's answers are known: text, then a tool
    call. It is a real program lowered to the delegate and run by OpenVINO through the worker; only
    its weights are chosen. Its rows: any token -> SCRIPT[0], SCRIPT[i] -> SCRIPT[i + 1], the last
    -> EOS."""

    @staticmethod
    def build(folder: Path):
        import torch
        from tokenizers import AddedToken

        import executorch_openvino
        from executorch.exir import to_edge_transform_and_lower
        from executorch_openvino.llm.runner_metadata import text_runner_metadata
        from llm_tokenizer import BOS, EOS, train

        # Room for the contract suite's requests (128 tokens after the prompt); nothing is cached.
        context = 512
        tokenizer = train(folder / "tokenizer.json")
        tokenizer.add_tokens([AddedToken(text, normalized=False) for text in SCRIPT])
        tokenizer.save(str(folder / "tokenizer.json"))
        (folder / "tokenizer_config.json").write_text(json.dumps({
            "chat_template": TEMPLATE, "bos_token": "<s>", "eos_token": "</s>",
            "tokenizer_class": "PreTrainedTokenizerFast"}))
        vocab = tokenizer.get_vocab_size()
        script = [tokenizer.token_to_id(text) for text in SCRIPT] + [EOS]
        table = torch.full((vocab, vocab), -10.0)
        table[:, script[0]] = 10.0
        for here, after in zip(script, script[1:]):
            table[here] = -10.0
            table[here, after] = 10.0

        class Bigram(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.table = torch.nn.Parameter(table, requires_grad=False)

            def forward(self, tokens, input_pos):
                return self.table[tokens[:, -1]] + input_pos.to(torch.float32) * 0.0

        seq = torch.export.Dim("seq", min=1, max=context - 1)
        exported = torch.export.export(Bigram(), (torch.tensor([[BOS, 5]]), torch.tensor([0])),
                                       dynamic_shapes=({1: seq}, None))
        metadata = text_runner_metadata(max_seq_len=context - 1, max_context_len=context, n_layers=1,
                                        vocab_size=vocab, bos_id=BOS, eos_ids=[EOS])
        program = to_edge_transform_and_lower(exported, partitioner=[executorch_openvino.OpenvinoPartitioner()],
                                              constant_methods=metadata)
        (folder / "model.pte").write_bytes(program.to_executorch().buffer)
        return folder


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Served:
    """`executorch-openvino serve` as a user starts it, in a process of its own, on a free port."""

    def __init__(self, folder: Path, *options: str):
        import subprocess

        self.port = free_port()
        self.base_url = f"http://127.0.0.1:{self.port}/v1"
        command = [sys.executable, "-m", "executorch_openvino", "serve", str(folder / "model.pte"),
                   "--tokenizer", str(folder), "--port", str(self.port), "--model-id", "served", *options]
        self.log = open(folder / f"serve-{self.port}.log", "w+")
        self.process = subprocess.Popen(command, env=worker_environment(), stdout=self.log, stderr=subprocess.STDOUT)
        self._wait()

    def _wait(self, seconds: float = 240) -> None:
        import time
        import urllib.request

        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"serve exited ({self.process.returncode}):\n{self.output()}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/health", timeout=2) as answer:
                    if answer.status == 200:
                        return
            except OSError:
                time.sleep(0.5)
        raise AssertionError(f"serve did not answer in {seconds} s:\n{self.output()}")

    def output(self) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read()[-6000:]

    def stop(self) -> None:
        import subprocess

        self.process.terminate()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


@dataclass
class Config:  # the fields WorkerClient.generate reads off its config
    max_new_tokens: int = 16
    temperature: float = 0.0
    top_p: float = 1.0
    top_k: int = 0
    seed: int = 0
    stop: List[str] = field(default_factory=list)
    session_id: Optional[str] = None
    prompt_segments: Optional[list] = None


def run(client, prompt, **options):
    """(text pieces, WorkerStats) of one request."""
    pieces, stats = [], []
    client.generate(prompt, Config(**options), pieces.append, stats.append)
    return pieces, stats[0]


def eager_ids(model, prompt_ids, count):
    """Greedy ids in eager PyTorch, up to EOS."""
    from llm_models import Conversation, eager_step
    from llm_tokenizer import EOS

    generated, _ = Conversation(eager_step(model)).generate(prompt_ids, count)
    return generated[: generated.index(EOS)] if EOS in generated else generated


def encode(tokenizer, text):
    return tokenizer.encode(text, add_special_tokens=False).ids


def expected_answer(served, messages, count):
    """What the program says alone for these messages: the chat template as the server renders it,
    greedy in eager PyTorch, up to EOS."""
    from jinja2 import Template

    model, tokenizer, _ = served
    rendered = Template(TEMPLATE).render(messages=messages, add_generation_prompt=True)
    return tokenizer.decode(eager_ids(model, encode(tokenizer, rendered), count), skip_special_tokens=True)
