#include "store/schema.h"

namespace tailforge {

namespace {

// Version 1: every entity of DESIGN.md's data model. Times are *_ms (Unix milliseconds).
const char* kVersion1 = R"sql(
CREATE TABLE cycle (
  id            INTEGER PRIMARY KEY,
  started_ms    INTEGER NOT NULL,
  finished_ms   INTEGER,
  state         TEXT NOT NULL DEFAULT 'running' CHECK (state IN ('running','done','interrupted')),
  seed          INTEGER NOT NULL DEFAULT 0,
  planned       INTEGER NOT NULL DEFAULT 0,
  generated     INTEGER NOT NULL DEFAULT 0,
  verified      INTEGER NOT NULL DEFAULT 0,
  failed        INTEGER NOT NULL DEFAULT 0,
  synthesized   INTEGER NOT NULL DEFAULT 0,
  summary       TEXT NOT NULL DEFAULT '{}'
);

CREATE TABLE sample (
  id            TEXT PRIMARY KEY,              -- SHA-256 of the normalized text
  track         TEXT NOT NULL,
  origin        TEXT NOT NULL CHECK (origin IN ('template','llm','synthesized','imported','mutated')),
  language      TEXT NOT NULL,
  text          TEXT NOT NULL,
  template_id   TEXT,
  persona       TEXT,                          -- JSON object
  variables     TEXT,                          -- JSON object
  seed          INTEGER,
  model         TEXT,
  prompt_hash   TEXT,
  domain        TEXT,
  features      TEXT NOT NULL DEFAULT '[]',    -- JSON array of feature tags
  status        TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','verified','failed')),
  cycle_id      INTEGER REFERENCES cycle(id),
  created_ms    INTEGER NOT NULL
);
CREATE INDEX sample_track_status ON sample(track, status);
CREATE INDEX sample_origin ON sample(origin);
CREATE INDEX sample_cycle ON sample(cycle_id);

CREATE TABLE sample_feature (
  sample_id     TEXT NOT NULL REFERENCES sample(id) ON DELETE CASCADE,
  tag           TEXT NOT NULL,
  PRIMARY KEY (tag, sample_id)
) WITHOUT ROWID;

CREATE TABLE artifact (
  id                TEXT PRIMARY KEY,          -- SHA-256 of the content
  kind              TEXT NOT NULL,             -- hip, ptx, sass, rdna3_asm, host_asm, x86_asm, rolled_ptx, stdout, ...
  content           BLOB NOT NULL,
  size              INTEGER NOT NULL,
  command           TEXT,                      -- the exact argv (JSON array) of the first producer
  toolchain_version TEXT,
  created_ms        INTEGER NOT NULL
);

CREATE TABLE sample_artifact (
  sample_id     TEXT NOT NULL REFERENCES sample(id) ON DELETE CASCADE,
  stage         TEXT NOT NULL,
  name          TEXT NOT NULL,                 -- e.g. 'ptx', 'sass', 'ptx:_Z3addPfS_i'
  artifact_id   TEXT NOT NULL REFERENCES artifact(id),
  PRIMARY KEY (sample_id, stage, name)
) WITHOUT ROWID;

CREATE TABLE verification (
  id                INTEGER PRIMARY KEY,
  sample_id         TEXT NOT NULL REFERENCES sample(id) ON DELETE CASCADE,
  stage             TEXT NOT NULL,
  status            TEXT NOT NULL CHECK (status IN ('ok','fail','timeout','skipped','error')),
  exit_code         INTEGER,
  signal            INTEGER,
  reason            TEXT,
  diagnostics       TEXT,
  seconds           REAL NOT NULL DEFAULT 0,
  peak_rss_kb       INTEGER,
  host              TEXT,
  toolchain_version TEXT,
  cached            INTEGER NOT NULL DEFAULT 0,
  created_ms        INTEGER NOT NULL,
  UNIQUE (sample_id, stage)
);
CREATE INDEX verification_stage_status ON verification(stage, status);

CREATE TABLE category (
  path          TEXT PRIMARY KEY,              -- e.g. amd.asm.register_alignment
  parent        TEXT,
  description   TEXT NOT NULL DEFAULT ''
);

CREATE TABLE model (
  id            INTEGER PRIMARY KEY,
  name          TEXT NOT NULL UNIQUE,
  endpoint      TEXT,
  parameters    TEXT NOT NULL DEFAULT '{}',
  retrain_event_id INTEGER,
  created_ms    INTEGER NOT NULL
);

CREATE TABLE failure (
  id            INTEGER PRIMARY KEY,
  sample_id     TEXT NOT NULL REFERENCES sample(id) ON DELETE CASCADE,
  verification_id INTEGER REFERENCES verification(id) ON DELETE CASCADE,
  stage         TEXT NOT NULL,
  category      TEXT NOT NULL,
  top_category  TEXT NOT NULL,                 -- first path component, for fast grouping
  message       TEXT NOT NULL DEFAULT '',
  evidence_file TEXT,
  evidence_line INTEGER,
  track         TEXT NOT NULL,
  origin        TEXT NOT NULL,
  domain        TEXT,
  agent         TEXT,
  model_id      INTEGER REFERENCES model(id),
  created_ms    INTEGER NOT NULL,
  UNIQUE (sample_id, stage)
);
CREATE INDEX failure_category_time ON failure(category, created_ms);
CREATE INDEX failure_time ON failure(created_ms);
CREATE INDEX failure_top ON failure(top_category);
CREATE INDEX failure_track_time ON failure(track, created_ms, category, top_category);

CREATE TABLE lineage (
  parent_id     TEXT NOT NULL REFERENCES sample(id),
  child_id      TEXT NOT NULL REFERENCES sample(id),
  relation      TEXT NOT NULL CHECK (relation IN ('synthesized_from','mutated_from','translated_by','compiled_to','evaluated_by')),
  agent         TEXT,
  model         TEXT,
  prompt_hash   TEXT,
  reason        TEXT,
  created_ms    INTEGER NOT NULL,
  PRIMARY KEY (parent_id, child_id, relation)
) WITHOUT ROWID;
CREATE INDEX lineage_child ON lineage(child_id);

CREATE TABLE evaluation (
  id            INTEGER PRIMARY KEY,
  model_id      INTEGER NOT NULL REFERENCES model(id),
  sample_id     TEXT NOT NULL REFERENCES sample(id),
  category      TEXT,
  ok            INTEGER NOT NULL,
  metric        REAL,
  details       TEXT,
  created_ms    INTEGER NOT NULL,
  UNIQUE (model_id, sample_id)
);

CREATE TABLE retrain_event (
  id            INTEGER PRIMARY KEY,
  cycle_id      INTEGER REFERENCES cycle(id),
  reason        TEXT NOT NULL,
  snapshot_hash TEXT NOT NULL UNIQUE,          -- a trigger never fires twice for one snapshot
  snapshot_dir  TEXT,
  manifest      TEXT,
  command       TEXT,
  status        TEXT NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','running','ok','failed')),
  output        TEXT,
  seconds       REAL,
  model_id      INTEGER REFERENCES model(id),
  created_ms    INTEGER NOT NULL
);

CREATE TABLE job (
  id              INTEGER PRIMARY KEY,
  kind            TEXT NOT NULL,
  payload         TEXT NOT NULL DEFAULT '{}',
  state           TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending','leased','done','dead')),
  priority        INTEGER NOT NULL DEFAULT 0,
  idempotency_key TEXT UNIQUE,
  lease_owner     TEXT,
  lease_expires_ms INTEGER,
  attempts        INTEGER NOT NULL DEFAULT 0,
  max_attempts    INTEGER NOT NULL DEFAULT 5,
  interruptions   INTEGER NOT NULL DEFAULT 0,   -- leases lost to a daemon that died
  next_attempt_ms INTEGER NOT NULL DEFAULT 0,
  last_error      TEXT,
  created_ms      INTEGER NOT NULL,
  updated_ms      INTEGER NOT NULL
);
CREATE INDEX job_ready ON job(priority DESC, id) WHERE state IN ('pending','leased');
CREATE INDEX job_state ON job(state);

CREATE TABLE cache_entry (
  namespace     TEXT NOT NULL,                 -- 'compile', 'llm', ...
  key           TEXT NOT NULL,
  value         BLOB NOT NULL,
  created_ms    INTEGER NOT NULL,
  hits          INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (namespace, key)
) WITHOUT ROWID;

CREATE TABLE tail_report (
  cycle_id      INTEGER NOT NULL REFERENCES cycle(id),
  rank          INTEGER NOT NULL,
  dimension     TEXT NOT NULL,                 -- feature, domain, category
  name          TEXT NOT NULL,
  signal        TEXT NOT NULL,                 -- corpus_share, pipeline_yield, model_failure
  score         REAL NOT NULL,
  numbers       TEXT NOT NULL DEFAULT '{}',    -- JSON: the figures that put it there
  PRIMARY KEY (cycle_id, rank)
);
)sql";

// Version 2: one row per LLM request, for token budgets and the metrics endpoint.
const char* kVersion2 = R"sql(
CREATE TABLE llm_call (
  id                INTEGER PRIMARY KEY,
  endpoint          TEXT NOT NULL,
  model             TEXT NOT NULL,
  role              TEXT NOT NULL,             -- generator, translator, synthesizer
  prompt_hash       TEXT NOT NULL,
  status            TEXT NOT NULL,             -- ok, or the agent.llm.<reason> failure
  prompt_tokens     INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  reasoning_tokens  INTEGER NOT NULL DEFAULT 0,
  latency_ms        INTEGER NOT NULL DEFAULT 0,
  finish_reason     TEXT,
  cached            INTEGER NOT NULL DEFAULT 0,
  created_ms        INTEGER NOT NULL
);
CREATE INDEX llm_call_time ON llm_call(created_ms);
)sql";

