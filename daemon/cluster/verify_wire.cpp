#include "daemon/cluster/verify_wire.h"

#include <set>
#include <vector>

#include "base/sha256.h"

namespace tailforge {

namespace {

constexpr size_t kInlineLimit = 2048;

bool is_utf8(const std::string& text) {
  try {
    (void)nlohmann::json(text).dump();
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

class Encoder {
 public:
  explicit Encoder(Blobs& blobs) : blobs_(blobs) {}

  nlohmann::json text(const std::string& value, bool always_addressed = false) {
    if (!always_addressed && value.size() <= kInlineLimit && is_utf8(value)) return value;
    std::string address = sha256_hex(value);
    blobs_.emplace(address, value);
    return {{"sha256", address}};
  }

  nlohmann::json texts(const std::vector<std::string>& values) {
    nlohmann::json out = nlohmann::json::array();
    for (const std::string& value : values) out.push_back(text(value));
    return out;
  }

  // Binary artifacts (executables, cubins, code objects) travel without their bytes: the store
  // keeps only text artifacts and rebuilds binaries from them.
  nlohmann::json artifact(const Artifact& a) {
    return {{"kind", a.kind},       {"name", a.name}, {"content", a.binary ? nlohmann::json("") : text(a.content, true)}, {"command", text(a.command)},
            {"toolchain_version", a.toolchain_version}, {"binary", a.binary}};
  }

  nlohmann::json stage(const StageResult& s) {
    nlohmann::json out = {{"name", s.name},
                          {"status", s.status},
                          {"seconds", s.seconds},
                          {"reason", text(s.reason)},
                          {"diagnostics", text(s.diagnostics)},
                          {"signal", s.signal},
                          {"peak_rss_kb", s.peak_rss_kb},
                          {"cached", s.cached},
                          {"toolchain_version", s.toolchain_version},
                          {"command", text(s.command)},
                          {"child_seconds", s.child_seconds},
                          {"cpu_seconds", s.cpu_seconds}};
    if (s.category) out["category"] = *s.category;
    if (s.exit_code) out["exit_code"] = *s.exit_code;
    out["artifacts"] = nlohmann::json::array();
    for (const Artifact& a : s.artifacts) out["artifacts"].push_back(artifact(a));
    return out;
  }

  nlohmann::json stages(const std::vector<StageResult>& values) {
    nlohmann::json out = nlohmann::json::array();
    for (const StageResult& s : values) out.push_back(stage(s));
    return out;
  }

  static nlohmann::json timing(const std::optional<KernelTiming>& t) {
    if (!t) return nullptr;
    return {{"median_ms", t->median_ms}, {"spread", t->spread}, {"trials", t->trials}, {"attempts", t->attempts}};
  }

  // A kernel task's verification: the task, and each built-in candidate with the measurement
  // figures the store keeps (the harness's stages of a candidate are not stored).
  nlohmann::json kernel_task(const KernelTaskVerification& verification) {
    nlohmann::json out = {{"task", nullptr}, {"candidates", nlohmann::json::array()}};
    if (verification.task) {
      out["task"] = kernel_task_json(*verification.task);
      out["task"]["origin"] = verification.task->origin;
      out["task"]["reference_source"] = text(verification.task->reference_source);
    }
    for (const MeasuredKernel& measured : verification.candidates) {
      const KernelCandidate& c = measured.candidate;
      const KernelMeasurement& m = measured.measurement;
      nlohmann::json item = {{"candidate", {{"task", c.task}, {"strategy", c.strategy}, {"origin", c.origin},
                                            {"model", c.model}, {"reasoning", text(c.reasoning)}, {"source", text(c.source)}}},
                             {"status", m.status}, {"category", m.category}, {"detail", text(m.detail)}, {"report", nullptr}};
      if (m.report) {
        const HarnessReport& r = *m.report;
        item["report"] = {{"device", r.device}, {"sm_clock_khz", r.sm_clock_khz}, {"memory_clock_khz", r.memory_clock_khz},
                          {"verdict", r.verdict}, {"detail", text(r.detail)}, {"max_error", r.max_error},
                          {"reference", timing(r.reference)}, {"candidate", timing(r.candidate)},
                          {"calls_checked", r.calls_checked}, {"roofline_ms", r.roofline_ms},
                          {"bandwidth_gbs", r.bandwidth_gbs}, {"peak_gflops", r.peak_gflops}};
      }
      out["candidates"].push_back(std::move(item));
    }
    return out;
  }

  static nlohmann::json stats(const AssemblyStats& s) {
    return {{"instructions", s.instructions}, {"registers", s.registers}, {"scalar_registers", s.scalar_registers},
            {"predicates", s.predicates},     {"labels", s.labels},       {"unparsed", s.unparsed}};
  }

  nlohmann::json kernel_pairs(const KernelPairing& pairing) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const KernelPair& p : pairing.pairs) {
      nlohmann::json raw = nlohmann::json::object();
      for (const auto& [arch, sass] : p.sass_raw) raw[arch] = text(sass);
      pairs.push_back({{"kernel", p.kernel},
                       {"sass_arch", p.sass_arch},
                       {"sass", text(p.sass)},
                       {"sass_raw", raw},
                       {"rdna3_raw", text(p.rdna3_raw)},
                       {"rdna3", text(p.rdna3)},
                       {"sass_stats", stats(p.sass_stats)},
                       {"rdna3_stats", stats(p.rdna3_stats)},
                       {"checks", stages(p.checks)},
                       {"ok", p.ok}});
    }
    return {{"pairs", pairs}, {"unmatched", pairing.unmatched}, {"none_reason", pairing.none_reason}};
  }

  nlohmann::json launch(const StoredLaunch& l) {
    nlohmann::json globals = nlohmann::json::array();
    for (const StoredLaunch::Variable& v : l.globals) {
      globals.push_back({{"name", v.name}, {"input", text(v.input)}, {"output", text(v.output)}});
    }
    return {{"launch_txt", text(l.launch_txt)}, {"inputs", texts(l.inputs)},          {"outputs", texts(l.outputs)},
            {"globals", globals},               {"element_types", l.element_types}};
  }

  nlohmann::json ptx_pairs(const PtxPairing& pairing) {
    nlohmann::json pairs = nlohmann::json::array();
    for (const PtxPair& p : pairing.pairs) {
      pairs.push_back({{"kernel", p.kernel},
                       {"sm", p.sm},
                       {"ptx", text(p.ptx)},
                       {"rolled_ptx", text(p.rolled_ptx)},
                       {"unit", text(p.unit)},
                       {"cuda", text(p.cuda)},
                       {"chars", {p.ptx_chars, p.rolled_ptx_chars, p.unit_chars, p.cuda_chars}},
                       {"launch", launch(p.launch)},
                       {"checks", stages(p.checks)},
                       {"ok", p.ok}});
    }
    return {{"pairs", pairs},
            {"unmatched", pairing.unmatched},
            {"none_reason", pairing.none_reason},
            {"capture", stage(pairing.capture)}};
  }

 private:
  Blobs& blobs_;
};

// Reads what Encoder wrote; a missing field, a wrong type or an unknown address throws, and the
// caller turns that into an error naming what was missing.
class Decoder {
 public:
  explicit Decoder(const BlobLookup& lookup) : lookup_(lookup) {}

