// The rule-based unroller: Rolled-PTX (see reroll.h for the syntax) back to PTX. It first reads
// the text into a tree of lines and loops, so every malformed header or short body is reported
// with its line before anything is expanded.
#include <algorithm>
#include <cctype>
#include <utility>

#include "base/number.h"
#include "text/regex.h"
#include "verifier/ptx2cuda/reroll.h"

namespace tailforge {

namespace {

constexpr int64_t kMaxIterations = 1'000'000;
constexpr size_t kMaxOutputChars = size_t{256} << 20;
// Loops nested deeper than this are refused: reading and expanding recurse once per level.
constexpr int kMaxDepth = 64;
// Loop iterations in one expansion; loops that run empty ranges emit nothing, so the output cap
// alone does not bound the work.
constexpr int64_t kMaxSteps = int64_t{16} << 20;

struct RolledLine {
  int line = 0;  // 1-based
  std::string text;
  bool is_loop = false;
  std::string variable;
  int64_t start = 0, stop = 0, step = 1;
  size_t size = 0;
  std::vector<RolledLine> body;
};

Error line_error(int line, const std::string& message) {
  return make_error("line " + std::to_string(line) + ": " + message);
}

Status parse_header(RolledLine& header) {
  static const text::Regex pattern(
      R"(for\.size\.([0-9]{1,9}) ([a-z][a-z0-9_]*) in range\((-?[0-9]+), ?(-?[0-9]+), ?(-?[0-9]+)\):)");
  text::Match match;
  if (!text::regex_match(header.text, match, pattern) || !parse_int64(match[3].str(), header.start) ||
      !parse_int64(match[4].str(), header.stop) || !parse_int64(match[5].str(), header.step)) {
    return line_error(header.line, "malformed loop header '" + header.text +
                                       "' (expected 'for.size.N VAR in range(START, STOP, STEP):')");
  }
  header.is_loop = true;
  header.size = std::stoul(match[1].str());
  header.variable = match[2];
  if (header.size == 0) return line_error(header.line, "a loop body needs at least one statement");
  if (header.step <= 0) return line_error(header.line, "the loop step must be positive");
  if (header.stop > header.start && (header.stop - header.start) / header.step >= kMaxIterations)
    return line_error(header.line, "more than " + std::to_string(kMaxIterations) + " iterations");
  return {};
}

class RolledParser {
 public:
  explicit RolledParser(const std::string& text) {
    for (const std::string& line : split_ptx_lines(text)) lines_.push_back(normalize_ptx_line(line));
  }

  Result<std::vector<RolledLine>> parse_all() {
    std::vector<RolledLine> items;
    while (next_ < lines_.size()) {
      Result<RolledLine> item = parse_item(0);
      if (!item) return item.error();
      items.push_back(std::move(*item));
    }
    return items;
  }

 private:
  // `depth`: the loops around the item (0: not in a body).
  Result<RolledLine> parse_item(int depth) {
    const bool in_body = depth > 0;
    RolledLine item;
    item.line = static_cast<int>(next_ + 1);
    item.text = lines_[next_++];
    if (item.text.rfind("for.", 0) != 0) {
      if (in_body && item.text.empty()) return line_error(item.line, "a loop body holds statements, not blank lines");
      if (in_body && item.text.back() == ':') return line_error(item.line, "a loop body cannot hold a label");
      return item;
    }
    if (Status header = parse_header(item); !header) return header.error();
    if (depth >= kMaxDepth) return line_error(item.line, "loops nested deeper than " + std::to_string(kMaxDepth) + " levels");
    while (item.body.size() < item.size) {
      if (next_ >= lines_.size()) {
        return line_error(item.line, "the loop needs " + std::to_string(item.size) +
                                         " body statements, the text ends after " + std::to_string(item.body.size()));
      }
      Result<RolledLine> child = parse_item(depth + 1);
      if (!child) return child.error();
      item.body.push_back(std::move(*child));
    }
    return item;
  }

