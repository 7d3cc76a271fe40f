// generate: text generation from a C++ application with the engine's C entry points
// (executorch_openvino/generation.h). The prompt comes as token ids (tokenizing is the
// application's: ExecuTorch's tokenizers library, or any other); with the model's tokenizer.json the
// text streams as whole UTF-8 characters, and --json-schema holds the output to a schema (both read
// by llguidance's C library: LLGUIDANCE_LIB_PATH).
//
//   generate model.pte --ids "1 450 4996" [--max-new-tokens N] [--temperature T] [--top-k K] [--top-p P]
//            [--seed S] [--lookup] [--tokenizer tokenizer.json] [--json-schema schema.json] [--stop TEXT]
//
// Prints the text as it comes (with --tokenizer), then a line "ids: ..." of the generated ids.
#include <executorch_openvino/generation.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

int on_text(void*, const char* text, size_t length) {
  std::fwrite(text, 1, length, stdout);
  std::fflush(stdout);
  return 0;
}

int failed(const char* what) {
  std::fprintf(stderr, "generate: %s: %s\n", what, eov_generation_last_error());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: generate MODEL.pte --ids \"1 2 3\" [options]\n");
    return 2;
  }
  std::vector<int64_t> prompt;
  std::string tokenizer, schema;
  std::vector<std::string> stops;
  eov_generation_options options;
  eov_generation_options_init(&options);
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--lookup") {
      options.lookup = 1;
      continue;
    }
    if (i + 1 == argc) {
      std::fprintf(stderr, "generate: %s needs a value\n", flag.c_str());
      return 2;
    }
    const char* value = argv[++i];
    if (flag == "--ids") {
      std::istringstream ids(value);
      for (int64_t id; ids >> id;) prompt.push_back(id);
    } else if (flag == "--max-new-tokens") {
      options.max_new_tokens = std::strtoull(value, nullptr, 10);
    } else if (flag == "--temperature") {
      options.temperature = std::strtod(value, nullptr);
    } else if (flag == "--top-k") {
      options.top_k = std::strtoll(value, nullptr, 10);
    } else if (flag == "--top-p") {
      options.top_p = std::strtod(value, nullptr);
    } else if (flag == "--seed") {
      options.has_seed = 1;
      options.seed = std::strtoull(value, nullptr, 10);
    } else if (flag == "--tokenizer") {
      tokenizer = read_file(value);
    } else if (flag == "--json-schema") {
      schema = read_file(value);
    } else if (flag == "--stop") {
      stops.emplace_back(value);
    } else {
      std::fprintf(stderr, "generate: unknown option %s\n", flag.c_str());
      return 2;
    }
  }
  eov_program* program = nullptr;
  if (eov_program_load(argv[1], nullptr, nullptr, &program) != 0) return failed("loading the program");
  eov_vocabulary* vocabulary = nullptr;
  eov_constraint* constraint = nullptr;
  const size_t vocab = static_cast<size_t>(eov_program_info(program, "vocab"));
  if (!tokenizer.empty()) {
    if (eov_vocabulary_from_tokenizer(tokenizer.c_str(), nullptr, vocab, &vocabulary) != 0)
      return failed("reading the tokenizer");
    options.vocabulary = vocabulary;
    options.on_text = on_text;
  }
  if (!schema.empty()) {
    std::vector<int64_t> eos(static_cast<size_t>(eov_program_info(program, "eos_count")));
    eov_program_eos_ids(program, eos.data(), eos.size());
    if (eov_constraint_new("json_schema", schema.c_str(), tokenizer.c_str(), nullptr, eos.data(), eos.size(),
                           &constraint) != 0)
      return failed("the JSON schema");
    options.constraint = constraint;
  }
  std::vector<const char*> stop_pointers;
  for (const std::string& stop : stops) stop_pointers.push_back(stop.c_str());
  options.stop = stop_pointers.data();
  options.stop_count = stop_pointers.size();
  eov_conversation* conversation = nullptr;
  if (eov_conversation_new(program, &conversation) != 0) return failed("the conversation");
  eov_generation_result result{};
  result.struct_size = sizeof result;
  if (eov_conversation_generate(conversation, prompt.data(), prompt.size(), &options, &result) != 0) {
    if (!tokenizer.empty()) std::printf("\n");
    return failed("generating");
  }
  std::vector<int64_t> tokens(eov_conversation_tokens(conversation, nullptr, 0));
  eov_conversation_tokens(conversation, tokens.data(), tokens.size());
  std::printf("%sids:", tokenizer.empty() ? "" : "\n");
  for (size_t i = prompt.size(); i < tokens.size(); ++i) std::printf(" %lld", static_cast<long long>(tokens[i]));
  std::printf("\nstopped by %s after %zu tokens\n", result.stopped_by, result.generated);
  eov_conversation_free(conversation);
  eov_constraint_free(constraint);
  eov_vocabulary_free(vocabulary);
  eov_program_free(program);
  return 0;
}
