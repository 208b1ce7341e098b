#include "agents/ptx2cuda/refactor_index_terms.h"

#include <algorithm>
#include <cctype>
#include <climits>
#include <sstream>
#include <vector>

namespace tailforge::cuda_refactor {
namespace {

bool is_builtin_vector(const std::string& name) {
  return name == "threadIdx" || name == "blockIdx" || name == "blockDim" || name == "gridDim";
}

bool is_commutative(const std::string& op) { return op == "+" || op == "*" || op == "&" || op == "|" || op == "^"; }

ArithmeticType integer_type(const std::string& name, bool is_unsigned, int rank) {
  return {name, false, is_unsigned, rank, rank == 1 ? 32 : 64};
}

// Integral promotion then the usual arithmetic conversions (LP64).
ArithmeticType common_type(const ArithmeticType& a, const ArithmeticType& b) {
  if (a.floating || b.floating) {
    if (a.floating && b.floating) return a.rank >= b.rank ? a : b;
    return a.floating ? a : b;
  }
  if (a.is_unsigned == b.is_unsigned) return a.rank >= b.rank ? a : b;
  const ArithmeticType& u = a.is_unsigned ? a : b;
  const ArithmeticType& s = a.is_unsigned ? b : a;
  if (u.rank >= s.rank) return u;
  if (s.bits > u.bits) return s;
  return integer_type(s.rank == 2 ? "unsigned long" : "unsigned long long", true, s.rank);
}

std::optional<ArithmeticType> literal_type(const std::string& text) {
  bool hex = text.size() > 1 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X');
  if (!hex && text.find_first_of(".eE") != std::string::npos) return std::nullopt;
  size_t digits_end = text.find_first_not_of(hex ? "0123456789abcdefABCDEFxX" : "0123456789");
  std::string suffix = digits_end == std::string::npos ? "" : text.substr(digits_end);
  std::transform(suffix.begin(), suffix.end(), suffix.begin(), [](unsigned char c) { return std::tolower(c); });
  bool is_unsigned = suffix.find('u') != std::string::npos;
  size_t longs = std::count(suffix.begin(), suffix.end(), 'l');
  if (longs > 0) return integer_type(is_unsigned ? "unsigned long" : "long", is_unsigned, longs == 1 ? 2 : 3);
  unsigned long long value = 0;
  std::istringstream(text.substr(0, digits_end)) >> (hex ? std::hex : std::dec) >> value;
  if (value <= static_cast<unsigned long long>(INT_MAX) && !is_unsigned) return integer_type("int", false, 1);
  if (value <= UINT_MAX && (is_unsigned || hex)) return integer_type("unsigned int", true, 1);
  return std::nullopt;
}

bool is_nonzero_literal(const SourceLexemes& source, const ExpressionNode& node) {
  if (node.kind != NodeKind::leaf || node.first != node.last) return false;
  const Lexeme& lexeme = source.lexemes[node.first];
  return lexeme.kind == TokenKind::number && literal_type(lexeme.text) &&
         lexeme.text.find_first_not_of("0xXuUlL") != std::string::npos;
}

class IndexTermReader {
 public:
  IndexTermReader(const SourceLexemes& source, const ExpressionTree& tree,
             const std::map<std::string, ArithmeticType>& parameters)
      : source_(source), tree_(tree), parameters_(parameters) {}

  std::optional<IndexTerm> read(int index) const {
    const ExpressionNode& node = tree_.nodes[index];
    switch (node.kind) {
      case NodeKind::leaf:
        return leaf(node);
      case NodeKind::member:
        return member(node);
      case NodeKind::paren:
        return read(node.children[0]);
      case NodeKind::cast:
        return cast(node);
      case NodeKind::prefix:
        return prefix(node);
      case NodeKind::binary:
        return binary(node);
      default:
        return std::nullopt;
    }
  }

