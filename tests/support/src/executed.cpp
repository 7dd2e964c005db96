#include "course/executed.h"
#include "course/profile.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "course/activity.h"
#include "course/fatbin.h"
#include "current_context.h"

namespace course {

std::string opcode_of(const std::string& instruction) {
  std::istringstream words(instruction);
  std::string word;
  while (words >> word) {
    if (word[0] == '@' || word[0] == '{') continue;  // a predicate, or the brace of a dual issue
    return word.substr(0, word.find('.'));
  }
  return "";
}

std::string mnemonic_of(const std::string& instruction) {
  std::istringstream words(instruction);
  std::string word;
  while (words >> word) {
    if (word[0] == '@' || word[0] == '{') continue;
    return word;
  }
  return "";
}

bool opcode_matches(const std::string& instruction, const std::string& wanted) {
  if (wanted.find('.') == std::string::npos) return opcode_of(instruction) == wanted;
  const std::string mnemonic = mnemonic_of(instruction);
  return mnemonic == wanted || mnemonic.rfind(wanted + ".", 0) == 0;
}

int access_bytes(const std::string& instruction) {
  const std::string opcode = opcode_of(instruction);
  // ldmatrix / stmatrix: each thread gets or gives one 32-bit register per 8x8 matrix, one (4
  // bytes), two (.2: 8) or four (.4: 16) of them; ".16" there is the element size.
  if (opcode == "LDSM" || opcode == "STSM") {
    const std::string mnemonic = mnemonic_of(instruction);
    const auto ends_with = [&](const char* end) {
      const std::string e(end);
      return mnemonic.size() >= e.size() && mnemonic.compare(mnemonic.size() - e.size(), e.size(), e) == 0;
    };
    return ends_with(".4") ? 16 : ends_with(".2") ? 8 : 4;
  }
  static const std::set<std::string> kMemory = {"LD",    "LDG",  "LDS",   "LDL",  "LDGSTS", "ST",   "STG",
                                                "STS",   "STL",  "ATOM",  "ATOMS", "ATOMG", "RED",  "REDG"};
  if (!kMemory.count(opcode)) return 0;
  // The modifiers of the opcode word, e.g. LDGSTS.E.BYPASS.LTC128B.128 -> E, BYPASS, LTC128B, 128.
  std::istringstream words(instruction);
  std::string word;
  while (words >> word && opcode_of(word) != opcode) {
  }
  std::istringstream modifiers(word);
  std::string modifier;
  int bytes = 4;
  std::getline(modifiers, modifier, '.');  // the opcode itself
  while (std::getline(modifiers, modifier, '.')) {
    if (modifier == "128") bytes = 16;
    else if (modifier == "64") bytes = 8;
    else if (modifier == "U16" || modifier == "S16") bytes = 2;
    else if (modifier == "U8" || modifier == "S8") bytes = 1;
    else if (modifier == "F64" || modifier == "S64" || modifier == "U64") bytes = 8;
    else if (const auto x = modifier.find('x'); x != std::string::npos && x > 1 && x + 1 < modifier.size()) {
      // A vector atomic's type, e.g. ATOMG.E.ADD.F32x4: 4 floats, 16 bytes.
      const std::size_t digits = modifier.find_first_of("0123456789");
      if (digits != std::string::npos && digits < x) {
        const int bits = std::atoi(modifier.substr(digits, x - digits).c_str());
        const int count = std::atoi(modifier.substr(x + 1).c_str());
        if (bits > 0 && count > 0) bytes = bits / 8 * count;
      }
    }
  }
  return bytes;
}

namespace {
// Sums `of(instruction)` over the instructions with `opcode`, in `kernel` or all kernels ("").
template <class Of>
long long sum_over(const std::vector<ExecutedInstruction>& instructions, const std::string& opcode,
                   const std::string& kernel, Of of) {
  long long total = 0;
  for (const auto& i : instructions)
    if ((kernel.empty() || i.kernel == kernel) && opcode_matches(i.text, opcode)) total += of(i);
  return total;
}
}  // namespace

long long ExecutedInstructions::threads(const std::string& opcode, const std::string& kernel) const {
  return sum_over(instructions, opcode, kernel, [](const ExecutedInstruction& i) { return i.threads; });
}

long long ExecutedInstructions::warps(const std::string& opcode, const std::string& kernel) const {
  return sum_over(instructions, opcode, kernel, [](const ExecutedInstruction& i) { return i.warps; });
}

long long ExecutedInstructions::bytes(const std::string& opcode, const std::string& kernel) const {
  return sum_over(instructions, opcode, kernel,
                  [](const ExecutedInstruction& i) { return i.threads * access_bytes(i.text); });
}

namespace {
// The memory an opcode names, or none for a generic one (LD, ST, ATOM, RED), which reaches
// whatever memory its address is in.
enum class Named { global, shared, generic, other };
Named named_space(const std::string& opcode) {
  static const std::set<std::string> generic = {"LD", "ST", "ATOM", "RED"};
  static const std::set<std::string> global = {"LDG", "STG", "ATOMG", "REDG"};
  static const std::set<std::string> shared = {"LDS", "STS", "ATOMS", "LDSM", "STSM"};
  const std::string op = opcode.substr(0, opcode.find('.'));
  if (generic.count(op)) return Named::generic;
  if (global.count(op)) return Named::global;
  if (shared.count(op)) return Named::shared;
  return Named::other;
}
bool names(Named named, MemorySpace space) {
  return (named == Named::global && space == MemorySpace::global) || (named == Named::shared && space == MemorySpace::shared);
}
// Of a generic instruction's threads, those that reached `space`: counted, or where not counted
// all of them for global memory and none for shared.
long long threads_in(const ExecutedInstruction& i, MemorySpace space) {
  const long long counted = space == MemorySpace::global ? i.global_threads : i.shared_threads;
  return counted >= 0 ? counted : (space == MemorySpace::global ? i.threads : 0);
}
}  // namespace

long long ExecutedInstructions::bytes_in(MemorySpace space, const std::string& opcode, const std::string& kernel) const {
  const Named named = named_space(opcode);
  if (named != Named::generic) return names(named, space) ? bytes(opcode, kernel) : 0;
  return sum_over(instructions, opcode, kernel,
                  [space](const ExecutedInstruction& i) { return threads_in(i, space) * access_bytes(i.text); });
}

long long ExecutedInstructions::warps_in(MemorySpace space, const std::string& opcode, const std::string& kernel) const {
  const Named named = named_space(opcode);
  if (named != Named::generic) return names(named, space) ? warps(opcode, kernel) : 0;
  return sum_over(instructions, opcode, kernel, [space](const ExecutedInstruction& i) {
    return i.threads > 0 ? (i.warps * threads_in(i, space) + i.threads - 1) / i.threads : 0LL;
  });
}

std::string ExecutedInstructions::summary(const std::vector<std::string>& opcodes) const {
  if (!counted) return "executed instructions not counted: " + why_not;
  std::set<std::string> kernels;
  for (const auto& i : instructions) kernels.insert(i.kernel);
  std::ostringstream out;
  out << "executed instructions, per kernel:";
  if (kernels.empty()) out << " none";
  for (const auto& k : kernels) {
    out << "\n  " << demangle(k) << ":";
    for (const auto& op : opcodes) {
      out << " " << op << " " << warps(op, k) << " warp / " << threads(op, k) << " thread executions";
      const long long b = bytes(op, k);
      if (b > 0) out << " (" << b << " B)";
      // A generic instruction's threads by the memory they reached, where that was counted.
      const long long global = sum_over(instructions, op, k, [](const ExecutedInstruction& i) { return i.global_threads; });
      const long long shared = sum_over(instructions, op, k, [](const ExecutedInstruction& i) { return i.shared_threads; });
      if (named_space(op) == Named::generic && threads(op, k) > 0 && global >= 0 && shared >= 0)
        out << " [" << global << " reached global memory, " << shared << " shared]";
      out << ";";
    }
  }
  return out.str();
}

namespace detail {

namespace {

std::string cupti_error(CUptiResult result, const char* what) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  return std::string("CUPTI's ") + what + " failed: " + (text ? text : "unknown error");
}

struct CounterState {
  std::mutex mutex;
  bool profiler_ready = false;
  std::string chip;
  // [0]: warp executions, [1]: thread executions; where offered, [2] and [3]: thread executions
  // that reached global and shared memory (what a generic LD, ST or ATOM touched).
  std::vector<std::uint64_t> metric_ids;
  bool configured = false;
  bool enabled = false;
  std::uint32_t device = 0;
  CUcontext context = nullptr;
};

CounterState& counting() {
  static CounterState state;
  return state;
}


bool metric_id(const std::string& chip, const char* name, std::uint64_t* id) {
  CUpti_SassMetrics_GetProperties_Params properties{CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE};
  properties.pChipName = chip.c_str();
  properties.pMetricName = name;
  if (cuptiSassMetricsGetProperties(&properties) != CUPTI_SUCCESS) return false;
  *id = properties.metric.metricId;
  return true;
}

bool start_counting_once(std::string* why_not) {
  auto& state = counting();
  std::lock_guard<std::mutex> lock(state.mutex);
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    *why_not = "no current device";
    return false;
  }
  state.device = static_cast<std::uint32_t>(device);
  if (!state.profiler_ready) {
    CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
    if (const auto r = cuptiProfilerInitialize(&init); r != CUPTI_SUCCESS) {
      *why_not = cupti_error(r, "profiler initialisation");
      return false;
    }
    CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
    chip.deviceIndex = state.device;
    if (const auto r = cuptiDeviceGetChipName(&chip); r != CUPTI_SUCCESS) {
      *why_not = cupti_error(r, "chip name query");
      return false;
    }
    state.chip = chip.pChipName;
    std::uint64_t warps = 0, threads = 0;
    if (!metric_id(state.chip, "smsp__sass_inst_executed", &warps) ||
        (!metric_id(state.chip, "smsp__sass_thread_inst_executed_pred_on", &threads) &&
         !metric_id(state.chip, "smsp__sass_thread_inst_executed", &threads))) {
      *why_not = "the SASS metrics of instructions executed are not offered for " + state.chip;
      return false;
    }
    state.metric_ids = {warps, threads};
    std::uint64_t global = 0, shared = 0;
    if (metric_id(state.chip, "smsp__sass_thread_inst_executed_op_global_pred_on", &global) &&
        metric_id(state.chip, "smsp__sass_thread_inst_executed_op_shared_pred_on", &shared)) {
      state.metric_ids.push_back(global);
      state.metric_ids.push_back(shared);
    }
    state.profiler_ready = true;
  }
  // Configured once per process and kept: configured again after cuptiSassMetricsUnsetConfig,
  // CUPTI answered CUPTI_ERROR_OUT_OF_MEMORY (H100, CUDA 13.0).
  if (!state.configured) {
    std::vector<CUpti_SassMetrics_Config> configs;
    for (auto id : state.metric_ids) configs.push_back({id, CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU});
    CUpti_SassMetricsSetConfig_Params config{CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE};
    config.pConfigs = configs.data();
    config.numOfMetricConfig = configs.size();
    config.deviceIndex = state.device;
    if (const auto r = cuptiSassMetricsSetConfig(&config); r != CUPTI_SUCCESS) {
      *why_not = cupti_error(r, "SASS metrics configuration");
      return false;
    }
    state.configured = true;
  }
  state.context = detail::current_context();
  CUpti_SassMetricsEnable_Params enable{CUpti_SassMetricsEnable_Params_STRUCT_SIZE};
  enable.ctx = state.context;
  enable.enableLazyPatching = 1;  // only the kernels that are launched get patched
  if (const auto r = cuptiSassMetricsEnable(&enable); r != CUPTI_SUCCESS) {
    *why_not = cupti_error(r, "SASS metrics enabling");
    return false;
  }
  state.enabled = true;
  return true;
}

}  // namespace