  std::string text(const nlohmann::json& value) {
    if (value.is_string()) return value.get<std::string>();
    std::string address = value.at("sha256").get<std::string>();
    std::optional<std::string> content = lookup_(address);
    if (!content) {
      missing_.insert(address);
      return {};
    }
    return *content;
  }

  std::vector<std::string> texts(const nlohmann::json& values) {
    std::vector<std::string> out;
    for (const nlohmann::json& value : values) out.push_back(text(value));
    return out;
  }

  StageResult stage(const nlohmann::json& j) {
    StageResult s;
    s.name = j.at("name").get<std::string>();
    s.status = j.at("status").get<std::string>();
    s.seconds = j.at("seconds").get<double>();
    s.reason = text(j.at("reason"));
    s.diagnostics = text(j.at("diagnostics"));
    if (j.contains("category")) s.category = j["category"].get<std::string>();
    if (j.contains("exit_code")) s.exit_code = j["exit_code"].get<int>();
    s.signal = j.at("signal").get<int>();
    s.peak_rss_kb = j.at("peak_rss_kb").get<int64_t>();
    s.cached = j.at("cached").get<bool>();
    s.toolchain_version = j.at("toolchain_version").get<std::string>();
    s.command = text(j.at("command"));
    s.child_seconds = j.at("child_seconds").get<double>();
    s.cpu_seconds = j.value("cpu_seconds", 0.0);  // absent from a worker older than the field
    for (const nlohmann::json& a : j.at("artifacts")) {
      Artifact artifact;
      artifact.kind = a.at("kind").get<std::string>();
      artifact.name = a.at("name").get<std::string>();
      artifact.content = text(a.at("content"));
      artifact.command = text(a.at("command"));
      artifact.toolchain_version = a.at("toolchain_version").get<std::string>();
      artifact.binary = a.at("binary").get<bool>();
      s.artifacts.push_back(std::move(artifact));
    }
    return s;
  }

