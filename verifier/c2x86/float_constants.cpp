#include "verifier/c2x86/float_constants.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cctype>
#include <charconv>
#include <limits>
#include <map>
#include <optional>
#include <string_view>
#include <system_error>
#include <utility>

#include "text/chars.h"

namespace tailforge {
namespace {

// ---- literals --------------------------------------------------------------------------------

// The fields of an IEEE-754 binary format held in Bits.
template <typename Value, typename Bits>
struct Ieee {
  static constexpr int mantissa_bits = std::numeric_limits<Value>::digits - 1;
  static constexpr Bits sign = Bits{1} << (sizeof(Bits) * 8 - 1);
  static constexpr Bits mantissa = (Bits{1} << mantissa_bits) - 1;
  static constexpr Bits quiet = Bits{1} << (mantissa_bits - 1);
  static constexpr Bits exponent = static_cast<Bits>(~(sign | mantissa));
  static constexpr std::string_view type = sizeof(Bits) == 4 ? "float" : "double";
  static constexpr std::string_view suffix = sizeof(Bits) == 4 ? "f" : "";
};

std::string hex(uint64_t value) {
  char buffer[24];
  return std::string(buffer, std::to_chars(buffer, buffer + sizeof buffer, value, 16).ptr);
}

template <typename Value, typename Bits>
std::string literal_of(Bits bits) {
  using Format = Ieee<Value, Bits>;
  std::string sign = (bits & Format::sign) ? "-" : "";
  if ((bits & Format::exponent) == Format::exponent) {
    Bits mantissa = bits & Format::mantissa;
    if (mantissa == 0) return sign + "inf";
    return sign + ((mantissa & Format::quiet) ? "nan(0x" : "snan(0x") + hex(mantissa & ~Format::quiet) + ")";
  }
  char buffer[64];
  std::string text(buffer, std::to_chars(buffer, buffer + sizeof buffer, std::bit_cast<Value>(bits)).ptr);
  if (text.find_first_of(".e") == std::string::npos) text += ".0";
  return text + std::string(Format::suffix);
}

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), text.begin(), [](char a, char b) {
           return std::tolower(static_cast<unsigned char>(a)) == b;
         });
}

// The payload of `nan(...)`, lower case: empty, decimal or 0x-hex.
std::optional<uint64_t> parse_payload(std::string_view text) {
  int base = 10;
  if (text.empty()) return 0;
  if (text.starts_with("0x")) text.remove_prefix(2), base = 16;
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, base);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

template <typename Value, typename Bits>
Result<Bits> bits_of(std::string_view literal) {
  using Format = Ieee<Value, Bits>;
  auto fail = [&](const std::string& why) {
    return make_error("`" + std::string(literal) + "` is not a " + std::string(Format::type) + " literal: " + why);
  };
  std::string_view text = literal;
  bool negative = !text.empty() && text.front() == '-';
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) text.remove_prefix(1);
  Bits sign = negative ? Format::sign : 0;
  if (text.empty()) return fail("it is empty");

  std::string lower(text);  // from_chars reads neither `0X` nor `P`
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  text = lower;
  if (text == "inf" || text == "infinity") return Bits(sign | Format::exponent);
  bool signalling = text.starts_with("snan");
  if (signalling || text.starts_with("nan")) {
    std::string_view rest = text.substr(signalling ? 4 : 3);
    if (!rest.empty() && (rest.front() != '(' || rest.back() != ')')) return fail("a NaN is nan(0xPAYLOAD)");
    std::optional<uint64_t> payload = parse_payload(rest.empty() ? rest : rest.substr(1, rest.size() - 2));
    if (!payload) return fail("the NaN payload is not a number");
    if (*payload >= Format::quiet) return fail("the NaN payload needs more than the mantissa below the quiet bit");
    if (signalling && *payload == 0) return fail("a signalling NaN needs a payload other than 0");
    return Bits(sign | Format::exponent | (signalling ? 0 : Format::quiet) | *payload);
  }

  bool is_hex = text.starts_with("0x");
  if (text.back() == 'f') {
    if (Format::suffix.empty()) return fail("the suffix `f` makes it a float");
    text.remove_suffix(1);
  }
  if (is_hex) text.remove_prefix(2);
  if (text.empty()) return fail("it has no digits");
  if (is_hex && text.find('p') == std::string_view::npos) return fail("a hex-float needs a `p` exponent");
  if (!is_hex && (text.find_first_not_of("0123456789.e+-") != std::string_view::npos ||
                  !(std::isdigit(static_cast<unsigned char>(text.front())) || text.front() == '.')))
    return fail("expected a decimal, a hex-float (0x1.8p+0), inf, nan(0xP) or snan(0xP)");
  Value value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value,
                                   is_hex ? std::chars_format::hex : std::chars_format::general);
  if (ec == std::errc::result_out_of_range) return fail("out of range, it would round to 0 or infinity");
  if (ec != std::errc() || end != text.data() + text.size()) return fail("not a number");
  return Bits(std::bit_cast<Bits>(value) | sign);
}

