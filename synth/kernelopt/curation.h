// ConCuR-style curation for the kernelopt track: from every measured candidate kernel, choose the
// samples worth training on (concise reasoning that is also fastest, very fast kernels, and enough
// single-operator tasks) and bucket tasks by difficulty from their average reasoning length (ARL).
// Pure: no database, no I/O; callers read the candidates from the store and write the choices back.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tailforge {

struct MeasuredCandidate {
  int64_t id = 0;                // the store's candidate id (unique)
  std::string task;              // task name
  std::string operator_type;     // "single", "reduction", "fusion", "matmul", "stencil"
  int64_t reasoning_length = 0;  // words of reasoning
  bool correct = false;          // matched the reference (and no cheat)
  bool timed = false;            // a speedup was measured (false where no GPU)
  double speedup = 0;            // reference time / candidate time; meaningful only if correct && timed
};

struct CurationOptions {
  double high_speedup = 5.0;  // rule (b): a correct timed candidate strictly faster than this is chosen
  double single_share = 0.5;  // rule (c): target share of "single" samples among the chosen
  // In words of ARL: easy below `first`, hard above `second`, medium otherwise. When absent, the
  // terciles of the tasks' ARLs are used (see TaskDifficulty).
  std::optional<std::pair<double, double>> difficulty_thresholds;
};

// Rule names, as stored in CurationChoice::rule.
inline constexpr const char* kRuleShortestIsFastest = "shortest_is_fastest";
inline constexpr const char* kRuleHighSpeedup = "high_speedup";
inline constexpr const char* kRuleSingleOperatorBalance = "single_operator_balance";

struct CurationChoice {
  int64_t candidate_id = 0;
  std::string task;
  std::string rule;  // the first rule that chose it
  std::string why;   // one line with the numbers behind the choice
};

// A task that rule (a) did not choose from, and why (it may still be chosen by (b) or (c)).
struct CurationSkip {
  std::string task;
  std::string reason;
};

// ARL is the mean reasoning length over ALL the task's candidates, correct or not (ConCuR eq. 3
// for one task). Tercile default: sort the tasks' ARLs into a[0..n-1], lower cut a[n/3], upper cut
// a[2n/3] (integer division). A task is easy when ARL < lower cut, hard when ARL >= upper cut and
// ARL > lower cut, medium otherwise (so a lone task, or tasks of equal ARL, are medium).
struct TaskDifficulty {
  std::string task;
  std::string operator_type;  // that of the task's smallest-id candidate
  double arl = 0;
  std::string bucket;  // "easy", "medium", "hard"
  int candidates = 0;
  int correct = 0;
};

struct CurationResult {
  std::vector<CurationChoice> chosen;      // (a) by task name, then (b) by task name then id, then (c) as added
  std::vector<CurationSkip> skipped;       // by task name
  std::vector<TaskDifficulty> difficulty;  // by task name
  std::map<std::string, int> chosen_by_operator_type;  // counts over `chosen`
  std::string note;                                    // one-line summary, or why nothing was chosen
};

// Chooses the curated set. Only candidates that are correct and timed are eligible; a task's
// operator type is that of its smallest-id candidate.
//  (a) shortest_is_fastest, per task: the shortest eligible candidate (least reasoning, then
//      smallest id) is chosen when no other eligible candidate of the task has a strictly higher
//      speedup (a speedup tie goes to the shortest).
//  (b) high_speedup: every eligible candidate with speedup > high_speedup not already chosen;
//      one chosen by (a) keeps its rule and its `why` notes that it also met (b).
//  (c) single_operator_balance: while (chosen "single" samples) / (chosen samples) is below
//      single_share (the share of an empty set is 0), add the best eligible candidate (highest
//      speedup, then least reasoning, then smallest id) of a "single" task with nothing chosen yet,
//      taking such tasks by descending best speedup, then task name; stop when none is left.
// With no eligible candidate anywhere, nothing is chosen and `note` says why.
CurationResult curate_kernelopt(const std::vector<MeasuredCandidate>& candidates, const CurationOptions& options = {});

}  // namespace tailforge
