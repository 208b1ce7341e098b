#include "synth/similarity_join.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

namespace tailforge {
namespace {

using RankedSet = std::vector<uint32_t>;  // ranks, ascending

// Each set as ranks of one global order, rarest shingle first (ties by hash). Two sets at or above
// a similarity t share a rank among both their prefixes (prefix_length): the prefix-filtering
// principle, which holds for any one order; rare-first keeps the posting lists short.
std::vector<RankedSet> ranked_sets(const std::vector<const ShingleSet*>& sets) {
  std::unordered_map<uint64_t, uint32_t> frequency;
  for (const ShingleSet* set : sets) {
    for (uint64_t shingle : *set) ++frequency[shingle];
  }
  std::vector<std::pair<uint32_t, uint64_t>> order;
  order.reserve(frequency.size());
  for (const auto& [shingle, count] : frequency) order.emplace_back(count, shingle);
  std::sort(order.begin(), order.end());
  std::unordered_map<uint64_t, uint32_t> rank;
  rank.reserve(order.size());
  for (size_t i = 0; i < order.size(); ++i) rank[order[i].second] = static_cast<uint32_t>(i);
  std::vector<RankedSet> ranked;
  ranked.reserve(sets.size());
  for (const ShingleSet* set : sets) {
    RankedSet ranks;
    ranks.reserve(set->size());
    for (uint64_t shingle : *set) ranks.push_back(rank[shingle]);
    std::sort(ranks.begin(), ranks.end());
    ranked.push_back(std::move(ranks));
  }
  return ranked;
}

size_t ceil_of(double value) { return static_cast<size_t>(std::ceil(value - 1e-9)); }

// The ranks of a set of `size` that a pair at or above `at_least` must share: |x| - ceil(t|x|) + 1.
size_t prefix_length(size_t size, double at_least) {
  size_t required = std::min(size, ceil_of(at_least * static_cast<double>(size)));
  return std::min(size, size - required + 1);
}

// The overlap two sets of these sizes need for a similarity of `at_least`: o >= t/(1+t) (|a|+|b|).
size_t required_overlap(size_t a, size_t b, double at_least) {
  return ceil_of(at_least / (1.0 + at_least) * static_cast<double>(a + b));
}

// The similarity of two sorted sets, or -1 as soon as their overlap cannot reach `required` (and
// when they share nothing).
template <typename Set>
double similarity_reaching(const Set& a, const Set& b, size_t required) {
  size_t i = 0, j = 0, common = 0;
  while (i < a.size() && j < b.size()) {
    if (common + std::min(a.size() - i, b.size() - j) < required) return -1;
    if (a[i] < b[j]) {
      ++i;
    } else if (b[j] < a[i]) {
      ++j;
    } else {
      ++common, ++i, ++j;
    }
  }
  if (common < required || common == 0) return -1;
  return static_cast<double>(common) / static_cast<double>(a.size() + b.size() - common);
}

struct Posting {
  uint32_t set;
  uint32_t position;  // of the rank in the set
};

// Candidates of one probe with their overlap in the prefixes so far (PPJoin's positional filter:
// a candidate whose overlap can no longer reach the required one is dropped before verification).
class Candidates {
 public:
  explicit Candidates(size_t sets) : overlap_(sets, 0) {}

  // A posting met at `probe_position` of a probe of `probe_size`; `admit` decides, the first time
  // a set is met, whether it may be a candidate at all.
  template <typename Admit>
  void meet(const Posting& posting, size_t probe_position, size_t probe_size, size_t set_size, size_t required,
            Admit admit) {
    int32_t& overlap = overlap_[posting.set];
    if (overlap < 0) return;
    if (overlap == 0) {
      touched_.push_back(posting.set);
      if (!admit()) {
        overlap = -1;
        return;
      }
    }
    size_t reachable =
        static_cast<size_t>(overlap) + std::min(probe_size - probe_position, set_size - posting.position);
    overlap = reachable >= required ? overlap + 1 : -1;
  }

  // Calls verify(set) for every surviving candidate, then forgets them all.
  template <typename Verify>
  void drain(Verify verify) {
    for (uint32_t set : touched_) {
      if (overlap_[set] > 0) verify(static_cast<size_t>(set));
      overlap_[set] = 0;
    }
    touched_.clear();
  }

 private:
  std::vector<int32_t> overlap_;  // 0: not met, > 0: overlap in the prefixes, -1: dropped
  std::vector<uint32_t> touched_;
};

}  // namespace

double set_jaccard(const ShingleSet& a, const ShingleSet& b) { return std::max(0.0, similarity_reaching(a, b, 0)); }

namespace {

// Calls visit(x, y, similarity) for every pair of `sets` at or above `at_least` (x probes the sets
// indexed before it, so no pair twice) unless skip(x, y) says it needs no comparison.
template <typename Skip, typename Visit>
void join_within(const std::vector<ShingleSet>& sets, double at_least, Skip skip, Visit visit) {
  std::vector<const ShingleSet*> pointers;
  for (const ShingleSet& set : sets) pointers.push_back(&set);
  std::vector<RankedSet> ranked = ranked_sets(pointers);
  std::vector<size_t> order(sets.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ranked[a].size() < ranked[b].size(); });