// ---- lines -----------------------------------------------------------------------------------

constexpr std::string_view kBlank = " \t\r";

// Lines of text; joining them with '\n' gives the text back.
std::vector<std::string_view> split_lines(const std::string& text) {
  std::vector<std::string_view> lines;
  std::string_view rest = text;
  for (size_t end = rest.find('\n'); end != std::string_view::npos; end = rest.find('\n')) {
    lines.push_back(rest.substr(0, end));
    rest.remove_prefix(end + 1);
  }
  lines.push_back(rest);
  return lines;
}

std::string join_lines(const std::vector<std::string_view>& lines) {
  std::string text;
  for (size_t i = 0; i < lines.size(); ++i) (text += i ? "\n" : "") += lines[i];
  return text;
}

// A directive or instruction line cut into indentation, first token, the blanks after it and
// the rest (trimmed).
struct LineParts {
  std::string_view indent, head, separator, rest;
};

LineParts line_parts(std::string_view line) {
  LineParts parts;
  size_t head = std::min(line.find_first_not_of(" \t"), line.size());
  size_t separator = std::min(line.find_first_of(kBlank, head), line.size());
  size_t rest = std::min(line.find_first_not_of(" \t", separator), line.size());
  parts.indent = line.substr(0, head);
  parts.head = line.substr(head, separator - head);
  parts.separator = line.substr(separator, rest - separator);
  parts.rest = text::trim_blanks(line.substr(rest));
  return parts;
}

// A label definition `NAME:` alone on its line: the name.
std::optional<std::string_view> label_definition(std::string_view line) {
  std::string_view text = text::trim_blanks(line);
  if (text.size() < 2 || text.back() != ':') return std::nullopt;
  text.remove_suffix(1);
  if (text.find_first_of(" \t,(") != std::string_view::npos) return std::nullopt;
  return text;
}

// ---- symbolic lines --------------------------------------------------------------------------

constexpr std::string_view kFloatDirective = ".float_literal";
constexpr std::string_view kDoubleDirective = ".double_literal";

std::string long_line(const LineParts& parts, uint32_t word) {
  return std::string(parts.indent) + ".long" + std::string(parts.separator) +
         std::to_string(static_cast<int32_t>(word));
}

// gcc's `.long` lines for a symbolic line; nullopt when the line is not one.
std::optional<Result<std::string>> interpret_line(std::string_view line) {
  LineParts parts = line_parts(line);
  bool is_float = parts.head == kFloatDirective, is_double = parts.head == kDoubleDirective;
  if (!is_float && !is_double) {
    if (parts.head.starts_with(kFloatDirective) || parts.head.starts_with(kDoubleDirective))
      return Result<std::string>(make_error("`" + std::string(parts.head) + "` is not a symbolic directive"));
    return std::nullopt;
  }
  std::string_view literal = text::trim_blanks(parts.rest.substr(0, parts.rest.find('#')));
  if (literal.empty()) return Result<std::string>(make_error("`" + std::string(parts.head) + "` has no literal"));
  if (is_float) {
    Result<uint32_t> bits = bits_of<float, uint32_t>(literal);
    if (!bits) return Result<std::string>(bits.error());
    return Result<std::string>(long_line(parts, *bits));
  }
  Result<uint64_t> bits = bits_of<double, uint64_t>(literal);
  if (!bits) return Result<std::string>(bits.error());
  return Result<std::string>(long_line(parts, static_cast<uint32_t>(*bits)) + "\n" +
                             long_line(parts, static_cast<uint32_t>(*bits >> 32)));
}

