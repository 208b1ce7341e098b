#include "agents/ptx2cuda/refactor.h"

#include "agents/ptx2cuda/refactor_passes.h"

namespace tailforge {
namespace {

const int kMaximumRounds = 8;

}  // namespace

RefactorResult refactor_cuda(const std::string& source) {
  cuda_refactor::ParenthesisPass parentheses = cuda_refactor::remove_redundant_parentheses(source);
  RefactorResult result;
  result.text = parentheses.text;
  result.parentheses_removed = parentheses.pairs_removed;
  result.redundant_parenthesis_characters_before = 2 * parentheses.pairs_removed;
  result.parenthesized_expression_characters_before = parentheses.expression_characters_before;
  result.parenthesized_expression_characters_after = parentheses.expression_characters_after;
  // A local's declaration holds the shorter terms it is made of, which a second round can name in
  // turn; every change shortens the text, so the rounds end, and refactoring the result again
  // changes nothing.
  for (int round = 0; round < kMaximumRounds; ++round) {
    cuda_refactor::IndexPass offsets = cuda_refactor::extract_offset_index_expressions(result.text);
    cuda_refactor::IndexPass index = cuda_refactor::extract_index_expressions(offsets.text);
    if (index.text == result.text) break;
    result.text = index.text;
    result.index_expressions_extracted += offsets.expressions_extracted + index.expressions_extracted;
    result.index_occurrences_replaced += offsets.occurrences_replaced + index.occurrences_replaced;
    result.index_arithmetic_characters_before += offsets.characters_before + index.characters_before;
    result.index_arithmetic_characters_after += offsets.characters_after + index.characters_after;
  }
  result.redundant_parenthesis_characters_after = 2 * cuda_refactor::count_redundant_parentheses(result.text);
  result.repeated_index_characters_before = cuda_refactor::repeated_index_characters(source);
  result.repeated_index_characters_after = cuda_refactor::repeated_index_characters(result.text);
  result.device_body_characters_before = cuda_refactor::device_body_characters(source);
  result.device_body_characters_after = cuda_refactor::device_body_characters(result.text);
  return result;
}

}  // namespace tailforge
