// Algorithm 1 of PtxDec over a tree of nodes: a statement is literals around affine integer
// fields, a loop is an iteration count and a body of nodes. A field's terms name their loop by
// how many loops out it is from the field's statement (0: the innermost), so a body copied out of
// one iteration compares equal to the next one's and wrapping nodes in a new loop only shifts
// the indices that point past it.
#include "verifier/ptx2cuda/reroll.h"

#include <algorithm>

namespace tailforge {

namespace {

constexpr size_t kMaxBodySize = 256;  // statements a body may have; also how far a match is sought
constexpr int kMaxFoldRounds = 8;

struct AffineTerm {
  int loop = 0;  // 0: the innermost loop around the field's statement, 1: the one around it, ...
  int64_t stride = 0;
  bool operator==(const AffineTerm&) const = default;
};

struct AffineField {
  int64_t base = 0;
  std::vector<AffineTerm> terms;  // outermost loop first, at most one per loop
};

struct RolledNode {
  bool foldable = false;              // a straight-line instruction, or a loop of them
  std::string opaque;                 // a statement that is not foldable: its normalized text
  std::vector<std::string> literals;  // a foldable statement: the text around its fields
  std::vector<AffineField> fields;
  int64_t count = 0;             // a loop: how many iterations
  std::vector<RolledNode> body;  // a loop: its body; empty for a statement

  bool is_loop() const { return !body.empty(); }
};

std::string variable_name(size_t depth) {
  static const char* names[] = {"i", "j", "k", "l", "m", "n"};
  return depth < 6 ? names[depth] : "v" + std::to_string(depth);
}

std::string render_field(const AffineField& field, const std::vector<std::string>& variables) {
  if (field.terms.empty()) return std::to_string(field.base);
  std::string text = "(" + std::to_string(field.base);
  for (const AffineTerm& term : field.terms) {
    text += term.stride < 0 ? "-" : "+";
    text += variables[variables.size() - 1 - static_cast<size_t>(term.loop)] + "*";
    text += std::to_string(term.stride < 0 ? -term.stride : term.stride);
  }
  return text + ")";
}

// Writes a node as Rolled-PTX lines at `depth` (for indentation and the new loop variable's
// name); `variables` holds the enclosing loops' names, outermost first.
void render(const RolledNode& node, size_t depth, std::vector<std::string>& variables, std::string& out) {
  std::string indent(2 * depth, ' ');
  if (!node.foldable) {
    out += node.opaque + "\n";
  } else if (!node.is_loop()) {
    out += indent + node.literals[0];
    for (size_t i = 0; i < node.fields.size(); ++i)
      out += render_field(node.fields[i], variables) + node.literals[i + 1];
    out += "\n";
  } else {
    std::string variable = variable_name(depth);
    out += indent + "for.size." + std::to_string(node.body.size()) + " " + variable + " in range(0, " +
           std::to_string(node.count) + ", 1):\n";
    variables.push_back(variable);
    for (const RolledNode& child : node.body) render(child, depth + 1, variables, out);
    variables.pop_back();
  }
}

// How many loops outside the node its fields refer to.
size_t outer_loops_referenced(const RolledNode& node, int depth = 0) {
  size_t outer = 0;
  for (const AffineField& field : node.fields) {
    for (const AffineTerm& term : field.terms)
      outer = std::max(outer, static_cast<size_t>(std::max(0, term.loop - depth + 1)));
  }
  for (const RolledNode& child : node.body) outer = std::max(outer, outer_loops_referenced(child, depth + 1));
  return outer;
}

// The length of the node's text, as if it stood at depth 0 inside loops named "i".
size_t rendered_size(const RolledNode& node) {
  std::vector<std::string> variables(outer_loops_referenced(node), "i");
  std::string out;
  render(node, 0, variables, out);
  return out.size();
}

// What must be equal for two nodes to be copies of one body: opcodes, symbols, literal numbers,
// loop structure and counts. Not foldable nodes get "" and match nothing.
std::string shape_of(const RolledNode& node) {
  if (!node.foldable) return "";
  if (!node.is_loop()) {
    std::string shape = "s";
    for (const std::string& literal : node.literals) shape += literal + '\x1f';
    return shape;
  }
  std::string shape = "l" + std::to_string(node.count) + "{";
  for (const RolledNode& child : node.body) shape += shape_of(child) + '\x1e';
  return shape + "}";
}

// Calls visit(field, depth) for every field of the node in a fixed order; depth counts the loops
// between the node and the field's statement.
template <typename Node, typename Visit>
void visit_fields(Node& node, int depth, const Visit& visit) {
  if (!node.is_loop()) {
    for (auto& field : node.fields) visit(field, depth);
    return;
  }
  for (auto& child : node.body) visit_fields(child, depth + 1, visit);
}

struct FlatField {
  const AffineField* field;
  int depth;
};

std::vector<FlatField> flatten(const std::vector<RolledNode>& nodes, size_t begin, size_t size) {
  std::vector<FlatField> flat;
  for (size_t k = begin; k < begin + size; ++k) {
    visit_fields(nodes[k], 0, [&flat](const AffineField& field, int depth) { flat.push_back({&field, depth}); });
  }
  return flat;
}

struct FoldCandidate {
  size_t size = 0;
  size_t count = 0;
  std::vector<int64_t> strides;  // per flattened field of the first copy
  long long saved = 0;
};

class SequenceFolder {
 public:
  explicit SequenceFolder(std::vector<RolledNode>& nodes) : nodes_(nodes) {
    for (const RolledNode& node : nodes_) {
      shapes_.push_back(shape_of(node));
      sizes_.push_back(node.foldable ? rendered_size(node) : 0);
    }
  }