// Version 3: the cache keeps each entry's size and last use, so it can be held under a byte cap
// by evicting the least recently used entries (compiled executables are megabytes each). The
// value moves to the last column of a rowid table, so reading sizes never walks a value's
// overflow pages, and the (namespace, used_ms, bytes) index answers both the size and the order.
const char* kVersion3 = R"sql(
CREATE TABLE cache_entry_v3 (
  id            INTEGER PRIMARY KEY,
  namespace     TEXT NOT NULL,                 -- 'compile', 'llm', ...
  key           TEXT NOT NULL,
  created_ms    INTEGER NOT NULL,
  used_ms       INTEGER NOT NULL,              -- stored or last looked up
  hits          INTEGER NOT NULL DEFAULT 0,
  bytes         INTEGER NOT NULL,              -- length of value
  value         BLOB NOT NULL,
  UNIQUE (namespace, key)
);
INSERT INTO cache_entry_v3 (namespace, key, created_ms, used_ms, hits, bytes, value)
  SELECT namespace, key, created_ms, created_ms, hits, length(value), value FROM cache_entry;
DROP TABLE cache_entry;
ALTER TABLE cache_entry_v3 RENAME TO cache_entry;
CREATE INDEX cache_entry_lru ON cache_entry(namespace, used_ms, bytes);
)sql";


