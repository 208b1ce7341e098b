#include "policies/config_section.h"

namespace tailforge {

Status check_config_value(const nlohmann::json& value, const nlohmann::json& expected, const std::string& where,
                          const SectionRules& rules) {
  const char* wanted = nullptr;
  if (expected.is_boolean() && !value.is_boolean()) wanted = "true or false";
  if (expected.is_number() && !value.is_number()) wanted = "a number";
  if (expected.is_number_integer() && value.is_number() && !value.is_number_integer()) wanted = "an integer";
  if (expected.is_string() && !value.is_string()) wanted = "a string";
  if (expected.is_array() && !value.is_array()) wanted = "an array";
  if (expected.is_object() && !value.is_object()) wanted = "an object";
  if (wanted) return make_error(where + " must be " + wanted);
  bool negative_refused = rules.refuse_negative_numbers || expected.is_number_unsigned();
  if (expected.is_number() && negative_refused && value.get<double>() < 0) {
    return make_error(where + " must not be negative");
  }
  return {};
}

Error config_conversion_error(const std::string& where, const std::exception& error) {
  return make_error(where + ": wrong type (" + error.what() + ")");
}

Status check_config_keys(const nlohmann::json& section, const std::string& path,
                         std::initializer_list<const char*> keys) {
  if (!section.is_object()) return {};
  for (const auto& item : section.items()) {
    if (std::none_of(keys.begin(), keys.end(), [&](const char* key) { return item.key() == key; })) {
      return make_error(path + "." + item.key() + " is not a known key");
    }
  }
  return {};
}

}  // namespace tailforge