 private:
  std::optional<IndexTerm> leaf(const ExpressionNode& node) const {
    if (node.first != node.last) return std::nullopt;
    const Lexeme& lexeme = source_.lexemes[node.first];
    if (lexeme.kind == TokenKind::number) {
      std::optional<ArithmeticType> type = literal_type(lexeme.text);
      if (!type) return std::nullopt;
      return IndexTerm{lexeme.text, *type, false, false};
    }
    if (lexeme.text == "warpSize") return IndexTerm{lexeme.text, integer_type("int", false, 1), true, false};
    auto parameter = parameters_.find(lexeme.text);
    if (lexeme.kind != TokenKind::identifier || parameter == parameters_.end()) return std::nullopt;
    return IndexTerm{lexeme.text, parameter->second, false, false};
  }

  std::optional<IndexTerm> member(const ExpressionNode& node) const {
    const ExpressionNode& base = tree_.nodes[node.children[0]];
    bool component = node.op == ".x" || node.op == ".y" || node.op == ".z";
    if (!component || base.kind != NodeKind::leaf || base.first != base.last) return std::nullopt;
    const std::string& name = source_.lexemes[base.first].text;
    if (!is_builtin_vector(name)) return std::nullopt;
    return IndexTerm{name + node.op, integer_type("unsigned int", true, 1), true, false};
  }

  std::optional<IndexTerm> cast(const ExpressionNode& node) const {
    std::optional<ArithmeticType> type = arithmetic_type(node.op);
    std::optional<IndexTerm> operand = read(node.children[0]);
    if (!type || !operand) return std::nullopt;
    return IndexTerm{"(" + type->name + ")" + operand->canonical, *type, operand->uses_builtin, operand->has_operator};
  }

  std::optional<IndexTerm> prefix(const ExpressionNode& node) const {
    if (node.op != "-" && node.op != "+" && node.op != "~") return std::nullopt;
    std::optional<IndexTerm> operand = read(node.children[0]);
    if (!operand) return std::nullopt;
    operand->canonical = node.op + operand->canonical;
    operand->type = common_type(operand->type, integer_type("int", false, 1));
    return operand;
  }

  std::optional<IndexTerm> binary(const ExpressionNode& node) const {
    if (!is_index_operator(node.op)) return std::nullopt;
    bool needs_literal_right = node.op == "/" || node.op == "%" || node.op == "<<" || node.op == ">>";
    if (needs_literal_right && !is_nonzero_literal(source_, tree_.nodes[node.children[1]])) return std::nullopt;
    std::optional<IndexTerm> left = read(node.children[0]);
    std::optional<IndexTerm> right = read(node.children[1]);
    if (!left || !right) return std::nullopt;
    std::string a = left->canonical, b = right->canonical;
    if (is_commutative(node.op) && b < a) std::swap(a, b);
    bool shift = node.op == "<<" || node.op == ">>";
    ArithmeticType promoted = common_type(left->type, integer_type("int", false, 1));
    ArithmeticType type = shift ? promoted : common_type(left->type, right->type);
    if (shift && left->type.floating) return std::nullopt;
    return IndexTerm{"(" + a + node.op + b + ")", type, left->uses_builtin || right->uses_builtin, true};
  }

