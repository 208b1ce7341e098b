#include "daemon/http/metrics.h"

#include <sqlite3.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "store/metrics.h"
#include "store/status.h"
#include "synth/api_coverage.h"

namespace tailforge {

namespace {

std::string escape_label(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

void header(std::ostringstream& out, const char* name, const char* type, const char* help) {
  out << "# HELP " << name << " " << help << "\n# TYPE " << name << " " << type << "\n";
}

// Resident set size of this process from /proc/self/statm; 0 where there is none.
int64_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) return 0;
  return resident_pages * static_cast<int64_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace

Result<std::string> prometheus_metrics(Database& db, const ApiPolicy* api, const std::string& track) {
  Result<StoreMetrics> metrics = query_store_metrics(db);
  if (!metrics) return metrics.error();
  Result<StatusSummary> status = query_status(db);
  if (!status) return status.error();
  std::ostringstream out;

  header(out, "tailforge_samples", "gauge", "Samples stored, by track and origin.");
  for (const auto& [key, n] : metrics->samples_by_track_origin) {
    out << "tailforge_samples{track=\"" << escape_label(key.first) << "\",origin=\"" << escape_label(key.second)
        << "\"} " << n << "\n";
  }
  header(out, "tailforge_samples_by_status", "gauge", "Samples stored, by verification status.");
  for (const auto& [name, n] : metrics->samples_by_status) {
    out << "tailforge_samples_by_status{status=\"" << escape_label(name) << "\"} " << n << "\n";
  }
  header(out, "tailforge_verifications", "gauge", "Stage results stored, by stage and status.");
  for (const auto& [key, n] : metrics->verifications_by_stage_status) {
    out << "tailforge_verifications{stage=\"" << escape_label(key.first) << "\",status=\""
        << escape_label(key.second) << "\"} " << n << "\n";
  }
  header(out, "tailforge_stage_duration_seconds", "histogram", "Wall time of verifier stages that ran.");
  const std::vector<double>& bounds = stage_duration_buckets();
  for (const StageHistogram& histogram : metrics->stage_durations) {
    std::string stage = escape_label(histogram.stage);
    for (size_t i = 0; i < bounds.size(); ++i) {
      out << "tailforge_stage_duration_seconds_bucket{stage=\"" << stage << "\",le=\"" << bounds[i] << "\"} "
          << histogram.cumulative_counts[i] << "\n";
    }
    out << "tailforge_stage_duration_seconds_bucket{stage=\"" << stage << "\",le=\"+Inf\"} " << histogram.count
        << "\n";
    out << "tailforge_stage_duration_seconds_sum{stage=\"" << stage << "\"} " << histogram.sum_seconds << "\n";
    out << "tailforge_stage_duration_seconds_count{stage=\"" << stage << "\"} " << histogram.count << "\n";
  }
  header(out, "tailforge_jobs", "gauge", "Jobs in the durable queue, by state.");
  for (const auto& [state, n] : status->jobs_by_state) {
    out << "tailforge_jobs{state=\"" << escape_label(state) << "\"} " << n << "\n";
  }
  int64_t depth = 0;
  for (const char* state : {"pending", "leased"}) {
    auto it = status->jobs_by_state.find(state);
    if (it != status->jobs_by_state.end()) depth += it->second;
  }
  header(out, "tailforge_queue_depth", "gauge", "Jobs pending or leased.");
  out << "tailforge_queue_depth " << depth << "\n";
  header(out, "tailforge_llm_tokens_total", "counter", "LLM tokens spent (cache hits excluded), by kind.");
  for (const auto& [kind, n] : metrics->llm_tokens) {
    out << "tailforge_llm_tokens_total{kind=\"" << kind << "\"} " << n << "\n";
  }
  header(out, "tailforge_llm_requests_total", "counter", "LLM requests sent (cache hits excluded).");
  out << "tailforge_llm_requests_total " << metrics->llm_requests << "\n";
  header(out, "tailforge_failures", "gauge", "Categorized failures, by top-level category.");
  for (const auto& [category, n] : status->failures_by_category) {
    out << "tailforge_failures{category=\"" << escape_label(category) << "\"} " << n << "\n";
  }
  header(out, "tailforge_model_evaluation_paused", "gauge",
         "1 for each model whose evaluation waits for its endpoint, labelled with the fault.");
  for (const ModelPause& p : status->paused_models) {
    out << "tailforge_model_evaluation_paused{model=\"" << escape_label(p.model_name) << "\",track=\""
        << escape_label(p.track) << "\",category=\"" << escape_label(p.category) << "\"} 1\n";
  }
  header(out, "tailforge_cycles", "gauge", "Cycles recorded.");
  out << "tailforge_cycles " << status->cycles << "\n";
  header(out, "tailforge_retrain_events", "gauge", "Retrain triggers recorded.");
  out << "tailforge_retrain_events " << status->retrain_events << "\n";
  header(out, "process_resident_memory_bytes", "gauge", "Resident memory of the daemon.");
  out << "process_resident_memory_bytes " << resident_bytes() << "\n";
  header(out, "tailforge_sqlite_heap_bytes", "gauge", "Memory SQLite holds (page caches, statements), all connections.");
  out << "tailforge_sqlite_heap_bytes " << sqlite3_memory_used() << "\n";
  if (api) {
    Result<ApiCoverage> coverage = measure_api_coverage(db, *api, track);
    if (!coverage) return coverage.error();
    std::string t = escape_label(track);
    header(out, "tailforge_api_shared_names", "gauge",
           "CUDA API names the usage prior's trees use in two or more files, and of them those a verified sample uses.");
    out << "tailforge_api_shared_names{track=\"" << t << "\",covered=\"false\"} "
        << coverage->shared_names - coverage->covered_shared << "\n";
    out << "tailforge_api_shared_names{track=\"" << t << "\",covered=\"true\"} " << coverage->covered_shared << "\n";
    header(out, "tailforge_api_use_coverage_ratio", "gauge",
           "Share of the usage prior's CUDA API name uses whose name a verified sample uses.");
    out << "tailforge_api_use_coverage_ratio{track=\"" << t << "\"} "
        << coverage_ratio(coverage->covered_uses, coverage->prior_uses) << "\n";
    header(out, "tailforge_api_family_verified", "gauge", "Verified samples using a CUDA API family.");
    for (const FamilyCoverage& f : coverage->families) {
      out << "tailforge_api_family_verified{track=\"" << t << "\",family=\"" << escape_label(f.name) << "\"} "
          << f.verified << "\n";
    }
    header(out, "tailforge_api_family_share", "gauge", "Share of the verified corpus using a CUDA API family.");
    for (const FamilyCoverage& f : coverage->families) {
      out << "tailforge_api_family_share{track=\"" << t << "\",family=\"" << escape_label(f.name) << "\"} " << f.share
          << "\n";
    }
    header(out, "tailforge_api_family_target_share", "gauge",
           "The share of the verified corpus the usage prior asks of a CUDA API family (at least the floor).");
    for (const FamilyCoverage& f : coverage->families) {
      out << "tailforge_api_family_target_share{track=\"" << t << "\",family=\"" << escape_label(f.name) << "\"} "
          << f.target_share << "\n";
    }
  }
  return out.str();
}

}  // namespace tailforge