  // Sets are indexed smallest first, so every indexed candidate is at most as large as the probe.
  std::vector<std::vector<Posting>> postings;
  Candidates candidates(sets.size());
  for (size_t x : order) {
    const RankedSet& probe = ranked[x];
    if (probe.empty()) continue;
    size_t prefix = prefix_length(probe.size(), at_least);
    size_t min_size = ceil_of(at_least * static_cast<double>(probe.size()));
    for (size_t p = 0; p < prefix; ++p) {
      if (probe[p] >= postings.size()) continue;
      for (const Posting& posting : postings[probe[p]]) {
        size_t size = ranked[posting.set].size();
        candidates.meet(posting, p, probe.size(), size, required_overlap(probe.size(), size, at_least),
                        [&] { return size >= min_size && !skip(x, posting.set); });
      }
    }
    candidates.drain([&](size_t y) {
      if (skip(x, y)) return;  // joined since it was met
      double similarity =
          similarity_reaching(probe, ranked[y], required_overlap(probe.size(), ranked[y].size(), at_least));
      if (similarity >= at_least) visit(x, y, similarity);
    });
    for (size_t p = 0; p < prefix; ++p) {
      if (probe[p] >= postings.size()) postings.resize(probe[p] + 1);
      postings[probe[p]].push_back({static_cast<uint32_t>(x), static_cast<uint32_t>(p)});
    }
  }
}

}  // namespace

std::vector<SimilarPair> similar_pairs_within(const std::vector<ShingleSet>& sets, double at_least) {
  std::vector<SimilarPair> pairs;
  join_within(
      sets, at_least, [](size_t, size_t) { return false; },
      [&pairs](size_t x, size_t y, double similarity) {
        pairs.push_back({std::min(x, y), std::max(x, y), similarity});
      });
  std::sort(pairs.begin(), pairs.end(), [](const SimilarPair& a, const SimilarPair& b) {
    return a.first != b.first ? a.first < b.first : a.second < b.second;
  });
  return pairs;
}

std::vector<size_t> merge_similar(const std::vector<ShingleSet>& sets, const std::vector<size_t>& clusters,
                                  double at_least) {
  std::vector<size_t> parent(clusters);
  auto root = [&parent](size_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  join_within(
      sets, at_least, [&root](size_t x, size_t y) { return root(x) == root(y); },
      [&](size_t x, size_t y, double) {
        size_t a = root(x), b = root(y);
        if (a != b) parent[std::max(a, b)] = std::min(a, b);
      });
  std::vector<size_t> merged(clusters.size());
  for (size_t i = 0; i < clusters.size(); ++i) merged[i] = root(i);
  return merged;
}

CrossSimilarity cross_similarity(const std::vector<ShingleSet>& queries, const std::vector<ShingleSet>& corpus,
                                 double floor, double threshold) {
  std::vector<const ShingleSet*> pointers;
  for (const ShingleSet& set : corpus) pointers.push_back(&set);
  for (const ShingleSet& set : queries) pointers.push_back(&set);
  std::vector<RankedSet> ranked = ranked_sets(pointers);
  const size_t corpus_size = corpus.size();

  std::vector<std::vector<Posting>> postings;
  for (size_t c = 0; c < corpus_size; ++c) {
    const RankedSet& set = ranked[c];
    size_t prefix = set.empty() ? 0 : prefix_length(set.size(), floor);
    for (size_t p = 0; p < prefix; ++p) {
      if (set[p] >= postings.size()) postings.resize(set[p] + 1);
      postings[set[p]].push_back({static_cast<uint32_t>(c), static_cast<uint32_t>(p)});
    }
  }
  CrossSimilarity result;
  Candidates candidates(corpus_size);
  for (size_t q = 0; q < queries.size(); ++q) {
    const RankedSet& probe = ranked[corpus_size + q];
    if (probe.empty()) continue;
    // Only pairs that may raise the largest so far, or reach the threshold, need comparing; the
    // indexed prefixes (for `floor`) are long enough for any higher similarity.
    double wanted = std::max(floor, std::min(result.largest.value_or(0.0), threshold));
    double size = static_cast<double>(probe.size());
    size_t min_size = ceil_of(wanted * size);
    size_t max_size = static_cast<size_t>(std::floor(size / wanted + 1e-9));
    size_t prefix = prefix_length(probe.size(), wanted);
    for (size_t p = 0; p < prefix; ++p) {
      if (probe[p] >= postings.size()) continue;
      for (const Posting& posting : postings[probe[p]]) {
        size_t other = ranked[posting.set].size();
        candidates.meet(posting, p, probe.size(), other, required_overlap(probe.size(), other, wanted),
                        [&] { return other >= min_size && other <= max_size; });
      }
    }
    bool counted = false;
    candidates.drain([&](size_t c) {
      double similarity =
          similarity_reaching(probe, ranked[c], required_overlap(probe.size(), ranked[c].size(), wanted));
      if (similarity < floor) return;
      if (!result.largest || similarity > *result.largest) result.largest = similarity;
      if (similarity >= threshold && !counted) {
        counted = true;
        ++result.queries_at_or_above;
      }
    });
  }
  return result;
}

}  // namespace tailforge