// ---- constant-pool entries -------------------------------------------------------------------

// One `.long`/`.quad` line holding an integer.
struct DataWord {
  LineParts parts;
  int bytes = 0;
  uint64_t value = 0;  // two's complement in `bytes`
};

std::optional<DataWord> data_word(std::string_view line) {
  DataWord word{line_parts(line), 0, 0};
  word.bytes = word.parts.head == ".long" ? 4 : word.parts.head == ".quad" ? 8 : 0;
  std::string_view text = word.parts.rest;
  if (word.bytes == 0 || word.parts.separator.empty() || text.empty()) return std::nullopt;
  bool negative = text.front() == '-';
  if (negative) text.remove_prefix(1);
  int base = starts_with_ignoring_case(text, "0x") ? 16 : 10;
  if (base == 16) text.remove_prefix(2);
  uint64_t magnitude = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), magnitude, base);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  uint64_t limit = word.bytes == 4 ? (negative ? 1ull << 31 : 0xffffffffull) : (negative ? 1ull << 63 : ~0ull);
  if (magnitude > limit) return std::nullopt;
  word.value = negative ? 0 - magnitude : magnitude;
  if (word.bytes == 4) word.value &= 0xffffffffull;
  return word;
}

bool is_data_directive(std::string_view head) {
  static constexpr std::array<std::string_view, 21> kData = {
      ".byte", ".short", ".value", ".word",  ".hword",  ".2byte", ".int",   ".long",  ".4byte",  ".quad",  ".8byte",
      ".octa", ".zero",  ".skip",  ".space", ".string", ".ascii", ".asciz", ".float", ".single", ".double"};
  return std::find(kData.begin(), kData.end(), head) != kData.end();
}

// Scalar loads of a float (binary32) or a double (binary64) from memory: SSE, AVX (v…) and x87.
FloatFormat format_loaded_by(std::string_view mnemonic) {
  static const std::map<std::string, FloatFormat, std::less<>> kLoads = [] {
    static constexpr std::array<std::string_view, 20> kFloat = {
        "movss",    "addss",     "subss",     "mulss",     "divss",      "minss",     "maxss",
        "sqrtss",   "comiss",    "ucomiss",   "rcpss",     "rsqrtss",    "roundss",   "cvtss2sd",
        "cvtss2si", "cvtss2sil", "cvtss2siq", "cvttss2si", "cvttss2sil", "cvttss2siq"};
    static constexpr std::array<std::string_view, 18> kDouble = {
        "movsd",    "addsd",     "subsd",     "mulsd",     "divsd",      "minsd",
        "maxsd",    "sqrtsd",    "comisd",    "ucomisd",   "roundsd",    "cvtsd2ss",
        "cvtsd2si", "cvtsd2sil", "cvtsd2siq", "cvttsd2si", "cvttsd2sil", "cvttsd2siq"};
    static constexpr std::array<std::string_view, 9> kX87 = {"fld",  "fadd",  "fsub", "fsubr", "fmul",
                                                             "fdiv", "fdivr", "fcom", "fcomp"};
    std::map<std::string, FloatFormat, std::less<>> loads;
    for (std::string_view name : kFloat) {
      loads.emplace(name, FloatFormat::binary32);
      loads.emplace("v" + std::string(name), FloatFormat::binary32);
    }
    for (std::string_view name : kDouble) {
      loads.emplace(name, FloatFormat::binary64);
      loads.emplace("v" + std::string(name), FloatFormat::binary64);
    }
    for (std::string_view name : kX87) {
      loads.emplace(std::string(name) + "s", FloatFormat::binary32);
      loads.emplace(std::string(name) + "l", FloatFormat::binary64);
    }
    return loads;
  }();
  auto found = kLoads.find(mnemonic);
  return found == kLoads.end() ? FloatFormat::none : found->second;
}

// What the lines that name a pool label do with it.
struct LabelUses {
  std::vector<std::string> float_loads, double_loads, other_uses;
};