  std::vector<StageResult> stages(const nlohmann::json& values) {
    std::vector<StageResult> out;
    for (const nlohmann::json& value : values) out.push_back(stage(value));
    return out;
  }
  static std::optional<KernelTiming> timing(const nlohmann::json& j) {
    if (j.is_null()) return std::nullopt;
    return KernelTiming{j.at("median_ms").get<double>(), j.at("spread").get<double>(), j.at("trials").get<int>(),
                        j.at("attempts").get<int>()};
  }

  KernelTaskVerification kernel_task(const nlohmann::json& j) {
    KernelTaskVerification out;
    if (!j.at("task").is_null()) {
      Result<KernelTask> task = kernel_task_from_json(j["task"], "the worker's kernel task");
      if (!task) throw nlohmann::json::other_error::create(501, task.message(), nullptr);
      task->origin = j["task"].at("origin").get<std::string>();
      task->reference_source = text(j["task"].at("reference_source"));
      out.task = std::move(*task);
    }
    for (const nlohmann::json& item : j.at("candidates")) {
      MeasuredKernel measured;
      const nlohmann::json& c = item.at("candidate");
      measured.candidate = {c.at("task").get<std::string>(), c.at("strategy").get<std::string>(),
                            c.at("origin").get<std::string>(), c.at("model").get<std::string>(), text(c.at("reasoning")),
                            text(c.at("source"))};
      KernelMeasurement& m = measured.measurement;
      m.status = item.at("status").get<std::string>();
      m.category = item.at("category").get<std::string>();
      m.detail = text(item.at("detail"));
      if (const nlohmann::json& r = item.at("report"); !r.is_null()) {
        HarnessReport report;
        report.device = r.at("device").get<std::string>();
        report.sm_clock_khz = r.at("sm_clock_khz").get<int64_t>();
        report.memory_clock_khz = r.at("memory_clock_khz").get<int64_t>();
        report.verdict = r.at("verdict").get<std::string>();
        report.detail = text(r.at("detail"));
        report.max_error = r.at("max_error").get<double>();
        report.reference = timing(r.at("reference"));
        report.candidate = timing(r.at("candidate"));
        report.calls_checked = r.at("calls_checked").get<int64_t>();
        report.roofline_ms = r.at("roofline_ms").get<double>();
        report.bandwidth_gbs = r.at("bandwidth_gbs").get<double>();
        report.peak_gflops = r.at("peak_gflops").get<double>();
        m.report = std::move(report);
      }
      out.candidates.push_back(std::move(measured));
    }
    return out;
  }


  static AssemblyStats stats(const nlohmann::json& j) {
    AssemblyStats s;
    s.instructions = j.at("instructions").get<int64_t>();
    s.registers = j.at("registers").get<int64_t>();
    s.scalar_registers = j.at("scalar_registers").get<int64_t>();
    s.predicates = j.at("predicates").get<int64_t>();
    s.labels = j.at("labels").get<int64_t>();
    s.unparsed = j.at("unparsed").get<std::vector<std::string>>();
    return s;
  }

  KernelPairing kernel_pairs(const nlohmann::json& j) {
    KernelPairing pairing;
    for (const nlohmann::json& p : j.at("pairs")) {
      KernelPair pair;
      pair.kernel = p.at("kernel").get<std::string>();
      pair.sass_arch = p.at("sass_arch").get<std::string>();
      pair.sass = text(p.at("sass"));
      for (const auto& [arch, sass] : p.at("sass_raw").items()) pair.sass_raw[arch] = text(sass);
      pair.rdna3_raw = text(p.at("rdna3_raw"));
      pair.rdna3 = text(p.at("rdna3"));
      pair.sass_stats = stats(p.at("sass_stats"));
      pair.rdna3_stats = stats(p.at("rdna3_stats"));
      pair.checks = stages(p.at("checks"));
      pair.ok = p.at("ok").get<bool>();
      pairing.pairs.push_back(std::move(pair));
    }
    pairing.unmatched = j.at("unmatched").get<std::vector<std::string>>();
    pairing.none_reason = j.at("none_reason").get<std::string>();
    return pairing;
  }

