#include "store/status.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

namespace tailforge {

namespace {

Status count_groups(Database& db, const char* sql, std::map<std::string, int64_t>& out) {
  Result<std::map<std::string, int64_t>> counts = counts_by_key(db.cached(sql));
  if (!counts) return counts.error();
  out = std::move(*counts);
  return {};
}

nlohmann::json cycle_to_json(const CycleRecord& c) {
  nlohmann::json summary = nlohmann::json::parse(c.summary, nullptr, false);
  return {{"id", c.id},
          {"state", c.state},
          {"started_ms", c.started_ms},
          {"finished_ms", c.finished_ms ? nlohmann::json(*c.finished_ms) : nlohmann::json(nullptr)},
          {"seed", c.seed},
          {"planned", c.planned},
          {"generated", c.generated},
          {"verified", c.verified},
          {"failed", c.failed},
          {"synthesized", c.synthesized},
          {"summary", summary.is_discarded() ? nlohmann::json::object() : summary}};
}

int64_t growth_bucket_width(int64_t span_ms) {
  for (int64_t width : {60000LL, 300000LL, 900000LL, 3600000LL, 21600000LL}) {
    if (span_ms / width < kGrowthBuckets) return width;
  }
  return 86400000LL;
}

Status query_growth(Database& db, StatusSummary& s) {
  Statement& span = db.cached("SELECT min(created_ms), max(created_ms), count(*) FROM sample WHERE status = 'verified'");
  int64_t first = 0, last = 0, verified = 0;
  if (span.step()) read_row(span, first, last, verified);
  if (Status r = span.finish(); !r) return r;
  if (verified > 0) {
    s.growth_bucket_ms = growth_bucket_width(last - first);
    Statement& buckets = db.cached(
        "SELECT track, origin, created_ms / ?1 * ?1 AS bucket, count(*) FROM sample WHERE status = 'verified'"
        " GROUP BY bucket, track, origin ORDER BY bucket, track, origin");
    Result<std::vector<GrowthBucket>> growth =
        collect_rows<GrowthBucket>(buckets.bind(1, s.growth_bucket_ms), [](const Statement& row, GrowthBucket& bucket) {
          read_row(row, bucket.track, bucket.origin, bucket.start_ms, bucket.verified);
        });
    if (!growth) return growth.error();
    s.growth = std::move(*growth);
    Result<int64_t> in_hour = single_int64(
        db.cached("SELECT count(*) FROM sample WHERE status = 'verified' AND created_ms > ?").bind(1, last - 3600000));
    if (!in_hour) return in_hour.error();
    double minutes = std::clamp((last - first) / 60000.0, 1.0, 60.0);
    s.verified_per_min = static_cast<double>(*in_hour) / minutes;
  }
  Statement& retrains = db.cached(
      "SELECT id, cycle_id, created_ms, status, reason, model_id FROM"
      " (SELECT * FROM retrain_event ORDER BY id DESC LIMIT ?) ORDER BY id");
  retrains.bind(1, static_cast<int64_t>(kRetrainsShown));
  Result<std::vector<RetrainMark>> marks =
      collect_rows<RetrainMark>(retrains, [](const Statement& row, RetrainMark& mark) {
        read_row(row, mark.id, mark.cycle_id, mark.created_ms, mark.status, mark.reason, mark.model_id);
      });
  if (!marks) return marks.error();
  s.retrains = std::move(*marks);
  return {};
}

Status query_stage_seconds(Database& db, StatusSummary& s) {
  Statement& stages = db.cached(
      "SELECT stage, sum(seconds), sum(coalesce(cpu_seconds, 0)), count(*), sum(cached) FROM verification"
      " GROUP BY stage ORDER BY 2 DESC, stage");
  Result<std::vector<StageSeconds>> rows =
      collect_rows<StageSeconds>(stages, [](const Statement& row, StageSeconds& stage) {
        read_row(row, stage.stage, stage.seconds, stage.cpu_seconds, stage.runs, stage.cached);
      });
  if (!rows) return rows.error();
  for (const StageSeconds& stage : *rows) {
    s.stage_seconds += stage.seconds;
    s.stage_cpu_seconds += stage.cpu_seconds;
  }
  s.stage_seconds_by_stage = std::move(*rows);
  return {};
}

}  // namespace

Result<StatusSummary> query_status(Database& db) {
  StatusSummary s;
  if (Status r = count_groups(db, "SELECT origin, count(*) FROM sample GROUP BY origin", s.samples_by_origin); !r)
    return r.error();
  if (Status r = count_groups(db, "SELECT track, count(*) FROM sample GROUP BY track", s.samples_by_track); !r)
    return r.error();
  if (Status r = count_groups(db, "SELECT status, count(*) FROM sample GROUP BY status", s.samples_by_status); !r)
    return r.error();
  if (Status r = count_groups(db, "SELECT top_category, count(*) FROM failure GROUP BY top_category",
                              s.failures_by_category);
      !r)
    return r.error();
  if (Status r = count_groups(db, "SELECT state, count(*) FROM job GROUP BY state", s.jobs_by_state); !r)
    return r.error();
  Result<std::vector<Job>> dead = JobQueue(db).list("dead", kDeadJobsShown);
  if (!dead) return dead.error();
  s.dead_jobs = std::move(*dead);
  s.now_ms = now_ms();
  Result<std::vector<WorkerRecord>> workers = list_workers(db);
  if (!workers) return workers.error();
  s.workers = std::move(*workers);
  Result<std::vector<WaitingJobs>> waiting = waiting_jobs(db, kWorkerLiveMs);
  if (!waiting) return waiting.error();
  s.waiting = std::move(*waiting);
  Result<std::vector<ModelPause>> paused = list_model_pauses(db);
  if (!paused) return paused.error();
  s.paused_models = std::move(*paused);
  for (const auto& [origin, n] : s.samples_by_origin) s.samples += n;
  s.verified = s.samples_by_status.count("verified") ? s.samples_by_status["verified"] : 0;
  Result<int64_t> cycles = single_int64(db.cached("SELECT count(*) FROM cycle"));
  if (!cycles) return cycles.error();
  s.cycles = *cycles;
  Result<int64_t> retrains = single_int64(db.cached("SELECT count(*) FROM retrain_event"));
  if (!retrains) return retrains.error();
  s.retrain_events = *retrains;
  Result<std::optional<CycleRecord>> last = last_cycle(db);
  if (!last) return last.error();
  s.last_cycle = *last;
  if (Status r = query_growth(db, s); !r) return r.error();
  if (Status r = query_stage_seconds(db, s); !r) return r.error();
  return s;
}

nlohmann::json status_to_json(const StatusSummary& s) {
  nlohmann::json j;
  j["samples"] = s.samples;
  j["samples_by_origin"] = s.samples_by_origin;
  j["samples_by_track"] = s.samples_by_track;
  j["samples_by_status"] = s.samples_by_status;
  j["verified"] = s.verified;
  j["failures_by_category"] = s.failures_by_category;
  j["jobs_by_state"] = s.jobs_by_state;
  j["dead_jobs"] = nlohmann::json::array();
  for (const Job& job : s.dead_jobs) {
    nlohmann::json payload = nlohmann::json::parse(job.payload, nullptr, false);
    j["dead_jobs"].push_back({{"id", job.id},
                              {"kind", job.kind},
                              {"payload", payload.is_discarded() ? nlohmann::json(job.payload) : payload},
                              {"attempts", job.attempts},
                              {"max_attempts", job.max_attempts},
                              {"last_error", job.last_error ? nlohmann::json(*job.last_error) : nlohmann::json(nullptr)}});
  }
  j["cycles"] = s.cycles;
  j["retrain_events"] = s.retrain_events;
  j["last_cycle"] = s.last_cycle ? cycle_to_json(*s.last_cycle) : nlohmann::json(nullptr);
  j["verified_per_min"] = s.verified_per_min;
  auto per_verified = [&](double seconds) {
    return s.verified > 0 ? nlohmann::json(seconds / static_cast<double>(s.verified)) : nlohmann::json(nullptr);
  };
  j["stage_seconds"] = {{"total", s.stage_seconds}, {"per_verified_sample", per_verified(s.stage_seconds)},
                        {"cpu_total", s.stage_cpu_seconds}, {"stages", nlohmann::json::array()}};
  for (const StageSeconds& stage : s.stage_seconds_by_stage) {
    j["stage_seconds"]["stages"].push_back({{"stage", stage.stage}, {"seconds", stage.seconds},
                                            {"cpu_seconds", stage.cpu_seconds}, {"runs", stage.runs},
                                            {"cached", stage.cached}, {"per_verified_sample", per_verified(stage.seconds)}});
  }
  j["workers"] = nlohmann::json::array();
  for (const WorkerRecord& worker : s.workers) j["workers"].push_back(worker_to_json(worker, s.now_ms, kWorkerLiveMs));
  j["waiting"] = nlohmann::json::array();
  for (const WaitingJobs& w : s.waiting) j["waiting"].push_back({{"kind", w.kind}, {"count", w.count}, {"reason", w.reason}});
  j["paused_models"] = nlohmann::json::array();
  for (const ModelPause& p : s.paused_models) {
    j["paused_models"].push_back({{"model", p.model_name}, {"track", p.track}, {"category", p.category},
                                  {"message", p.message}, {"since_ms", p.since_ms}, {"resume_ms", p.resume_ms},
                                  {"faults", p.faults}});
  }
  j["growth"] = {{"bucket_ms", s.growth_bucket_ms}, {"buckets", nlohmann::json::array()}};
  for (const GrowthBucket& b : s.growth) {
    j["growth"]["buckets"].push_back(
        {{"start_ms", b.start_ms}, {"track", b.track}, {"origin", b.origin}, {"verified", b.verified}});
  }
  j["retrains"] = nlohmann::json::array();
  for (const RetrainMark& m : s.retrains) {
    j["retrains"].push_back({{"id", m.id},
                             {"cycle_id", m.cycle_id ? nlohmann::json(*m.cycle_id) : nlohmann::json(nullptr)},
                             {"created_ms", m.created_ms},
                             {"status", m.status},
                             {"reason", m.reason},
                             {"model_id", m.model_id ? nlohmann::json(*m.model_id) : nlohmann::json(nullptr)}});
  }
  return j;
}

namespace {

void print_counts(std::ostringstream& out, const char* title, const std::map<std::string, int64_t>& counts) {
  out << title << ":";
  if (counts.empty()) out << " none";
  out << "\n";
  for (const auto& [name, n] : counts) out << "  " << name << std::string(name.size() < 28 ? 28 - name.size() : 1, ' ') << n << "\n";
}

std::string fixed_seconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f s", seconds);
  return text;
}

}  // namespace

