// Whose model is under test on a track: the one synth.model_under_test names; else the user's own
// newest active model of the track (registering it is enough, evaluations or not; its retrained
// versions, registered later, take over); else the newest active model with evaluations (the
// baseline learner's versions, the built-in translator). The long-tail detector reads its
// failures and the retrain trigger retrains it. Decides only: the rows come from store/.
#pragma once

#include <optional>
#include <string>

#include "store/models.h"

namespace tailforge {

// A version the offline baseline learner made (`tailforge baseline train`): a command model
// whose argv runs `<tailforge> baseline translate ...`. The one definition of "the baseline learner's".
bool is_baseline_learner_version(const ModelRecord& model);
// A model the user brought: an openai or command model that is not a baseline learner version.
// The built-in translator and the baseline learner's versions are tailforge's own.
bool is_users_model(const ModelRecord& model);

struct UnderTest {
  std::optional<ModelRecord> model;  // none: no model is under test on the track
  std::string why;                   // which rule chose it (or why none), for models and doctor
};

// The model under test of `track`. `configured` (synth.model_under_test) names a model: when it
// is registered for this track it is the one; registered for another track it leaves this track
// to the rules below; not registered at all, no model is under test (until it is).
Result<UnderTest> model_under_test(Database& db, const std::optional<std::string>& configured,
                                   const std::string& track);

}  // namespace tailforge
