// Issue benchmark: time to open and index a GGUF (metadata + tensor directory, arrays left
// lazy), in process, and `ckhost inspect` as a whole process. Median of 20 each.
//
//   build/tests/bench/bench_gguf_open [--benchmark_format=json]
//
// Inputs come from ../shared/testdata (vocab-150k.gguf: 5.5 MB of tokenizer metadata;
// tiny-llama-q4_k_m.gguf; split/: a 3-shard set of it and the merged file, whose costs issue 14
// compares: a set may cost at most 1.2x its merged file); a missing file is skipped with a
// message.
#include <benchmark/benchmark.h>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <iostream>

#include "ck/context.hpp"
#include "gguf_reader.hpp"

extern char** environ;
namespace fs = std::filesystem;

namespace {

fs::path shared(const char* name) {
    return fs::path(CKHOST_SHARED_TESTDATA) / name;
}

void open_and_index(benchmark::State& state, fs::path file) {
    if (!fs::exists(file)) {
        state.SkipWithError(("missing " + file.string()).c_str());
        return;
    }
    for (auto _ : state) {
        ck::RecordingContext context;
        ckplugin::gguf::GgufReader reader(context);
        ck::ModelHeader header = reader.open(file);
        benchmark::DoNotOptimize(header.tensors.data());
    }
}

void inspect_process(benchmark::State& state, fs::path file) {
    if (!fs::exists(file)) {
        state.SkipWithError(("missing " + file.string()).c_str());
        return;
    }
    std::string binary = CKHOST_BINARY, command = "inspect", path = file.string();
    char* argv[] = {binary.data(), command.data(), path.data(), nullptr};
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    for (auto _ : state) {
        pid_t pid = 0;
        if (posix_spawn(&pid, argv[0], &actions, nullptr, argv, environ) != 0) {
            state.SkipWithError("cannot start ckhost");
            break;
        }
        int status = 0;
        waitpid(pid, &status, 0);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            state.SkipWithError("ckhost inspect failed");
            break;
        }
    }
    posix_spawn_file_actions_destroy(&actions);
}

}  // namespace

#define CK_MEDIAN_OF_20 \
    ->Unit(benchmark::kMillisecond)->Repetitions(20)->ReportAggregatesOnly(true)->UseRealTime()

BENCHMARK_CAPTURE(open_and_index, vocab_150k, shared("vocab-150k.gguf")) CK_MEDIAN_OF_20;
BENCHMARK_CAPTURE(open_and_index, tiny_llama_q4_k_m, shared("tiny-llama-q4_k_m.gguf"))
CK_MEDIAN_OF_20;
BENCHMARK_CAPTURE(open_and_index, split_set_3_shards,
                  shared("split/by-size/tiny-llama-q4_k_m-00001-of-00003.gguf"))
CK_MEDIAN_OF_20;
BENCHMARK_CAPTURE(open_and_index, split_merged, shared("split/tiny-llama-q4_k_m.merged.gguf"))
CK_MEDIAN_OF_20;
BENCHMARK_CAPTURE(inspect_process, vocab_150k, shared("vocab-150k.gguf")) CK_MEDIAN_OF_20;
BENCHMARK_CAPTURE(inspect_process, tiny_llama_q4_k_m, shared("tiny-llama-q4_k_m.gguf"))
CK_MEDIAN_OF_20;
BENCHMARK_CAPTURE(inspect_process, split_set_3_shards,
                  shared("split/by-size/tiny-llama-q4_k_m-00001-of-00003.gguf"))
CK_MEDIAN_OF_20;
BENCHMARK_CAPTURE(inspect_process, split_merged, shared("split/tiny-llama-q4_k_m.merged.gguf"))
CK_MEDIAN_OF_20;

BENCHMARK_MAIN();