// Version 4: the self-refinement loop. Models under test get a kind, a track, a parent version
// and an active flag; the frozen evaluation set (eval_item) with its versions; one evaluation row
// per model and item with its first failing stage and category (stage rows as detail); the
// samples that went into a training split (never eligible for evaluation); and retrain events
// that a crash interrupted, with their attempts and the parent model they retrain.
const char* kVersion4 = R"sql(
ALTER TABLE model ADD COLUMN kind TEXT NOT NULL DEFAULT 'openai';   -- openai, command, builtin
ALTER TABLE model ADD COLUMN track TEXT NOT NULL DEFAULT 'cuda2hip';
ALTER TABLE model ADD COLUMN parent_id INTEGER REFERENCES model(id);
ALTER TABLE model ADD COLUMN active INTEGER NOT NULL DEFAULT 1;

CREATE TABLE eval_item (
  track               TEXT NOT NULL,
  sample_id           TEXT NOT NULL REFERENCES sample(id),
  version             INTEGER NOT NULL,          -- the eval set version that added it
  reference_target_id TEXT REFERENCES artifact(id),  -- the oracle's answer (e.g. its HIP)
  reference_stdout_id TEXT REFERENCES artifact(id),  -- the source program's stdout, where it ran
  added_ms            INTEGER NOT NULL,
  PRIMARY KEY (track, sample_id)
) WITHOUT ROWID;
CREATE INDEX eval_item_version ON eval_item(track, version);

