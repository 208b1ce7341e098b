#include "synth/kernelopt/curation.h"

#include <algorithm>
#include <cstdio>
#include <set>

namespace tailforge {

namespace {

struct TaskCandidates {
  std::string operator_type;                       // that of the smallest-id candidate
  std::vector<const MeasuredCandidate*> all;       // by id
  std::vector<const MeasuredCandidate*> eligible;  // correct and timed, by id
};

using Tasks = std::map<std::string, TaskCandidates>;

Tasks group_by_task(const std::vector<MeasuredCandidate>& candidates) {
  Tasks tasks;
  for (const MeasuredCandidate& candidate : candidates) tasks[candidate.task].all.push_back(&candidate);
  for (auto& [name, task] : tasks) {
    std::sort(task.all.begin(), task.all.end(),
              [](const MeasuredCandidate* a, const MeasuredCandidate* b) { return a->id < b->id; });
    task.operator_type = task.all.front()->operator_type;
    for (const MeasuredCandidate* candidate : task.all) {
      if (candidate->correct && candidate->timed) task.eligible.push_back(candidate);
    }
  }
  return tasks;
}

// Less reasoning first, then smaller id.
bool is_shorter(const MeasuredCandidate* a, const MeasuredCandidate* b) {
  if (a->reasoning_length != b->reasoning_length) return a->reasoning_length < b->reasoning_length;
  return a->id < b->id;
}

// Higher speedup first, then less reasoning, then smaller id.
bool is_faster(const MeasuredCandidate* a, const MeasuredCandidate* b) {
  if (a->speedup != b->speedup) return a->speedup > b->speedup;
  return is_shorter(a, b);
}

const MeasuredCandidate* shortest(const std::vector<const MeasuredCandidate*>& list) {
  return *std::min_element(list.begin(), list.end(), is_shorter);
}

const MeasuredCandidate* fastest(const std::vector<const MeasuredCandidate*>& list) {
  return *std::min_element(list.begin(), list.end(), is_faster);
}

std::string format(const char* pattern, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, pattern, value);
  return buffer;
}

std::string times(double speedup) { return format("%.2fx", speedup); }
std::string plain(double value) { return format("%g", value); }
std::string words(int64_t length) { return std::to_string(length) + " words"; }

std::string plural(size_t count, const std::string& noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

void add_choice(CurationResult& result, const MeasuredCandidate& candidate, const char* rule, std::string why) {
  result.chosen.push_back({candidate.id, candidate.task, rule, std::move(why)});
}

std::string skip_reason(const TaskCandidates& task) {
  if (task.eligible.empty()) {
    size_t correct = std::count_if(task.all.begin(), task.all.end(), [](auto* c) { return c->correct; });
    if (correct == 0) return "no correct candidate among " + std::to_string(task.all.size());
    return plural(correct, "correct candidate") + ", none timed";
  }
  const MeasuredCandidate* short_one = shortest(task.eligible);
  const MeasuredCandidate* fast_one = fastest(task.eligible);
  return "shortest reasoning (candidate " + std::to_string(short_one->id) + ", " + words(short_one->reasoning_length) +
         ", " + times(short_one->speedup) + ") is not the fastest (candidate " + std::to_string(fast_one->id) + ", " +
         times(fast_one->speedup) + ")";
}

std::string shortest_is_fastest_why(const MeasuredCandidate& chosen, size_t eligible) {
  if (eligible == 1) {
    return "the only correct timed candidate (" + words(chosen.reasoning_length) + ", " + times(chosen.speedup) +
           ") is shortest and fastest";
  }
  return "shortest reasoning (" + words(chosen.reasoning_length) + ") is also the fastest (" + times(chosen.speedup) +
         ") of " + std::to_string(eligible) + " correct timed candidates";
}

// Rule (a), tasks in name order.
void choose_shortest_is_fastest(const Tasks& tasks, CurationResult& result) {
  for (const auto& [name, task] : tasks) {
    if (!task.eligible.empty() && shortest(task.eligible) == fastest(task.eligible)) {
      const MeasuredCandidate& chosen = *shortest(task.eligible);
      add_choice(result, chosen, kRuleShortestIsFastest, shortest_is_fastest_why(chosen, task.eligible.size()));
    } else {
      result.skipped.push_back({name, skip_reason(task)});
    }
  }
}

// Rule (b), tasks in name order, ids ascending.
void choose_high_speedups(const Tasks& tasks, double bar, CurationResult& result) {
  std::map<int64_t, size_t> chosen_at;
  for (size_t i = 0; i < result.chosen.size(); ++i) chosen_at[result.chosen[i].candidate_id] = i;
  for (const auto& [name, task] : tasks) {
    for (const MeasuredCandidate* candidate : task.eligible) {
      if (!(candidate->speedup > bar)) continue;
      std::string figures = times(candidate->speedup) + " > " + plain(bar) + "x";
      auto earlier = chosen_at.find(candidate->id);
      if (earlier != chosen_at.end()) {
        result.chosen[earlier->second].why += "; also above the high-speedup bar (" + figures + ")";
      } else {
        add_choice(result, *candidate, kRuleHighSpeedup,
                   "speedup above the high-speedup bar (" + figures + ", " + words(candidate->reasoning_length) + ")");
      }
    }
  }
}

bool share_below(int singles, int total, double target) {
  if (total == 0) return target > 0;
  return static_cast<double>(singles) < target * static_cast<double>(total);
}

// Rule (c): single-operator tasks with nothing chosen yet, by descending best speedup, then name.
void balance_single_operators(const Tasks& tasks, double target, CurationResult& result) {
  std::set<std::string> chosen_tasks;
  int singles = 0;
  for (const CurationChoice& choice : result.chosen) {
    chosen_tasks.insert(choice.task);
    if (tasks.at(choice.task).operator_type == "single") ++singles;
  }
  std::vector<std::pair<const MeasuredCandidate*, size_t>> bests;  // best candidate, eligible count
  for (const auto& [name, task] : tasks) {
    if (task.operator_type == "single" && !task.eligible.empty() && !chosen_tasks.count(name)) {
      bests.push_back({fastest(task.eligible), task.eligible.size()});
    }
  }
  std::sort(bests.begin(), bests.end(), [](const auto& a, const auto& b) {
    if (a.first->speedup != b.first->speedup) return a.first->speedup > b.first->speedup;
    return a.first->task < b.first->task;
  });
  for (const auto& [best, eligible] : bests) {
    int total = static_cast<int>(result.chosen.size());
    if (!share_below(singles, total, target)) break;
    add_choice(result, *best, kRuleSingleOperatorBalance,
               "fastest (" + times(best->speedup) + ", " + words(best->reasoning_length) + ") of " +
                   plural(eligible, "correct timed candidate") + " of a single-operator task; single share was " +
                   std::to_string(singles) + "/" + std::to_string(total) + ", below " + plain(target));
    ++singles;
  }
}

struct DifficultyCuts {
  double easy_below = 0;
  double hard_cut = 0;
  bool terciles = false;
};

DifficultyCuts difficulty_cuts(const std::vector<TaskDifficulty>& tasks, const CurationOptions& options) {
  if (options.difficulty_thresholds) {
    return {options.difficulty_thresholds->first, options.difficulty_thresholds->second, false};
  }
  std::vector<double> arls;
  for (const TaskDifficulty& task : tasks) arls.push_back(task.arl);
  std::sort(arls.begin(), arls.end());
  size_t n = arls.size();
  return {arls[n / 3], arls[2 * n / 3], true};
}

std::string bucket(double arl, const DifficultyCuts& cuts) {
  if (arl < cuts.easy_below) return "easy";
  bool hard = cuts.terciles ? (arl >= cuts.hard_cut && arl > cuts.easy_below) : arl > cuts.hard_cut;
  return hard ? "hard" : "medium";
}

// Every task's ARL and counts, by task name; the bucket is filled in later.
std::vector<TaskDifficulty> task_difficulties(const Tasks& tasks) {
  std::vector<TaskDifficulty> difficulties;
  for (const auto& [name, task] : tasks) {
    TaskDifficulty difficulty{name, task.operator_type, 0, "", static_cast<int>(task.all.size()), 0};
    double total_length = 0;
    for (const MeasuredCandidate* candidate : task.all) {
      total_length += static_cast<double>(candidate->reasoning_length);
      if (candidate->correct) ++difficulty.correct;
    }
    difficulty.arl = total_length / static_cast<double>(task.all.size());
    difficulties.push_back(difficulty);
  }
  return difficulties;
}

std::string summary_note(const CurationResult& result, size_t candidates, const DifficultyCuts& cuts) {
  std::map<std::string, int> by_rule;
  for (const CurationChoice& choice : result.chosen) ++by_rule[choice.rule];
  std::string note = "chose " + std::to_string(result.chosen.size()) + " of " + std::to_string(candidates) +
                     " candidates in " + plural(result.difficulty.size(), "task") + " (" + kRuleShortestIsFastest +
                     " " + std::to_string(by_rule[kRuleShortestIsFastest]) + ", " + kRuleHighSpeedup + " " +
                     std::to_string(by_rule[kRuleHighSpeedup]) + ", " + kRuleSingleOperatorBalance + " " +
                     std::to_string(by_rule[kRuleSingleOperatorBalance]) + ")";
  std::string hard = cuts.terciles ? "hard from " : "hard above ";
  return note + "; difficulty: easy below " + format("%.2f", cuts.easy_below) + " words, " + hard +
         format("%.2f", cuts.hard_cut) + " words" + (cuts.terciles ? " (terciles)" : " (given)");
}

bool any_timed(const std::vector<MeasuredCandidate>& candidates) {
  return std::any_of(candidates.begin(), candidates.end(), [](const MeasuredCandidate& c) { return c.timed; });
}

}  // namespace

CurationResult curate_kernelopt(const std::vector<MeasuredCandidate>& candidates, const CurationOptions& options) {
  CurationResult result;
  if (candidates.empty()) {
    result.note = "no candidates";
    return result;
  }
  Tasks tasks = group_by_task(candidates);
  result.difficulty = task_difficulties(tasks);
  DifficultyCuts cuts = difficulty_cuts(result.difficulty, options);
  for (TaskDifficulty& difficulty : result.difficulty) difficulty.bucket = bucket(difficulty.arl, cuts);
  choose_shortest_is_fastest(tasks, result);
  bool any_eligible = std::any_of(tasks.begin(), tasks.end(), [](const auto& t) { return !t.second.eligible.empty(); });
  if (!any_eligible) {
    result.note = any_timed(candidates) ? "no timed candidate was correct, so nothing was chosen"
                                        : "no candidate was timed (no GPU measurement), so nothing was chosen";
    return result;
  }
  choose_high_speedups(tasks, options.high_speedup, result);
  balance_single_operators(tasks, options.single_share, result);
  for (const CurationChoice& choice : result.chosen)
    ++result.chosen_by_operator_type[tasks.at(choice.task).operator_type];
  result.note = summary_note(result, candidates.size(), cuts);
  return result;
}

}  // namespace tailforge
