// A kernelopt task's verification sent between a remote worker and the daemon: the task and each
// built-in candidate's measurement arrive with every figure the store keeps, long texts by address.
#include <doctest/doctest.h>

#include "agents/kernelopt/builtin_tasks.h"
#include "daemon/cluster/verify_wire.h"

namespace tailforge {

TEST_CASE("a kernel task's verification survives the wire: task, candidates and their timings") {
  KernelTask task = builtin_kernel_tasks().front();
  task.flops = 42;
  VerifyOutput output;
  output.chain.file = "sample";
  output.chain.track = "kernelopt";
  output.chain.stages = {skipped_stage("kernelopt.reference.run", "no GPU")};
  output.verified = true;
  KernelTaskVerification verification;
  verification.task = task;
  KernelMeasurement timed;
  timed.status = "ok";
  HarnessReport report;
  report.verdict = "ok";
  report.device = "NVIDIA H200";
  report.reference = KernelTiming{1.5, 0.02, 150, 1};
  report.candidate = KernelTiming{0.5, 0.03, 150, 2};
  report.roofline_ms = 0.2;
  report.calls_checked = 300;
  timed.report = report;
  KernelMeasurement skipped;
  skipped.detail = "no NVIDIA GPU: timing skipped";
  std::vector<KernelCandidate> candidates = builtin_candidates(task);
  verification.candidates = {{candidates[0], timed}, {candidates[1], skipped}};
  output.kernel_task = verification;

  Blobs blobs;
  nlohmann::json sent = verify_output_to_json(output, blobs);
  Result<VerifyOutput> back = verify_output_from_json(nlohmann::json::parse(sent.dump()), [&](const std::string& address) {
    auto found = blobs.find(address);
    return found == blobs.end() ? std::nullopt : std::optional<std::string>(found->second);
  });
  REQUIRE_MESSAGE(back.ok(), back.message());
  REQUIRE(back->kernel_task.has_value());
  const KernelTaskVerification& got = *back->kernel_task;
  REQUIRE(got.task.has_value());
  CHECK(got.task->name == task.name);
  CHECK(got.task->reference_source == task.reference_source);
  CHECK(got.task->flops == 42);
  CHECK(got.task->recipe == task.recipe);
  REQUIRE(got.candidates.size() == 2);
  CHECK(got.candidates[0].candidate.source == candidates[0].source);
  CHECK(got.candidates[0].candidate.reasoning == candidates[0].reasoning);
  CHECK(got.candidates[0].measurement.speedup() == doctest::Approx(3.0));
  CHECK(got.candidates[0].measurement.report->candidate->attempts == 2);
  CHECK(got.candidates[0].measurement.report->roofline_ms == doctest::Approx(0.2));
  CHECK(got.candidates[1].measurement.status == "skipped");
  CHECK(got.candidates[1].measurement.detail == "no NVIDIA GPU: timing skipped");
  CHECK_FALSE(got.candidates[1].measurement.report.has_value());
  CHECK(got.verified);

  // A task the worker sent broken is an error, not a crash.
  sent["kernel_task"]["task"]["name"] = 7;
  CHECK_FALSE(verify_output_from_json(sent, [&](const std::string&) { return std::optional<std::string>(); }).ok());
}

}  // namespace tailforge
