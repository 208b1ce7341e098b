// Hostile text for fuzzing the parsers of untrusted input: the shapes that break naive parsers
// (megabytes without a newline, one huge number, deep nesting, NUL bytes and invalid UTF-8, a
// million tiny lines, a huge diagnostic line, many fenced blocks, integers past int64), as a fixed
// set or drawn at random. It runs no parser (untrusted_parsers.h does).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace tailforge::fuzz {

struct HostileInput {
  std::string name;
  std::string text;
};

constexpr size_t kMiB = size_t{1} << 20;

// `unit` repeated until the text has `bytes` bytes (the last copy cut).
inline std::string repeated(const std::string& unit, size_t bytes) {
  std::string out;
  out.reserve(bytes);
  while (out.size() < bytes) out.append(unit, 0, std::min(unit.size(), bytes - out.size()));
  return out;
}

inline std::string nested(char open, char close, size_t depth, bool closed) {
  return std::string(depth, open) + (closed ? std::string(depth, close) : "");
}

// Integers that do not fit int64, where parsers read integers.
inline std::string oversized_integers() {
  const std::string big = "99999999999999999999";
  return "R" + big + "\nfile.cu:" + big + ": error: x\nfile.cu(" + big + "): error: x\nptxas a.ptx, line " + big +
         "; error\n a.s:" + big + ":" + big + ": error: bad\n" + "%r" + big + " %rd" + big + " [%rd4+" + big +
         "]\n-" + big + " " + big + "e99999 1e-99999 0x" + big + big + "\nlaunch_input:" + big +
         "\nfor.size." + big + " i in range(0, " + big + ", 1):\n  add.s32 %r(1+i*" + big + "), 1;\n" +
         "[" + big + big + ", -" + big + big + ", 1e999, (1, 2)]\n\t.long\t" + big + "\n\t.quad\t-" + big +
         "\n\t.float_literal\t" + big + big + "f\n\t.double_literal\t1e99999\ngrid " + big + " 1 1\nkernel k\n" +
         "{\"job_id\": " + big + big + ", \"n\": 1e99999}\n";
}

// Rolled-PTX loops nested one per line: a parser that recurses per loop level meets `depth` levels.
inline std::string nested_rolled_loops(size_t depth) {
  std::string out;
  for (size_t i = 0; i < depth; ++i) out += "for.size.1 v" + std::to_string(i) + " in range(0, 1000, 1):\n";
  return out + "add.s32 %r1, %r2, 1;\n";
}

// The fixed set of the fuzz test, every shape the parsers must survive.
inline std::vector<HostileInput> hostile_inputs() {
  std::vector<HostileInput> inputs;
  inputs.push_back({"empty", ""});
  inputs.push_back({"10 MB without a newline", repeated("abc 12 x=3.5e7 (y) [z] {w} \"q\" ", 10 * kMiB)});
  inputs.push_back({"10 MB of one digit", std::string(10 * kMiB, '7')});
  inputs.push_back({"1 MB of (", std::string(kMiB, '(')});
  inputs.push_back({"deep {{{{", nested('{', '}', kMiB / 2, true)});
  inputs.push_back({"deep ((((", nested('(', ')', kMiB / 2, true)});
  inputs.push_back({"deep [[[[", nested('[', ']', kMiB / 2, true)});
  inputs.push_back({"deep JSON inside an object",
                    "{\"name\": \"w\", \"job_id\": 1, \"capabilities\": {\"a\": " + nested('[', ']', 100000, true) +
                        "}, \"output\": {\"a\": " + nested('[', ']', 100000, true) + "}}"});
  inputs.push_back({"NUL bytes and invalid UTF-8", repeated(std::string("a\0\xff\xfe\xc0\x80\xed\xa0\x80 1\n\x80", 13), kMiB)});
  inputs.push_back({"a million tiny lines", repeated("x1\n", 3 * 1000000)});
  inputs.push_back({"1 MB compiler diagnostic line", "file.cu(12): error: " + repeated("identifier \"foo\" is undefined ", kMiB)});
  inputs.push_back({"1 MB assembler diagnostic line", "a.s:1:12: error: " + repeated("invalid operand 'v[1:2]' ", kMiB)});
  inputs.push_back({"a model answer with 1,000 fenced code blocks",
                    repeated("Here is the kernel:\n```cuda\n__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n```\n", 74 * 1000)});
  inputs.push_back({"numbers too large for int64", oversized_integers()});
  inputs.push_back({"nested Rolled-PTX loops", nested_rolled_loops(100000)});
  return inputs;
}

// One random hostile input of at most `max_bytes`: a mixture of the shapes above and random bytes.
inline std::string random_hostile_input(std::mt19937_64& random, size_t max_bytes) {
  static const std::vector<std::string> units = {
      "(", "{", "[", ")", "}", "]", "\n", "7", " ", "\"", "'", "\\", "`", std::string(1, '\0'), "\xff",
      "```cuda\n", "```\n", "file.cu(12): error: ", "a.s:3:7: error: ", "99999999999999999999",
      "ld.global.f32 %f12, [%rd4+16];\n", "for.size.2 i in range(0, 4, 1):\n", "add.s32 %r(1+i*2), 1;\n",
      "/*0010*/ MOV R1, c[0x0][0x28] ;\n", "        .text.kern:\n", "\tmovss\t.LC0(%rip), %xmm0\n", ".LC0:\n",
      "\t.long\t1069547520\n", "\t.float_literal\t1.5f\n", ".amdhsa_kernel k\n", "\tv_add_f32 v1, v2, v3\n",
      "__global__ void k() {", "cudaMalloc(&p, n);\n", "#include \"a.cuh\"\n", "<<<1, 32>>>",
      "{\"choices\": [{\"message\": {\"content\": \"", "\"}}]}", "{\"name\": \"w\", \"job_id\": 1, \"lease\": \"remote:w/1\"}",
      "[1, 'a', (2.5, None), {'k': True}]", "kernel k\ngrid 1 1 1\nbuffer 1 4 0\n", "time 0.13 ms\n", "Function : _Z1kv\n"};
  std::uniform_int_distribution<size_t> pick(0, units.size() - 1);
  // Lengths log-uniform from 1 byte to max_bytes: mostly small, sometimes huge.
  std::uniform_real_distribution<double> exponent(0.0, std::log2(static_cast<double>(std::max<size_t>(max_bytes, 2))));
  size_t target = std::min(max_bytes, static_cast<size_t>(std::exp2(exponent(random))));
  std::string out;
  out.reserve(target);
  while (out.size() < target) {
    size_t piece = std::min(target - out.size(), static_cast<size_t>(std::exp2(exponent(random) / 2)) + 1);
    switch (random() % 4) {
      case 0: {  // random bytes
        for (size_t i = 0; i < piece; ++i) out += static_cast<char>(random());
        break;
      }
      case 1: out += repeated(units[pick(random)], piece); break;  // one shape, repeated
      default: {  // a mixture of shapes
        while (piece > 0) {
          const std::string& unit = units[pick(random)];
          size_t take = std::min(piece, unit.size());
          out.append(unit, 0, take);
          piece -= take;
        }
      }
    }
  }
  return out;
}

}  // namespace tailforge::fuzz
