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
  // The grid of a grid-stride loop over `count` elements: enough blocks of `block` threads to
  // cover them, at most `cap`.
  std::string grid_for(int64_t count, int64_t cap) const;
  // Host expression for one input element: small integers or dyadic values (exact sums).
  std::string input_expression() const;
  // The option nearest in log scale to the hinted element count's `dims`-th root (a side length
  // for 2D/3D domains); a random option when there is no hint.
  int64_t pick_size(const std::vector<int64_t>& options, int dims = 1);
  std::string fill(const std::string& text, const std::map<std::string, std::string>& values);
  // Integer knobs, each both the placeholder ${NAME} (its name upper-cased) and the recorded
  // parameter of its name.
  void record(std::map<std::string, std::string>& values,
              std::initializer_list<std::pair<const char*, int64_t>> knobs);
  // ${SHARED}, a shared array `name` of one `type` a thread, and ${SHMEM}, the launch's dynamic
  // size of it in `host_type` elements.
  void add_thread_shared(std::map<std::string, std::string>& values, const std::string& name,
                         const std::string& type, const std::string& host_type) const;
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

// A domain's code: `kernels` filled `kernel_fills` times, then `main_body` `main_fills` times (a
// second fill resolves placeholders that values bring, such as ${BLOCK} in a shared array).
DomainCode fill_code(DomainContext& c, const std::string& kernels, const std::string& main_body,
                     const std::map<std::string, std::string>& values, int kernel_fills, int main_fills);

// The text of a switch's two users, or of case 0 alone without `use_switch`: the kernel declares
// `variable` (`<type> <variable>;` before the switch, `<single_type> <variable> = <case 0>;`
// alone) and the host reference returns it.
struct SwitchUse {
  std::string selector;
  std::string variable;
  std::string type;
  std::string single_type;
  int device_indent = 4;
  int host_indent = 2;
};
SwitchText write_switch_use(const SwitchUse& use, const std::vector<SwitchCase>& cases, bool use_switch);

// The same text on the device and in the host reference.
inline SwitchCase same_case(const std::string& text) { return {text, text}; }

// With the "switch" knob, appends 2 to 1 + `most_extra` cases from `next` (one call a case) after
// `cases` (case 0); the switch's users, or case 0's alone.
template <typename MakeCase>
SwitchText switch_over_cases(DomainContext& c, const SwitchUse& use, std::vector<SwitchCase>& cases,
                             uint64_t most_extra, MakeCase next) {
  bool use_switch = c.has("switch");
  if (use_switch) {
    int extra = 2 + static_cast<int>(c.random.below(most_extra));
    for (int k = 0; k < extra; ++k) cases.push_back(next());
  }
  return write_switch_use(use, cases, use_switch);
}

// Host text that the domains' main() bodies share (agents/generator/host_text.cpp): raw main text,
// its ${NAME} placeholders unfilled, for a domain to put between its own lines.

// value_t buffers of `count` elements on the device (`value_t* <device> = ...`), device_begin(),
// `before_upload` ("" for none) and the uploads of the buffers that have a host `source`.
struct DeviceBuffer {
  std::string device;
  std::string source;  // the host vector uploaded to it; "" for none
};
std::string host_device_buffers(const std::vector<DeviceBuffer>& buffers, const std::string& count,
                                const std::string& before_upload);

// A one-in, one-out domain's value_t arrays: the host vectors (the input filled with ${INPUT}),
// their device copies, device_begin(), `before_upload` and the input's upload.
struct HostArrays {
  std::string input, output;                // host vectors
  std::string device_input, device_output;  // their device copies
  std::string length;                       // the vectors' length as declared
  std::string fill_loop;                    // the header of the loop that fills the input
  std::string count;                        // the element count the allocations and the upload use
  std::string before_upload;                // lines after device_begin() ("" for none)
};
std::string host_arrays_setup(const HostArrays& arrays);
// host_arrays_setup for `rows` x `cols` matrices input and output (d_input, d_output).
std::string host_matrix_setup();

// Tables the kernel reads, either in __constant__ memory (`constant`) or as `const T*` parameters,
// as the placeholders ${CONSTANT} (the declarations), ${TABLE_PARAMS} and ${TABLE_ARGS} (the
// kernel's parameters and the launch's arguments, each with a trailing ", "), ${TABLE_ALLOC} (the
// device buffers) and ${TABLE_UPLOAD} (the copies from the host).
struct ReadOnlyTable {
  std::string name;      // the kernel's name for it
  std::string device;    // the device buffer, without constant memory
  std::string host;      // the host vector it is copied from
  std::string declared;  // its element count in the __constant__ declaration
  std::string count;     // its element count in host code
};
void add_read_only_tables(std::map<std::string, std::string>& values, bool constant,
                          const std::vector<ReadOnlyTable>& tables);

// With `constant`, ${CONSTANT} declares the __constant__ array `name` of `literals` and
// ${CONSTANT_UPLOAD} copies them there from the host array `host`; both are empty without it.
void add_constant_literals(std::map<std::string, std::string>& values, bool constant, const std::string& name,
                           const std::string& host, const std::vector<std::string>& literals);

// A block's tree sum of `variable` through the shared array `cache` (one element a thread), left
// in `variable` of every thread.
std::string block_tree_sum(const std::string& variable);

// One line of a program's report, `report_<kind>("<name>", <expression>);` (kind "count" or
// "value").
struct HostReport {
  std::string kind;
  std::string name;
  std::string expression;
};
// `reports` at main's top level, then `return finish(passed);`.
std::string host_reports(const std::vector<HostReport>& reports);
// `reports` in a loop over `label` (at index `index`), each after a printf of "<label> <index> ".
std::string labelled_reports(const std::string& label, const std::string& index,
                             const std::vector<HostReport>& reports);

// After the launches: the launch check, the download of `host` from `device` (`bytes`),
// device_end() and the start of the verdict, `bool passed = true;`.
std::string host_collect(const std::string& host, const std::string& device, const std::string& bytes);

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
