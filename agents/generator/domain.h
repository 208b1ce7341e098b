// Internal to the generator: what a domain writer sees (the knobs the core chose, a seeded
// random source, text helpers for the cross-cutting features) and what it returns.
// Not a public API; agents/generator/generator.h is.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tailforge {

// Decimal text of an integer, for the numbers domain writers put in CUDA text.
inline std::string str(int64_t value) { return std::to_string(value); }

// splitmix64: the same numbers on every platform (std distributions are not portable).
struct GeneratorRandom {
  uint64_t state = 0;
  uint64_t next();
  uint64_t below(uint64_t n);  // uniform in [0, n)
  bool chance(double probability);
  template <typename V>
  const V& pick(const std::vector<V>& options) {
    return options[below(options.size())];
  }
};

// The knobs and helpers a domain writer uses. ${NAME} placeholders in domain text are filled by
// fill(): KERNEL (kernel head for `threads` threads), KERNEL_NB (head without launch bounds),
// TARG (template arguments at a launch), SYNC, WARP, IDX, UNROLL, plus the domain's own names.
struct DomainContext {
  GeneratorRandom random;
  std::set<std::string> knobs;  // features the core turned on
  std::string value_type = "float";
  int block = 256;
  int threads = 256;  // threads per block of the kernels written with ${KERNEL}
  int unroll = 4;
  bool float_suffix = true;  // float literals written 1.5f, else 1.5 (double, promoted)
  std::optional<double> size_hint;  // from the template's {size}/{n} placeholder
  nlohmann::json parameters = nlohmann::json::object();
  bool used_warp_constant = false;
  std::vector<std::string> unfilled;  // placeholders fill() found no value for (a generator bug)

  bool has(const std::string& knob) const { return knobs.count(knob) > 0; }
  bool is_integer() const { return value_type == "int" || value_type == "unsigned int"; }
  std::string lit(double value) const;  // a literal of value_type
  std::string sync() const;
  std::string warp();
  std::string index() const;
  std::string kernel_head(bool with_bounds) const;
  std::string unroll_pragma() const;
  // One shared array: `__shared__ type name[count];` or, with dynamic_shared, a view of the
  // extern buffer; shared_launch_bytes is the launch's dynamic size ("0" when static).
  std::string shared_array(const std::string& name, const std::string& type,
                           const std::string& count) const;
  std::string shared_launch_bytes(const std::string& type, const std::string& count) const;
  // Host expression for one input element: small integers or dyadic values (exact sums).
  std::string input_expression() const;
  // The option nearest in log scale to the hinted element count's `dims`-th root (a side length
  // for 2D/3D domains); a random option when there is no hint.
  int64_t pick_size(const std::vector<int64_t>& options, int dims = 1);
  std::string fill(const std::string& text, const std::map<std::string, std::string>& values);
  std::string fill_nested(const std::string& text,
                          const std::map<std::string, std::string>& values, int depth);
};

// One case of a generated switch: the expression the kernel assigns and the one the host
// reference returns (the same text where host and device arithmetic agree).
struct SwitchCase {
  std::string device;
  std::string host;
};

// A generated switch over `selector`, in the kernel's form (`case k: <variable> = <device>;
// break;`) and the host reference's (`case k: return <host>;`); the last case is `default`.
// Each form starts with `switch` at its indent, cases two spaces deeper, and ends with `}`.
struct SwitchText {
  std::string device;
  std::string host;
};
SwitchText write_switch(const std::string& selector, const std::string& variable,
                        const std::vector<SwitchCase>& cases, int device_indent, int host_indent);

struct DomainCode {
  std::string kernels;    // device code and host helpers, after the shared prelude
  std::string main_body;  // statements of main()
};

struct DomainSpec {
  std::string name;
  std::vector<std::string> value_types;  // element types this domain can use
  std::vector<std::string> knobs;        // features it may turn on (cross-cutting ones included)
  std::vector<int> blocks;               // block sizes it accepts
  DomainCode (*write)(DomainContext&);
};

// The domain tables, one function per file of domains.
std::vector<DomainSpec> basic_domains();      // elementwise, reduction, scan, histogram, transpose
std::vector<DomainSpec> stencil_domains();    // stencil 1d, 2d, 3d
std::vector<DomainSpec> image_domains();      // heat diffusion, convolution, image filter
std::vector<DomainSpec> linalg_domains();     // matmul, softmax, layernorm, spmv csr/ell
std::vector<DomainSpec> discrete_domains();   // graph bfs, bitonic sort, sha256 hash
std::vector<DomainSpec> science_domains();    // nbody, monte carlo, kmeans step
std::vector<DomainSpec> tensor_codegen_domains();  // tensor operators as a DL compiler's codegen writes them
std::vector<DomainSpec> api_domains();  // textures, surfaces, streams, graphs, occupancy, host memory, half

// The helpers' naming styles (agents/generator/style.cpp): style 0 keeps the prelude's names, the
// others rename them throughout the program's code.
size_t helper_style_count();
std::string apply_helper_style(const std::string& source, size_t style);

// The shared head of every program; `kernels` decides which optional helpers it needs. It names
// no domain, template or seed: those are the sample's lineage, never its text.
std::string program_prelude(const DomainContext& context, const std::string& kernels, uint64_t input_seed);

}  // namespace tailforge
