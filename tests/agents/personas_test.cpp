#include <doctest/doctest.h>

#include <set>
#include <string>

#include "agents/generator/generator.h"
#include "agents/generator/personas.h"

using namespace tailforge;

namespace {

const char* kPersonas = R"({"personas": [
  {"id": "p1", "role": "engineer", "domain": "science", "optimization_focus": "bandwidth",
   "code_style": "plain C", "families": ["f1"]}]})";

const char* kTemplates = R"({"prompt_frame": "As a {role}: {task}",
  "placeholders": {"size": [64, 128], "optimization": [{"text": "tiling", "features": ["static_shared"]}]},
  "families": [{"id": "f1", "templates": [
    {"id": "t1", "text": "Simulate cloth on a {size}x{size} grid. Optimize for {optimization}.",
     "domains": ["stencil_2d"]}]}]})";

Result<GeneratorCatalog> parse(const std::string& personas, const std::string& templates) {
  return parse_generator_catalog(personas, "personas.json", templates, "prompt_templates.json");
}

}  // namespace

TEST_CASE("the shipped catalog loads, knows every template family and realizes every domain") {
  auto catalog = load_default_generator_catalog(TAILFORGE_SOURCE_DIR);
  REQUIRE_MESSAGE(catalog.ok(), catalog.message());
  CHECK(check_generator_catalog(*catalog).ok());
  std::set<std::string> families;
  std::set<std::string> domains;
  for (const PromptTemplate& t : catalog->templates) {
    families.insert(t.family);
    domains.insert(t.domains.begin(), t.domains.end());
  }
  for (const char* family : {"basic_operations", "graph", "scientific_computing",
                             "machine_learning", "sparse", "simulation", "image_and_signal",
                             "optimization", "cryptography", "data_structures"}) {
    CHECK_MESSAGE(families.count(family), family);
  }
  for (const std::string& domain : generator_domains()) CHECK_MESSAGE(domains.count(domain), domain);
  CHECK(catalog->personas.size() >= 6);
  const PromptTemplate* cloth = find_template(*catalog, "simulation.cloth");
  REQUIRE(cloth != nullptr);
  CHECK(cloth->text == "Generate a CUDA kernel for cloth simulation with a {size}x{size} grid. "
                       "Optimize for {optimization}.");
}

TEST_CASE("a prompt is the frame filled with the persona and the rendered template") {
  auto catalog = parse(kPersonas, kTemplates);
  REQUIRE_MESSAGE(catalog.ok(), catalog.message());
  const PromptTemplate& t = catalog->templates.front();
  CHECK(t.placeholders == std::vector<std::string>{"size", "optimization"});
  auto prompt = render_prompt(*catalog, catalog->personas.front(), t,
                              {{"size", "128"}, {"optimization", "tiling"}});
  REQUIRE(prompt.ok());
  CHECK(*prompt == "As a engineer: Simulate cloth on a 128x128 grid. Optimize for tiling.");
  auto missing = render_template_text(t, {{"size", "128"}});
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.message().find("{optimization}") != std::string::npos);
}

TEST_CASE("placeholder values keep their generator hints") {
  auto catalog = parse(kPersonas, kTemplates);
  REQUIRE(catalog.ok());
  const auto& sizes = catalog->placeholder_values.at("size");
  CHECK(sizes[1].text == "128");
  CHECK(sizes[1].hints["value"] == 128);
  const auto& optimization = catalog->placeholder_values.at("optimization");
  CHECK(optimization[0].hints["features"][0] == "static_shared");
}

TEST_CASE("catalog errors name the file and the JSON path at fault") {
  auto bad_json = parse("{not json", kTemplates);
  REQUIRE_FALSE(bad_json.ok());
  CHECK(bad_json.message().find("personas.json: invalid JSON") == 0);

  auto no_role = parse(R"({"personas": [{"id": "p", "domain": "d", "optimization_focus": "o",
      "code_style": "c"}]})", kTemplates);
  REQUIRE_FALSE(no_role.ok());
  CHECK(no_role.message() == "personas.json: personas[0].role: missing");

  auto duplicate = parse(R"({"personas": [
      {"id": "p", "role": "r", "domain": "d", "optimization_focus": "o", "code_style": "c"},
      {"id": "p", "role": "r", "domain": "d", "optimization_focus": "o", "code_style": "c"}]})",
                         kTemplates);
  REQUIRE_FALSE(duplicate.ok());
  CHECK(duplicate.message().find("personas[1].id: duplicate persona id 'p'") != std::string::npos);

  std::string unknown_placeholder = kTemplates;
  unknown_placeholder.replace(unknown_placeholder.find("{optimization}."), 15, "{speed}.");
  auto no_table = parse(kPersonas, unknown_placeholder);
  REQUIRE_FALSE(no_table.ok());
  CHECK(no_table.message() ==
        "prompt_templates.json: families[0].templates[0].text: placeholder {speed} has no "
        "value table in \"placeholders\"");

  std::string unknown_family = kPersonas;
  unknown_family.replace(unknown_family.find("\"f1\""), 4, "\"f9\"");
  auto family = parse(unknown_family, kTemplates);
  REQUIRE_FALSE(family.ok());
  CHECK(family.message() ==
        "personas.json: personas[0].families[0]: unknown template family 'f9'");

  std::string no_domains = kTemplates;
  no_domains.replace(no_domains.find("[\"stencil_2d\"]"), 14, "[]");
  auto empty = parse(kPersonas, no_domains);
  REQUIRE_FALSE(empty.ok());
  CHECK(empty.message().find("families[0].templates[0].domains: must list at least one domain") !=
        std::string::npos);

  auto missing_file = load_generator_catalog("/nonexistent/personas.json", "/nonexistent/t.json");
  REQUIRE_FALSE(missing_file.ok());
  CHECK(missing_file.message() == "/nonexistent/personas.json: cannot open file");
}

TEST_CASE("a template naming an unknown generator domain or feature is rejected") {
  std::string unknown_domain = kTemplates;
  unknown_domain.replace(unknown_domain.find("stencil_2d"), 10, "warp_drive");
  auto catalog = parse(kPersonas, unknown_domain);
  REQUIRE(catalog.ok());
  Status status = check_generator_catalog(*catalog);
  REQUIRE_FALSE(status.ok());
  CHECK(status.message() == "template 't1': unknown generator domain 'warp_drive'");

  std::string unknown_feature = kTemplates;
  unknown_feature.replace(unknown_feature.find("static_shared"), 13, "time_travel");
  auto with_feature = parse(kPersonas, unknown_feature);
  REQUIRE(with_feature.ok());
  GenerationRequest request;
  auto program = generate_program(*with_feature, request);
  REQUIRE_FALSE(program.ok());
  CHECK(program.message().find("unknown feature \"time_travel\"") != std::string::npos);
}
