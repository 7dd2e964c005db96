/// @file executed.h
/// @brief Which machine instructions a call's kernels executed, and how often: evidence that
/// the taught instructions ran, not only that they are present in the binary (a copy in a
/// branch that never runs is present). Counted by CUPTI's SASS metrics (the kernels are
/// patched to count their own instructions while they run; compute capability 7.5 and newer),
/// each instruction named from this program's SASS (cuobjdump) by its offset.
#pragma once

#include <string>
#include <vector>

namespace course {

/// One instruction of a kernel's SASS and how often it ran during the recorded call.
struct ExecutedInstruction {
  std::string kernel;       ///< mangled name of the kernel
  unsigned offset = 0;      ///< byte offset in the kernel's code
  std::string text;         ///< as cuobjdump prints it, e.g. "@!P0 LDGSTS.E.BYPASS.128 [R9], desc[UR4][R2.64]"
  long long warps = 0;      ///< warp-level executions
  long long threads = 0;    ///< thread-level executions with the predicate on (the threads it acted for)
  /// Of those, the threads whose access reached global memory: what a generic instruction (LD,
  /// ST, ATOM) touched, which its opcode does not say. -1 where not counted (CUPTI offers no such
  /// metric for this GPU).
  long long global_threads = -1;
  long long shared_threads = -1;  ///< the same for shared memory
};

/// Where a memory instruction's access went.
enum class MemorySpace { global, shared };

/// The instructions executed during one recorded call (activity.h: record_activity with
/// Counting::instructions), or why they could not be counted.
struct ExecutedInstructions {
  bool counted = false;  ///< false: `why_not` says why (no GPU support, another tool holds CUPTI, ...)
  std::string why_not;   ///< why nothing was counted, when `counted` is false
  std::vector<ExecutedInstruction> instructions;  ///< only those that ran at least once

  /// Thread-level executions of instructions whose opcode is `opcode` (the first word, any
  /// modifiers: "LDGSTS" counts LDGSTS.E.BYPASS.128 too), in `kernel` (mangled) or all kernels ("").
  long long threads(const std::string& opcode, const std::string& kernel = "") const;
  /// Warp-level executions of instructions whose opcode is `opcode`, as `threads` counts threads
  /// (for instructions one thread issues for the block, such as a bulk copy).
  long long warps(const std::string& opcode, const std::string& kernel = "") const;
  /// Bytes those executions moved: threads times each one's access width (access_bytes).
  long long bytes(const std::string& opcode, const std::string& kernel = "") const;
  /// Bytes that executions of `opcode` moved to or from `space`: all of them for an opcode that
  /// names its space (LDG, STG, ATOMG: global; LDS, STS, ATOMS: shared; none of them for the other
  /// space), only the threads that reached `space` for a generic one (LD, ST, ATOM). Where the
  /// space was not counted, a generic access counts as global (never as shared).
  long long bytes_in(MemorySpace space, const std::string& opcode, const std::string& kernel = "") const;
  /// Warp-level executions of `opcode` that reached `space`, as bytes_in counts bytes: a generic
  /// instruction's warps in proportion to its threads that reached `space` (rounded up).
  long long warps_in(MemorySpace space, const std::string& opcode, const std::string& kernel = "") const;
  /// One line per kernel: its executions of each of `opcodes` (threads and bytes), for messages.
  std::string summary(const std::vector<std::string>& opcodes) const;
};

/// The opcode of an instruction as cuobjdump prints it: its first word after the predicate,
/// without modifiers ("@!P0 LDGSTS.E.BYPASS.128 [R9], ..." -> "LDGSTS").
std::string opcode_of(const std::string& instruction);

/// Whether `instruction` is `wanted`: its opcode ("UBLKCP": any bulk copy), or, where `wanted`
/// has modifiers, its mnemonic begins with them ("UBLKCP.S": a bulk copy into shared memory,
/// UBLKCP.S.G or UBLKCP.S.S, not the bulk store UBLKCP.G.S). ExecutedInstructions' counts take
/// their `opcode` so.
bool opcode_matches(const std::string& instruction, const std::string& wanted);

/// Bytes one thread's execution of a memory instruction moves, from its width modifier
/// (.128: 16, .64: 8, .U16/.S16: 2, .U8/.S8: 1, none: 4; ldmatrix/stmatrix LDSM/STSM: 4, .2: 8,
/// .4: 16); 0 for an instruction that is not a per-thread load or store (LD*, ST*, LDGSTS, ATOM*,
/// RED*, LDSM, STSM).
int access_bytes(const std::string& instruction);

namespace detail {
/// Starts counting (activity.cpp calls it with the device idle); false with `why_not` set when
/// this GPU, driver or process cannot.
bool start_counting_instructions(std::string* why_not);
/// Stops counting (the device idle) and names what ran.
ExecutedInstructions stop_counting_instructions();
}  // namespace detail

}  // namespace course