CREATE TABLE evaluation_v4 (
  id            INTEGER PRIMARY KEY,
  model_id      INTEGER NOT NULL REFERENCES model(id),
  sample_id     TEXT NOT NULL REFERENCES sample(id),
  track         TEXT NOT NULL,
  ok            INTEGER NOT NULL,
  status        TEXT NOT NULL CHECK (status IN ('ok','fail','timeout','error')),
  stage         TEXT,                            -- the first failing stage
  category      TEXT,                            -- its categorized failure; NULL when ok
  top_category  TEXT,
  message       TEXT,                            -- the evidence line
  checked       TEXT NOT NULL DEFAULT '',        -- the deepest check that ran: answer, compile, run, compare
  output_id     TEXT REFERENCES artifact(id),    -- the model's answer
  metric        REAL,
  seconds       REAL NOT NULL DEFAULT 0,
  details       TEXT,
  created_ms    INTEGER NOT NULL,
  UNIQUE (model_id, sample_id)
);
INSERT INTO evaluation_v4 (id, model_id, sample_id, track, ok, status, category, top_category, metric, details,
                           created_ms)
  SELECT e.id, e.model_id, e.sample_id, s.track, e.ok, CASE WHEN e.ok THEN 'ok' ELSE 'fail' END, e.category,
         substr(e.category, 1, instr(e.category || '.', '.') - 1), e.metric, e.details, e.created_ms
  FROM evaluation e JOIN sample s ON s.id = e.sample_id;
DROP TABLE evaluation;
ALTER TABLE evaluation_v4 RENAME TO evaluation;
CREATE INDEX evaluation_model_category ON evaluation(model_id, category);

CREATE TABLE evaluation_stage (
  evaluation_id INTEGER NOT NULL REFERENCES evaluation(id) ON DELETE CASCADE,
  position      INTEGER NOT NULL,                -- the stage's place in the chain, from 0
  stage         TEXT NOT NULL,
  status        TEXT NOT NULL,
  category      TEXT,
  message       TEXT,
  seconds       REAL NOT NULL DEFAULT 0,
  cached        INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (evaluation_id, position)
) WITHOUT ROWID;

CREATE TABLE trained_sample (
  sample_id     TEXT PRIMARY KEY REFERENCES sample(id),
  snapshot_hash TEXT NOT NULL,                   -- the first export whose training split held it
  created_ms    INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE retrain_event_v4 (
  id              INTEGER PRIMARY KEY,
  cycle_id        INTEGER REFERENCES cycle(id),
  reason          TEXT NOT NULL,
  snapshot_hash   TEXT NOT NULL UNIQUE,
  snapshot_dir    TEXT,
  manifest        TEXT,
  command         TEXT,
  status          TEXT NOT NULL DEFAULT 'pending'
                  CHECK (status IN ('pending','running','ok','failed','interrupted')),
  output          TEXT,
  seconds         REAL,
  model_id        INTEGER REFERENCES model(id),  -- the version the trainer registered
  parent_model_id INTEGER REFERENCES model(id),  -- the version it retrains
  attempts        INTEGER NOT NULL DEFAULT 1,
  created_ms      INTEGER NOT NULL
);
INSERT INTO retrain_event_v4 (id, cycle_id, reason, snapshot_hash, snapshot_dir, manifest, command, status, output,
                              seconds, model_id, created_ms)
  SELECT id, cycle_id, reason, snapshot_hash, snapshot_dir, manifest, command, status, output, seconds, model_id,
         created_ms FROM retrain_event;
DROP TABLE retrain_event;
ALTER TABLE retrain_event_v4 RENAME TO retrain_event;
)sql";

