#include "policies/config_section.h"

#include <doctest/doctest.h>

using namespace tailforge;
using nlohmann::json;

namespace {

struct Knobs {
  bool enabled = true;
  int64_t count = 3;
  size_t cap = 10;
  double share = 0.5;
  std::string name = "default";
  std::vector<std::string> words = {"a"};
  std::map<std::string, double> weights;
  std::string not_a_key = "kept";  // the macro does not list it
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(Knobs, enabled, count, cap, share, name, words, weights)

std::string read_error(const std::string& text, const SectionRules& rules = {}) {
  Knobs knobs;
  Status status = read_config_section(json::parse(text), "knobs", knobs, rules);
  return status.ok() ? "" : status.message();
}

}  // namespace

TEST_CASE("a config section reads its keys into the struct, and absent keys keep the struct's values") {
  Knobs knobs;
  knobs.name = "preset";
  Status status = read_config_section(
      json::parse(R"({"enabled": false, "count": -2, "share": 1, "words": ["x", "y"], "weights": {"w": 2.5}})"),
      "knobs", knobs);
  REQUIRE_MESSAGE(status.ok(), status.message());
  CHECK_FALSE(knobs.enabled);
  CHECK(knobs.count == -2);
  CHECK(knobs.cap == 10);
  CHECK(knobs.share == 1.0);
  CHECK(knobs.name == "preset");
  CHECK(knobs.words == std::vector<std::string>{"x", "y"});
  CHECK(knobs.weights.at("w") == 2.5);
  CHECK(knobs.not_a_key == "kept");
}

TEST_CASE("a config section's errors name the key and what it must be") {
  CHECK(read_error(R"({"colour": 1})") == "knobs.colour is not a known key");
  CHECK(read_error(R"({"not_a_key": "x"})") == "knobs.not_a_key is not a known key");
  CHECK(read_error(R"({"enabled": 1})") == "knobs.enabled must be true or false");
  CHECK(read_error(R"({"share": "half"})") == "knobs.share must be a number");
  CHECK(read_error(R"({"count": 2.5})") == "knobs.count must be an integer");
  CHECK(read_error(R"({"name": null})") == "knobs.name must be a string");
  CHECK(read_error(R"({"words": "x"})") == "knobs.words must be an array");
  CHECK(read_error(R"({"weights": []})") == "knobs.weights must be an object");
  CHECK(read_error(R"({"cap": -1})") == "knobs.cap must not be negative");  // an unsigned field
  CHECK(read_error(R"([1])") == "knobs must be an object");
  std::string conversion = read_error(R"({"words": ["x", 2]})");
  CHECK(conversion.rfind("knobs.words: wrong type (", 0) == 0);
  CHECK(read_error(R"({"weights": {"w": "heavy"}})").rfind("knobs.weights: wrong type (", 0) == 0);
}

TEST_CASE("a config section's rules: negatives refused, other keys the caller reads, keys read elsewhere") {
  CHECK(read_error(R"({"count": -1})", {.refuse_negative_numbers = true}) == "knobs.count must not be negative");
  CHECK(read_error(R"({"share": -0.5})", {.refuse_negative_numbers = true}) == "knobs.share must not be negative");
  CHECK(read_error(R"({"count": 0})", {.refuse_negative_numbers = true}).empty());
  CHECK(read_error(R"({"extra": [1]})", {.other_keys = {"extra"}}).empty());
  CHECK(read_error(R"({"extra": [1], "count": true})", {.other_keys = {"extra"}}) == "knobs.count must be a number");
  CHECK(read_error(R"({"elsewhere": 1})", {.unknown_keys_allowed = true}).empty());
  // Unknown keys are found before the values of known ones are judged.
  CHECK(read_error(R"({"count": "x", "zzz": 1})") == "knobs.zzz is not a known key");
}

TEST_CASE("one config value and a section's key list") {
  std::vector<std::string> argv;
  CHECK(read_config_value(json::parse(R"(["a", "b"])"), "retrain.command", argv).ok());
  CHECK(argv == std::vector<std::string>{"a", "b"});
  CHECK(read_config_value(json("a"), "retrain.command", argv).message() == "retrain.command must be an array");
  CHECK(read_config_value(json::parse("[1]"), "retrain.command", argv).message().rfind("retrain.command: wrong type (", 0) ==
        0);
  int64_t count = 1;
  CHECK(read_config_value(json(-4), "x.count", count, {.refuse_negative_numbers = true}).message() ==
        "x.count must not be negative");
  CHECK(check_config_keys(json::parse(R"({"a": 1, "b": 2})"), "p.json:", {"a", "b"}).ok());
  CHECK(check_config_keys(json::parse(R"({"a": 1, "c": 2})"), "p.json:", {"a", "b"}).message() ==
        "p.json:.c is not a known key");
  CHECK(check_config_keys(json::array(), "p.json:", {"a"}).ok());  // not an object: its reader says so
}
