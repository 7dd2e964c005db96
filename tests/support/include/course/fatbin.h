/// @file fatbin.h
/// @brief What GPU code a binary carries: SASS (cubin) per architecture and PTX, read with
/// cuobjdump where it exists and from the fatbinary headers of the file otherwise.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace course {

/// The architectures a binary carries code for, e.g. sass {80, 90}, ptx {90}.
struct EmbeddedCode {
  std::set<int> sass;  ///< compute capabilities with machine code (cubin), as 10 * major + minor
  std::set<int> ptx;   ///< virtual architectures with PTX, as 10 * major + minor
  std::string method;  ///< how it was found: "cuobjdump" or "fatbinary headers"
};

/// Parses fatbinary containers (magic 0xBA55ED50) found anywhere in `bytes`: each holds
/// entries whose headers give the kind (1 = PTX, 2 = cubin) and the architecture.
EmbeddedCode parse_fatbinaries(const std::string& bytes);

/// Parses the output of `cuobjdump --list-elf --list-ptx`: lines like
/// "ELF file    1: name.1.sm_80.cubin" and "PTX file    1: name.1.sm_90.ptx".
EmbeddedCode parse_cuobjdump_listing(const std::string& listing);

/// Inspects the executable at `path` with the cuobjdump at `cuobjdump` if it runs, else
/// by reading its fatbinary headers. Throws std::runtime_error if the file cannot be read.
EmbeddedCode inspect_binary(const std::string& path, const std::string& cuobjdump);

/// The SASS a GPU of compute capability `cc` (10 * major + minor) runs from a binary carrying
/// SASS for `sass`: the newest of the same major version that is not newer than the GPU (an
/// 8.6 GPU runs sm_80 code from a build for {75, 80, 90}); 0 when there is none, and the driver
/// compiles the PTX at load time instead.
int sass_run_on(int cc, const std::set<int>& sass);

/// Parses a __CUDA_ARCH_LIST__ text such as "800,900" into {800, 900}.
std::set<int> parse_arch_list(const std::string& text);

/// The SASS of one kernel, as cuobjdump -sass prints it.
struct FunctionSass {
  std::string name;  ///< mangled name
  std::string text;  ///< its instructions
};

/// Splits the output of `cuobjdump -sass` into functions (at each "Function : <name>" line).
std::vector<FunctionSass> parse_cuobjdump_sass(const std::string& listing);

/// Where the build writes the SASS for sm_<arch> of test program `program`
/// (cmake/CourseSassCache.cmake): "<program>.sm_<arch>.sass".
std::string sass_cache_path(const std::string& program, int arch);

/// The SASS for sm_<arch> of the binary at `path`: read from sass_cache_path(path, arch) when
/// the build wrote it after the binary, else with the cuobjdump at `cuobjdump`.
/// Throws std::runtime_error when it must run cuobjdump and cuobjdump is missing or fails.
std::vector<FunctionSass> binary_sass(const std::string& path, const std::string& cuobjdump, int arch);

/// Instructions of cuobjdump -sass text by offset: "/*0c80*/  @P0 LDS.128 R4, [R2] ;" ->
/// {0xc80, "@P0 LDS.128 R4, [R2]"}.
std::map<unsigned, std::string> instructions_by_offset(const std::string& sass_text);

/// This program's SASS for sm_<arch>: each function's (mangled name's) instructions by offset,
/// read with the configured cuobjdump once per architecture. Throws as binary_sass does.
const std::map<std::string, std::map<unsigned, std::string>>& own_sass(int arch);

/// The path of the running executable (/proc/self/exe).
std::string own_executable();

/// The cuobjdump found at configure time (COURSE_CUOBJDUMP), or "" when there was none.
std::string configured_cuobjdump();

/// "{80, 90}": for messages.
std::string to_string(const std::set<int>& values);

}  // namespace course