// Adds the uses of `labels` on one instruction or directive line.
void record_uses(std::string_view line, const std::map<std::string_view, size_t>& labels,
                 std::vector<LabelUses>& uses) {
  static constexpr std::array<std::string_view, 11> kNaming = {
      ".type", ".size", ".globl", ".global", ".local", ".weak", ".hidden", ".protected", ".string", ".ascii", ".asciz"};
  if (label_definition(line)) return;
  LineParts parts = line_parts(line);
  if (parts.head.empty() || std::find(kNaming.begin(), kNaming.end(), parts.head) != kNaming.end()) return;
  bool directive = parts.head.front() == '.';
  std::string_view operands = parts.rest.substr(0, directive ? std::string_view::npos : parts.rest.find('#'));
  for (size_t at = 0; at < operands.size();) {
    if (!text::is_assembler_symbol_char(operands[at]) || (at > 0 && (text::is_assembler_symbol_char(operands[at - 1]) || operands[at - 1] == '%'))) {
      ++at;
      continue;
    }
    size_t end = at;
    while (end < operands.size() && text::is_assembler_symbol_char(operands[end])) ++end;
    auto label = labels.find(operands.substr(at, end - at));
    if (label != labels.end()) {
      LabelUses& use = uses[label->second];
      FloatFormat format =
          operands.substr(end).starts_with("(%rip)") ? format_loaded_by(parts.head) : FloatFormat::none;
      std::vector<std::string>& kind = format == FloatFormat::binary32   ? use.float_loads
                                       : format == FloatFormat::binary64 ? use.double_loads
                                                                         : use.other_uses;
      kind.push_back(std::string(parts.head) + (directive ? "" : " " + std::string(operands)));
    }
    at = end;
  }
}

// A label in a .rodata section followed by integer `.long`/`.quad` words, and nothing else.
struct PoolEntry {
  std::string_view label;
  size_t label_line = 0;
  std::vector<DataWord> words;
  int bytes() const {
    int total = 0;
    for (const DataWord& word : words) total += word.bytes;
    return total;
  }
};

// The section a line switches to, if it is a section directive.
std::optional<std::string> section_switch(const LineParts& parts, const std::string& previous) {
  if (parts.head == ".text" || parts.head == ".data" || parts.head == ".bss") return std::string(parts.head);
  if (parts.head == ".section") return std::string(parts.rest.substr(0, parts.rest.find_first_of(", \t")));
  if (parts.head == ".previous") return previous;
  return std::nullopt;
}

std::vector<PoolEntry> pool_entries(const std::vector<std::string_view>& lines) {
  std::vector<PoolEntry> entries;
  std::string section = ".text", previous = ".text";
  for (size_t i = 0; i < lines.size(); ++i) {
    if (std::optional<std::string> next = section_switch(line_parts(lines[i]), previous)) {
      previous = std::exchange(section, *next);
      continue;
    }
    std::optional<std::string_view> label = label_definition(lines[i]);
    if (!label || !section.starts_with(".rodata")) continue;
    PoolEntry entry{*label, i, {}};
    size_t next = i + 1;
    for (; next < lines.size() && is_data_directive(line_parts(lines[next]).head); ++next) {
      std::optional<DataWord> word = data_word(lines[next]);
      if (!word) break;
      entry.words.push_back(*word);
    }
    bool only_words = next == lines.size() || !is_data_directive(line_parts(lines[next]).head);
    if (!entry.words.empty() && only_words) entries.push_back(std::move(entry));
  }
  return entries;
}

std::string first_of(const std::vector<std::string>& uses) { return "`" + uses.front() + "`"; }

// The constant an entry holds as its uses read it; format none with the reason when it is left.
FloatConstant classify(const PoolEntry& entry, const LabelUses& uses) {
  FloatConstant constant;
  constant.label = std::string(entry.label);
  constant.line = static_cast<int64_t>(entry.label_line) + 1;
  bool as_float = !uses.float_loads.empty(), as_double = !uses.double_loads.empty();
  int bytes = entry.bytes();
  if (!uses.other_uses.empty())
    constant.note = "also used by " + first_of(uses.other_uses) + ", not only loaded as a scalar; left as data";
  else if (as_float && as_double)
    constant.note = "loaded as a float (" + first_of(uses.float_loads) + ") and as a double (" +
                    first_of(uses.double_loads) + "); left as data";
  else if (!as_float && !as_double)
    constant.note = "not loaded by any float or double instruction; left as data";
  else if (bytes != (as_float ? 4 : 8))
    constant.note = std::to_string(bytes) + " bytes loaded as one " + (as_float ? "float" : "double") +
                    " (a sign or abs mask, a vector); left as data";
  else
    constant.format = as_float ? FloatFormat::binary32 : FloatFormat::binary64;
  return constant;
}

}  // namespace

