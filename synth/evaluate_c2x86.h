// The c2x86 track's side of model evaluation (synth/evaluate.h): the model reads the function's
// translation unit and answers x86-64 assembly in the symbolic form (float and double constants as
// literals); the answer's literals are interpreted (c2x86.float_constant), it is checked for jump
// tables, assembled, linked with the item's driver and run on the IO cases recorded when the item
// was verified (c2x86.jump_table, c2x86.assemble, c2x86.link, c2x86.io).
#pragma once

#include <string>
#include <vector>

#include "store/samples.h"
#include "synth/evaluation_setup.h"

namespace tailforge {

// Judges `answer` for the c2x86 item `item`; an error when the item's function or recorded cases
// cannot be read, or the sandbox could not start the program (the item is not judged now).
Result<std::vector<StageResult>> judge_c2x86_answer(Database& db, const Sample& item, const std::string& answer,
                                                    const EvaluationSetup& setup);

}  // namespace tailforge
