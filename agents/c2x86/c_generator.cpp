#include "agents/c2x86/c_generator.h"

#include <algorithm>
#include <functional>
#include <map>
#include <utility>

#include "agents/generator/domain.h"

namespace tailforge {
namespace {

// What one kind's writer fills in; the generator adds the units around it.
struct Written {
  std::string name;
  std::string declarations;  // types and the prototype
  std::string body;          // the function (and static helpers it calls)
  std::string main_body;     // the driver's main() body
  std::string includes = "#include <stdio.h>\n";
  std::vector<std::string> features;
  std::function<std::string(GeneratorRandom&)> input;  // one case's stdin
};

// `${KEY}` in text replaced by its value.
std::string fill(std::string text, const std::map<std::string, std::string>& values) {
  for (const auto& [key, value] : values) {
    std::string placeholder = "${" + key + "}";
    for (size_t at = text.find(placeholder); at != std::string::npos; at = text.find(placeholder, at + value.size()))
      text.replace(at, placeholder.size(), value);
  }
  return text;
}

int64_t between(GeneratorRandom& random, int64_t low, int64_t high) {
  return low + static_cast<int64_t>(random.below(static_cast<uint64_t>(high - low + 1)));
}

std::string int_text(int64_t value) { return std::to_string(value); }

// A decimal with two fraction digits in [low, high], exact as text and close as a float.
std::string decimal(GeneratorRandom& random, int64_t low, int64_t high) {
  int64_t hundredths = between(random, low * 100, high * 100);
  std::string sign = hundredths < 0 ? "-" : "";
  int64_t magnitude = hundredths < 0 ? -hundredths : hundredths;
  std::string fraction = std::to_string(magnitude % 100);
  return sign + std::to_string(magnitude / 100) + "." + (fraction.size() == 1 ? "0" : "") + fraction;
}

// `count` values from `value`, after the count itself.
std::string counted_list(GeneratorRandom& random, int64_t min_count, int64_t max_count,
                         const std::function<std::string(GeneratorRandom&)>& value) {
  int64_t count = between(random, min_count, max_count);
  std::string text = int_text(count);
  for (int64_t i = 0; i < count; ++i) text += " " + value(random);
  return text;
}

// The driver lines that read `n` then n ints into `values` (at most 32), and print the array.
const char* kReadIntArray =
    "  int n, values[32];\n"
    "  if (scanf(\"%d\", &n) != 1 || n < 0 || n > 32) return 2;\n"
    "  for (int i = 0; i < n; i++)\n"
    "    if (scanf(\"%d\", &values[i]) != 1) return 2;\n";
const char* kPrintIntArray =
    "  for (int i = 0; i < n; i++) printf(\"%d%c\", values[i], i + 1 < n ? ' ' : '\\n');\n"
    "  if (n == 0) printf(\"\\n\");\n";

Written arithmetic_mix(GeneratorRandom& random) {
  std::string op = random.pick<std::string>({"-", "^", "|", "&", "+"});
  Written w;
  w.name = "mix_terms";
  w.features = {"arithmetic"};
  if (op == "^" || op == "|" || op == "&") w.features.push_back("bit_operations");
  w.declarations = "int mix_terms(int x, int y);\n";
  w.body = fill(
      "int mix_terms(int x, int y) {\n"
      "  int t = x * ${A} + y * ${B};\n"
      "  t = t ${OP} (y + ${C});\n"
      "  if (t < 0) t = -t / ${D};\n"
      "  return t % ${M} + (x > y ? ${A} : -${B});\n"
      "}\n",
      {{"A", int_text(between(random, 2, 40))}, {"B", int_text(between(random, 2, 40))}, {"OP", op},
       {"C", int_text(between(random, 1, 99))}, {"D", int_text(between(random, 2, 9))}, {"M", int_text(between(random, 7, 1000))}});
  w.main_body =
      "  int x, y;\n"
      "  if (scanf(\"%d %d\", &x, &y) != 2) return 2;\n"
      "  printf(\"%d\\n\", mix_terms(x, y));\n";
  w.input = [](GeneratorRandom& r) { return int_text(between(r, -1000, 1000)) + " " + int_text(between(r, -1000, 1000)); };
  return w;
}

Written loop_accumulate(GeneratorRandom& random) {
  Written w;
  w.features = {"loops", "arithmetic"};
  if (random.chance(0.5)) {
    w.name = "stepped_total";
    w.declarations = "long stepped_total(int n);\n";
    w.body = fill(
        "long stepped_total(int n) {\n"
        "  long total = 0;\n"
        "  for (int i = ${START}; i < n; i += ${STEP}) {\n"
        "    if (i % ${K} == ${R})\n"
        "      total += (long)i * i;\n"
        "    else\n"
        "      total -= i;\n"
        "  }\n"
        "  return total;\n"
        "}\n",
        {{"START", int_text(between(random, 0, 3))}, {"STEP", int_text(between(random, 1, 4))},
         {"K", int_text(between(random, 2, 7))}, {"R", int_text(between(random, 0, 1))}});
    w.main_body =
        "  int n;\n"
        "  if (scanf(\"%d\", &n) != 1) return 2;\n"
        "  printf(\"%ld\\n\", stepped_total(n));\n";
    w.input = [](GeneratorRandom& r) { return int_text(between(r, -5, 300)); };
  } else {
    w.name = "grid_count";
    w.declarations = "int grid_count(int rows, int cols);\n";
    w.body = fill(
        "int grid_count(int rows, int cols) {\n"
        "  int count = 0;\n"
        "  int i = 0;\n"
        "  while (i < rows) {\n"
        "    for (int j = 0; j < cols; j++) {\n"
        "      if ((i * ${C} + j) % ${K} == 0)\n"
        "        count += i ^ j;\n"
        "    }\n"
        "    i++;\n"
        "  }\n"
        "  return count;\n"
        "}\n",
        {{"C", int_text(between(random, 2, 13))}, {"K", int_text(between(random, 2, 9))}});
    w.features.push_back("bit_operations");
    w.main_body =
        "  int rows, cols;\n"
        "  if (scanf(\"%d %d\", &rows, &cols) != 2) return 2;\n"
        "  printf(\"%d\\n\", grid_count(rows, cols));\n";
    w.input = [](GeneratorRandom& r) { return int_text(between(r, 0, 60)) + " " + int_text(between(r, 0, 60)); };
  }
  return w;
}

Written array_scan(GeneratorRandom& random) {
  Written w;
  w.features = {"arrays", "loops"};
  int variant = static_cast<int>(random.below(3));
  if (variant == 0) {
    std::string compare = random.pick<std::string>({">", "<", ">=", "<="});
    w.name = "extreme_index";
    w.declarations = "int extreme_index(const int values[], int n);\n";
    w.body = fill(
        "int extreme_index(const int values[], int n) {\n"
        "  int best = 0;\n"
        "  for (int i = 1; i < n; i++)\n"
        "    if (values[i] ${CMP} values[best])\n"
        "      best = i;\n"
        "  return n > 0 ? best : -1;\n"
        "}\n",
        {{"CMP", compare}});
  } else if (variant == 1) {
    w.name = "count_in_range";
    w.declarations = "int count_in_range(const int values[], int n, int low, int high);\n";
    w.body =
        "int count_in_range(const int values[], int n, int low, int high) {\n"
        "  int count = 0;\n"
        "  for (int i = 0; i < n; i++)\n"
        "    count += values[i] >= low && values[i] <= high;\n"
        "  return count;\n"
        "}\n";
  } else {
    w.name = "weighted_sum";
    w.declarations = "long weighted_sum(const int values[], int n);\n";
    w.body = fill(
        "long weighted_sum(const int values[], int n) {\n"
        "  long sum = 0;\n"
        "  for (int i = 0; i < n; i++)\n"
        "    sum += (long)values[i] * (i % ${K} + 1) - values[n - 1 - i];\n"
        "  return sum;\n"
        "}\n",
        {{"K", int_text(between(random, 2, 6))}});
  }
  std::string call = variant == 0 ? "printf(\"%d\\n\", extreme_index(values, n));\n"
                     : variant == 1 ? "printf(\"%d\\n\", count_in_range(values, n, ${LOW}, ${HIGH}));\n"
                                    : "printf(\"%ld\\n\", weighted_sum(values, n));\n";
  int64_t low = between(random, -50, 0);
  w.main_body = std::string(kReadIntArray) +
                fill("  " + call, {{"LOW", int_text(low)}, {"HIGH", int_text(low + between(random, 10, 80))}});
  w.input = [](GeneratorRandom& r) {
    return counted_list(r, 0, 16, [](GeneratorRandom& v) { return int_text(between(v, -100, 100)); });
  };
  return w;
}

Written pointer_walk(GeneratorRandom& random) {
  Written w;
  w.features = {"pointers", "arrays", "loops"};
  if (random.chance(0.5)) {
    w.name = "reverse_range";
    w.declarations = "void reverse_range(int *first, int *last);\n";
    w.body =
        "void reverse_range(int *first, int *last) {\n"
        "  while (first < last) {\n"
        "    int saved = *first;\n"
        "    *first++ = *last;\n"
        "    *last-- = saved;\n"
        "  }\n"
        "}\n";
    w.main_body = std::string(kReadIntArray) + "  if (n > 0) reverse_range(values, values + n - 1);\n" + kPrintIntArray;
  } else {
    w.name = "running_blend";
    w.declarations = "void running_blend(int *p, int n);\n";
    w.body = fill(
        "void running_blend(int *p, int n) {\n"
        "  for (int *q = p + 1; q < p + n; ++q)\n"
        "    *q += *(q - 1) * ${K} - ${C};\n"
        "}\n",
        {{"K", int_text(between(random, 1, 2))}, {"C", int_text(between(random, 0, 9))}});
    w.main_body = std::string(kReadIntArray) + "  running_blend(values, n);\n" + kPrintIntArray;
  }
  w.input = [](GeneratorRandom& r) {
    return counted_list(r, 0, 12, [](GeneratorRandom& v) { return int_text(between(v, -99, 99)); });
  };
  return w;
}

Written struct_records(GeneratorRandom& random) {
  Written w;
  w.features = {"structs", "pointers", "arrays", "loops"};
  if (random.chance(0.5)) {
    w.name = "pack_items";
    w.declarations =
        "struct item {\n"
        "  int weight;\n"
        "  int value;\n"
        "};\n"
        "int pack_items(const struct item *items, int n, int capacity);\n";
    w.body = fill(
        "int pack_items(const struct item *items, int n, int capacity) {\n"
        "  int total = 0;\n"
        "  for (const struct item *it = items; it < items + n; ++it) {\n"
        "    if (it->weight <= capacity) {\n"
        "      capacity -= it->weight;\n"
        "      total += it->value * ${K};\n"
        "    }\n"
        "  }\n"
        "  return total + capacity;\n"
        "}\n",
        {{"K", int_text(between(random, 1, 5))}});
    w.main_body =
        "  struct item items[16];\n"
        "  int n, capacity;\n"
        "  if (scanf(\"%d %d\", &capacity, &n) != 2 || n < 0 || n > 16) return 2;\n"
        "  for (int i = 0; i < n; i++)\n"
        "    if (scanf(\"%d %d\", &items[i].weight, &items[i].value) != 2) return 2;\n"
        "  printf(\"%d\\n\", pack_items(items, n, capacity));\n";
    w.input = [](GeneratorRandom& r) {
      return int_text(between(r, 0, 60)) + " " + counted_list(r, 0, 10, [](GeneratorRandom& v) {
               return int_text(between(v, 1, 20)) + " " + int_text(between(v, 0, 50));
             });
    };
  } else {
    w.name = "overlap_area";
    w.declarations =
        "struct rect {\n"
        "  int x, y;\n"
        "  int width, height;\n"
        "};\n"
        "int overlap_area(struct rect a, const struct rect *b);\n";
    w.body =
        "int overlap_area(struct rect a, const struct rect *b) {\n"
        "  int left = a.x > b->x ? a.x : b->x;\n"
        "  int top = a.y > b->y ? a.y : b->y;\n"
        "  int right = a.x + a.width < b->x + b->width ? a.x + a.width : b->x + b->width;\n"
        "  int bottom = a.y + a.height < b->y + b->height ? a.y + a.height : b->y + b->height;\n"
        "  if (right <= left || bottom <= top) return 0;\n"
        "  return (right - left) * (bottom - top);\n"
        "}\n";
    w.features = {"structs", "pointers", "arithmetic"};
    w.main_body =
        "  struct rect a, b;\n"
        "  if (scanf(\"%d %d %d %d %d %d %d %d\", &a.x, &a.y, &a.width, &a.height, &b.x, &b.y, &b.width,\n"
        "            &b.height) != 8) return 2;\n"
        "  printf(\"%d\\n\", overlap_area(a, &b));\n";
    w.input = [](GeneratorRandom& r) {
      std::string text;
      for (int i = 0; i < 2; ++i)
        text += (i ? " " : "") + int_text(between(r, -20, 20)) + " " + int_text(between(r, -20, 20)) + " " +
                int_text(between(r, 0, 30)) + " " + int_text(between(r, 0, 30));
      return text;
    };
  }
  return w;
}

std::string word(GeneratorRandom& random) {
  static const std::string letters = "abcdeilmnorstuxyz";
  std::string text;
  int64_t length = between(random, 1, 20);
  for (int64_t i = 0; i < length; ++i) text += letters[random.below(letters.size())];
  if (random.chance(0.35)) {  // a palindrome now and then
    std::string back(text.rbegin(), text.rend());
    text += back;
  }
  return text;
}

Written string_scan(GeneratorRandom& random) {
  Written w;
  w.features = {"strings", "pointers", "loops"};
  int variant = static_cast<int>(random.below(3));
  if (variant == 0) {
    w.name = "text_hash";
    w.declarations = "unsigned text_hash(const char *s);\n";
    w.body = fill(
        "unsigned text_hash(const char *s) {\n"
        "  unsigned h = ${SEED}u;\n"
        "  while (*s)\n"
        "    h = h * ${P}u + (unsigned char)*s++;\n"
        "  return h;\n"
        "}\n",
        {{"SEED", int_text(between(random, 1, 5381))}, {"P", random.pick<std::string>({"31", "33", "131", "16777619"})}});
    w.main_body = "  printf(\"%u\\n\", text_hash(text));\n";
  } else if (variant == 1) {
    w.name = "is_mirrored";
    w.declarations = "int is_mirrored(const char *s);\n";
    w.body =
        "int is_mirrored(const char *s) {\n"
        "  const char *end = s;\n"
        "  while (*end) end++;\n"
        "  while (s < end) {\n"
        "    if (*s++ != *--end) return 0;\n"
        "  }\n"
        "  return 1;\n"
        "}\n";
    w.main_body = "  printf(\"%d\\n\", is_mirrored(text));\n";
  } else {
    w.name = "shift_letters";
    w.declarations = "void shift_letters(char *s, int shift);\n";
    w.body =
        "void shift_letters(char *s, int shift) {\n"
        "  for (; *s; s++) {\n"
        "    if (*s >= 'a' && *s <= 'z')\n"
        "      *s = (char)('a' + (*s - 'a' + shift) % 26);\n"
        "  }\n"
        "}\n";
    w.main_body = fill("  shift_letters(text, ${SHIFT});\n  printf(\"%s\\n\", text);\n", {{"SHIFT", int_text(between(random, 1, 25))}});
  }
  w.main_body = "  char text[64];\n  if (scanf(\"%63s\", text) != 1) return 2;\n" + w.main_body;
  w.input = word;
  return w;
}

Written recursive_math(GeneratorRandom& random) {
  Written w;
  w.features = {"recursion", "arithmetic"};
  int variant = static_cast<int>(random.below(3));
  if (variant == 0) {
    w.name = "common_divisor";
    w.declarations = "int common_divisor(int a, int b);\n";
    w.body =
        "int common_divisor(int a, int b) {\n"
        "  if (b == 0) return a < 0 ? -a : a;\n"
        "  return common_divisor(b, a % b);\n"
        "}\n";
    w.main_body = "  int a, b;\n  if (scanf(\"%d %d\", &a, &b) != 2) return 2;\n  printf(\"%d\\n\", common_divisor(a, b));\n";
    w.input = [](GeneratorRandom& r) { return int_text(between(r, -5000, 5000)) + " " + int_text(between(r, 0, 5000)); };
  } else if (variant == 1) {
    w.name = "choose";
    w.declarations = "long choose(int n, int k);\n";
    w.body =
        "long choose(int n, int k) {\n"
        "  if (k < 0 || k > n) return 0;\n"
        "  if (k == 0 || k == n) return 1;\n"
        "  return choose(n - 1, k - 1) + choose(n - 1, k);\n"
        "}\n";
    w.main_body = "  int n, k;\n  if (scanf(\"%d %d\", &n, &k) != 2) return 2;\n  printf(\"%ld\\n\", choose(n, k));\n";
    w.input = [](GeneratorRandom& r) {
      int64_t n = between(r, 0, 18);
      return int_text(n) + " " + int_text(between(r, -1, n + 1));
    };
  } else {
    w.name = "power_mod";
    w.declarations = "long power_mod(long base, int exponent);\n";
    w.body = fill(
        "long power_mod(long base, int exponent) {\n"
        "  if (exponent == 0) return 1;\n"
        "  long half = power_mod(base, exponent / 2);\n"
        "  long result = half * half % ${M};\n"
        "  return exponent % 2 ? result * (base % ${M}) % ${M} : result;\n"
        "}\n",
        {{"M", int_text(between(random, 1000, 100003))}});
    w.main_body = "  long base;\n  int e;\n  if (scanf(\"%ld %d\", &base, &e) != 2) return 2;\n"
                  "  printf(\"%ld\\n\", power_mod(base, e));\n";
    w.input = [](GeneratorRandom& r) { return int_text(between(r, 0, 1000000)) + " " + int_text(between(r, 0, 60)); };
  }
  return w;
}

Written switch_dispatch(GeneratorRandom& random) {
  Written w;
  w.name = "apply_op";
  w.features = {"switch", "arithmetic"};
  int64_t cases = between(random, 5, 10);
  static const std::vector<std::string> bodies = {
      "a + b", "a - b", "a * b", "b != 0 ? a / b : 0", "b != 0 ? a % b : 0", "a > b ? a : b", "a < b ? a : b",
      "a * 2 + b", "(a + b) / 2", "a - 3 * b", "a * a - b", "-a"};
  std::string switch_body;
  for (int64_t c = 0; c < cases; ++c) {
    switch_body += "  case " + int_text(c) + ":\n";
    if (c > 0 && c + 1 < cases && random.chance(0.2)) continue;  // shares the next case's body
    switch_body += "    result = " + random.pick(bodies) + ";\n    break;\n";
  }
  switch_body += fill("  default:\n    result = ${D};\n  }\n", {{"D", int_text(between(random, -9, 9))}});
  w.declarations = "int apply_op(int op, int a, int b);\n";
  w.body = "int apply_op(int op, int a, int b) {\n  int result;\n  switch (op) {\n" + switch_body +
           "  return result;\n}\n";
  w.main_body = "  int op, a, b;\n  if (scanf(\"%d %d %d\", &op, &a, &b) != 3) return 2;\n  printf(\"%d\\n\", apply_op(op, a, b));\n";
  w.input = [cases](GeneratorRandom& r) {
    return int_text(between(r, -1, cases)) + " " + int_text(between(r, -100, 100)) + " " + int_text(between(r, -100, 100));
  };
  return w;
}

std::string float_constant(GeneratorRandom& random) {
  return random.pick<std::string>({"0.1f", "0.75f", "2.5f", "3.14159274f", "1e-3f", "0.333333343f", "1.5f",
                                   "12.125f", "6.02e3f", "0.0625f", "1.17549435e-38f", "-0.2f"});
}

Written float_blend(GeneratorRandom& random) {
  Written w;
  w.name = "blend";
  w.features = {"float", "arithmetic"};
  w.declarations = "float blend(float x, float y);\n";
  w.body = fill(
      "float blend(float x, float y) {\n"
      "  float t = x * ${A} + y / ${B};\n"
      "  if (t > ${C})\n"
      "    t -= ${D};\n"
      "  else\n"
      "    t = t * t + ${E};\n"
      "  return t;\n"
      "}\n",
      {{"A", float_constant(random)}, {"B", random.pick<std::string>({"2.5f", "3.0f", "0.5f", "7.25f"})},
       {"C", float_constant(random)}, {"D", float_constant(random)}, {"E", float_constant(random)}});
  w.main_body = "  float x, y;\n  if (scanf(\"%f %f\", &x, &y) != 2) return 2;\n  printf(\"%.9g\\n\", blend(x, y));\n";
  w.input = [](GeneratorRandom& r) { return decimal(r, -50, 50) + " " + decimal(r, -50, 50); };
  return w;
}

Written double_series(GeneratorRandom& random) {
  Written w;
  w.features = {"double", "library_calls", "loops"};
  w.includes += "#include <math.h>\n";
  if (random.chance(0.5)) {
    w.name = "root_series";
    w.declarations = "double root_series(double x, int n);\n";
    w.body = fill(
        "double root_series(double x, int n) {\n"
        "  double sum = ${S};\n"
        "  for (int i = 1; i <= n; i++)\n"
        "    sum += sqrt(fabs(x) * i + ${C}) / (i + 0.5);\n"
        "  return sum;\n"
        "}\n",
        {{"S", random.pick<std::string>({"0.0", "1.0", "-2.5", "0.1"})},
         {"C", random.pick<std::string>({"0.25", "1.0", "3.0e-2", "2.718281828459045"})}});
    w.main_body = "  double x;\n  int n;\n  if (scanf(\"%lf %d\", &x, &n) != 2) return 2;\n"
                  "  printf(\"%.17g\\n\", root_series(x, n));\n";
    w.input = [](GeneratorRandom& r) { return decimal(r, -100, 100) + " " + int_text(between(r, 0, 40)); };
  } else {
    w.name = "damped";
    w.declarations = "double damped(double t, double rate);\n";
    w.body = fill(
        "double damped(double t, double rate) {\n"
        "  double envelope = exp(-fabs(rate) * t * ${K});\n"
        "  return floor(envelope * ${SCALE}) / ${SCALE} + cos(t) * 0.5;\n"
        "}\n",
        {{"K", random.pick<std::string>({"0.1", "0.5", "1.0", "0.015625"})},
         {"SCALE", random.pick<std::string>({"1000.0", "64.0", "1e6"})}});
    w.main_body = "  double t, rate;\n  if (scanf(\"%lf %lf\", &t, &rate) != 2) return 2;\n"
                  "  printf(\"%.17g\\n\", damped(t, rate));\n";
    w.input = [](GeneratorRandom& r) { return decimal(r, 0, 20) + " " + decimal(r, -3, 3); };
  }
  return w;
}

Written bit_twiddle(GeneratorRandom& random) {
  Written w;
  w.features = {"bit_operations"};
  int variant = static_cast<int>(random.below(3));
  if (variant == 0) {
    w.name = "count_set_bits";
    w.declarations = "int count_set_bits(unsigned x);\n";
    w.body =
        "int count_set_bits(unsigned x) {\n"
        "  int count = 0;\n"
        "  while (x) {\n"
        "    x &= x - 1;\n"
        "    count++;\n"
        "  }\n"
        "  return count;\n"
        "}\n";
    w.features.push_back("loops");
    w.main_body = "  unsigned x;\n  if (scanf(\"%u\", &x) != 1) return 2;\n  printf(\"%d\\n\", count_set_bits(x));\n";
  } else if (variant == 1) {
    w.name = "rotate_mix";
    w.declarations = "unsigned rotate_mix(unsigned x);\n";
    w.body = fill(
        "unsigned rotate_mix(unsigned x) {\n"
        "  unsigned rotated = (x << ${R}) | (x >> (32 - ${R}));\n"
        "  return (rotated ^ (x >> ${S})) & 0x${MASK}u;\n"
        "}\n",
        {{"R", int_text(between(random, 1, 31))}, {"S", int_text(between(random, 1, 16))},
         {"MASK", random.pick<std::string>({"ffffffff", "00ff00ff", "0f0f0f0f", "7fffffff"})}});
    w.main_body = "  unsigned x;\n  if (scanf(\"%u\", &x) != 1) return 2;\n  printf(\"%u\\n\", rotate_mix(x));\n";
  } else {
    w.name = "gray_parity";
    w.declarations = "unsigned gray_parity(unsigned x);\n";
    w.body =
        "unsigned gray_parity(unsigned x) {\n"
        "  unsigned gray = x ^ (x >> 1);\n"
        "  unsigned parity = gray;\n"
        "  parity ^= parity >> 16;\n"
        "  parity ^= parity >> 8;\n"
        "  parity ^= parity >> 4;\n"
        "  parity &= 0xf;\n"
        "  return (gray & ~(gray - 1)) | ((0x6996u >> parity) & 1u) << 31;\n"
        "}\n";
    w.main_body = "  unsigned x;\n  if (scanf(\"%u\", &x) != 1) return 2;\n  printf(\"%u\\n\", gray_parity(x));\n";
  }
  w.input = [](GeneratorRandom& r) { return std::to_string(r.next() & 0xffffffffu); };
  return w;
}

Written library_sort(GeneratorRandom& random) {
  Written w;
  w.features = {"library_calls", "pointers", "arrays"};
  w.includes += "#include <stdlib.h>\n#include <string.h>\n";
  if (random.chance(0.5)) {
    w.name = "sorted_median";
    w.declarations = "int sorted_median(int *values, int n);\n";
    w.body = fill(
        "static int compare_ints(const void *a, const void *b) {\n"
        "  int x = *(const int *)a, y = *(const int *)b;\n"
        "  return ${ORDER};\n"
        "}\n"
        "\n"
        "int sorted_median(int *values, int n) {\n"
        "  if (n == 0) return 0;\n"
        "  qsort(values, n, sizeof *values, compare_ints);\n"
        "  return values[n / 2] - abs(values[0]);\n"
        "}\n",
        {{"ORDER", random.pick<std::string>({"(x > y) - (x < y)", "(y > x) - (y < x)"})}});
    w.main_body = std::string(kReadIntArray) + "  printf(\"%d\\n\", sorted_median(values, n));\n" + kPrintIntArray;
    w.input = [](GeneratorRandom& r) {
      return counted_list(r, 0, 15, [](GeneratorRandom& v) { return int_text(between(v, -500, 500)); });
    };
  } else {
    w.name = "join_length";
    w.declarations = "size_t join_length(char *out, const char *a, const char *b);\n";
    w.includes = "#include <stddef.h>\n" + w.includes;
    w.body =
        "size_t join_length(char *out, const char *a, const char *b) {\n"
        "  size_t length = strlen(a);\n"
        "  memcpy(out, a, length);\n"
        "  out[length] = '-';\n"
        "  strcpy(out + length + 1, b);\n"
        "  return strlen(out) + (size_t)(strcmp(a, b) > 0);\n"
        "}\n";
    w.features = {"library_calls", "strings", "pointers"};
    w.main_body =
        "  char a[64], b[64], out[130];\n"
        "  if (scanf(\"%63s %63s\", a, b) != 2) return 2;\n"
        "  size_t length = join_length(out, a, b);\n"
        "  printf(\"%zu %s\\n\", length, out);\n";
    w.input = [](GeneratorRandom& r) { return word(r) + " " + word(r); };
  }
  return w;
}

using Writer = Written (*)(GeneratorRandom&);

const std::vector<std::pair<std::string, Writer>>& writers() {
  static const std::vector<std::pair<std::string, Writer>> table = {
      {"arithmetic_mix", arithmetic_mix}, {"loop_accumulate", loop_accumulate}, {"array_scan", array_scan},
      {"pointer_walk", pointer_walk},     {"struct_records", struct_records},   {"string_scan", string_scan},
      {"recursive_math", recursive_math}, {"switch_dispatch", switch_dispatch}, {"float_blend", float_blend},
      {"double_series", double_series},   {"bit_twiddle", bit_twiddle},         {"library_sort", library_sort}};
  return table;
}

}  // namespace

const std::vector<std::string>& c_feature_tags() {
  static const std::vector<std::string> tags = {"arithmetic", "loops",  "arrays", "pointers", "structs",
                                                "strings",    "recursion", "switch", "float", "double",
                                                "bit_operations", "library_calls"};
  return tags;
}

const std::vector<std::string>& c_function_kinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> names;
    for (const auto& [name, writer] : writers()) names.push_back(name);
    return names;
  }();
  return kinds;
}

Result<CFunction> generate_c_function(const CGenerationRequest& request) {
  const auto& table = writers();
  size_t chosen = request.index % table.size();
  if (!request.kind.empty()) {
    auto found = std::find_if(table.begin(), table.end(), [&](const auto& entry) { return entry.first == request.kind; });
    if (found == table.end()) return make_error("unknown c2x86 function kind '" + request.kind + "'");
    chosen = static_cast<size_t>(found - table.begin());
  }
  GeneratorRandom random{request.seed * 0x9e3779b97f4a7c15ull ^ (request.index + 1) * 0xbf58476d1ce4e5b9ull};
  Written written = table[chosen].second(random);
  CFunction function;
  function.name = written.name;
  function.declarations = written.declarations;
  function.function = written.includes + "\n" + written.declarations + "\n" + written.body;
  function.driver = written.includes + "\n" + written.declarations + "\nint main(void) {\n" + written.main_body +
                    "  return 0;\n}\n";
  function.features = written.features;
  std::sort(function.features.begin(), function.features.end());
  for (size_t i = 0; i < request.cases; ++i) function.cases.push_back({written.input(random), ""});
  return function;
}

}  // namespace tailforge
