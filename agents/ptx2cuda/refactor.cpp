#include "agents/ptx2cuda/refactor.h"

#include "agents/ptx2cuda/refactor_passes.h"

namespace tailforge {

RefactorResult refactor_cuda(const std::string& source) {
  cuda_refactor::ParenthesisPass parentheses = cuda_refactor::remove_redundant_parentheses(source);
  cuda_refactor::IndexPass index = cuda_refactor::extract_index_expressions(parentheses.text);
  RefactorResult result;
  result.text = index.text;
  result.parentheses_removed = parentheses.pairs_removed;
  result.redundant_parenthesis_characters_before = 2 * parentheses.pairs_removed;
  result.redundant_parenthesis_characters_after = 2 * cuda_refactor::count_redundant_parentheses(index.text);
  result.parenthesized_expression_characters_before = parentheses.expression_characters_before;
  result.parenthesized_expression_characters_after = parentheses.expression_characters_after;
  result.index_expressions_extracted = index.expressions_extracted;
  result.index_occurrences_replaced = index.occurrences_replaced;
  result.index_arithmetic_characters_before = index.characters_before;
  result.index_arithmetic_characters_after = index.characters_after;
  return result;
}

}  // namespace tailforge
