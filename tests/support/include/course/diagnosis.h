/// @file diagnosis.h
/// @brief Turning an exercise's hardware counters (kernel_profile.h) into one or two sentences
/// that name a cause and the TODO that fixes it (issue 45). The rules are data, one file per
/// chapter beside its tests, in this form:
///
///     # a comment
///     exercise transpose_tiled
///     metric l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum
///     metric smsp__inst_executed_op_shared_ld.sum
///     when l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum / smsp__inst_executed_op_shared_ld.sum >= 4
///       say shared-memory loads take {value} wavefronts each (32-way bank conflicts take 32): pad the tile (TODO 1)
///
/// An exercise lists the metrics its profile reads, then its rules in order: `when EXPRESSION
/// OP NUMBER` (OP one of < <= > >=) and, on the next line, `say` and the sentence, in which
/// {value} stands for the expression's value (three significant digits). An expression is made of
/// metric names, names the test supplies (such as minimum_bytes, what the exercise must move at
/// least), numbers, + - * / and parentheses. A rule whose expression cannot be evaluated (a
/// metric not profiled, a division by zero) says nothing. The first `limit` rules that hold are
/// the diagnosis.
///
/// Two more words give an exercise figures beyond its metrics:
/// - `stalls`: the profile also counts why warps could not issue (kernel_profile.h's
///   stall_reasons); rules may name stall_pct.REASON (that reason's share, in %, of all the
///   cycles warps spent stalled), and the diagnosis ends with the two largest shares and what
///   they mean ("warps stalled: 71 % waiting for data from global or local memory ...").
/// - `timeline`: the call is also recorded (activity.h) and its copies' and kernels' times
///   swept (TimelineFigures): rules may name timeline.overlap_pct, timeline.host_link_gbps and
///   the other figures TimelineFigures::named gives (the transfer chapters, where the work that
///   matters is not inside one kernel).
/// - `launch`: the call is also recorded, and its longest kernel's launch (block size, registers
///   per thread, shared memory per block, grid) set against what an SM holds (LaunchFigures):
///   rules may name launch.occupancy_pct_by_shared and the other figures LaunchFigures::named
///   gives (what bounds the occupancy: registers, shared memory, the block size, the grid).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "course/activity.h"
#include "course/kernel_profile.h"
#include "course/perf.h"
#include "course/settings.h"

namespace course {

/// One `when` / `say` pair of a rules file.
struct DiagnosisRule {
  std::string expression;  ///< what is compared, e.g. "wavefronts / loads"
  std::string comparison;  ///< <, <=, > or >=
  double threshold = 0;    ///< the number it is compared with
  std::string sentence;    ///< what is said when it holds ({value}: the expression's value)
};

/// An exercise's part of a rules file.
struct ExerciseDiagnosis {
  std::vector<std::string> metrics;  ///< the metrics its profile reads
  std::vector<DiagnosisRule> rules;  ///< its rules, in the order they are tried
  bool stalls = false;               ///< whether the profile counts the stall reasons too
  bool timeline = false;             ///< whether the call's copies and kernels are recorded too
  bool launch = false;               ///< whether its longest kernel's launch is set against the SM's limits
};

/// The launch figures (LaunchFigures::named) of a recording's longest kernel (the first, where
/// none has times), on SMs with `limits`; empty without a kernel.
std::map<std::string, double> longest_kernel_launch(const Activity& recorded, const SmLimits& limits);

/// The exercises of a rules file; throws std::invalid_argument naming the line of a mistake.
std::map<std::string, ExerciseDiagnosis> parse_diagnosis_rules(const std::string& text);

/// An expression's value with `values` for its names; nullopt when a name is unknown, the
/// expression is malformed, or it divides by zero.
std::optional<double> evaluate_expression(const std::string& expression, const std::map<std::string, double>& values);

/// The sentences of the first `limit` rules that hold for a profile's totals (KernelProfile::total
/// of each metric), its stall shares (with `stalls`) and the test's `inputs` (with `timeline`,
/// the timeline's figures among them), then, with `stalls`, the stall sentence; none when
/// nothing was profiled.
std::vector<std::string> diagnose(const ExerciseDiagnosis& exercise, const KernelProfile& profile,
                                  const std::map<std::string, double>& inputs = {}, int limit = 2);

/// The sentences of the first `limit` rules that hold for `values` (the names the rules use).
std::vector<std::string> diagnose_values(const ExerciseDiagnosis& exercise, const std::map<std::string, double>& values,
                                         int limit = 2);

/// Each stall reason's share of a profile's stall cycles, in %, as stall_pct.REASON; empty
/// when the profile counted none.
std::map<std::string, double> stall_shares(const KernelProfile& profile);

/// "warps stalled: 62 % <meaning>; 21 % <meaning>": the two largest of `shares` (stall_shares),
/// the second only when at least 10 %; "" without shares.
std::string stall_sentence(const std::map<std::string, double>& shares);

/// What diagnose_call found: its sentences, or why there are none.
struct CallDiagnosis {
  std::vector<std::string> sentences;  ///< the diagnosis (none when nothing held or was profiled)
  std::string why_not;                 ///< why nothing was profiled ("" when it was)
};

/// With --course_diagnose=1 (settings.h; COURSE_DIAGNOSE=1 at ctest time): runs `work` once more,
/// untimed, under the range profiler (profile_kernels, which counts in the exclusive GPU turn) with the metrics
/// that `exercise` lists in `rules` (its chapter's diagnosis.txt, compiled into the chapter's
/// tests as COURSE_DIAGNOSIS_RULES_TEXT), and diagnoses the figures with `inputs` (e.g.
/// minimum_bytes). An exercise with `timeline` or `launch` has `work` run once more before that,
/// recorded (record_activity), for those figures; one with no metric and no `stalls` is not
/// profiled at all. Called after the timed calls and their checks; what it finds goes into
/// PerfCheck::diagnosis and never changes a verdict. Without the flag nothing is made (why_not says
/// so, no sentence); asked for but without the exercise's rules or the counters (the driver's
/// profiling restriction, another profiler, an older GPU), why_not says why and the one sentence is
/// "no profile: <why>", so that the report says it too.
CallDiagnosis diagnose_call(const std::string& rules, const std::string& exercise, const std::function<void()>& work,
                            const std::map<std::string, double>& inputs = {});

/// Whether a perf test diagnoses `perf` (filled in up to its verdict: measured, baseline, ratio,
/// timed output): with --course_diagnose=1 always, with --course_diagnose=shortfall only when
/// evaluate_ratio fails it (a class, tools/grade-class: the profiled call of every perf test
/// that passed cost a class of 13 on the H100 20 % of its throughput, 28.3 against 22.5 s per
/// submission, 2026-11-27), never without the flag.
bool wants_diagnosis(const PerfCheck& perf);

/// wants_diagnosis, deciding with `given` rather than this program's settings (a unit test's).
bool wants_diagnosis(const PerfCheck& perf, const Settings& given);

/// A perf test's diagnosis: perf.diagnosis = diagnose_call(rules, exercise, work, inputs).sentences
/// when wants_diagnosis(perf), else nothing (and `work` does not run).
void diagnose_perf(PerfCheck& perf, const std::string& rules, const std::string& exercise,
                   const std::function<void()>& work, const std::map<std::string, double>& inputs = {});

}  // namespace course