  StoredLaunch launch(const nlohmann::json& j) {
    StoredLaunch l;
    l.launch_txt = text(j.at("launch_txt"));
    l.inputs = texts(j.at("inputs"));
    l.outputs = texts(j.at("outputs"));
    for (const nlohmann::json& v : j.at("globals")) {
      l.globals.push_back({v.at("name").get<std::string>(), text(v.at("input")), text(v.at("output"))});
    }
    l.element_types = j.at("element_types").get<std::vector<std::string>>();
    return l;
  }

  PtxPairing ptx_pairs(const nlohmann::json& j) {
    PtxPairing pairing;
    for (const nlohmann::json& p : j.at("pairs")) {
      PtxPair pair;
      pair.kernel = p.at("kernel").get<std::string>();
      pair.sm = p.at("sm").get<std::string>();
      pair.ptx = text(p.at("ptx"));
      pair.rolled_ptx = text(p.at("rolled_ptx"));
      pair.unit = text(p.at("unit"));
      pair.cuda = text(p.at("cuda"));
      const nlohmann::json& chars = p.at("chars");
      pair.ptx_chars = chars.at(0).get<size_t>();
      pair.rolled_ptx_chars = chars.at(1).get<size_t>();
      pair.unit_chars = chars.at(2).get<size_t>();
      pair.cuda_chars = chars.at(3).get<size_t>();
      pair.launch = launch(p.at("launch"));
      pair.checks = stages(p.at("checks"));
      pair.ok = p.at("ok").get<bool>();
      pairing.pairs.push_back(std::move(pair));
    }
    pairing.unmatched = j.at("unmatched").get<std::vector<std::string>>();
    pairing.none_reason = j.at("none_reason").get<std::string>();
    pairing.capture = stage(j.at("capture"));
    return pairing;
  }

  // An error naming the addresses the lookup did not know, when there were any.
  Status missing_status() const {
    if (missing_.empty()) return {};
    std::string list;
    for (const std::string& address : missing_) list += (list.empty() ? "" : " ") + address;
    return make_error("unknown content addresses: " + list);
  }

