#include "course/kernel_profile.h"

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <sstream>

#include "course/gpu.h"
#include "course/gpu_turn.h"
#include "course/profile.h"
#include "current_context.h"

namespace course {

double KernelProfile::total(const std::string& metric) const {
  double sum = 0;
  for (const auto& range : ranges)
    if (const auto found = range.values.find(metric); found != range.values.end()) sum += found->second;
  return sum;
}

std::string KernelProfile::summary() const {
  if (!profiled) return "not profiled: " + why_not;
  std::ostringstream out;
  out << "hardware counters, per kernel:";
  for (const auto& range : ranges) {
    out << "\n  " << range.name << ":";
    for (const auto& [metric, value] : range.values) out << " " << metric << " " << value << ";";
  }
  return out.str();
}

namespace {

std::string cupti_failure(CUptiResult result, const char* what) {
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  if (result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
    return std::string(what) + ": the driver lets only administrators read the GPU's counters here "
                               "(NVreg_RestrictProfilingToAdminUsers)";
  return std::string("CUPTI's ") + what + " failed: " + (text ? text : "unknown error");
}


// The host side of the profiler (it turns the counters into metric values), ended on every path.
struct Host {
  CUpti_Profiler_Host_Object* object = nullptr;
  ~Host() {
    if (!object) return;
    CUpti_Profiler_Host_Deinitialize_Params end{CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    end.pHostObject = object;
    cuptiProfilerHostDeinitialize(&end);
  }
};

// The range profiler on a context, disabled on every path.
struct Session {
  CUpti_RangeProfiler_Object* object = nullptr;
  ~Session() {
    if (!object) return;
    CUpti_RangeProfiler_Disable_Params disable{CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    disable.pRangeProfilerObject = object;
    cuptiRangeProfilerDisable(&disable);
  }
};

}  // namespace

const std::vector<StallReason>& stall_reasons() {
  static const std::vector<StallReason> reasons = {
      {"long_scoreboard", "waiting for data from global or local memory (long scoreboard)"},
      {"short_scoreboard", "waiting for a shared-memory or special-function result (short scoreboard)"},
      {"barrier", "waiting at a block barrier, __syncthreads or a pipeline wait (barrier)"},
      {"mio_throttle", "the shared-memory instruction queue was full (MIO throttle)"},
      {"lg_throttle", "the global-memory instruction queue was full (LG throttle)"},
      {"math_pipe_throttle", "its arithmetic pipe was busy (math pipe throttle)"},
      {"wait", "a fixed-latency dependency between instructions (wait)"},
      {"not_selected", "ready, but another warp issued: the scheduler was busy (not selected)"},
      {"no_instruction", "no instruction fetched yet (no instruction)"},
      {"membar", "a memory fence (membar)"},
      {"drain", "its last stores draining at exit (drain)"},
      {"dispatch_stall", "the dispatcher (dispatch stall)"},
      {"branch_resolving", "a branch target (branch resolving)"},
      {"sleeping", "asleep: __nanosleep or a yield (sleeping)"},
      {"tex_throttle", "the texture unit's queue was full (tex throttle)"},
      {"imc_miss", "the constant cache (IMC miss)"},
      {"gmma", "a warpgroup matrix multiply (GMMA)"},
      {"misc", "other reasons (misc)"},
  };
  return reasons;
}

std::string stall_metric(const std::string& reason) { return "smsp__warps_issue_stalled_" + reason + ".sum"; }

namespace {

// The base names (before the first '.') of every metric the host object's chip has.
std::vector<std::string> chip_metric_bases(CUpti_Profiler_Host_Object* host) {
  std::vector<std::string> bases;
  for (const auto type : {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT}) {
    CUpti_Profiler_Host_GetBaseMetrics_Params base{CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE};
    base.pHostObject = host;
    base.metricType = type;
    if (cuptiProfilerHostGetBaseMetrics(&base) != CUPTI_SUCCESS) continue;
    for (size_t i = 0; i < base.numMetrics; ++i) bases.emplace_back(base.ppMetricNames[i]);
  }
  return bases;
}

}  // namespace

std::vector<std::string> metrics_unknown_on_chip(const std::string& chip, const std::vector<std::string>& metrics) {
  std::vector<std::string> unknown;
  for (const auto& metric : metrics) {
    // A host object each: one that refused a name refuses every later one.
    Host host;
    CUpti_Profiler_Host_Initialize_Params init{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
    init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    init.pChipName = chip.c_str();
    if (const auto r = cuptiProfilerHostInitialize(&init); r != CUPTI_SUCCESS) {
      unknown.push_back(metric + " (" + cupti_failure(r, ("host initialisation for " + chip).c_str()) + ")");
      continue;
    }
    host.object = init.pHostObject;
    const char* name = metric.c_str();
    CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
    add.pHostObject = host.object;
    add.ppMetricNames = &name;
    add.numMetrics = 1;
    if (cuptiProfilerHostConfigAddMetrics(&add) != CUPTI_SUCCESS) unknown.push_back(metric);
  }
  return unknown;
}

KernelProfile profile_kernels(const std::function<void()>& work, const std::vector<std::string>& asked,
                              int max_kernels, const std::vector<std::string>& if_available) {
  KernelProfile profile;
  auto not_profiled = [&](std::string why) {
    profile.why_not = std::move(why);
    return profile;
  };
  if (const auto why = gpu_unavailable_reason()) return not_profiled(*why);
  if (asked.empty() && if_available.empty()) return not_profiled("no metrics asked for");
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess)  // (the context exists)
    return not_profiled("no current device");
  CUcontext context = detail::current_context();
  if (!context) return not_profiled("no current CUDA context");

  // The host side first (the chip's metrics, the passes' configuration), in the program's
  // shared turn: it runs nothing on the GPU, and it is most of a profile's host time, which other
  // programs' measurements need not wait for. Only the counting, from enabling the range
  // profiler to reading its counters, holds the GPU alone (below).
  std::optional<ProfileScope> phase(std::in_place, "diagnosis profile: host setup (shared turn)");
  CUpti_Profiler_Initialize_Params init{CUpti_Profiler_Initialize_Params_STRUCT_SIZE};
  if (const auto r = cuptiProfilerInitialize(&init); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "profiler initialisation"));
  CUpti_Device_GetChipName_Params chip{CUpti_Device_GetChipName_Params_STRUCT_SIZE};
  chip.deviceIndex = static_cast<size_t>(device);
  if (const auto r = cuptiDeviceGetChipName(&chip); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "chip name query"));

  // Which counters this context may read (none, on a virtual GPU without profiling).
  CUpti_Profiler_GetCounterAvailability_Params availability{CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE};
  availability.ctx = context;
  if (const auto r = cuptiProfilerGetCounterAvailability(&availability); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "counter availability query"));
  std::vector<std::uint8_t> available(availability.counterAvailabilityImageSize);
  availability.pCounterAvailabilityImage = available.data();
  if (const auto r = cuptiProfilerGetCounterAvailability(&availability); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "counter availability query"));

