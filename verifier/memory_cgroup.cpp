#include "verifier/memory_cgroup.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include "base/files.h"

namespace tailforge {
namespace {

namespace fs = std::filesystem;

bool write_value(const std::string& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.flush();
  return static_cast<bool>(out);
}

// The directory of this process's cgroup in the hierarchy mounted with `fstype` (and, for v1,
// the `controller` super option), or "" when there is none.
std::string own_cgroup_dir(const std::string& fstype, const std::string& controller) {
  std::string mount_point, mount_root;
  std::istringstream mounts(read_text_file_or_empty("/proc/self/mountinfo"));
  for (std::string line; std::getline(mounts, line);) {
    std::istringstream fields(line);
    std::vector<std::string> parts;
    for (std::string field; fields >> field;) parts.push_back(field);
    size_t dash = 0;
    while (dash < parts.size() && parts[dash] != "-") ++dash;
    if (dash < 5 || dash + 3 >= parts.size() || parts[dash + 1] != fstype) continue;
    if (!controller.empty() && ("," + parts[dash + 3] + ",").find("," + controller + ",") == std::string::npos) continue;
    mount_root = parts[3];
    mount_point = parts[4];
    break;
  }
  if (mount_point.empty()) return "";
  std::istringstream groups(read_text_file_or_empty("/proc/self/cgroup"));
  for (std::string line; std::getline(groups, line);) {
    size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string controllers = line.substr(first + 1, second - first - 1), path = line.substr(second + 1);
    bool wanted = controller.empty() ? line.compare(0, 3, "0::") == 0
                                     : ("," + controllers + ",").find("," + controller + ",") != std::string::npos;
    if (!wanted) continue;
    if (mount_root != "/" && path.compare(0, mount_root.size(), mount_root) == 0) path = path.substr(mount_root.size());
    return (fs::path(mount_point) / fs::path(path).relative_path()).lexically_normal().string();
  }
  return "";
}

struct Hierarchy {
  std::string base;  // where run cgroups are made
  int version = 0;
  std::string unavailable;
};

// v2: the memory controller must be enabled for children of our cgroup, which the kernel allows
// only when no process sits in it: we move into "<own>/daemon" when we are its only process.
Hierarchy prepare_v2(const std::string& own) {
  Hierarchy h;
  h.version = 2;
  if (read_text_file_or_empty(own + "/cgroup.controllers").find("memory") == std::string::npos) {
    h.unavailable = "the memory controller is not available in " + own;
    return h;
  }
  bool enabled = read_text_file_or_empty(own + "/cgroup.subtree_control").find("memory") != std::string::npos;
  if (!enabled) {
    std::istringstream procs(read_text_file_or_empty(own + "/cgroup.procs"));
    std::vector<std::string> members;
    for (std::string pid; procs >> pid;) members.push_back(pid);
    if (members != std::vector<std::string>{std::to_string(getpid())}) {
      h.unavailable = "the cgroup " + own + " holds " + std::to_string(members.size()) +
                      " processes, not only this one: run tailforge as a systemd service (install-service "
                      "sets Delegate=yes) or under systemd-run --scope -p Delegate=yes";
      return h;
    }
    std::error_code ec;
    fs::create_directories(own + "/daemon", ec);
    if (ec || !write_value(own + "/daemon/cgroup.procs", std::to_string(getpid())) ||
        !write_value(own + "/cgroup.subtree_control", "+memory")) {
      h.unavailable = "cannot take over the cgroup " + own + " (moving into daemon/, enabling memory): not delegated";
      return h;
    }
  }
  h.base = own;
  return h;
}

Hierarchy prepare() {
  if (std::string own = own_cgroup_dir("cgroup2", ""); !own.empty()) {
    Hierarchy v2 = prepare_v2(own);
    if (v2.unavailable.empty()) return v2;
    if (std::string v1 = own_cgroup_dir("cgroup", "memory"); v1.empty()) return v2;
  }
  Hierarchy h;
  h.version = 1;
  std::string own = own_cgroup_dir("cgroup", "memory");
  if (own.empty()) {
    h.unavailable = "no memory cgroup hierarchy is mounted";
    return h;
  }
  std::string probe = own + "/tailforge-probe-" + std::to_string(getpid());
  std::error_code ec;
  if (!fs::create_directory(probe, ec) || ec) {
    h.unavailable = "cannot create a cgroup under " + own + (ec ? ": " + ec.message() : "");
    return h;
  }
  fs::remove(probe, ec);
  h.base = own;
  return h;
}

const Hierarchy& hierarchy() {
  static const Hierarchy prepared = prepare();
  return prepared;
}

}  // namespace

const std::string& memory_cgroups_unavailable() { return hierarchy().unavailable; }

Result<RunCgroup> create_run_cgroup(int64_t max_bytes) {
  const Hierarchy& h = hierarchy();
  if (!h.unavailable.empty()) return make_error(h.unavailable);
  static std::atomic<int64_t> counter{0};
  RunCgroup cgroup;
  cgroup.version = h.version;
  cgroup.dir = h.base + "/tailforge-run-" + std::to_string(getpid()) + "-" + std::to_string(++counter);
  cgroup.procs_file = cgroup.dir + "/cgroup.procs";
  std::error_code ec;
  if (!fs::create_directory(cgroup.dir, ec) || ec) return make_error("cannot create the cgroup " + cgroup.dir);
  std::string bytes = std::to_string(max_bytes);
  bool capped = h.version == 2 ? write_value(cgroup.dir + "/memory.max", bytes)
                               : write_value(cgroup.dir + "/memory.limit_in_bytes", bytes);
  if (!capped) {
    remove_run_cgroup(cgroup);
    return make_error("cannot set the memory limit of " + cgroup.dir);
  }
  // No swap either, where the host has it (the files are absent without swap accounting).
  if (h.version == 2) write_value(cgroup.dir + "/memory.swap.max", "0");
  else write_value(cgroup.dir + "/memory.memsw.limit_in_bytes", bytes);
  return cgroup;
}

bool run_cgroup_oom_killed(const RunCgroup& cgroup) {
  std::istringstream events(read_text_file_or_empty(cgroup.dir + (cgroup.version == 2 ? "/memory.events" : "/memory.oom_control")));
  for (std::string key; events >> key;) {
    int64_t value = 0;
    events >> value;
    if (key == "oom_kill") return value > 0;
  }
  return false;
}

void remove_run_cgroup(const RunCgroup& cgroup) {
  for (int attempt = 0; attempt < 50; ++attempt) {
    if (rmdir(cgroup.dir.c_str()) == 0 || errno == ENOENT) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace tailforge
