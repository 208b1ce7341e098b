// The statement structure of __global__ / __device__ function bodies for the index CSE: blocks
// and the statements directly inside each, the declarations (parameters and locals) with their
// scopes, and the writes to a variable. Read from lexemes; a body it cannot read has no blocks,
// and then nothing is hoisted in it.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "agents/ptx2cuda/refactor_syntax.h"

namespace tailforge::cuda_refactor {

struct FunctionBody {
  size_t open = 0, close = 0;  // lexemes of '{' and '}'
  size_t parameters_open = 0, parameters_close = 0;
};

// Words after which an identifier is not a declared name (`return x`, `case k`).
bool is_statement_word(const std::string& word);

// The bodies of __global__ and __device__ functions, in text order.
std::vector<FunctionBody> device_function_bodies(const SourceLexemes& source);

struct Block {
  size_t open = 0, close = 0;  // lexemes of '{' and '}'
  int parent = -1;
  bool is_switch = false;                             // a switch body: its case labels forbid declarations between them
  std::vector<std::pair<size_t, size_t>> statements;  // first and last lexeme of each statement inside
};

struct Declaration {
  std::string name;
  // Words joined by spaces; "*" or "[]" appended for pointers and arrays, "shared " put before
  // __shared__ and volatile ones; "" unknown.
  std::string type;
  size_t at = 0;         // lexeme of the name (a parameter's: the body's '{')
  size_t scope_end = 0;  // last lexeme where the name refers to this declaration
};

class BodyScopes {
 public:
  BodyScopes(const SourceLexemes& source, const FunctionBody& body);

  bool readable() const { return readable_; }
  const std::vector<Block>& blocks() const { return blocks_; }
  const std::vector<Declaration>& declarations() const { return declarations_; }
  // The innermost block holding lexeme `at`, and the lowest common block of two.
  int block_of(size_t at) const;
  int common_block(int a, int b) const;
  // The index of the statement of `block` holding lexeme `at`, or -1.
  int statement_of(int block, size_t at) const;
  // The declaration `name` refers to at lexeme `at`, or nullptr (unknown, or a member / builtin).
  const Declaration* visible(const std::string& name, size_t at) const;
  // Whether `name` may be written in lexemes [first, last]: assigned, incremented, declared again,
  // passed bare to a call that is not a known pure math function; or its address taken anywhere.
  bool may_write(const std::string& name, size_t first, size_t last) const;
  bool has_jumps() const { return has_jumps_; }  // goto or a label: control may skip a declaration
  // Whether the identifier at lexeme `at` is a whole argument of a call that may take it by
  // reference (any call but a known math or warp function).
  bool passed_to_unknown_call(size_t at) const;

 private:
  const std::string& text(size_t index) const { return source_.lexemes[index].text; }
  bool is_word(size_t index) const { return source_.lexemes[index].kind == TokenKind::identifier; }
  size_t statement_end(size_t first, size_t limit);
  int read_block(size_t open, int parent, bool is_switch);
  void read_statement(size_t first, size_t last, int block);
  void read_declaration(size_t first, size_t last, size_t scope_end);
  void read_parameters();
  bool address_taken(const std::string& name) const;

  const SourceLexemes& source_;
  FunctionBody body_;
  bool readable_ = true;
  bool has_jumps_ = false;
  std::vector<Block> blocks_;
  std::vector<Declaration> declarations_;
};

}  // namespace tailforge::cuda_refactor