  Host host;
  CUpti_Profiler_Host_Initialize_Params host_init{CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  host_init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  host_init.pChipName = chip.pChipName;
  host_init.pCounterAvailabilityImage = available.data();
  if (const auto r = cuptiProfilerHostInitialize(&host_init); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "profiler host initialisation"));
  host.object = host_init.pHostObject;
  std::vector<std::string> metrics = asked;
  if (!if_available.empty()) {
    const auto bases = chip_metric_bases(host.object);
    for (const auto& m : if_available)
      if (std::find(bases.begin(), bases.end(), m.substr(0, m.find('.'))) != bases.end()) metrics.push_back(m);
  }
  if (metrics.empty()) return not_profiled("none of the metrics asked for is counted on " + std::string(chip.pChipName));
  std::vector<const char*> names;
  for (const auto& m : metrics) names.push_back(m.c_str());
  CUpti_Profiler_Host_ConfigAddMetrics_Params add{CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = host.object;
  add.ppMetricNames = names.data();
  add.numMetrics = names.size();
  if (const auto r = cuptiProfilerHostConfigAddMetrics(&add); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "metric configuration (a metric this chip does not have?)"));
  CUpti_Profiler_Host_GetConfigImageSize_Params config_size{CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  config_size.pHostObject = host.object;
  if (const auto r = cuptiProfilerHostGetConfigImageSize(&config_size); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "configuration size query"));
  std::vector<std::uint8_t> config(config_size.configImageSize);
  CUpti_Profiler_Host_GetConfigImage_Params config_image{CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  config_image.pHostObject = host.object;
  config_image.configImageSize = config.size();
  config_image.pConfigImage = config.data();
  if (const auto r = cuptiProfilerHostGetConfigImage(&config_image); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "configuration"));

  // The counters are the device's (gpu_turn.h): from here to the return, the profiler's session
  // (disabled by ~Session, before this turn ends) and the call it counts have the GPU alone.
  phase.reset();
  const ExclusiveGpuTurn counting;
  const ProfileScope counting_phase("diagnosis profile: counting (exclusive turn)");
  Session session;
  CUpti_RangeProfiler_Enable_Params enable{CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  enable.ctx = context;
  if (const auto r = cuptiRangeProfilerEnable(&enable); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "range profiler enabling"));
  session.object = enable.pRangeProfilerObject;