// Version 5: the taxonomy counts a corpus failure once per (sample, category), at its first stage
// row. `novelty` says what a stage row adds: 2 the sample's first failure, 1 the first row of
// another category of the sample, 0 a repeat at a later stage (insert_failure keeps it). The
// (category, stage, novelty) index answers the whole tree in one pass; the track index becomes
// covering for the filtered counts, trend and distinct failed samples. evaluation_model_item
// holds what a model's taxonomy and the comparison of two models read, in item order.
const char* kVersion5 = R"sql(
ALTER TABLE failure ADD COLUMN novelty INTEGER NOT NULL DEFAULT 2;
UPDATE failure SET novelty = ranked.novelty FROM (
  SELECT id, CASE WHEN row_number() OVER (PARTITION BY sample_id ORDER BY created_ms, id) = 1 THEN 2
                  WHEN row_number() OVER (PARTITION BY sample_id, category ORDER BY created_ms, id) = 1 THEN 1
                  ELSE 0 END AS novelty
  FROM failure) AS ranked
WHERE failure.id = ranked.id AND failure.novelty <> ranked.novelty;
CREATE INDEX failure_category_stage ON failure(category, stage, novelty, created_ms);
DROP INDEX failure_track_time;
CREATE INDEX failure_track_time_novelty ON failure(track, created_ms, category, top_category, stage, novelty, sample_id);
CREATE INDEX evaluation_model_item ON evaluation(model_id, sample_id, ok, category, stage, created_ms, top_category, track);
)sql";

// Version 6: an artifact's content is stored once, under the kind of its first producer, so two
// kinds with the same text (c2x86's symbolic assembly of a function without float constants is
// gcc's assembly) shared one kind. Each link now keeps the kind its producer gave it.
const char* kVersion6 = R"sql(
ALTER TABLE sample_artifact ADD COLUMN kind TEXT NOT NULL DEFAULT '';
UPDATE sample_artifact SET kind = (SELECT a.kind FROM artifact a WHERE a.id = sample_artifact.artifact_id);
)sql";

// Version 7: artifact retention (store/retention) sums artifact sizes every few seconds and
// unlinks artifacts by id.
const char* kVersion7 = R"sql(
CREATE INDEX artifact_size ON artifact(size);
CREATE INDEX sample_artifact_artifact ON sample_artifact(artifact_id);
)sql";

// Version 8: synthesis keeps the corpus's near-duplicate index here (synth/stored_index): each
// sample's MinHash signature and LSH buckets under the options that made them, and how far
// (sample rowid) each track's index has caught up.
const char* kVersion8 = R"sql(
CREATE TABLE sample_signature (
  sample_id     TEXT NOT NULL REFERENCES sample(id) ON DELETE CASCADE,
  options_key   INTEGER NOT NULL,
  signature     BLOB NOT NULL,                   -- uint32 MinHash values, native byte order
  PRIMARY KEY (sample_id, options_key)
) WITHOUT ROWID;
CREATE TABLE sample_lsh (
  track         TEXT NOT NULL,
  options_key   INTEGER NOT NULL,
  band          INTEGER NOT NULL,
  bucket        INTEGER NOT NULL,
  sample_id     TEXT NOT NULL REFERENCES sample(id) ON DELETE CASCADE,
  PRIMARY KEY (track, options_key, band, bucket, sample_id)
) WITHOUT ROWID;
CREATE INDEX sample_lsh_sample ON sample_lsh(sample_id);
CREATE TABLE sample_lsh_progress (
  track         TEXT NOT NULL,
  options_key   INTEGER NOT NULL,
  last_rowid    INTEGER NOT NULL,
  PRIMARY KEY (track, options_key)
) WITHOUT ROWID;
)sql";

