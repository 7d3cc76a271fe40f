"""transformers' WhisperForConditionalGeneration computed by a Whisper program (whisper_program.py):
its generate (forced language and task tokens, language detection, timestamp rules, temperature
fallback, sequential long-form decoding) and the automatic-speech-recognition pipeline (30-second
windows with strides, the text joined, segment timestamps) are transformers' own, unchanged; only
the encoder's and the decoder's arithmetic happens in the program. The eager model's layers are made
on the meta device: they hold no weights and never run (generate reads their shapes only)."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Optional

from .whisper_program import WhisperProgram


@functools.lru_cache(maxsize=None)
def _classes():
    """ProgramWhisper's class, made once: its bases import transformers, which the package imports only
    when speech is used."""
    import torch
    from transformers import WhisperForConditionalGeneration
    from transformers.generation.utils import GenerateEncoderDecoderOutput
    from transformers.modeling_outputs import BaseModelOutput, Seq2SeqLMOutput

    class ProgramEncoder(torch.nn.Module):
        """What generate calls as the model's encoder: the program's, one window a call."""

        main_input_name = "input_features"

        def __init__(self, program: WhisperProgram):
            super().__init__()
            self.program = program

        def forward(self, input_features=None, **_):
            if input_features.shape[0] != 1:
                raise ValueError(f"the program encodes one window a call: a batch of {input_features.shape[0]} "
                                 "(use the pipeline's batch_size=1)")
            return BaseModelOutput(last_hidden_state=self.program.encode(input_features.to(torch.float32)))

    class ProgramWhisper(WhisperForConditionalGeneration):
        """A WhisperForConditionalGeneration whose encoder and decoder are a Whisper program's."""

        def __init__(self, config, program: WhisperProgram):
            with torch.device("meta"):  # the layers' shapes for generate, and no weights
                super().__init__(config)
            self.program = program
            self._program_encoder = ProgramEncoder(program)
            self.eval()

        @property
        def device(self):
            return torch.device("cpu")

        def get_encoder(self, *args, **kwargs):
            return self._program_encoder

        def forward(self, input_features=None, decoder_input_ids=None, encoder_outputs=None, past_key_values=None,
                    cache_position=None, **_):
            if encoder_outputs is None:
                encoder_outputs = self._program_encoder(input_features)
            states = encoder_outputs[0] if not hasattr(encoder_outputs, "last_hidden_state") \
                else encoder_outputs.last_hidden_state
            if decoder_input_ids is None or decoder_input_ids.shape[0] != 1 or states.shape[0] != 1:
                raise ValueError("the program decodes one sequence at a time: no beams (num_beams=1) and a batch "
                                 "of one (the pipeline's batch_size=1)")
            tokens = decoder_input_ids[0].tolist()
            # Without a cache (language detection) the tokens start at position 0.
            positions = cache_position.tolist() if cache_position is not None else list(range(len(tokens)))
            if len(positions) != len(tokens):
                raise ValueError(f"{len(tokens)} decoder tokens at {len(positions)} positions")
            logits = torch.stack([self.program.decode(token, position, states)
                                  for token, position in zip(tokens, positions)])
            return Seq2SeqLMOutput(logits=logits.unsqueeze(0), past_key_values=past_key_values,
                                   encoder_last_hidden_state=states)

        def _sample(self, input_ids, logits_processor, stopping_criteria, generation_config, synced_gpus=False,
                    streamer=None, **model_kwargs):
            """transformers' token loop, or the same loop whole in the engine when it is plain greedy
            decoding of one window that the engine reproduces exactly (whole_window_plan)."""
            plan = whole_window_plan(input_ids, logits_processor, stopping_criteria, generation_config, streamer,
                                     model_kwargs)
            if plan is None:
                return super()._sample(input_ids, logits_processor, stopping_criteria, generation_config,
                                       synced_gpus=synced_gpus, streamer=streamer, **model_kwargs)
            encoded = model_kwargs["encoder_outputs"]
            states = encoded[0] if not hasattr(encoded, "last_hidden_state") else encoded.last_hidden_state
            prompt = input_ids[0].tolist()
            tokens, _ = self.program.transcribe(states, prompt, plan["max_new_tokens"], plan["eos"],
                                                plan["suppress"], plan["begin_suppress"], plan["timestamps"])
            sequences = torch.tensor([prompt + tokens], dtype=input_ids.dtype)
            if generation_config.return_dict_in_generate:
                return GenerateEncoderDecoderOutput(sequences=sequences,
                                                    past_key_values=model_kwargs.get("past_key_values"))
            return sequences

    return ProgramWhisper