  std::vector<std::string> lines_;
  size_t next_ = 0;
};

using Bindings = std::vector<std::pair<std::string, int64_t>>;

// Reads a run of at most 12 digits, with a leading '-' when `signed_allowed`.
bool read_number(const std::string& text, size_t& at, bool signed_allowed, int64_t& value) {
  size_t start = at;
  if (signed_allowed && at < text.size() && text[at] == '-') ++at;
  size_t digits = at;
  while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) ++at;
  if (at == digits || at - digits > 12) return false;
  value = std::stoll(text.substr(start, at - start));
  return true;
}

bool read_variable(const std::string& text, size_t& at, std::string& name) {
  size_t start = at;
  if (at >= text.size() || !std::islower(static_cast<unsigned char>(text[at]))) return false;
  while (at < text.size() && (std::islower(static_cast<unsigned char>(text[at])) ||
                              std::isdigit(static_cast<unsigned char>(text[at])) || text[at] == '_'))
    ++at;
  name = text.substr(start, at - start);
  return true;
}

// Evaluates "B", "B+i*S", "B-i*S+j*T", ... with the loop variables bound so far.
Result<int64_t> evaluate(const std::string& expression, const Bindings& bindings, int line) {
  Error malformed = line_error(line, "malformed loop expression '(" + expression + ")'");
  size_t at = 0;
  int64_t value = 0;
  if (!read_number(expression, at, true, value)) return malformed;
  while (at < expression.size()) {
    char sign = expression[at++];
    std::string name;
    int64_t stride = 0;
    if ((sign != '+' && sign != '-') || !read_variable(expression, at, name) || at >= expression.size() ||
        expression[at++] != '*' || !read_number(expression, at, false, stride))
      return malformed;
    auto bound = std::find_if(bindings.begin(), bindings.end(), [&](const auto& b) { return b.first == name; });
    if (bound == bindings.end()) return line_error(line, "unknown loop variable '" + name + "'");
    int64_t step = 0;
    if (__builtin_mul_overflow(sign == '-' ? -stride : stride, bound->second, &step) ||
        __builtin_add_overflow(value, step, &value))
      return line_error(line, "loop expression '(" + expression + ")' overflows");
  }
  return value;
}

// A body line with every "(expression)" replaced by its value.
Result<std::string> substitute(const RolledLine& statement, const Bindings& bindings) {
  std::string out;
  size_t at = 0;
  while (true) {
    size_t open = statement.text.find('(', at);
    out += statement.text.substr(at, open == std::string::npos ? std::string::npos : open - at);
    if (open == std::string::npos) return out;
    size_t close = statement.text.find(')', open);
    if (close == std::string::npos) return line_error(statement.line, "a '(' without its ')'");
    Result<int64_t> value = evaluate(statement.text.substr(open + 1, close - open - 1), bindings, statement.line);
    if (!value) return value.error();
    out += std::to_string(*value);
    at = close + 1;
  }
}

class Expander {
 public:
  Status expand(const std::vector<RolledLine>& items) {
    for (const RolledLine& item : items) {
      Status status = item.is_loop ? expand_loop(item) : emit(item);
      if (!status) return status;
    }
    return {};
  }

  std::string take() { return std::move(out_); }

 private:
  Status emit(const RolledLine& item) {
    if (bindings_.empty()) {
      out_ += item.text;
    } else {
      Result<std::string> text = substitute(item, bindings_);
      if (!text) return text.error();
      out_ += *text;
    }
    out_ += "\n";
    if (out_.size() > kMaxOutputChars) return line_error(item.line, "the expansion exceeds 256 MiB");
    return {};
  }

  Status expand_loop(const RolledLine& loop) {
    for (const auto& binding : bindings_) {
      if (binding.first == loop.variable)
        return line_error(loop.line, "loop variable '" + loop.variable + "' is already bound by an outer loop");
    }
    bindings_.emplace_back(loop.variable, 0);
    for (int64_t value = loop.start; value < loop.stop; value += loop.step) {
      if (++steps_ > kMaxSteps) {
        return line_error(loop.line, "the expansion takes more than " + std::to_string(kMaxSteps) + " loop iterations");
      }
      bindings_.back().second = value;
      if (Status status = expand(loop.body); !status) return status;
    }
    bindings_.pop_back();
    return {};
  }

  Bindings bindings_;
  std::string out_;
  int64_t steps_ = 0;
};

}  // namespace

Result<std::string> unroll_rolled_ptx(const std::string& text) {
  Result<std::vector<RolledLine>> items = RolledParser(text).parse_all();
  if (!items) return items.error();
  Expander expander;
  if (Status status = expander.expand(*items); !status) return status.error();
  return expander.take();
}

int count_rolled_loops(const std::string& text) {
  int loops = 0;
  for (const std::string& line : split_ptx_lines(text)) {
    if (normalize_ptx_line(line).rfind("for.size.", 0) == 0) ++loops;
  }
  return loops;
}

}  // namespace tailforge