// Version 9: cycles overlap (the next one starts while the current one finishes its steps), and a
// sample of the next cycle verified meanwhile keeps status 'pending' with its outcome here until
// every earlier cycle has finished, so that no step of an earlier cycle sees it.
const char* kVersion9 = R"sql(
CREATE TABLE deferred_sample_status (
  sample_id     TEXT PRIMARY KEY REFERENCES sample(id) ON DELETE CASCADE,
  status        TEXT NOT NULL CHECK (status IN ('verified','failed'))
) WITHOUT ROWID;
)sql";

// The kernelopt track (ConCuR): tasks with their reference kernel, candidates (each also a sample
// of track kernelopt, so failures and taxonomy queries cover them), every measurement of a
// candidate against its task's reference, and each curation run with its choices.
const char* kVersion10 = R"sql(
CREATE TABLE kernelopt_task (
  name          TEXT PRIMARY KEY,
  operator_type TEXT NOT NULL,
  domain        TEXT NOT NULL,
  description   TEXT NOT NULL,
  spec          TEXT NOT NULL,                 -- JSON: inputs, output, input range, tolerance
  reference_source TEXT NOT NULL,
  origin        TEXT NOT NULL,                 -- builtin or imported
  created_ms    INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE kernelopt_candidate (
  id            INTEGER PRIMARY KEY,
  sample_id     TEXT NOT NULL REFERENCES sample(id) ON DELETE CASCADE,
  task          TEXT NOT NULL REFERENCES kernelopt_task(name) ON DELETE CASCADE,
  strategy      TEXT NOT NULL,
  origin        TEXT NOT NULL,                 -- builtin or model
  model         TEXT NOT NULL DEFAULT '',
  reasoning     TEXT NOT NULL,
  reasoning_length INTEGER NOT NULL,
  created_ms    INTEGER NOT NULL,
  UNIQUE (task, sample_id, model)
);
CREATE INDEX kernelopt_candidate_task ON kernelopt_candidate(task);

CREATE TABLE kernelopt_measurement (
  id            INTEGER PRIMARY KEY,
  candidate_id  INTEGER NOT NULL REFERENCES kernelopt_candidate(id) ON DELETE CASCADE,
  status        TEXT NOT NULL CHECK (status IN ('ok','fail','skipped','error')),
  category      TEXT NOT NULL DEFAULT '',
  detail        TEXT NOT NULL DEFAULT '',
  reference_ms  REAL,
  reference_spread REAL,
  candidate_ms  REAL,
  candidate_spread REAL,
  speedup       REAL,
  max_error     REAL,
  device        TEXT NOT NULL DEFAULT '',
  sm_clock_khz  INTEGER,
  memory_clock_khz INTEGER,
  host          TEXT NOT NULL DEFAULT '',
  measured_ms   INTEGER NOT NULL
);
CREATE INDEX kernelopt_measurement_candidate ON kernelopt_measurement(candidate_id, id);

CREATE TABLE kernelopt_curation (
  id            INTEGER PRIMARY KEY,
  options       TEXT NOT NULL,                 -- JSON
  result        TEXT NOT NULL,                 -- JSON: choices, skipped tasks, difficulty, note
  created_ms    INTEGER NOT NULL
);

CREATE TABLE kernelopt_curation_choice (
  curation_id   INTEGER NOT NULL REFERENCES kernelopt_curation(id) ON DELETE CASCADE,
  candidate_id  INTEGER NOT NULL REFERENCES kernelopt_candidate(id) ON DELETE CASCADE,
  position      INTEGER NOT NULL,
  rule          TEXT NOT NULL,
  why           TEXT NOT NULL,
  PRIMARY KEY (curation_id, candidate_id)
) WITHOUT ROWID;
)sql";

