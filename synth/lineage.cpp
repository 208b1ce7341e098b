#include "synth/lineage.h"

#include <sstream>

#include "store/samples.h"

namespace tailforge {
namespace {

using nlohmann::json;

json edge_to_json(const LineageEdge& edge) {
  json reason = nullptr;
  if (edge.reason) {
    reason = json::parse(*edge.reason, nullptr, false);
    if (reason.is_discarded()) reason = *edge.reason;
  }
  auto text = [](const std::optional<std::string>& value) { return value ? json(*value) : json(nullptr); };
  return {{"parent", edge.parent_id}, {"child", edge.child_id}, {"relation", edge.relation},
          {"agent", text(edge.agent)}, {"model", text(edge.model)}, {"prompt_hash", text(edge.prompt_hash)},
          {"reason", reason}, {"created_ms", edge.created_ms}};
}

std::string short_id(const std::string& id) { return id.substr(0, 12); }

void format_edges(std::ostringstream& out, const json& edges, const char* title, bool upwards) {
  out << title << " (" << edges.size() << ")\n";
  for (const json& edge : edges) {
    std::string other = edge[upwards ? "parent" : "child"].get<std::string>();
    std::string self = edge[upwards ? "child" : "parent"].get<std::string>();
    out << "  " << short_id(self) << (upwards ? " <- " : " -> ") << short_id(other) << "  "
        << edge["relation"].get<std::string>();
    if (edge["agent"].is_string()) out << "  by " << edge["agent"].get<std::string>();
    if (edge["model"].is_string()) out << " (" << edge["model"].get<std::string>() << ")";
    const json& reason = edge["reason"];
    if (reason.is_object()) {
      out << "  because " << reason.value("dimension", "?") << "/" << reason.value("name", "?") << " ["
          << reason.value("signal", "?") << "]";
      if (reason.contains("score") && reason["score"].is_number()) out << " score " << reason["score"].get<double>();
    } else if (!reason.is_null()) {
      out << "  because " << (reason.is_string() ? reason.get<std::string>() : reason.dump());
    }
    out << "\n";
  }
}

}  // namespace

Result<json> lineage_report(Database& db, const std::string& sample_id) {
  Result<std::optional<Sample>> sample = find_sample(db, sample_id);
  if (!sample) return sample.error();
  if (!*sample) return make_error("lineage: no sample with id '" + sample_id + "'");
  Result<std::vector<LineageEdge>> ancestors = ancestors_of(db, sample_id);
  if (!ancestors) return ancestors.error();
  Result<std::vector<LineageEdge>> descendants = descendants_of(db, sample_id);
  if (!descendants) return descendants.error();
  const Sample& s = **sample;
  json up = json::array(), down = json::array();
  for (const LineageEdge& edge : *ancestors) up.push_back(edge_to_json(edge));
  for (const LineageEdge& edge : *descendants) down.push_back(edge_to_json(edge));
  auto text = [](const std::optional<std::string>& value) { return value ? json(*value) : json(nullptr); };
  return json{{"sample", {{"id", s.id}, {"track", s.track}, {"origin", s.origin}, {"status", s.status},
                          {"domain", text(s.domain)}, {"template_id", text(s.template_id)},
                          {"features", s.features}, {"cycle_id", s.cycle_id ? json(*s.cycle_id) : json(nullptr)}}},
              {"ancestors", up},
              {"descendants", down}};
}

std::string format_lineage_report(const json& report) {
  std::ostringstream out;
  const json& sample = report["sample"];
  out << "sample " << sample["id"].get<std::string>() << "\n  " << sample["track"].get<std::string>() << ", "
      << sample["origin"].get<std::string>() << ", " << sample["status"].get<std::string>();
  if (sample["domain"].is_string()) out << ", domain " << sample["domain"].get<std::string>();
  if (sample["template_id"].is_string()) out << ", template " << sample["template_id"].get<std::string>();
  out << "\n  features: " << sample["features"].dump() << "\n";
  format_edges(out, report["ancestors"], "ancestors", true);
  format_edges(out, report["descendants"], "descendants", false);
  return out.str();
}

}  // namespace tailforge