std::string format_status_table(const StatusSummary& s) {
  std::ostringstream out;
  out << "samples: " << s.samples << " (verified " << s.verified << ")\n";
  print_counts(out, "by track", s.samples_by_track);
  print_counts(out, "by origin", s.samples_by_origin);
  print_counts(out, "by status", s.samples_by_status);
  print_counts(out, "failures by category", s.failures_by_category);
  print_counts(out, "jobs by state", s.jobs_by_state);
  if (!s.dead_jobs.empty()) {
    int64_t dead = s.jobs_by_state.count("dead") ? s.jobs_by_state.at("dead") : 0;
    out << "dead jobs" << (dead > static_cast<int64_t>(s.dead_jobs.size()) ? " (newest " + std::to_string(s.dead_jobs.size()) + " of " + std::to_string(dead) + ")" : "")
        << ":\n";
    for (const Job& job : s.dead_jobs) {
      std::string error = job.last_error.value_or("no error recorded (its leases expired)");
      error = error.substr(0, error.find('\n'));
      if (error.size() > 160) error = error.substr(0, 157) + "...";
      out << "  #" << job.id << " " << job.kind << " after " << job.attempts << " attempt(s): " << error << "\n";
    }
  }
  for (const WaitingJobs& w : s.waiting) {
    out << "waiting: " << w.count << " " << w.kind << " jobs: " << w.reason << "\n";
  }
  for (const ModelPause& p : s.paused_models) {
    int64_t wait_s = std::max<int64_t>(0, (p.resume_ms - s.now_ms + 999) / 1000);
    out << "evaluation paused: " << p.model_name << " (" << p.track << "): " << p.category << " x" << p.faults << ", next try in "
        << wait_s << " s: " << p.message.substr(0, 240) << "\n";
  }
  if (!s.workers.empty()) out << "workers:\n";
  for (const WorkerRecord& worker : s.workers) {
    bool live = worker_is_live(worker, s.now_ms, kWorkerLiveMs);
    std::string stages;
    if (worker.capabilities.contains("stages")) {
      for (const nlohmann::json& stage : worker.capabilities["stages"])
        if (stage.is_string()) stages += (stages.empty() ? "" : " ") + stage.get<std::string>();
    }
    std::string gpus;
    if (worker.capabilities.contains("gpus")) {
      for (const nlohmann::json& gpu : worker.capabilities["gpus"])
        if (gpu.is_object() && gpu.contains("name") && gpu["name"].is_string()) gpus += (gpus.empty() ? "" : ", ") + gpu["name"].get<std::string>();
    }
    out << "  " << worker.name << " on " << worker.host << ": ";
    if (worker.name == kLocalWorkerName) {  // the daemon's own threads: their jobs are the queue's
      out << (live ? "the daemon's own workers" : "the daemon is not running");
    } else {
      out << (live ? (worker.job_id ? "job " + std::to_string(*worker.job_id) : std::string("idle"))
                   : "gone (seen " + std::to_string((s.now_ms - worker.last_seen_ms) / 1000) + " s ago)")
          << "; " << worker.jobs_done << " done, " << worker.jobs_failed << " failed";
    }
    out << "; runs " << (stages.empty() ? "nothing" : stages) << (gpus.empty() ? "" : "; GPUs " + gpus) << "\n";
  }
  out << "cycles: " << s.cycles << ", retrain events: " << s.retrain_events << "\n";
  if (s.verified > 0) {
    char rate[64];
    std::snprintf(rate, sizeof rate, "%.1f", s.verified_per_min);
    out << "verified/min: " << rate << " (samples created in the last hour of the store's activity)\n";
    out << "stage seconds per verified sample: " << fixed_seconds(s.stage_seconds / static_cast<double>(s.verified));
    std::string most;
    for (size_t i = 0; i < s.stage_seconds_by_stage.size() && i < 4; ++i) {
      const StageSeconds& stage = s.stage_seconds_by_stage[i];
      most += (most.empty() ? "" : ", ") + stage.stage + " " + fixed_seconds(stage.seconds / static_cast<double>(s.verified));
    }
    out << (most.empty() ? "" : " (" + most + (s.stage_seconds_by_stage.size() > 4 ? ", ..." : "") + ")") << "\n";
  }
  if (s.last_cycle) {
    const CycleRecord& c = *s.last_cycle;
    out << "last cycle: #" << c.id << " " << c.state << ", generated " << c.generated << ", verified " << c.verified
        << ", failed " << c.failed << ", synthesized " << c.synthesized << "\n";
  }
  return out.str();
}

}  // namespace tailforge
