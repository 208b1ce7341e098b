// Regular expressions over untrusted text: program output, compiler and assembler diagnostics,
// model answers, imported source. Boost.Regex's matcher keeps its backtracking state on the heap,
// so stack use does not grow with the input (libstdc++'s std::regex recurses once per character
// and overflows a thread's stack on a long token). A match that exceeds Boost's complexity or
// memory bound counts as no match; no function here throws while matching.
//
// Patterns follow ECMAScript rules as std::regex did: `^`/`$` anchor the whole text unless
// RegexOptions::multiline, and `.` does not match a newline.
#pragma once

#include <boost/regex.hpp>

#include <functional>
#include <string>
#include <string_view>

namespace tailforge::text {

struct RegexOptions {
  bool icase = false;
  bool multiline = false;  // `^` and `$` also match at line boundaries
};

// A compiled pattern. The constructor throws RegexError on a malformed pattern; loaders of
// policies catch it and name the file and key. It holds the Boost pattern rather than being one,
// so that no call can reach Boost's throwing functions by argument-dependent lookup.
class Regex {
 public:
  Regex() = default;
  explicit Regex(const std::string& pattern, RegexOptions options = {});
  const boost::regex& compiled() const { return compiled_; }

 private:
  boost::regex compiled_;
};

using RegexError = boost::regex_error;
using Match = boost::smatch;
using ViewMatch = boost::match_results<std::string_view::const_iterator>;
using MatchFlags = boost::regex_constants::match_flag_type;
inline constexpr MatchFlags match_continuous = boost::regex_constants::match_continuous;

// Whether `pattern` matches somewhere in `text`; `match` receives the groups.
bool regex_search(const std::string& text, Match& match, const Regex& pattern,
                  MatchFlags flags = boost::regex_constants::match_default) noexcept;
bool regex_search(const std::string& text, const Regex& pattern) noexcept;
bool regex_search(std::string::const_iterator begin, std::string::const_iterator end, Match& match,
                  const Regex& pattern) noexcept;
bool regex_search(const char* begin, const char* end, const Regex& pattern) noexcept;
bool regex_search(std::string_view text, ViewMatch& match, const Regex& pattern) noexcept;

// Whether `pattern` matches all of `text`.
bool regex_match(const std::string& text, Match& match, const Regex& pattern) noexcept;
bool regex_match(const std::string& text, const Regex& pattern) noexcept;

// `text` with every match replaced by `format` ($& the match, $1... its groups, $$ a dollar; a
// backslash is an ordinary character). On a match past the complexity bound, `text` unchanged.
std::string regex_replace(const std::string& text, const Regex& pattern, const std::string& format) noexcept;

// Calls `visit` for each non-overlapping match, in order; stops early when it returns false.
// Returns the number of matches visited.
size_t for_each_match(const std::string& text, const Regex& pattern,
                      const std::function<bool(const Match&)>& visit) noexcept;

// The number of non-overlapping matches of `pattern` in `text`.
size_t count_matches(const std::string& text, const Regex& pattern) noexcept;

}  // namespace tailforge::text
