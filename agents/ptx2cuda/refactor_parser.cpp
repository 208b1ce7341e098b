#include <map>

#include "agents/ptx2cuda/refactor_syntax.h"

namespace tailforge::cuda_refactor {
namespace {

const std::map<std::string, int>& binary_precedences() {
  static const std::map<std::string, int> table = {
      {",", 1},   {"=", 2},   {"+=", 2}, {"-=", 2}, {"*=", 2}, {"/=", 2}, {"%=", 2},  {"<<=", 2},
      {">>=", 2}, {"&=", 2},  {"^=", 2}, {"|=", 2}, {"?", 3},  {"||", 4}, {"&&", 5},  {"|", 6},
      {"^", 7},   {"&", 8},   {"==", 9}, {"!=", 9}, {"<", 10}, {">", 10}, {"<=", 10}, {">=", 10},
      {"<<", 11}, {">>", 11}, {"+", 12}, {"-", 12}, {"*", 13}, {"/", 13}, {"%", 13}};
  return table;
}

int binary_precedence(const std::string& op) {
  auto found = binary_precedences().find(op);
  return found == binary_precedences().end() ? 0 : found->second;
}

bool is_prefix_operator(const std::string& op) {
  return op == "+" || op == "-" || op == "!" || op == "~" || op == "*" || op == "&" || op == "++" || op == "--";
}

// Words that make an expression something this parser does not read.
bool is_unreadable_word(const std::string& word) {
  return word == "new" || word == "delete" || word == "throw" || word == "template" || word == "typename" ||
         word == "operator" || word == "return" || word == "if" || word == "for" || word == "while" ||
         word == "static_cast" || word == "reinterpret_cast" || word == "const_cast" || word == "dynamic_cast" ||
         word == "decltype" || word == "alignof" || word == "__launch_bounds__";
}

class ExpressionParser {
 public:
  ExpressionParser(const SourceLexemes& source, size_t begin, size_t end)
      : source_(source), position_(begin), end_(end) {}

  std::optional<ExpressionTree> parse_all() {
    int root = parse(1);
    if (failed_ || root < 0 || position_ != end_) return std::nullopt;
    tree_.root = root;
    return tree_;
  }

 private:
  const std::string& peek(size_t ahead = 0) const {
    static const std::string nothing;
    return position_ + ahead < end_ ? source_.lexemes[position_ + ahead].text : nothing;
  }
  TokenKind peek_kind() const { return source_.lexemes[position_].kind; }
  bool at_end() const { return position_ >= end_; }

  int fail() {
    failed_ = true;
    return -1;
  }

  bool expect(const std::string& text) {
    if (at_end() || peek() != text) return fail(), false;
    ++position_;
    return true;
  }

  int add(NodeKind kind, std::string op, size_t first, std::vector<int> children) {
    for (int child : children)
      if (child < 0) return fail();
    if (failed_) return -1;
    ExpressionNode node{kind, std::move(op), first, position_ - 1, std::move(children), -1};
    int index = static_cast<int>(tree_.nodes.size());
    for (int child : node.children) tree_.nodes[child].parent = index;
    tree_.nodes.push_back(std::move(node));
    return index;
  }

  int parse(int min_precedence) {
    size_t first = position_;
    int left = parse_unary();
    while (!failed_ && !at_end()) {
      const std::string op = peek();
      int precedence = binary_precedence(op);
      if (precedence == 0 || precedence < min_precedence) break;
      ++position_;
      if (op == "?") {
        int then_branch = parse(1);
        if (!expect(":")) return -1;
        int else_branch = parse(2);
        left = add(NodeKind::ternary, "?", first, {left, then_branch, else_branch});
        continue;
      }
      bool right_associative = precedence == 2;
      int right = parse(right_associative ? precedence : precedence + 1);
      left = add(NodeKind::binary, op, first, {left, right});
    }
    return failed_ ? -1 : left;
  }

  int parse_unary() {
    if (at_end()) return fail();
    size_t first = position_;
    const std::string text = peek();
    if (peek_kind() == TokenKind::punctuation && is_prefix_operator(text)) {
      ++position_;
      int operand = parse_unary();
      return add(NodeKind::prefix, text, first, {operand});
    }
    if (text == "sizeof") return parse_sizeof();
    if (text == "(") return parse_postfix(parse_parenthesized());
    return parse_postfix(parse_primary());
  }

  int parse_sizeof() {
    size_t first = position_++;
    if (peek() != "(") return add(NodeKind::prefix, "sizeof", first, {parse_unary()});
    return skip_opaque(first, position_);
  }

  // The node `first`..matching close of `open`, read as one opaque primary.
  int skip_opaque(size_t first, size_t open) {
    size_t close = matching_close(source_, open, end_);
    if (close == std::string::npos) return fail();
    position_ = close + 1;
    return add(NodeKind::opaque, "", first, {});
  }