 private:
  const BlobLookup& lookup_;
  std::set<std::string> missing_;
};

template <typename T, typename Read>
Result<T> decode(const char* what, const BlobLookup& lookup, Read read) {
  Decoder decoder(lookup);
  try {
    T value = read(decoder);
    if (Status s = decoder.missing_status(); !s) return make_error(std::string(what) + ": " + s.message());
    return value;
  } catch (const nlohmann::json::exception& e) {
    return make_error(std::string(what) + " is malformed: " + e.what());
  }
}

// Walks with a stack of its own, not a recursion per level: the JSON may come from a worker.
void collect_addresses(const nlohmann::json& root, std::set<std::string>& out) {
  std::vector<const nlohmann::json*> pending = {&root};
  while (!pending.empty()) {
    const nlohmann::json& json = *pending.back();
    pending.pop_back();
    if (json.is_object() && json.size() == 1 && json.contains("sha256") && json["sha256"].is_string()) {
      out.insert(json["sha256"].get<std::string>());
    } else if (json.is_structured()) {
      for (const nlohmann::json& value : json) pending.push_back(&value);
    }
  }
}

nlohmann::json optional_text(const std::optional<std::string>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

std::optional<std::string> optional_text(const nlohmann::json& value) {
  if (value.is_null()) return std::nullopt;
  return value.get<std::string>();
}

}  // namespace

nlohmann::json verify_input_to_json(const VerifyInput& input, Blobs& blobs) {
  Encoder encoder(blobs);
  const Sample& s = input.sample;
  nlohmann::json sample = {{"id", s.id},
                           {"track", s.track},
                           {"origin", s.origin},
                           {"language", s.language},
                           {"text", encoder.text(s.text)},
                           {"template_id", optional_text(s.template_id)},
                           {"persona", optional_text(s.persona)},
                           {"variables", optional_text(s.variables)},
                           {"seed", s.seed ? nlohmann::json(*s.seed) : nlohmann::json(nullptr)},
                           {"model", optional_text(s.model)},
                           {"features", s.features},
                           {"cycle_id", s.cycle_id ? nlohmann::json(*s.cycle_id) : nlohmann::json(nullptr)}};
  nlohmann::json out = {{"sample", sample}, {"bundle", nullptr}};
  if (input.bundle) {
    const Bundle& b = *input.bundle;
    nlohmann::json headers = nlohmann::json::array();
    // Headers are stored artifacts: always by address, so a worker fetches each once.
    for (const BundleFile& header : b.headers) headers.push_back({{"path", header.path}, {"content", encoder.text(header.content, true)}});
    out["bundle"] = {{"tree_name", b.tree_name},
                     {"commit", optional_text(b.commit)},
                     {"program_path", b.program_path},
                     {"program_text", encoder.text(b.program_text)},
                     {"include_dirs", b.include_dirs},
                     {"headers", headers}};
  }
  return out;
}

Result<VerifyInput> verify_input_from_json(const nlohmann::json& json, const BlobLookup& lookup) {
  return decode<VerifyInput>("verify input", lookup, [&](Decoder& decoder) {
    VerifyInput input;
    const nlohmann::json& s = json.at("sample");
    Sample& sample = input.sample;
    sample.id = s.at("id").get<std::string>();
    sample.track = s.at("track").get<std::string>();
    sample.origin = s.at("origin").get<std::string>();
    sample.language = s.at("language").get<std::string>();
    sample.text = decoder.text(s.at("text"));
    sample.template_id = optional_text(s.at("template_id"));
    sample.persona = optional_text(s.at("persona"));
    sample.variables = optional_text(s.at("variables"));
    if (!s.at("seed").is_null()) sample.seed = s["seed"].get<int64_t>();
    sample.model = optional_text(s.at("model"));
    sample.features = s.at("features").get<std::vector<std::string>>();
    if (!s.at("cycle_id").is_null()) sample.cycle_id = s["cycle_id"].get<int64_t>();
    const nlohmann::json& b = json.at("bundle");
    if (!b.is_null()) {
      Bundle bundle;
      bundle.tree_name = b.at("tree_name").get<std::string>();
      bundle.commit = optional_text(b.at("commit"));
      bundle.program_path = b.at("program_path").get<std::string>();
      bundle.program_text = decoder.text(b.at("program_text"));
      bundle.include_dirs = b.at("include_dirs").get<std::vector<std::string>>();
      for (const nlohmann::json& header : b.at("headers")) {
        bundle.headers.push_back({header.at("path").get<std::string>(), decoder.text(header.at("content"))});
      }
      input.bundle = std::move(bundle);
    }
    return input;
  });
}

nlohmann::json verify_output_to_json(const VerifyOutput& output, Blobs& blobs) {
  Encoder encoder(blobs);
  const ChainResult& chain = output.chain;
  nlohmann::json out = {{"chain", {{"file", chain.file}, {"track", chain.track}, {"ok", chain.ok}, {"stages", encoder.stages(chain.stages)}}},
                        {"verified", output.verified},
                        {"not_run", output.not_run},
                        {"kernel_pairs", nullptr},
                        {"ptx_pairs", nullptr},
                        {"kernel_task", nullptr}};
  if (output.kernel_task) out["kernel_task"] = encoder.kernel_task(*output.kernel_task);
  if (output.kernel_pairs) out["kernel_pairs"] = encoder.kernel_pairs(*output.kernel_pairs);
  if (output.ptx_pairs) out["ptx_pairs"] = encoder.ptx_pairs(*output.ptx_pairs);
  return out;
}

Result<VerifyOutput> verify_output_from_json(const nlohmann::json& json, const BlobLookup& lookup) {
  return decode<VerifyOutput>("verify output", lookup, [&](Decoder& decoder) {
    VerifyOutput output;
    const nlohmann::json& chain = json.at("chain");
    output.chain.file = chain.at("file").get<std::string>();
    output.chain.track = chain.at("track").get<std::string>();
    output.chain.ok = chain.at("ok").get<bool>();
    output.chain.stages = decoder.stages(chain.at("stages"));
    output.verified = json.at("verified").get<bool>();
    output.not_run = json.at("not_run").get<std::string>();
    if (!json.at("kernel_pairs").is_null()) output.kernel_pairs = decoder.kernel_pairs(json["kernel_pairs"]);
    if (!json.at("ptx_pairs").is_null()) output.ptx_pairs = decoder.ptx_pairs(json["ptx_pairs"]);
    if (json.contains("kernel_task") && !json["kernel_task"].is_null()) {
      output.kernel_task = decoder.kernel_task(json["kernel_task"]);
      output.kernel_task->stages = output.chain.stages;
      output.kernel_task->verified = output.verified;
    }
    return output;
  });
}

std::vector<std::string> blob_addresses(const nlohmann::json& json) {
  std::set<std::string> addresses;
  collect_addresses(json, addresses);
  return {addresses.begin(), addresses.end()};
}

}  // namespace tailforge