  CUpti_RangeProfiler_GetCounterDataSize_Params data_size{CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  data_size.pRangeProfilerObject = session.object;
  data_size.pMetricNames = names.data();
  data_size.numMetrics = names.size();
  data_size.maxNumOfRanges = static_cast<size_t>(max_kernels);
  data_size.maxNumRangeTreeNodes = static_cast<uint32_t>(max_kernels);
  if (const auto r = cuptiRangeProfilerGetCounterDataSize(&data_size); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "counter data size query"));
  std::vector<std::uint8_t> counters(data_size.counterDataSize);
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params data_init{
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  data_init.pRangeProfilerObject = session.object;
  data_init.counterDataSize = counters.size();
  data_init.pCounterData = counters.data();
  if (const auto r = cuptiRangeProfilerCounterDataImageInitialize(&data_init); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "counter data initialisation"));

  // One range per kernel launch (auto range), each kernel replayed by CUPTI for every pass.
  CUpti_RangeProfiler_SetConfig_Params set{CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  set.pRangeProfilerObject = session.object;
  set.configSize = config.size();
  set.pConfig = config.data();
  set.counterDataImageSize = counters.size();
  set.pCounterDataImage = counters.data();
  set.range = CUPTI_AutoRange;
  set.replayMode = CUPTI_KernelReplay;
  set.maxRangesPerPass = static_cast<size_t>(max_kernels);
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  set.passIndex = 0;
  set.targetNestingLevel = 1;
  if (const auto r = cuptiRangeProfilerSetConfig(&set); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "range profiler configuration"));

  CUpti_RangeProfiler_Start_Params start{CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  start.pRangeProfilerObject = session.object;
  if (const auto r = cuptiRangeProfilerStart(&start); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "range profiler start"));
  work();
  const cudaError_t synchronized = cudaDeviceSynchronize();
  CUpti_RangeProfiler_Stop_Params stop{CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  stop.pRangeProfilerObject = session.object;
  const auto stopped = cuptiRangeProfilerStop(&stop);
  if (synchronized != cudaSuccess)
    return not_profiled(std::string("the profiled call failed: ") + cudaGetErrorName(synchronized));
  if (stopped != CUPTI_SUCCESS) return not_profiled(cupti_failure(stopped, "range profiler stop"));
  CUpti_RangeProfiler_DecodeData_Params decode{CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  decode.pRangeProfilerObject = session.object;
  if (const auto r = cuptiRangeProfilerDecodeData(&decode); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "counter decoding"));

  CUpti_RangeProfiler_GetCounterDataInfo_Params info{CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = counters.data();
  info.counterDataImageSize = counters.size();
  if (const auto r = cuptiRangeProfilerGetCounterDataInfo(&info); r != CUPTI_SUCCESS)
    return not_profiled(cupti_failure(r, "counter data query"));
  for (size_t index = 0; index < info.numTotalRanges; ++index) {
    KernelProfile::Range range;
    CUpti_Profiler_Host_GetRangeName_Params name{CUpti_Profiler_Host_GetRangeName_Params_STRUCT_SIZE};
    name.pCounterDataImage = counters.data();
    name.counterDataImageSize = counters.size();
    name.rangeIndex = index;
    name.delimiter = "/";
    // (Whether the caller owns the name's memory is not documented: a few bytes per range are
    // left to the process rather than freed wrongly.)
    if (cuptiProfilerHostGetRangeName(&name) == CUPTI_SUCCESS && name.pRangeName) range.name = name.pRangeName;
    std::vector<double> values(names.size());
    CUpti_Profiler_Host_EvaluateToGpuValues_Params evaluate{CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
    evaluate.pHostObject = host.object;
    evaluate.pCounterDataImage = counters.data();
    evaluate.counterDataImageSize = counters.size();
    evaluate.rangeIndex = index;
    evaluate.ppMetricNames = names.data();
    evaluate.numMetrics = names.size();
    evaluate.pMetricValues = values.data();
    if (const auto r = cuptiProfilerHostEvaluateToGpuValues(&evaluate); r != CUPTI_SUCCESS)
      return not_profiled(cupti_failure(r, "metric evaluation"));
    for (size_t m = 0; m < names.size(); ++m) range.values[metrics[m]] = values[m];
    profile.ranges.push_back(std::move(range));
  }
  profile.profiled = true;
  return profile;
}

}  // namespace course