  bool can_start_operand(size_t index) const {
    if (index >= end_) return false;
    const Lexeme& lexeme = source_.lexemes[index];
    if (lexeme.kind != TokenKind::punctuation) return true;
    return lexeme.text == "(" || lexeme.text == "!" || lexeme.text == "~" || lexeme.text == "::" ||
           is_prefix_operator(lexeme.text);
  }

  // (type) followed by an operand: identifiers (all type names, or one followed by a word or a
  // paren, or any followed by '*' / '&') then only '*' / '&'.
  bool is_cast(size_t open, size_t close) const {
    if (close == open + 1) return false;
    bool all_types = true, stars = false;
    size_t words = 0;
    for (size_t i = open + 1; i < close; ++i) {
      const Lexeme& lexeme = source_.lexemes[i];
      bool star = lexeme.text == "*" || lexeme.text == "&";
      if (lexeme.kind == TokenKind::identifier) {
        if (stars) return false;
        ++words;
        all_types = all_types && is_type_name(source_, lexeme.text);
      } else if (star) {
        stars = true;
      } else if (lexeme.text != "::") {
        return false;
      }
    }
    if (words == 0 || !can_start_operand(close + 1)) return false;
    if (all_types || stars) return true;
    const Lexeme& after = source_.lexemes[close + 1];
    return words == 1 && (after.kind != TokenKind::punctuation || after.text == "(");
  }

  int parse_parenthesized() {
    size_t first = position_;
    size_t close = matching_close(source_, position_, end_);
    if (close == std::string::npos) return fail();
    if (is_cast(position_, close)) {
      std::string type;
      for (size_t i = position_ + 1; i < close; ++i) type += (type.empty() ? "" : " ") + source_.lexemes[i].text;
      position_ = close + 1;
      int operand = parse_unary();
      return add(NodeKind::cast, type, first, {operand});
    }
    ++position_;
    int inner = parse(1);
    if (!expect(")")) return -1;
    return add(NodeKind::paren, "()", first, {inner});
  }

  int parse_primary() {
    size_t first = position_;
    if (peek() == "::") ++position_;
    if (at_end()) return fail();
    const Lexeme& lexeme = source_.lexemes[position_];
    if (lexeme.kind == TokenKind::punctuation || lexeme.kind == TokenKind::comment) return fail();
    if (lexeme.kind == TokenKind::string_literal) {
      while (!at_end() && peek_kind() == TokenKind::string_literal) ++position_;
      return add(NodeKind::leaf, "", first, {});
    }
    if (lexeme.kind == TokenKind::identifier) {
      if (is_unreadable_word(lexeme.text)) return fail();
      bool macro = is_macro_name(source_, lexeme.text);
      ++position_;
      while (peek() == "::" && position_ + 1 < end_ && source_.lexemes[position_ + 1].kind == TokenKind::identifier)
        position_ += 2;
      if (macro && peek() == "(") return skip_opaque(first, position_);
      return add(NodeKind::leaf, "", first, {});
    }
    ++position_;
    return add(NodeKind::leaf, "", first, {});
  }

  int parse_postfix(int node) {
    while (!failed_ && !at_end()) {
      size_t first = tree_.nodes[node].first;
      const std::string op = peek();
      if (op == "(") {
        node = parse_call(node);
      } else if (op == "[") {
        ++position_;
        int index = parse(1);
        if (!expect("]")) return -1;
        node = add(NodeKind::subscript, "[]", first, {node, index});
      } else if (op == "." || op == "->") {
        ++position_;
        if (at_end() || peek_kind() != TokenKind::identifier) return fail();
        std::string member = op + peek();
        ++position_;
        node = add(NodeKind::member, member, first, {node});
      } else if (op == "++" || op == "--") {
        ++position_;
        node = add(NodeKind::postfix, op, first, {node});
      } else {
        break;
      }
    }
    return failed_ ? -1 : node;
  }

  int parse_call(int callee) {
    size_t first = tree_.nodes[callee].first;
    ++position_;
    std::vector<int> children = {callee};
    while (!failed_ && peek() != ")") {
      children.push_back(parse(2));
      if (peek() == ",")
        ++position_;
      else if (peek() != ")")
        return fail();
    }
    if (!expect(")")) return -1;
    return add(NodeKind::call, "()", first, children);
  }

  const SourceLexemes& source_;
  size_t position_, end_;
  ExpressionTree tree_;
  bool failed_ = false;
};

}  // namespace

bool is_assignment_operator(const std::string& op) { return binary_precedence(op) == 2; }

int node_precedence(const ExpressionNode& node) {
  switch (node.kind) {
    case NodeKind::binary:
      return binary_precedence(node.op);
    case NodeKind::ternary:
      return 3;
    case NodeKind::prefix:
    case NodeKind::cast:
      return 14;
    default:
      return 15;
  }
}

std::optional<ExpressionTree> parse_expression(const SourceLexemes& source, size_t begin, size_t end) {
  if (begin >= end) return std::nullopt;
  return ExpressionParser(source, begin, end).parse_all();
}

}  // namespace tailforge::cuda_refactor