// Indexes for the dashboard's reads on a big store: the growth series (verified samples by time,
// track and origin) and the newest samples, read from the index alone; a track's feature counts
// reached from its verified samples instead of from every feature row; the failure trend.
const char* kVersion11 = R"sql(
CREATE INDEX sample_status_time ON sample(status, created_ms, track, origin);
CREATE INDEX sample_created ON sample(created_ms);
CREATE INDEX sample_feature_sample ON sample_feature(sample_id, tag);
-- The taxonomy's trend without sample or stage filters: a third of the width of failure_track_time_novelty.
CREATE INDEX failure_novelty_time ON failure(novelty, created_ms, top_category);
)sql";

// Scale-out: the workers that lease jobs (the daemon's own pool and `tailforge worker` processes),
// what each can run, and artifacts workers uploaded for a result not yet posted.
const char* kVersion12 = R"sql(
CREATE TABLE worker (
  name          TEXT PRIMARY KEY,              -- "local" for the daemon's own pool, else host:pid or --name
  host          TEXT NOT NULL,
  capabilities  TEXT NOT NULL DEFAULT '{}',    -- JSON: stages, tools, gpus
  kinds         TEXT NOT NULL DEFAULT '[]',    -- JSON: the job kinds it may lease
  missing       TEXT NOT NULL DEFAULT '{}',    -- JSON: kind -> the needed stages it lacks
  started_ms    INTEGER NOT NULL,
  last_seen_ms  INTEGER NOT NULL,
  job_id        INTEGER,                       -- the job it holds now
  jobs_done     INTEGER NOT NULL DEFAULT 0,
  jobs_failed   INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE artifact_upload (
  id            TEXT PRIMARY KEY,              -- SHA-256 of the content
  content       BLOB NOT NULL,
  created_ms    INTEGER NOT NULL
) WITHOUT ROWID;
)sql";

// Version 13: crashes of the daemon counted per job, apart from interruptions (store/queue.h).
constexpr const char* kVersion13 = R"sql(
ALTER TABLE job ADD COLUMN crashes INTEGER NOT NULL DEFAULT 0;
)sql";

// Version 14: endpoint faults are never model failures (agents/llm/client.h's endpoint_fault).
// A model whose endpoint fails has its evaluation paused, with the reason. Earlier versions
// stored a 4xx answer (agent.llm.http_error) or an unreadable body (malformed_response) as the
// model's failure: those items are judged again.
constexpr const char* kVersion14 = R"sql(
CREATE TABLE model_pause (
  model_id      INTEGER PRIMARY KEY REFERENCES model(id) ON DELETE CASCADE,
  category      TEXT NOT NULL,                 -- agent.llm.<reason> of the newest fault
  message       TEXT NOT NULL,
  since_ms      INTEGER NOT NULL,
  resume_ms     INTEGER NOT NULL,              -- no request before this
  faults        INTEGER NOT NULL DEFAULT 1
);
DELETE FROM evaluation_stage WHERE evaluation_id IN
  (SELECT id FROM evaluation WHERE category IN ('agent.llm.http_error', 'agent.llm.malformed_response'));
DELETE FROM evaluation WHERE category IN ('agent.llm.http_error', 'agent.llm.malformed_response');
)sql";

// Version 15: an evaluation item found to be a near-duplicate of a trained sample under the exact
// rule (synth/eval_set.h) is retired: its evaluations are kept but no longer counted or asked for.
constexpr const char* kVersion15 = R"sql(
ALTER TABLE eval_item ADD COLUMN retired_ms INTEGER;          -- set when retired
ALTER TABLE eval_item ADD COLUMN retired_reason TEXT;         -- why: the trained sample and the similarity
)sql";

