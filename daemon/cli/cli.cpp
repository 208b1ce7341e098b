#include "daemon/cli/cli.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <functional>
#include <iostream>
#include <limits>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "base/number.h"
#include "daemon/cli/commands.h"
#include "daemon/cli/context.h"
#include "daemon/http/http_api.h"
#include "store/failures.h"
#include "synth/tracks.h"

namespace tailforge {

namespace {

// What an option's value must be. The parser checks it before the command runs (a bad value is a
// usage error, exit 2, naming the option and the form), and --help shows it.
struct ValueForm {
  enum class Kind { kText, kInteger, kNumber, kNumberPair, kChoice, kTime, kAddress };
  Kind kind = Kind::kText;
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  std::vector<std::string> choices;
};

ValueForm whole_number(double min, double max = std::numeric_limits<double>::infinity()) {
  return {ValueForm::Kind::kInteger, min, max, {}};
}
ValueForm number(double min, double max = std::numeric_limits<double>::infinity()) {
  return {ValueForm::Kind::kNumber, min, max, {}};
}
ValueForm number_pair(double min) { return {ValueForm::Kind::kNumberPair, min, std::numeric_limits<double>::infinity(), {}}; }
ValueForm one_of(std::vector<std::string> choices) {
  return {ValueForm::Kind::kChoice, 0, 0, std::move(choices)};
}
ValueForm time_bound() { return {ValueForm::Kind::kTime, 0, 0, {}}; }

// Which tracks an option's help lists, as the track table says.
bool verifies_files(const Track& track) { return track.verifies_files; }
bool exports_curation(const Track& track) { return track.exported == Track::Exported::curated_kernels; }
bool generates(const Track& track) { return track.generated != Track::Generated::none; }
bool generates_c(const Track& track) { return track.generated == Track::Generated::c_functions; }
bool generates_tasks(const Track& track) { return track.generated == Track::Generated::kernel_tasks; }
ValueForm address() { return {ValueForm::Kind::kAddress, 0, 0, {}}; }

struct FlagSpec {
  std::string name;
  bool takes_value;
  std::string help;
  ValueForm form = {};
};

std::string number_text(double value) { return fmt::format("{}", value); }

// "a whole number of at least 1", "one of alpaca, sharegpt, jsonl", ...: the form in words.
std::string form_words(const ValueForm& form) {
  auto range = [&form]() -> std::string {
    bool low = std::isfinite(form.min), high = std::isfinite(form.max);
    if (low && high) return " from " + number_text(form.min) + " to " + number_text(form.max);
    if (low) return " of at least " + number_text(form.min);
    if (high) return " of at most " + number_text(form.max);
    return "";
  };
  switch (form.kind) {
    case ValueForm::Kind::kInteger:
      return "a whole number" + range();
    case ValueForm::Kind::kNumber:
      return "a number" + range();
    case ValueForm::Kind::kNumberPair:
      return "two numbers A,B" + range() + " with A <= B";
    case ValueForm::Kind::kChoice: {
      std::string words = "one of";
      for (size_t i = 0; i < form.choices.size(); ++i) words += (i ? ", " : " ") + form.choices[i];
      return words;
    }
    case ValueForm::Kind::kTime:
      return "a duration before now (90s, 30m, 48h, 7d, 2w) or Unix milliseconds";
    case ValueForm::Kind::kAddress:
      return "HOST:PORT with a port from 0 (any free one) to 65535";
    case ValueForm::Kind::kText:
      break;
  }
  return "text";
}

// The placeholder --help shows after the flag.
std::string form_placeholder(const ValueForm& form) {
  switch (form.kind) {
    case ValueForm::Kind::kInteger:
      return "N";
    case ValueForm::Kind::kNumber:
      return "X";
    case ValueForm::Kind::kNumberPair:
      return "A,B";
    case ValueForm::Kind::kChoice:
      return "NAME";
    case ValueForm::Kind::kTime:
      return "TIME";
    case ValueForm::Kind::kAddress:
      return "HOST:PORT";
    case ValueForm::Kind::kText:
      break;
  }
  return "VALUE";
}

bool in_range(double value, const ValueForm& form) { return value >= form.min && value <= form.max; }

// Whether `value` has the flag's form.
bool has_form(const std::string& value, const ValueForm& form) {
  switch (form.kind) {
    case ValueForm::Kind::kInteger: {
      std::optional<int64_t> parsed = whole_number_of(value);
      return parsed && in_range(static_cast<double>(*parsed), form);
    }
    case ValueForm::Kind::kNumber: {
      std::optional<double> parsed = number_of(value);
      return parsed && in_range(*parsed, form);
    }
    case ValueForm::Kind::kNumberPair: {
      std::optional<std::pair<double, double>> parsed = number_pair_of(value);
      return parsed && in_range(parsed->first, form) && in_range(parsed->second, form) && parsed->first <= parsed->second;
    }
    case ValueForm::Kind::kChoice:
      return std::find(form.choices.begin(), form.choices.end(), value) != form.choices.end();
    case ValueForm::Kind::kTime:
      return parse_time_bound("time", value, now_ms()).ok();
    case ValueForm::Kind::kAddress:
      return parse_listen_address(value).ok();
    case ValueForm::Kind::kText:
      break;
  }
  return true;
}

struct CommandSpec {
  std::string name;
  std::string arguments;  // positional arguments, as shown in the usage
  std::string summary;
  std::vector<FlagSpec> flags;
  int max_positionals;
  std::function<int(const CommandLine&)> run;
  bool takes_words_after_dashes = false;  // `-- ARGV...`: the command's own argv (model add)
};

const FlagSpec kDb{"--db", true, "SQLite database file (default: store.path, ./tailforge.db)"};
const FlagSpec kConfig{"--config", true, "JSON configuration overriding config/default.json"};
const FlagSpec kLogLevel{"--log-level", true, "how much to log", one_of({"trace", "debug", "info", "warn", "error", "off"})};
const FlagSpec kJson{"--json", false, "print JSON instead of a table"};

int command_version(const CommandLine&) {
  std::cout << "tailforge " << TAILFORGE_VERSION << "\n";
  return 0;
}

const std::vector<CommandSpec>& commands();

void print_usage(std::ostream& out) {
  out << "usage: tailforge <command> [options]\n\ncommands:\n";
  auto head_of = [](const CommandSpec& command) {
    return command.name + (command.arguments.empty() ? "" : " " + command.arguments);
  };
  size_t width = 0;
  for (const CommandSpec& command : commands()) width = std::max(width, head_of(command).size() + 2);
  for (const CommandSpec& command : commands()) {
    std::string head = head_of(command);
    out << "  " << head << std::string(width - head.size(), ' ') << command.summary << "\n";
  }
  out << "\nRun 'tailforge <command> --help' for a command's options.\n";
}

void print_command_help(const CommandSpec& command, std::ostream& out) {
  out << "usage: tailforge " << command.name << (command.arguments.empty() ? "" : " " + command.arguments)
      << " [options]\n\n"
      << command.summary << "\n\noptions:\n";
  for (const FlagSpec& flag : command.flags) {
    std::string head = flag.name + (flag.takes_value ? " " + form_placeholder(flag.form) : "");
    std::string form = flag.form.kind == ValueForm::Kind::kText ? "" : " [" + form_words(flag.form) + "]";
    out << "  " << head << std::string(head.size() < 22 ? 22 - head.size() : 1, ' ') << flag.help << form << "\n";
  }
}

// Running the loop: here, as a server of a store, as a remote worker, as a Slurm array.
std::vector<CommandSpec> loop_commands() {
  return {
    {"daemon", "", "run the generate -> compile -> test -> categorize -> synthesize loop",
     {kDb, kConfig, kLogLevel, {"--cycles", true, "stop after N cycles (0: run until stopped)", whole_number(0)},
      {"--demo", false, "the whole loop in minutes: config/demo.json under --config (fewer samples per cycle), 2 cycles unless --cycles"},
      {"--listen", true, "HTTP API address, e.g. 127.0.0.1:8470 (default: http.listen)", address()},
      {"--no-progress", false, "no live status line"}},
     0, command_daemon},
    {"serve", "", "the dashboard (GET /) and the HTTP API on a database, without running the loop; read-only",
     {kDb, kConfig, kLogLevel, {"--listen", true, "address, e.g. 127.0.0.1:8470 (default: http.listen, else that)", address()}},
     0, command_serve},
    {"worker", "", "verify for a daemon on another host: lease its jobs over HTTP, run them here, post the results",
     {kLogLevel, {"--server", true, "the daemon's URL, e.g. http://gpu-head:8470 (https:// behind a TLS proxy)"},
      {"--token-file", true, "file holding the daemon's API token (its http.token_file)"},
      {"--ca-file", true, "https: CA certificates for the daemon's certificate (default: the system's)"},
      {"--name", true, "this worker's name in status (default: host:pid)"},
      {"--without", true, "comma-separated tools (nvcc, hipcc, llvm_mc, ...) or GPUs (nvidia-gpu, amd-gpu) not to use"},
      {"--jobs", true, "jobs run at once (default 1); their tools share daemon.compile_slots and GPU slots as in the daemon", whole_number(1, 1024)},
      {"--max-jobs", true, "exit after this many jobs (default: no limit)", whole_number(1)},
      {"--idle-exit", true, "exit after this many seconds without a job (default: never)", number(0)},
      {"--poll", true, "seconds between lease attempts while idle (default 1)", number(0.05)},
      {"--work-dir", true, "scratch, compile cache and input cache (default /tmp/tailforge-worker-NAME)"}},
     0, command_worker},
    {"slurm", "submit|script", "start workers as a Slurm job array (submit), or print the sbatch script (script)",
     {kLogLevel, {"--server", true, "the daemon's URL as the compute nodes reach it"},
      {"--token-file", true, "the API token file, readable on the compute nodes"},
      {"--partition", true, "the partition to run on"},
      {"--array", true, "how many workers (array tasks), default 1", whole_number(1, 100000)},
      {"--gpus-per-task", true, "GPUs per worker (default 1; 0 asks for none)", whole_number(0, 64)},
      {"--cpus-per-task", true, "CPUs per worker (default 4)", whole_number(1, 4096)},
      {"--time", true, "time limit per worker, as sbatch takes it (default 1-00:00:00)"},
      {"--without", true, "passed to each worker"},
      {"--jobs", true, "passed to each worker: jobs run at once", whole_number(1, 1024)},
      {"--output", true, "each worker's log, as sbatch takes it (default tailforge-worker-%A_%a.log)"},
      {"--binary", true, "tailforge on the compute nodes (default: this executable)"}},
     1, command_slurm},
  };
}

// Reading the store: what it holds, its failures, a sample's lineage, the tails.
std::vector<CommandSpec> store_reading_commands() {
  return {
    {"status", "", "what the store holds: samples, verified pairs, failures, jobs, cycles",
     {kDb, kConfig, kLogLevel, kJson, {"--watch", false, "redraw every 2 seconds"}}, 0, command_status},
    {"taxonomy", "", "failure categories as a tree with shares; trends, examples, comparisons",
     {kDb, kConfig, kLogLevel, kJson,
      {"--since", true, "only failures newer than this", time_bound()},
      {"--until", true, "only failures older than this", time_bound()},
      {"--stage", true, "stage name prefix, e.g. amd.assemble"},
      {"--track", true, track_names()},
      {"--model", true, "a model's failures on the evaluation set instead of the corpus's"},
      {"--origin", true, "where the samples came from", one_of({"template", "llm", "synthesized", "imported", "mutated"})},
      {"--domain", true, "sample domain"},
      {"--feature", true, "feature tag the sample has"},
      {"--trend", true, "counts per bucket and top category", one_of({"hour", "day"})},
      {"--examples", true, "N example samples per category", whole_number(0, 1000)},
      {"--compare-since", true, "compare with a second window starting here", time_bound()},
      {"--compare-until", true, "end of the second window", time_bound()},
      {"--compare-model", true, "with --model A: compare A with model B on the items both evaluated"}},
     0, command_taxonomy},
    {"lineage", "ID", "a sample's ancestors and descendants with relations, reasons and agents",
     {kDb, kConfig, kLogLevel, kJson}, 1, command_lineage},
    {"tails", "", "a cycle's ranked long-tail list with its numbers, and a tail's share over the cycles",
     {kDb, kConfig, kLogLevel, kJson, {"--cycle", true, "cycle id (default: the newest with a tail list)", whole_number(1)},
      {"--series", true, "feature/NAME, domain/NAME, category/NAME, api_family/NAME or api/NAME (default: the list's top entry)"},
      {"--track", true, "track of the share series and the feature-tag distribution (default: the synth policy's)"}},
     0, command_tails},
    {"coverage", "", "the CUDA API the verified corpus uses, per family and name, against the usage prior (the "
                     "imported trees' files, else the shipped prior)",
     {kDb, kConfig, kLogLevel, kJson, {"--track", true, "track (default: the synth policy's)"},
      {"--family", true, "that family's names instead of the family table"},
      {"--names", false, "every name with a target or a verified use, below the families"},
      {"--cycle", true, "only the samples of cycles up to N", whole_number(1)}},
     0, command_coverage},
  };
}

// Datasets: checking one file, exporting pairs, the kernelopt track's runs and curation.
std::vector<CommandSpec> dataset_commands() {
  return {
    {"verify", "FILE", "run the verifier chain on one .cu, .hip, .c or .s file; exit 1 when a stage failed",
     {kDb, kConfig, kLogLevel, kJson, {"--track", true, track_names(verifies_files) + " (default: from the extension)"},
      {"--target", true, "AMD target for a .s file (default gfx1100)"},
      {"--no-cache", false, "run every tool even when the compile cache has its result"}},
     1, command_verify},
    {"export", "", "write verified pairs as LLaMA-Factory files with a manifest and a held-out split",
     {kDb, kConfig, kLogLevel, {"--track", true, track_names() + " (default cuda2hip; " + track_names(exports_curation, " or ") +
                                      ": the newest curation's choices: task -> reasoning + kernel)"},
      {"--format", true, "the rows' format (default alpaca)", one_of({"alpaca", "sharegpt", "jsonl"})}, {"--out", true, "output folder"},
      {"--decontaminate", true, "a benchmark folder (.cu, .hip, .ptx, .s, .c ... files) or JSONL file: samples "
                                "that are near-duplicates of one of its texts, or share a run of "
                                "decontamination.run_tokens (50) tokens with one, are left out (listed in "
                                "manifest.json and README.md); repeatable"}},
     0, command_export},
    {"kernelopt", "run|report|tasks|train",
     "the kernelopt track (ConCuR): run stores the built-in tasks and candidates and measures each candidate "
     "against its task's reference on the GPU (correctness, cheats, speedup); report prints fast_0/1/2 per model; "
     "train is the built-in strategies' learner, the kernelopt retrain command: it learns which built-in strategy "
     "to answer each family with from a curated export and registers the next builtin-strategies-vN",
     {kDb, kConfig, kLogLevel, kJson, {"--tasks", true, "run: only these tasks (comma-separated names)"},
      {"--jobs", true, "run: candidates compiled at once (default: cores); timing runs one at a time", whole_number(1, 1024)},
      {"--remeasure", false, "run: measure candidates again even when measured here before"},
      {"--model", true, "run: also ask this kernelopt model (model add --track kernelopt --kind openai) for candidates"},
      {"--samples", true, "run: with --model, answers asked per task (default 3)", whole_number(1, 1000)},
      {"--snapshot", true, "train: a kernelopt export folder (default $TAILFORGE_SNAPSHOT_DIR)"},
      {"--name", true, "train: the version to register (default builtin-strategies-vN)"},
      {"--no-register", false, "train: only print what was learned"}},
     1, command_kernelopt},
    {"curate", "", "apply the ConCuR rules to the kernelopt measurements (shortest reasoning that is also fastest, "
                   "speedup over 5, single-operator balance), store the choices and print why, with task difficulty",
     {kDb, kConfig, kLogLevel, kJson, {"--track", true, "the ConCuR rules are the kernelopt track's", one_of({"kernelopt"})},
      {"--high-speedup", true, "every right kernel faster than this is chosen (default 5)", number(0)},
      {"--single-share", true, "share of single-operator samples to reach (default 0.5)", number(0, 1)},
      {"--difficulty", true, "EASY,HARD ARL cut-offs in words (default: terciles of the tasks' ARLs)", number_pair(0)}},
     0, command_curate},
  };
}

// Keeping a host and its store in shape: checks, backups, disk, the systemd unit.
std::vector<CommandSpec> operations_commands() {
  return {
    {"doctor", "", "check what the daemon needs here (toolchains of the track, sandbox, GPU inside it, disk, "
                   "database); exit 1 when it cannot do its track's work",
     {kDb, kConfig, kLogLevel, kJson}, 0, command_doctor},
    {"backup", "", "copy the database consistently while the daemon runs (SQLite online backup), checked before it "
                   "replaces --out",
     {kDb, kConfig, kLogLevel, kJson, {"--out", true, "the backup file"}}, 0, command_backup},
    {"gc", "", "what the disk rules would free: stored artifacts over store.artifact_cap_mb, the compile and LLM "
               "caches over their caps, snapshots past retrain.keep_snapshots, stale scratch folders (samples and "
               "verdicts never)",
     {kDb, kConfig, kLogLevel, kJson, {"--cap-mb", true, "cap to plan for (default store.artifact_cap_mb; 0: none)", whole_number(0)},
      {"--collect", false, "apply every rule now and report what was freed"}},
     0, command_gc},
    {"install-service", "", "write a systemd unit (Type=notify, watchdog, reload, draining stop) running the daemon "
                            "on --db, and print how to start it",
     {kDb, kConfig, kLogLevel, {"--out", true, "unit file (default /etc/systemd/system/tailforge.service; - for stdout)"},
      {"--user", true, "the account it runs as (User=); default: root, which the sandbox's uid switch needs"},
      {"--watchdog-sec", true, "seconds without a ping before systemd restarts it (default 120; 0: none)", whole_number(0, 86400)}},
     0, command_install_service},
  };
}

// Models under test: registering, evaluating, the offline baseline learner.
std::vector<CommandSpec> model_commands() {
  return {
    {"model", "add|check|retire|activate",
     "register a model version under test (after checking that it answers), check that one answers, or stop or "
     "resume evaluating one",
     {kDb, kConfig, kLogLevel, {"--name", true, "model name (a version: baseline-v2, cass-7b-r3)"},
      {"--kind", true, "openai (an endpoint), command (a program) or builtin (the rule translator); default openai"},
      {"--endpoint", true, "openai: the OpenAI-compatible base URL as servers print it: http(s)://HOST:PORT[/PREFIX][/v1]"},
      {"--model-id", true, "openai: the model name the endpoint serves (default: --name)"},
      {"--api-key-env", true, "openai: the environment variable holding its API key (default: llm.api_key_env, "
                              "OPENAI_API_KEY); the key itself is never stored"},
      {"--ca-file", true, "openai: the CA certificate of an https endpoint with a private CA"},
      {"--request-fields", true, "openai: a JSON object added to every request, e.g. "
                                 "'{\"stop\": [\"</s>\"], \"chat_template_kwargs\": {\"enable_thinking\": false}}'"},
      {"--track", true, "the track it translates (default cuda2hip)"},
      {"--parent", true, "the version it was trained from"},
      {"--retrain-event", true, "the retrain event that produced it ($TAILFORGE_RETRAIN_EVENT)", whole_number(1)},
      {"--timeout", true, "seconds it may take per item (command, openai)", whole_number(0)},
      {"--no-check", false, "add: register without asking the model first (check lists the endpoint's models, "
                            "sends one short request, and names the URL, status and message of a failure)"},
      {"--command", true, "command: the program and its arguments as one string, split as a shell would "
                          "(quotes, backslashes; nothing expanded), or the words after `--`; the source comes "
                          "on stdin, the translation goes to stdout"}},
     2, command_model, true},
    {"models", "", "model versions with accuracy on the evaluation set, on their retraining tails, and vs parent",
     {kDb, kConfig, kLogLevel, kJson, {"--track", true, "track (default cuda2hip)"}}, 0, command_models},
    {"rejudge", "", "judge the evaluation set's membership again under the exact near-duplicate rule: items with a "
                    "near-duplicate among trained samples are retired (their evaluations kept, no longer counted)",
     {kDb, kConfig, kLogLevel, kJson, {"--track", true, "track (default: the synth policy's)"}}, 0, command_rejudge},
    {"eval", "", "evaluate a model on the evaluation set items it has no result for",
     {kDb, kConfig, kLogLevel, kJson, {"--model", true, "model name"},
      {"--limit", true, "evaluate at most K items (default: all)", whole_number(1)},
      {"--no-progress", false, "no live progress line"}},
     0, command_eval},
    {"baseline", "train|translate", "the offline baseline learner: learn a CUDA->HIP dictionary from a snapshot, or apply one",
     {kDb, kConfig, kLogLevel, {"--snapshot", true, "train: snapshot folder (default $TAILFORGE_SNAPSHOT_DIR)"},
      {"--out", true, "train: dictionary file (default <snapshot>/baseline-dictionary.json)"},
      {"--min-support", true, "train: training rows a rule needs (default 3)", whole_number(1)},
      {"--name", true, "train: the version to register (default baseline-vN)"},
      {"--no-register", false, "train: only write the dictionary"},
      {"--dictionary", true, "translate: the dictionary file"}},
     2, command_baseline},
  };
}

// Code in and out: importing trees, toolchains, generated programs, translation, PTX.
std::vector<CommandSpec> code_commands() {
  return {
    {"import", "PATH", "one pending sample per CUDA program of a source tree, with the headers it includes "
                       "(or per ExeBench record of a .jsonl file: --format exebench)",
     {kDb, kConfig, kLogLevel, kJson, {"--format", true, "tree (default) or exebench: a .jsonl of ExeBench records "
                                                        "(fname, func_def, deps, IO pairs, exe wrapper) as c2x86 samples",
                                        one_of({"tree", "exebench"})},
      {"--name", true, "the tree's name (default: the folder's name)"},
      {"--track", true, "the track of the samples (default cuda2hip); kernelopt: PATH is a JSON file of tasks (name, operator_type, inputs, output, reference_source or reference_file)"},
      {"--filters", true, "import filters (default policies/import_filters.json)"},
      {"--no-progress", false, "no live progress line"}},
     1, command_import},
    {"toolchains", "", "compilers, assemblers and GPUs found here, and which stages can run",
     {kJson}, 0, command_toolchains},
    {"generate", "", "write built-in generated CUDA programs (or C functions with IO tests: --track " +
                         track_names(generates_c, " or ") + ") and a manifest.jsonl; or kernel tasks (--track " +
                         track_names(generates_tasks, " or ") + ") as a task file import reads",
     {kConfig, kLogLevel, {"--count", true, "number of programs (default 10)", whole_number(1, 1000000)},
      {"--seed", true, "seed (default 1)", whole_number(0)}, {"--out", true, "output folder (default ./generated)"},
      {"--track", true, track_names(generates, " or ") + " (default cuda2hip); " + track_names(generates_c, " or ") +
                            ": C functions, drivers, IO tests and gcc -O0 oracle assembly, each checked; " +
                            track_names(generates_tasks, " or ") + ": the daemon's kernel tasks, tasks.json and references"}},
     0, command_generate},
    {"translate", "FILE.cu | --tree SRC --out DST",
     "print the built-in CUDA->HIP translation of a file, or translate a whole tree (programs and their "
     "headers together) into DST; always writes the translation, names on stderr every construct it cannot "
     "translate and every CUDA identifier left (exit 1), and keeps without failing what sits in a branch "
     "the HIP compile leaves out",
     {kConfig, kLogLevel, kJson, {"--tree", true, "translate this source tree"},
      {"--out", true, "with --tree: the folder to write (it gets tailforge_translate.json, the report)"}},
     1, command_translate},
    {"hipify-table", "",
     "derive the translator's CUDA->HIP identifier table from the installed CUDA and HIP headers (name rules "
     "plus policies/hipify_name_exceptions.json), the names with no HIP counterpart, and the CUDA header guards "
     "each HIP header's guard stands for; write it; rerun after installing another CUDA or ROCm",
     {{"--cuda-include", true, "CUDA headers (default: $CUDA_HOME/include, else /usr/local/cuda/include)"},
      {"--hip-include", true, "a folder holding hip/ (and hiprand/, rocrand/, hipsparse/); repeatable (default /usr/include)"},
      {"--exceptions", true, "the reviewed exceptions (default policies/hipify_name_exceptions.json)"},
      {"--rules", true, "the translator's rules, whose header rules pair CUDA headers with HIP ones for the "
                        "guard table (default policies/hipify_rules.json)"},
      {"--out", true, "the table to write (default policies/hipify_names.json, which hipify_rules.json names)"}},
     0, command_hipify_table},
    {"api-prior", "",
     "count the CUDA API names of source trees and of the CUDA headers and write the shipped usage prior "
     "(counts only; scripts/api_prior.sh runs it)",
     {kConfig, kLogLevel, {"--tree", true, "a source tree; repeatable"},
      {"--headers", true, "the CUDA headers (default: $CUDA_HOME/include, else /usr/local/cuda/include)"},
      {"--no-headers", false, "count the trees only"},
      {"--out", true, "the prior to write (default policies/api_prior.json)"}},
     0, command_api_prior},
    {"reroll", "FILE.ptx",
     "fold PTX's unrolled loops into Rolled-PTX `for` loops (PtxDec), or expand Rolled-PTX back with --unroll",
     {{"--unroll", false, "read Rolled-PTX and print PTX"},
      {"--json", false, "print {chars_in, chars_out, loops, reduction, text}"}},
     1, command_reroll},
    {"version", "", "print the version", {}, 0, command_version},
  };
}

const std::vector<CommandSpec>& commands() {
  static const std::vector<CommandSpec> table = [] {
    std::vector<CommandSpec> all;
    for (auto group : {loop_commands, store_reading_commands, dataset_commands, operations_commands, model_commands,
                       code_commands}) {
      std::vector<CommandSpec> commands = group();
      all.insert(all.end(), std::make_move_iterator(commands.begin()), std::make_move_iterator(commands.end()));
    }
    return all;
  }();
  return table;
}

// Commands that read a store the daemon (or import, model add) made: run where there is none,
// they would create an empty one and answer zeros, so they stop instead.
bool reads_existing_store(const CommandLine& line) {
  static const std::set<std::string> readers = {"serve", "status", "taxonomy", "lineage", "tails", "coverage", "export",
                                                "curate", "backup", "gc", "models", "eval", "rejudge"};
  if (readers.count(line.command)) return true;
  std::string action = line.positionals.empty() ? "" : line.positionals.front();
  if (line.command == "model") return action == "retire" || action == "activate" || action == "check";
  if (line.command == "kernelopt") return action == "report";
  return false;
}

// Exit code 2 with "no database at PATH" when a reader's store does not exist; 0 otherwise
// (a bad --config is the command's own error to report).
int check_store_exists(const CommandLine& line) {
  if (!reads_existing_store(line)) return 0;
  Result<CommandContext> context = make_context(line);
  if (!context) return 0;
  std::error_code error;
  if (std::filesystem::exists(context->db_path, error)) return 0;
  std::cerr << "tailforge: no database at " << context->db_path << " (start the daemon or pass --db)\n";
  return 2;
}

int usage_error(const std::string& message) {
  std::cerr << "tailforge: " << message << "\n";
  print_usage(std::cerr);
  return 2;
}

}  // namespace

int run_cli(int argc, char** argv) {
  std::vector<std::string> words(argv + 1, argv + argc);
  if (words.empty()) return usage_error("no command given");
  if (words[0] == "--help" || words[0] == "-h" || words[0] == "help") {
    print_usage(std::cout);
    return 0;
  }
  if (words[0] == "--version") words[0] = "version";

  const CommandSpec* spec = nullptr;
  for (const CommandSpec& command : commands()) {
    if (command.name == words[0]) spec = &command;
  }
  if (!spec) return usage_error("unknown command '" + words[0] + "'");

  CommandLine line;
  line.command = spec->name;
  for (size_t i = 1; i < words.size(); ++i) {
    const std::string& word = words[i];
    if (word == "--help" || word == "-h") {
      print_command_help(*spec, std::cout);
      return 0;
    }
    if (word == "--") {  // what follows is taken as it is
      line.rest.assign(words.begin() + static_cast<long>(i) + 1, words.end());
      break;
    }
    if (word.rfind("--", 0) != 0) {
      line.positionals.push_back(word);
      continue;
    }
    std::string name = word;
    std::optional<std::string> inline_value;
    if (size_t eq = word.find('='); eq != std::string::npos) {
      name = word.substr(0, eq);
      inline_value = word.substr(eq + 1);
    }
    const FlagSpec* flag = nullptr;
    for (const FlagSpec& candidate : spec->flags) {
      if (candidate.name == name) flag = &candidate;
    }
    if (!flag) return usage_error("unknown option '" + name + "' for '" + spec->name + "'");
    if (flag->takes_value) {
      if (inline_value) {
        line.options[name] = *inline_value;
      } else if (i + 1 < words.size()) {
        line.options[name] = words[++i];
      } else {
        return usage_error("option '" + name + "' needs a value");
      }
      if (!has_form(line.options[name], flag->form)) {
        return usage_error("option '" + name + "' needs " + form_words(flag->form) + ", got '" + line.options[name] +
                           "'");
      }
      line.repeated[name].push_back(line.options[name]);
    } else {
      if (inline_value) return usage_error("option '" + name + "' takes no value");
      line.options[name] = "";
    }
  }
  if (!line.rest.empty() && !spec->takes_words_after_dashes) {
    return usage_error("unexpected '-- " + line.rest.front() + "' for '" + spec->name + "'");
  }
  if (static_cast<int>(line.positionals.size()) > spec->max_positionals) {
    return usage_error("unexpected argument '" + line.positionals[spec->max_positionals] + "' for '" + spec->name + "'");
  }
  if (int missing = check_store_exists(line); missing != 0) return missing;
  return spec->run(line);
}

}  // namespace tailforge