def whole_window_plan(input_ids, logits_processor, stopping_criteria, generation_config, streamer,
                      model_kwargs) -> Optional[dict]:
    """What the engine needs to decode the window as transformers' _sample would, or None when the
    call asks for more than the engine reproduces: one sequence, greedy, no streamer, no scores or
    attentions kept, only the suppress-tokens processors and then Whisper's timestamp processor (the
    order transformers gives them; anything else decides in Python, token by token), only the length
    and end-id stopping criteria, a single end id."""
    from transformers.generation.logits_process import (SuppressTokensAtBeginLogitsProcessor,
                                                        SuppressTokensLogitsProcessor, WhisperTimeStampLogitsProcessor)
    from transformers.generation.stopping_criteria import EosTokenCriteria, MaxLengthCriteria

    from ..generation import TimestampRule

    config = generation_config
    if (input_ids.shape[0] != 1 or config.do_sample or streamer is not None or config.num_beams != 1
            or "encoder_outputs" not in model_kwargs
            or (config.return_dict_in_generate and (config.output_scores or config.output_logits
                                                    or config.output_attentions or config.output_hidden_states))):
        return None
    prompt_length = input_ids.shape[1]
    suppress, begin_suppress, timestamps = [], [], None
    for processor in logits_processor:
        if timestamps is not None:
            return None  # the engine applies the timestamp rules last
        if type(processor) is SuppressTokensLogitsProcessor:
            suppress += processor.suppress_tokens.tolist()
        elif type(processor) is SuppressTokensAtBeginLogitsProcessor and processor.begin_index == prompt_length:
            begin_suppress += processor.begin_suppress_tokens.tolist()
        elif type(processor) is WhisperTimeStampLogitsProcessor and isinstance(processor.eos_token_id, int):
            timestamps = TimestampRule(processor.timestamp_begin, processor.no_timestamps_token_id,
                                       processor.eos_token_id, processor.begin_index,
                                       processor.max_initial_timestamp_index,
                                       bool(processor._detect_timestamp_from_logprob))
        else:
            return None
    max_length, eos = None, []
    for criterion in stopping_criteria:
        if type(criterion) is MaxLengthCriteria:
            max_length = criterion.max_length if max_length is None else min(max_length, criterion.max_length)
        elif type(criterion) is EosTokenCriteria:
            eos += criterion.eos_token_id.tolist()
        else:
            return None
    if max_length is None or len(set(eos)) > 1:
        return None
    return {"max_new_tokens": max(0, max_length - prompt_length), "eos": sorted(set(eos)),
            "suppress": suppress, "begin_suppress": begin_suppress, "timestamps": timestamps}


def ProgramWhisper(program, config=None, checkpoint: Optional[Path] = None):  # noqa: N802  (a class's factory)
    """The adapter over `program` (a WhisperProgram, or the folder or .pte file of one), with the
    checkpoint's config and generation config (`checkpoint`: its folder; default the program's)."""
    from transformers import AutoConfig, GenerationConfig

    if not isinstance(program, WhisperProgram):
        program = WhisperProgram(program)
    folder = Path(checkpoint) if checkpoint is not None else program.path.parent
    if config is None:
        config = AutoConfig.from_pretrained(folder)
    if config.model_type != "whisper":
        raise ValueError(f"{folder}: a {config.model_type} config, not Whisper's")
    model = _classes()(config, program)
    try:
        model.generation_config = GenerationConfig.from_pretrained(folder)
    except OSError:
        pass  # the config's own defaults: no language or task tokens, no timestamps
    return model


def speech_pipeline(program, checkpoint=None, **pipeline_options):
    """transformers' automatic-speech-recognition pipeline on a Whisper program (a folder holding
    model.pte, a .pte file or a WhisperProgram), with the checkpoint's processor and configs
    (`checkpoint`: their folder; default the program's folder)."""
    from transformers import AutoProcessor, pipeline

    model = ProgramWhisper(program, checkpoint=checkpoint)
    folder = Path(checkpoint) if checkpoint is not None else model.program.path.parent
    processor = AutoProcessor.from_pretrained(folder)
    recognizer = pipeline("automatic-speech-recognition", model=model, tokenizer=processor.tokenizer,
                          feature_extractor=processor.feature_extractor, device="cpu", **pipeline_options)
    # Greedy, as OpenVINO GenAI's WhisperPipeline and optimum-executorch decode: the pipeline's own
    # default of 5 beams needs 5 sequences at once, and the program holds one.
    recognizer.generation_config.num_beams = 1
    return recognizer
