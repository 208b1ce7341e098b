// The dataset card: the README.md an export writes beside its files, a reader's account of the
// export drawn from its manifest and from what the store records about the exported samples (the
// verification stages they passed and on which hosts and GPUs, the licence of imported code). It
// decides nothing about the export; synth/export.cpp writes the manifest first, then the card.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "store/database.h"

namespace tailforge {

// The card's Markdown for an export's manifest (manifest.json as synth/export.cpp writes it).
// Text from the store or from files (tree names, licence lines, benchmark paths) is escaped.
Result<std::string> dataset_card_markdown(Database& db, const nlohmann::json& manifest);

// Writes the card to `path`.
Status write_dataset_card(Database& db, const nlohmann::json& manifest, const std::string& path);

// The pieces every track's card shares (synth/kernelopt/export.cpp writes the kernelopt card).
// Text from the store or from files, safe in a Markdown table cell.
std::string markdown_cell(const std::string& text);
// `value` with exactly `digits` decimals ("2.00").
std::string fixed_decimals(double value, int digits);
// Milliseconds since the epoch as "YYYY-MM-DD HH:MM:SS UTC".
std::string utc_time(int64_t ms);
// Samples (or rows) of one value per split, for write_split_table.
struct SplitCounts {
  int64_t train = 0;
  int64_t eval = 0;
};
// A "| heading | train | eval |" table, a row per value ("(none)" for ""), plus "what it is" from `meanings`.
void write_split_table(std::ostream& out, const std::string& heading, const std::map<std::string, SplitCounts>& counts,
                       const std::map<std::string, std::string>& meanings = {});
// "## Train/eval leakage" from the manifest's "leakage" object (synth/split_leakage.h).
void write_leakage_section(std::ostream& out, const nlohmann::json& manifest);
// "## Decontamination" from the manifest's "decontamination" object; `left_out_of` says where a
// matching sample is not written ("both splits").
void write_decontamination_section(std::ostream& out, const nlohmann::json& manifest, const std::string& left_out_of);

}  // namespace tailforge
