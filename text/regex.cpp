#include "text/regex.h"

#include <stdexcept>

namespace tailforge::text {
namespace {

boost::regex::flag_type syntax_flags(RegexOptions options) {
  // ECMAScript syntax; without the Perl m and s modifiers, so that ^/$ anchor the text and `.`
  // stops at a newline, as in std::regex.
  boost::regex::flag_type flags = boost::regex::ECMAScript | boost::regex::no_mod_s;
  if (!options.multiline) flags |= boost::regex::no_mod_m;
  if (options.icase) flags |= boost::regex::icase;
  return flags;
}

// Runs one Boost call; past the matcher's complexity or memory bound it throws, which here means
// no match (and cleared groups).
template <class Call>
bool matched(Call call) noexcept {
  try {
    return call();
  } catch (const std::exception&) {
    return false;
  }
}

template <class Call, class Groups>
bool matched(Call call, Groups& groups) noexcept {
  if (matched(call)) return true;
  groups = Groups();
  return false;
}

}  // namespace

Regex::Regex(const std::string& pattern, RegexOptions options) : compiled_(pattern, syntax_flags(options)) {}

bool regex_search(const std::string& text, Match& match, const Regex& pattern, MatchFlags flags) noexcept {
  return matched([&] { return boost::regex_search(text, match, pattern.compiled(), flags); }, match);
}

bool regex_search(const std::string& text, const Regex& pattern) noexcept {
  return matched([&] { return boost::regex_search(text, pattern.compiled()); });
}

bool regex_search(std::string::const_iterator begin, std::string::const_iterator end, Match& match,
                  const Regex& pattern) noexcept {
  return matched([&] { return boost::regex_search(begin, end, match, pattern.compiled()); }, match);
}

bool regex_search(const char* begin, const char* end, const Regex& pattern) noexcept {
  return matched([&] { return boost::regex_search(begin, end, pattern.compiled()); });
}

bool regex_search(std::string_view text, ViewMatch& match, const Regex& pattern) noexcept {
  return matched([&] { return boost::regex_search(text.begin(), text.end(), match, pattern.compiled()); }, match);
}

bool regex_match(const std::string& text, Match& match, const Regex& pattern) noexcept {
  return matched([&] { return boost::regex_match(text, match, pattern.compiled()); }, match);
}

bool regex_match(const std::string& text, const Regex& pattern) noexcept {
  return matched([&] { return boost::regex_match(text, pattern.compiled()); });
}

std::string regex_replace(const std::string& text, const Regex& pattern, const std::string& format) noexcept {
  try {
    // format_default treats a backslash as an escape; std::regex's ECMAScript format does not.
    // Doubling backslashes keeps them literal, as they were.
    std::string literal_backslashes;
    literal_backslashes.reserve(format.size());
    for (char c : format) {
      literal_backslashes += c;
      if (c == '\\') literal_backslashes += '\\';
    }
    return boost::regex_replace(text, pattern.compiled(), literal_backslashes);
  } catch (const std::exception&) {
    return text;
  }
}

size_t for_each_match(const std::string& text, const Regex& pattern,
                      const std::function<bool(const Match&)>& visit) noexcept {
  size_t visited = 0;
  try {
    for (boost::sregex_iterator it(text.begin(), text.end(), pattern.compiled()), end; it != end; ++it) {
      ++visited;
      if (!visit(*it)) break;
    }
  } catch (const std::exception&) {  // the matcher's bound: the matches found so far stand
  }
  return visited;
}

size_t count_matches(const std::string& text, const Regex& pattern) noexcept {
  return for_each_match(text, pattern, [](const Match&) { return true; });
}

}  // namespace tailforge::text
