// What the two index CSE passes (refactor_index.cpp, refactor_index_offsets.cpp) share: the uses
// of index terms in a body grouped by canonical term, longest first, and the edits that put a
// local's name in place of a use while keeping count of what was replaced.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agents/ptx2cuda/refactor_index_terms.h"
#include "agents/ptx2cuda/refactor_passes.h"
#include "agents/ptx2cuda/refactor_scopes.h"

namespace tailforge::cuda_refactor {

struct IndexUse {
  const ExpressionRegion* region = nullptr;
  int node = -1;
  size_t first = 0, last = 0;  // lexemes replaced: the term with the parentheses around it
  IndexTerm term;
  bool in_subscript = false;
};

// The terms `term_of` reads in the body's regions (parentheses and `X + 9` Index+Offset nodes
// left out: of those, X is the term), grouped by canonical text, longest text first.
using TermReader = std::function<std::optional<IndexTerm>(const ExpressionTree& tree, int node)>;
std::vector<std::vector<IndexUse>> index_uses_longest_first(const SourceLexemes& source,
                                                            const std::vector<ExpressionRegion>& regions,
                                                            const FunctionBody& body, const TermReader& term_of);

// The replacements made in one body: the spans already taken and the token edits.
class UseReplacements {
 public:
  UseReplacements(const SourceLexemes& source, TokenEdits& edits, IndexPass& pass)
      : source_(source), edits_(edits), pass_(pass) {}

  bool overlaps(const IndexUse& use) const;
  std::string text(const IndexUse& use) const { return lexeme_text(source_, use.first, use.last); }
  void take(const IndexUse& use) { taken_.push_back({use.first, use.last}); }
  // Writes `name` in place of the use and counts the characters on both sides.
  void replace(const IndexUse& use, const std::string& name);

 private:
  const SourceLexemes& source_;
  TokenEdits& edits_;
  IndexPass& pass_;
  std::vector<std::pair<size_t, size_t>> taken_;
};

// What a CSE pass over one body works with; each pass derives from it and adds run().
class BodyHoisting {
 public:
  BodyHoisting(const SourceLexemes& source, const std::vector<ExpressionRegion>& regions, const FunctionBody& body,
               TokenEdits& edits, IndexPass& pass)
      : source_(source),
        regions_(regions),
        body_(body),
        scopes_(source, body),
        edits_(edits),
        pass_(pass),
        replacements_(source, edits, pass) {}

 protected:
  const std::string& text(size_t index) const { return source_.lexemes[index].text; }

  const SourceLexemes& source_;
  const std::vector<ExpressionRegion>& regions_;
  FunctionBody body_;
  BodyScopes scopes_;
  TokenEdits& edits_;
  IndexPass& pass_;
  UseReplacements replacements_;
};

// `declaration` to insert right before token `next`: on a line of its own with that token's
// indentation, or after a space when `next` does not start a line.
std::string declaration_line(const TokenizedText& tokenized, size_t next, const std::string& declaration);

// Runs Cse(source, regions, body, edits, pass).run() on every __global__ / __device__ body.
template <typename Cse>
IndexPass hoist_in_device_bodies(const std::string& text) {
  SourceLexemes source = lex_source(text);
  std::vector<ExpressionRegion> regions = expression_regions(source);
  TokenEdits edits = no_edits(source.tokenized);
  IndexPass pass;
  for (const FunctionBody& body : device_function_bodies(source)) Cse(source, regions, body, edits, pass).run();
  pass.text = apply_token_edits(source.tokenized, edits);
  return pass;
}

}  // namespace tailforge::cuda_refactor
