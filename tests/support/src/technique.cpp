#include "course/technique.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "course/fatbin.h"
#include "course/gpu.h"

namespace course {

namespace {
// The ways a kernel reads global memory into its registers (generic loads and atomics that
// return a value included, for the threads whose access reached global memory):
// what stored_into_shared_at_least takes as not copied by bulk copies.
constexpr const char* kPlainGlobalLoads[] = {"LDG", "LD", "ATOMG", "ATOM"};

// Bytes `executed` moved with `opcode`, and, for an opcode of shared memory (LDS, STS), with the
// generic instruction of the same kind (LD, ST) where its threads reached shared memory: a tile
// read through a pointer the compiler cannot place (a helper, a pointer chosen at run time) is
// read with LD, and it is still read from the tile.
// ldmatrix and stmatrix (LDSM, STSM) are shared loads and stores too.
long long bytes_with_generic(const ExecutedInstructions& executed, const std::string& opcode) {
  if (opcode == "LDS") return shared_load_bytes(executed);
  if (opcode == "STS")
    return executed.bytes("STS") + executed.bytes("STSM") + executed.bytes_in(MemorySpace::shared, "ST");
  return executed.bytes(opcode);
}

::testing::AssertionResult broken(const std::string& what, const std::string& rule, const Activity& activity) {
  return ::testing::AssertionFailure() << what << " " << rule << "\nWhat it enqueued: " << activity.summary();
}
}  // namespace

long long shared_load_bytes(const ExecutedInstructions& executed) {
  return executed.bytes("LDS") + executed.bytes("LDSM") + executed.bytes_in(MemorySpace::shared, "LD");
}

::testing::AssertionResult result_is_right_first(const ::testing::AssertionResult& correct, const std::string& what) {
  if (correct) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << " gives a wrong result here, so its technique was not checked: make "
                                       << "its correctness tests pass first.\n" << correct.message();
}

::testing::AssertionResult launches_only_own_kernels(const Activity& activity, const std::string& what) {
  if (activity.kernels.empty()) return broken(what, "launched no kernel: the exercise is a kernel of your own.", activity);
  for (const auto& k : activity.kernels) {
    std::string why;
    if (!is_own_kernel(k.name, k.readable, &why))
      return broken(what, "launched " + k.readable + ", " + why + ". This exercise is about writing that kernel yourself: library kernels are not allowed here.", activity);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult enqueues_no_copies(const Activity& activity, const std::string& what) {
  if (activity.copies.empty()) return ::testing::AssertionSuccess();
  const auto& c = activity.copies.front();
  return broken(what, "made " + std::to_string(activity.copies.size()) + " copy(ies) (the first " + c.kind + ", " +
                          std::to_string(c.bytes) + " bytes): the exercise must do its work in a kernel, without cudaMemcpy.",
                activity);
}

::testing::AssertionResult stays_on_given_stream(const Activity& activity, const std::string& what) {
  for (const auto& k : activity.kernels)
    if (k.stream_id != activity.given_stream_id)
      return broken(what, "launched " + k.readable + " on another stream (" + std::to_string(k.stream_id) + ") than the one it was given (" + std::to_string(activity.given_stream_id) + "): enqueue on `stream`, so that the caller's ordering and timing hold.", activity);
  for (const auto& c : activity.copies)
    if (c.stream_id != activity.given_stream_id)
      return broken(what, "made a " + c.kind + " copy on another stream than the one it was given: enqueue on `stream`.", activity);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult waits_not_on_the_host(const Activity& activity, const std::string& what,
                                                 const std::string& instead) {
  for (const auto& call : activity.calls)
    if (call.name == "cudaDeviceSynchronize" || call.name == "cudaStreamSynchronize" ||
        call.name == "cudaEventSynchronize" || call.name == "cudaThreadSynchronize")
      return broken(what, "waited on the host (" + call.name + "): " +
                              (instead.empty() ? "it should only enqueue its work and return; the caller synchronises "
                                                 "when it needs the results, and meanwhile its host thread goes on."
                                               : instead),
                    activity);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult kernels_use_shared_memory(const Activity& activity, const std::string& what, int bytes,
                                                     const std::string& why) {
  for (const auto& k : activity.kernels)
    if (k.shared_bytes() < bytes)
      return broken(what, "ran " + k.readable + " with " + std::to_string(k.shared_bytes()) + " bytes of shared memory; at least " + std::to_string(bytes) + " are needed for " + why + ".", activity);
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult kernels_have_block(const Activity& activity, const std::string& what, int x, int y) {
  for (const auto& k : activity.kernels)
    if (k.block[0] != x || k.block[1] != y || k.block[2] != 1) {
      std::ostringstream rule;
      rule << "ran " << k.readable << " with blocks of " << k.block[0] << " x " << k.block[1] << " x " << k.block[2]
           << " threads; the contract says " << x << " x " << y << ".";
      return broken(what, rule.str(), activity);
    }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult own_kernels_on_given_stream(const Activity& activity, const std::string& what) {
  return all_rules({launches_only_own_kernels(activity, what), enqueues_no_copies(activity, what),
                    stays_on_given_stream(activity, what)});
}

long long threads_launched(const Activity& activity) {
  long long threads = 0;
  for (const auto& k : activity.kernels) threads += k.blocks() * k.threads_per_block();
  return threads;
}

::testing::AssertionResult all_rules(std::initializer_list<::testing::AssertionResult> results) {
  for (const auto& result : results)
    if (!result) return result;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult kernels_that_ran_have(const Activity& activity, const std::string& what,
                                                 const std::string& opcode, int minimum, const std::string& why) {
  if (activity.kernels.empty()) return broken(what, "launched no kernel.", activity);
  for (const auto& k : activity.kernels) {
    const auto found = kernel_sass_has(k.name, opcode, minimum, why);
    if (!found) return broken(what, "ran " + k.readable + ": " + found.message(), activity);
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult executed_at_least(const Activity& activity, const std::string& what,
                                             const std::vector<std::string>& opcodes, Executions unit,
                                             long long at_least, const std::string& taught, const std::string& needed) {
  const auto& executed = activity.executed;
  if (!executed.counted) return ::testing::AssertionSuccess();
  long long amount = 0;
  for (const auto& op : opcodes)
    amount += unit == Executions::thread_bytes ? bytes_with_generic(executed, op) : executed.warps(op);
  if (amount >= at_least) return ::testing::AssertionSuccess();
  std::ostringstream rule;
  rule << "ran, but " << taught << (unit == Executions::thread_bytes ? " moved " : " executed ") << amount
       << (unit == Executions::thread_bytes ? " bytes" : " times") << " while it ran, where " << needed << " need at least "
       << at_least << ": instructions that are in the machine code but do not run (a branch never taken, a path "
       << "for other sizes) do not do the exercise.\n" << executed.summary(opcodes);
  return broken(what, rule.str(), activity);
}

::testing::AssertionResult stored_into_shared_at_least(const Activity& activity, const std::string& what,
                                                       long long at_least, const std::string& needed,
                                                       bool asynchronous_only, long long plain_loads_allowed) {
  const auto& executed = activity.executed;
  if (!executed.counted) return ::testing::AssertionSuccess();
  const long long stores = asynchronous_only ? 0 : bytes_with_generic(executed, "STS");
  const long long async_copied = executed.bytes("LDGSTS");
  const long long stored = stores + async_copied;
  // A bulk copy's size is a register's value: each counts for its kernel's whole shared memory
  // at most. Copies, asynchronous (LDGSTS) and bulk, count together for no more than what the
  // kernels did not read with plain loads: a copy that carries nothing beside plain loads of the
  // data is not a tile filled by copies (a 16-byte bulk copy per tile; a zero-fill cp.async of 0
  // source bytes, which counts for its width). Stores (STS) count in full: data read plainly and
  // stored into the tile went through it.
  long long bulk = 0, bulk_most = 0;
  std::map<std::string, long long> shared_of;  // the most shared memory a launch of each kernel had
  for (const auto& k : activity.kernels) shared_of[k.name] = std::max<long long>(shared_of[k.name], k.shared_bytes());
  for (const auto& [kernel, shared] : shared_of) {
    // Into shared memory only: UBLKCP.S.G (from global) or .S.S; UBLKCP.G.S is a bulk store.
    const long long copies = executed.threads("UBLKCP.S", kernel) + executed.threads("UTMALDG", kernel);
    bulk += copies;
    bulk_most += copies * shared;
  }
  long long plain_loads = 0;
  for (const char* load : kPlainGlobalLoads) plain_loads += executed.bytes_in(MemorySpace::global, load);
  const long long not_read_plainly = std::max(0LL, at_least - std::max(0LL, plain_loads - plain_loads_allowed));
  const long long async_counted = std::min(async_copied, not_read_plainly);
  const long long bulk_bytes = std::min(bulk_most, not_read_plainly - async_counted);
  if (stores + async_counted + bulk_bytes >= at_least) return ::testing::AssertionSuccess();
  const std::string plain_read = "LDG, and LD, ATOMG and ATOM where they reached global memory, read " +
                                 std::to_string(plain_loads) + " bytes" +
                                 (plain_loads_allowed > 0 ? ", of which " + std::to_string(plain_loads_allowed) + " are allowed" : "");
  std::ostringstream rule;
  rule << "ran, but its " << (asynchronous_only ? "asynchronous copies into shared memory (LDGSTS)" : "stores into shared memory (STS, LDGSTS)")
       << " moved " << stored << " bytes";
  if (async_counted < async_copied)
    rule << ", of which its asynchronous copies count for at most " << stores + async_counted << " (copies count for no "
         << "more than what was not read with plain loads: " << plain_read << "; a zero-fill copy counts for its width "
         << "whatever it carried)";
  if (bulk > 0)
    rule << " and its " << bulk << " bulk copies (UBLKCP, UTMALDG) at most " << bulk_bytes << " (a bulk copy's "
         << "size is a register's value: it counts for its kernel's shared memory at most, " << bulk_most
         << " for these, and the copies for no more than what was not read with plain loads: " << plain_read << ")";
  rule << " while it ran, where " << needed << " need at least " << at_least << ": every element goes through the "
       << (asynchronous_only ? "shared memory by asynchronous copies (cuda::memcpy_async, or bulk copies)"
                             : "shared tile (stores, asynchronous copies, or bulk copies)")
       << "; instructions that are in the machine code but do not run (a branch never taken, a path for other sizes) "
       << "do not do the exercise.\n"
       << executed.summary({"STS", "LDGSTS", "UBLKCP", "UTMALDG", "LDG", "LD"});
  return broken(what, rule.str(), activity);
}

int sass_arch_to_check(int minimum) {
  const auto code = inspect_binary(own_executable(), configured_cuobjdump());
  if (!gpu_unavailable_reason()) {
    const auto& d = current_device();
    const int cc = 10 * d.compute_major + d.compute_minor;
    // The machine code this GPU runs (its own, or an older one of its major version: an 8.6 GPU
    // runs sm_80 code), where that code can have the feature at all; below `minimum`, or when
    // the GPU compiles PTX at load time, the newest SASS of the build is read instead.
    const int runs = sass_run_on(cc, code.sass);
    if (runs >= minimum) return runs;
  }
  for (auto it = code.sass.rbegin(); it != code.sass.rend(); ++it)
    if (*it >= minimum) return *it;
  return 0;
}

::testing::AssertionResult kernel_sass_has(const std::string& kernel, const std::string& opcode, int minimum,
                                           const std::string& why) {
  const int arch = sass_arch_to_check(minimum);
  if (arch == 0)
    return ::testing::AssertionFailure() << "this program carries no SASS for compute capability " << minimum / 10 << "."
                                         << minimum % 10 << " or newer, so " << kernel << " cannot be checked";
  bool found = false;
  for (const auto& [name, instructions] : own_sass(arch)) {
    // The kernel itself, by its exact name: not any function whose name contains it.
    const std::string readable = demangle(name);
    if (readable.substr(0, readable.find('(')) != kernel && name != kernel) continue;
    found = true;
    for (const auto& [offset, text] : instructions)
      if (opcode_matches(text, opcode)) return ::testing::AssertionSuccess();
  }
  if (!found)
    return ::testing::AssertionFailure() << "no kernel named " << kernel << " in this program's SASS for sm_" << arch;
  return ::testing::AssertionFailure() << "the SASS of " << kernel << " for sm_" << arch << " has no " << opcode
                                       << " instruction (" << why << "), so it does not do what the exercise asks.";
}

}  // namespace course