int64_t SymbolicAssembly::symbolized() const {
  return std::count_if(constants.begin(), constants.end(), [](const FloatConstant& c) { return c.symbolized; });
}

std::string float_literal(uint32_t bits) { return literal_of<float>(bits); }
std::string double_literal(uint64_t bits) { return literal_of<double>(bits); }
Result<uint32_t> parse_float_literal(const std::string& literal) { return bits_of<float, uint32_t>(literal); }
Result<uint64_t> parse_double_literal(const std::string& literal) { return bits_of<double, uint64_t>(literal); }

Result<SymbolicAssembly> symbolize_float_constants(const std::string& gcc_assembly) {
  std::vector<std::string_view> lines = split_lines(gcc_assembly);
  for (size_t i = 0; i < lines.size(); ++i)
    if (interpret_line(lines[i]))
      return make_error("line " + std::to_string(i + 1) + " is already symbolic: `" + std::string(text::trim_blanks(lines[i])) +
                        "`");

  std::vector<PoolEntry> entries = pool_entries(lines);
  std::map<std::string_view, size_t> by_label;
  for (size_t i = 0; i < entries.size(); ++i) by_label.emplace(entries[i].label, i);
  std::vector<LabelUses> uses(entries.size());
  for (std::string_view line : lines) record_uses(line, by_label, uses);

  SymbolicAssembly symbolic;
  std::vector<std::optional<std::string>> replaced(lines.size());  // per line: its new text, "" to drop it
  for (size_t i = 0; i < entries.size(); ++i) {
    const PoolEntry& entry = entries[i];
    FloatConstant constant = classify(entry, uses[i]);
    if (constant.format != FloatFormat::none) {
      uint64_t bits = entry.words[0].value;
      if (entry.words.size() == 2) bits |= entry.words[1].value << 32;
      bool is_float = constant.format == FloatFormat::binary32;
      constant.literal = is_float ? float_literal(static_cast<uint32_t>(bits)) : double_literal(bits);
      const LineParts& first = entry.words[0].parts;
      std::string line = std::string(first.indent) + std::string(is_float ? kFloatDirective : kDoubleDirective) +
                         std::string(first.separator) + constant.literal;
      std::optional<Result<std::string>> words = interpret_line(line);
      if (!words || !*words) return make_error("symbolizing " + constant.label + " wrote an unreadable `" + line + "`");
      std::string original;
      for (size_t k = 0; k < entry.words.size(); ++k) {
        original += (k ? "\n" : "") + std::string(lines[entry.label_line + 1 + k]);
        replaced[entry.label_line + 1 + k] = k ? "" : line;
      }
      constant.symbolized = true;
      constant.respelled = **words != original;
      constant.note = constant.respelled ? "symbolized; interpreted back in gcc's `.long` spelling" : "symbolized";
    }
    symbolic.constants.push_back(std::move(constant));
  }
  std::vector<std::string_view> kept;
  for (size_t i = 0; i < lines.size(); ++i)
    if (!replaced[i] || !replaced[i]->empty()) kept.push_back(replaced[i] ? std::string_view(*replaced[i]) : lines[i]);
  symbolic.text = join_lines(kept);
  return symbolic;
}

Result<std::string> interpret_float_constants(const std::string& symbolic) {
  std::vector<std::string_view> lines = split_lines(symbolic);
  std::vector<std::string> interpreted(lines.size());
  std::string errors;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::optional<Result<std::string>> words = interpret_line(lines[i]);
    if (words && !*words)
      errors += (errors.empty() ? "" : "; ") + ("line " + std::to_string(i + 1) + ": " + words->message());
    else if (words)
      lines[i] = interpreted[i] = std::move(**words);
  }
  if (!errors.empty()) return make_error("symbolic float constants: " + errors);
  return join_lines(lines);
}

}  // namespace tailforge