// Another process counting on the same GPU may hold its counters for a moment (ctest runs test
// processes side by side): a refusal is tried again for a few seconds before it is reported.
bool start_counting_instructions(std::string* why_not) {
  const ProfileScope phase("count instructions: start (CUPTI profiler)");
  for (int attempt = 0;; ++attempt) {
    if (start_counting_once(why_not)) return true;
    if (attempt == 19 || !counting().profiler_ready) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
}

ExecutedInstructions stop_counting_instructions() {
  const ProfileScope phase("count instructions: stop and read");
  auto& state = counting();
  std::lock_guard<std::mutex> lock(state.mutex);
  ExecutedInstructions executed;
  if (!state.enabled) {
    executed.why_not = "counting was not started";
    return executed;
  }
  // Per kernel and offset: executions of each metric.
  std::map<std::pair<std::string, unsigned>, std::map<std::uint64_t, long long>> counts;
  CUpti_SassMetricsGetDataProperties_Params properties{CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE};
  properties.ctx = state.context;
  CUptiResult result = cuptiSassMetricsGetDataProperties(&properties);
  if (result == CUPTI_SUCCESS && properties.numOfPatchedInstructionRecords > 0 && properties.numOfInstances > 0) {
    // Room for every metric's instances in each record, whichever way CUPTI lays them out; a
    // value it did not write keeps a metric id of none.
    const std::size_t per_record = properties.numOfInstances * state.metric_ids.size();
    std::vector<CUpti_SassMetrics_Data> data(properties.numOfPatchedInstructionRecords);
    std::vector<CUpti_SassMetrics_InstanceValue> values(data.size() * per_record, {UINT64_MAX, 0});
    for (std::size_t i = 0; i < data.size(); ++i) {
      data[i].structSize = CUpti_SassMetricsFlushData_Params_STRUCT_SIZE;  // as cupti_sass_metrics.h says
      data[i].pInstanceValues = &values[i * per_record];
    }
    CUpti_SassMetricsFlushData_Params flush{CUpti_SassMetricsFlushData_Params_STRUCT_SIZE};
    flush.ctx = state.context;
    flush.numOfPatchedInstructionRecords = data.size();
    flush.numOfInstances = properties.numOfInstances;
    flush.pMetricsData = data.data();
    result = cuptiSassMetricsFlushData(&flush);
    if (result == CUPTI_SUCCESS)
      for (const auto& d : data)
        for (std::size_t v = 0; v < per_record; ++v) {
          const auto& value = d.pInstanceValues[v];
          if (value.metricId == UINT64_MAX) continue;
          counts[{d.functionName ? d.functionName : "", d.pcOffset}][value.metricId] += static_cast<long long>(value.value);
        }
  }
  CUpti_SassMetricsDisable_Params disable{CUpti_SassMetricsDisable_Params_STRUCT_SIZE};
  disable.ctx = state.context;
  cuptiSassMetricsDisable(&disable);  // unpatches the kernels; the configuration stays
  state.enabled = false;
  if (result != CUPTI_SUCCESS) {
    executed.why_not = cupti_error(result, "SASS metrics collection");
    return executed;
  }

  cudaDeviceProp properties_of_gpu{};
  cudaGetDeviceProperties(&properties_of_gpu, static_cast<int>(state.device));
  const int cc = 10 * properties_of_gpu.major + properties_of_gpu.minor;
  const std::map<std::string, std::map<unsigned, std::string>>* sass = nullptr;
  try {
    // The SASS this GPU ran: its own, or an older one of its major version.
    const int arch = sass_run_on(cc, inspect_binary(own_executable(), configured_cuobjdump()).sass);
    if (arch == 0) {
      executed.why_not = "this program carries no SASS that a compute capability " + std::to_string(cc / 10) + "." +
                         std::to_string(cc % 10) + " GPU runs (its kernels ran from PTX compiled at load time), so "
                         "what ran cannot be named";
      return executed;
    }
    sass = &own_sass(arch);
  } catch (const std::exception& e) {
    executed.why_not = e.what();
    return executed;
  }
  for (const auto& [where, metrics] : counts) {
    ExecutedInstruction instruction;
    instruction.kernel = where.first;
    instruction.offset = where.second;
    const auto m0 = metrics.find(state.metric_ids[0]);
    const auto m1 = metrics.find(state.metric_ids[1]);
    instruction.warps = m0 == metrics.end() ? 0 : m0->second;
    instruction.threads = m1 == metrics.end() ? 0 : m1->second;
    if (state.metric_ids.size() >= 4) {
      const auto in_global = metrics.find(state.metric_ids[2]);
      const auto in_shared = metrics.find(state.metric_ids[3]);
      instruction.global_threads = in_global == metrics.end() ? 0 : in_global->second;
      instruction.shared_threads = in_shared == metrics.end() ? 0 : in_shared->second;
    }
    if (instruction.warps == 0 && instruction.threads == 0) continue;
    const auto function = sass->find(where.first);
    if (function != sass->end()) {
      const auto text = function->second.find(where.second);
      if (text != function->second.end()) instruction.text = text->second;
    }
    if (instruction.text.empty()) instruction.text = "?";  // a library's kernel: not in this program's SASS
    executed.instructions.push_back(std::move(instruction));
  }
  executed.counted = true;
  return executed;
}

}  // namespace detail

}  // namespace course