// Version 16: an item of a template or source tree reserved for evaluation (eval.held_out_*) says
// which ("template:<id>", "tree:<name>"); such items are scored apart from the drawn ones.
constexpr const char* kVersion16 = R"sql(
ALTER TABLE eval_item ADD COLUMN held_out TEXT;               -- NULL: drawn by eval.fraction
)sql";

// Version 17: a kernelopt measurement's physical limit on its GPU (harness.h's roofline), so the
// reports give each right candidate's achieved fraction of it.
constexpr const char* kVersion17 = R"sql(
ALTER TABLE kernelopt_measurement ADD COLUMN roofline_ms REAL;  -- the task's bytes and FLOPs at the GPU's peaks
)sql";

// Version 18: the CPU seconds (user + system) of a stage's processes beside its wall seconds, so a
// stage whose processes keep more than one core busy shows by name (status --json, loop_rate).
constexpr const char* kVersion18 = R"sql(
ALTER TABLE verification ADD COLUMN cpu_seconds REAL;         -- NULL for rows stored before version 18
)sql";

// Version 19: when a job's last lease began, so the time a job waited for a worker and the time
// it ran can be told apart afterwards (bench/loop_rate's job timeline).
constexpr const char* kVersion19 = R"sql(
ALTER TABLE job ADD COLUMN started_ms INTEGER;                -- NULL until leased
)sql";

// Version 20: the CUDA API names each sample's code uses (agents/api_table.h counts them; a
// bundle's headers count with its program), so coverage, API tails and the per-family evaluation
// are queries; and, per imported tree, how many of its files use each name (the usage prior).
constexpr const char* kVersion20 = R"sql(
CREATE TABLE sample_api (
  sample_id     TEXT NOT NULL REFERENCES sample(id) ON DELETE CASCADE,
  identifier    TEXT NOT NULL,
  family        TEXT NOT NULL,                 -- policies/api_families.json's, when counted
  uses          INTEGER NOT NULL,
  PRIMARY KEY (identifier, sample_id)
) WITHOUT ROWID;
CREATE INDEX sample_api_sample ON sample_api(sample_id);
CREATE INDEX sample_api_family ON sample_api(family, sample_id);
CREATE TABLE sample_api_progress (
  id            INTEGER PRIMARY KEY CHECK (id = 1),
  table_key     TEXT NOT NULL,                 -- the API table the rows were counted with
  last_rowid    INTEGER NOT NULL               -- samples up to this rowid are counted
);
CREATE TABLE tree_api_scan (
  tree          TEXT PRIMARY KEY,              -- the imported tree's name
  files         INTEGER NOT NULL,              -- source files read
  api_files     INTEGER NOT NULL,              -- of them, using at least one API name
  scanned_ms    INTEGER NOT NULL
);
CREATE TABLE tree_api_use (
  tree          TEXT NOT NULL REFERENCES tree_api_scan(tree) ON DELETE CASCADE,
  identifier    TEXT NOT NULL,
  files         INTEGER NOT NULL,              -- files of the tree using it
  uses          INTEGER NOT NULL,
  PRIMARY KEY (tree, identifier)
) WITHOUT ROWID;
)sql";

}  // namespace

const std::vector<Migration>& schema_migrations() {
  static const std::vector<Migration> migrations = {
      {1, kVersion1},
      {2, kVersion2},
      {3, kVersion3},
      {4, kVersion4},
      {5, kVersion5},
      {6, kVersion6},
      {7, kVersion7},
      {8, kVersion8},
      {9, kVersion9},
      {10, kVersion10},
      {11, kVersion11},
      {12, kVersion12},
      {13, kVersion13},
      {14, kVersion14},
      {15, kVersion15},
      {16, kVersion16},
      {17, kVersion17},
      {18, kVersion18},
      {19, kVersion19},
      {20, kVersion20},
  };
  return migrations;
}

}  // namespace tailforge