  // One top-down pass of Algorithm 1 over the sequence; whether it folded anything.
  bool fold_once() {
    std::vector<RolledNode> folded;
    bool changed = false;
    for (size_t at = 0; at < nodes_.size();) {
      FoldCandidate best = best_fold_at(at);
      if (best.count < 2) {
        folded.push_back(std::move(nodes_[at++]));
        continue;
      }
      folded.push_back(loop_from_copy(at, best));
      at += best.size * best.count;
      changed = true;
    }
    nodes_ = std::move(folded);
    return changed;
  }

 private:
  FoldCandidate best_fold_at(size_t at) const {
    FoldCandidate best;
    if (!nodes_[at].foldable) return best;
    for (size_t match = at + 1; match < nodes_.size() && match - at <= kMaxBodySize; ++match) {
      if (!nodes_[match - 1].foldable) break;
      if (shapes_[match] != shapes_[at]) continue;
      FoldCandidate candidate = validate(at, match - at);
      if (candidate.count >= 2 && candidate.saved > best.saved) best = std::move(candidate);
    }
    return best;
  }

  bool same_shapes(size_t first, size_t copy, size_t size) const {
    if (copy + size > nodes_.size()) return false;
    for (size_t k = 0; k < size; ++k) {
      if (shapes_[first + k] != shapes_[copy + k]) return false;
    }
    return true;
  }

  // How many consecutive copies of the body at [at, at+size) follow the template its first two
  // copies give: every field has the same terms in each copy and a base that steps by a constant.
  FoldCandidate validate(size_t at, size_t size) const {
    FoldCandidate candidate;
    candidate.size = size;
    if (!same_shapes(at, at + size, size)) return candidate;
    std::vector<FlatField> first = flatten(nodes_, at, size);
    for (size_t copy = 1; same_shapes(at, at + copy * size, size); ++copy) {
      std::vector<FlatField> fields = flatten(nodes_, at + copy * size, size);
      for (size_t p = 0; p < fields.size(); ++p) {
        if (copy == 1) candidate.strides.push_back(fields[p].field->base - first[p].field->base);
        if (fields[p].field->terms != first[p].field->terms) return finish(at, candidate);
        if (fields[p].field->base != first[p].field->base + static_cast<int64_t>(copy) * candidate.strides[p])
          return finish(at, candidate);
      }
      candidate.count = copy + 1;
    }
    return finish(at, candidate);
  }

