/// @file technique.h
/// @brief The rules of an exercise (its contract says which), checked against what ran:
/// the records of activity.h and the SASS of the test executable. Each returns a GoogleTest
/// assertion whose message says which rule was broken and what ran instead.
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "course/activity.h"

namespace course {

/// A technique is judged only on code that works: passes when `correct` does, else fails with
/// "<what> gives a wrong result here, so its technique was not checked" and the comparison.
::testing::AssertionResult result_is_right_first(const ::testing::AssertionResult& correct, const std::string& what);

/// At least one kernel ran, and every kernel is the program's own (no cuBLAS, CUB, Thrust...).
::testing::AssertionResult launches_only_own_kernels(const Activity& activity, const std::string& what);

/// No copy of any kind ran (cudaMemcpy*, in any direction).
::testing::AssertionResult enqueues_no_copies(const Activity& activity, const std::string& what);

/// Every kernel and copy ran on the stream the call was given (record_activity_on).
::testing::AssertionResult stays_on_given_stream(const Activity& activity, const std::string& what);

/// No call that waits on the host for the GPU (cudaDeviceSynchronize, cudaStreamSynchronize,
/// cudaEventSynchronize): a function that only enqueues leaves the waiting to its caller. Only
/// for a recording of the function's own calls (nothing of the judge's in the recorded work).
/// `instead`, when given, replaces the message's advice (what the exercise should do instead).
::testing::AssertionResult waits_not_on_the_host(const Activity& activity, const std::string& what,
                                                 const std::string& instead = "");

/// Every kernel has at least `bytes` of shared memory (static + dynamic); `why` says what for.
::testing::AssertionResult kernels_use_shared_memory(const Activity& activity, const std::string& what, int bytes,
                                                     const std::string& why);

/// Every kernel's blocks are x by y threads.
::testing::AssertionResult kernels_have_block(const Activity& activity, const std::string& what, int x, int y);

/// The rules most exercises share, the first one broken: only its own kernels
/// (launches_only_own_kernels), no copies (enqueues_no_copies), all on the given stream
/// (stays_on_given_stream).
::testing::AssertionResult own_kernels_on_given_stream(const Activity& activity, const std::string& what);

/// Threads launched by all the kernels together (blocks x threads per block).
long long threads_launched(const Activity& activity);

/// The first of `results` that failed, or success: an exercise's rules checked together (a
/// technique test and the call its perf test records, FreshCalls::rules, share them so).
::testing::AssertionResult all_rules(std::initializer_list<::testing::AssertionResult> results);

/// Bytes the kernels read from shared memory into registers, by every instruction that can:
/// LDS, ldmatrix (LDSM) and generic loads (LD) for the threads that reached shared memory.
long long shared_load_bytes(const ExecutedInstructions& executed);

/// What one rule about executed instructions counts (executed.h).
enum class Executions { thread_bytes, warp_instructions };

/// Evidence that the taught instructions ran (the recording counted them, Counting::instructions):
/// the kernels executed `opcodes` (summed) for at least `at_least` bytes moved (thread_bytes)
/// or warp-level instructions (warp_instructions); `taught` names them for the message ("its
/// asynchronous copies (LDGSTS)"), `needed` says what the amount is ("the 4 MiB of whole tiles").
/// Passes when the recording could not count (Activity::executed.why_not): a technique test that
/// needs the evidence skips when it has none (COURSE_REQUIRE_COUNTED, testing.h). In bytes, "LDS"
/// and "STS" count the generic loads and stores (LD, ST) whose threads reached shared memory too
/// (ExecutedInstructions::bytes_in), and "LDS" ldmatrix (LDSM), "STS" stmatrix (STSM). An opcode
/// with modifiers counts only those instructions ("UBLKCP.S": bulk copies into shared memory).
::testing::AssertionResult executed_at_least(const Activity& activity, const std::string& what,
                                             const std::vector<std::string>& opcodes, Executions unit,
                                             long long at_least, const std::string& taught, const std::string& needed);

/// Evidence that data went into shared memory while the kernels ran, by every way it can: stores
/// (STS, and ST where it reached shared memory) and asynchronous copies (LDGSTS) by the bytes each moved, and bulk and tensor copies
/// (UBLKCP: cuda::memcpy_async with a barrier, cp.async.bulk; UTMALDG: TMA), each issued by one
/// thread for a number of bytes held in a register, so each counts for the most it can move: the
/// whole shared memory of the kernel that ran it. At least `at_least` bytes in all; `needed` says
/// what the amount is ("the 12000000 bytes of the matrix"). Passes when the recording could not
/// count (as executed_at_least). With `asynchronous_only`, stores (STS) do not count: only the
/// asynchronous copies of every kind (LDGSTS, UBLKCP, UTMALDG).
/// The bulk copies together count for no more than `at_least` less what the kernels read from
/// global memory with plain loads (LDG; LD, ATOMG and ATOM for the threads that reached global
/// memory, or all of them where that was not counted) beyond `plain_loads_allowed` (the bytes
/// the exercise may read so, e.g. a partial tile that is never copied): a tiny bulk copy beside
/// plain loads of the data does not pass for a tile filled by copies, while data loaded plainly
/// and then stored into the tile (STS) still counts through its stores.
::testing::AssertionResult stored_into_shared_at_least(const Activity& activity, const std::string& what,
                                                       long long at_least, const std::string& needed,
                                                       bool asynchronous_only = false,
                                                       long long plain_loads_allowed = 0);

/// The SASS architecture a CPU-side check reads: the current GPU's when there is one, it is >=
/// `minimum` and the binary has SASS for it, else the newest the binary has that is >= `minimum`
/// (0 if none).
int sass_arch_to_check(int minimum);

/// The SASS (for sass_arch_to_check(minimum)) of the kernel whose mangled name contains
/// `kernel` has an instruction starting with `opcode` (e.g. "LDGSTS"); `why` says what it is.
::testing::AssertionResult kernel_sass_has(const std::string& kernel, const std::string& opcode, int minimum,
                                           const std::string& why);

/// kernel_sass_has for every kernel that ran, each looked up by its exact (mangled) name: the
/// kernels a call actually launched, whatever their names, at whatever size.
::testing::AssertionResult kernels_that_ran_have(const Activity& activity, const std::string& what,
                                                 const std::string& opcode, int minimum, const std::string& why);

}  // namespace course