  const SourceLexemes& source_;
  const ExpressionTree& tree_;
  const std::map<std::string, ArithmeticType>& parameters_;
};

std::string strip_casts(std::string canonical) {
  while (canonical.rfind("(", 0) == 0) {
    size_t close = canonical.find(')');
    std::string inside = canonical.substr(1, close - 1);
    if (inside.find_first_of("(+*-.") != std::string::npos) break;
    canonical = canonical.substr(close + 1);
  }
  return canonical;
}

}  // namespace

bool is_index_operator(const std::string& op) {
  return is_commutative(op) || op == "-" || op == "/" || op == "%" || op == "<<" || op == ">>";
}

bool is_index_plus_offset(const SourceLexemes& source, const ExpressionTree& tree, int index) {
  const ExpressionNode& node = tree.nodes[index];
  if (node.kind != NodeKind::binary || (node.op != "+" && node.op != "-")) return false;
  int right = node.children[1];
  while (tree.nodes[right].kind == NodeKind::paren) right = tree.nodes[right].children[0];
  const ExpressionNode& offset = tree.nodes[right];
  return offset.kind == NodeKind::leaf && offset.first == offset.last &&
         source.lexemes[offset.first].kind == TokenKind::number && literal_type(source.lexemes[offset.first].text);
}

bool is_inside_subscript(const ExpressionTree& tree, int index) {
  for (int child = index, parent = tree.nodes[index].parent; parent >= 0;
       child = parent, parent = tree.nodes[parent].parent) {
    const ExpressionNode& node = tree.nodes[parent];
    if (node.kind == NodeKind::subscript) return node.children[1] == child;
    bool arithmetic = node.kind == NodeKind::binary && is_index_operator(node.op);
    if (!arithmetic && node.kind != NodeKind::paren && node.kind != NodeKind::cast && node.kind != NodeKind::prefix)
      return false;
  }
  return false;
}

std::optional<ArithmeticType> arithmetic_type(const std::string& spelled) {
  std::istringstream words(spelled);
  std::string word, name;
  while (words >> word)
    if (word != "const" && word != "volatile" && word != "signed") name += (name.empty() ? "" : " ") + word;
  if (name == "int" || (name.empty() && spelled.find("signed") != std::string::npos))
    return integer_type("int", false, 1);
  if (name == "unsigned" || name == "unsigned int" || name == "uint32_t") return integer_type(name, true, 1);
  if (name == "int32_t") return integer_type(name, false, 1);
  if (name == "long" || name == "long int" || name == "int64_t") return integer_type(name, false, 2);
  if (name == "unsigned long" || name == "size_t" || name == "uint64_t") return integer_type(name, true, 2);
  if (name == "long long") return integer_type(name, false, 3);
  if (name == "unsigned long long") return integer_type(name, true, 3);
  if (name == "float") return ArithmeticType{name, true, false, 1, 32};
  if (name == "double") return ArithmeticType{name, true, false, 2, 64};
  return std::nullopt;
}

std::optional<IndexTerm> index_term(const SourceLexemes& source, const ExpressionTree& tree, int index,
                                    const std::map<std::string, ArithmeticType>& parameters) {
  return IndexTermReader(source, tree, parameters).read(index);
}

// The canonical text without its integer casts: (int)threadIdx.x reads as threadIdx.x.
std::string without_integer_casts(std::string canonical) {
  for (const char* cast : {"(int)", "(unsigned int)"}) {
    for (size_t at = canonical.find(cast); at != std::string::npos; at = canonical.find(cast, at))
      canonical.erase(at, std::string(cast).size());
  }
  return canonical;
}

// blockIdx.x * <literal> + threadIdx.x: the global index of a kernel whose block size a code
// generator wrote as a number (the factors in either order, as sorting with casts leaves them).
bool is_literal_block_index(const std::string& bare) {
  const std::string head = "((", tail = ")+threadIdx.x)";
  if (bare.size() <= head.size() + tail.size() || bare.rfind(head, 0) != 0 ||
      bare.compare(bare.size() - tail.size(), tail.size(), tail) != 0)
    return false;
  std::string product = bare.substr(head.size(), bare.size() - head.size() - tail.size());
  size_t star = product.find('*');
  if (star == std::string::npos) return false;
  std::string left = product.substr(0, star), right = product.substr(star + 1);
  if (left == "blockIdx.x") std::swap(left, right);
  return right == "blockIdx.x" && !left.empty() && left.find_first_not_of("0123456789") == std::string::npos;
}

std::string readable_name(const std::string& canonical) {
  if (is_literal_block_index(without_integer_casts(canonical))) return "idx";
  std::string bare = strip_casts(canonical);
  const std::vector<std::pair<char, std::string>> axes = {{'x', ""}, {'y', "_y"}, {'z', "_z"}};
  for (const auto& [axis, suffix] : axes) {
    std::string a(1, axis);
    if (bare == "((blockDim." + a + "*blockIdx." + a + ")+threadIdx." + a + ")") return std::string("id") + axis;
    if (bare == "(blockDim." + a + "*gridDim." + a + ")") return "stride" + suffix;
    if (bare == "(blockDim." + a + "*blockIdx." + a + ")") return "block_start" + suffix;
  }
  return "index_term";
}

}  // namespace tailforge::cuda_refactor