  FoldCandidate finish(size_t at, FoldCandidate candidate) const {
    if (candidate.count < 2) return candidate;
    long long before = 0;
    for (size_t k = at; k < at + candidate.size * candidate.count; ++k) before += static_cast<long long>(sizes_[k]);
    RolledNode loop = loop_from_copy(at, candidate);
    candidate.saved = before - static_cast<long long>(rendered_size(loop));
    return candidate;
  }

  // The first copy as a loop body: each field keeps its terms (those pointing past the new loop
  // shifted by one) and gains a term for the new loop where it steps.
  RolledNode loop_from_copy(size_t at, const FoldCandidate& candidate) const {
    RolledNode loop;
    loop.foldable = true;
    loop.count = static_cast<int64_t>(candidate.count);
    loop.body.assign(nodes_.begin() + static_cast<long>(at), nodes_.begin() + static_cast<long>(at + candidate.size));
    size_t position = 0;
    for (RolledNode& child : loop.body) {
      visit_fields(child, 0, [&](AffineField& field, int depth) {
        for (AffineTerm& term : field.terms) {
          if (term.loop >= depth) ++term.loop;
        }
        int64_t stride = candidate.strides[position++];
        if (stride != 0) field.terms.push_back({depth, stride});
        std::sort(field.terms.begin(), field.terms.end(),
                  [](const AffineTerm& a, const AffineTerm& b) { return a.loop > b.loop; });
      });
    }
    return loop;
  }

  std::vector<RolledNode>& nodes_;
  std::vector<std::string> shapes_;
  std::vector<size_t> sizes_;
};

// Folds a sequence until a pass finds nothing more, then the bodies of its loops; repeats while
// that changed something, so folds inside bodies can make their parents foldable again.
bool fold_sequence(std::vector<RolledNode>& nodes) {
  bool changed = false;
  for (int round = 0; round < kMaxFoldRounds; ++round) {
    bool this_round = false;
    while (SequenceFolder(nodes).fold_once()) this_round = true;
    for (RolledNode& node : nodes) {
      if (node.is_loop() && fold_sequence(node.body)) this_round = true;
    }
    if (!this_round) break;
    changed = true;
  }
  return changed;
}

RolledNode node_of(const PtxStatement& statement) {
  RolledNode node;
  node.foldable = is_straight_line_statement(statement);
  if (!node.foldable) {
    node.opaque = statement.text;
    return node;
  }
  NumericTemplate numbers = numeric_template(statement);
  node.literals = std::move(numbers.literals);
  for (int64_t value : numbers.values) node.fields.push_back({value, {}});
  return node;
}

int loops_in(const std::vector<RolledNode>& nodes) {
  int loops = 0;
  for (const RolledNode& node : nodes) {
    if (node.is_loop()) loops += 1 + loops_in(node.body);
  }
  return loops;
}

}  // namespace

double RerolledPtx::reduction() const {
  if (chars_in == 0) return 0;
  return 1.0 - static_cast<double>(chars_out) / static_cast<double>(chars_in);
}

RerolledPtx reroll_ptx(const std::string& text) {
  std::vector<RolledNode> nodes;
  for (const PtxStatement& statement : parse_ptx_statements(text)) nodes.push_back(node_of(statement));
  fold_sequence(nodes);

  RerolledPtx result;
  std::string normalized = normalize_ptx(text);
  std::vector<std::string> variables;
  for (const RolledNode& node : nodes) render(node, 0, variables, result.text);
  result.loops = loops_in(nodes);
  Result<std::string> expanded = unroll_rolled_ptx(result.text);
  if (!expanded || *expanded != normalized) {
    result.text = normalized;
    result.loops = 0;
    result.fell_back = true;
  }
  result.chars_in = normalized.size();
  result.chars_out = result.text.size();
  return result;
}

}  // namespace tailforge
