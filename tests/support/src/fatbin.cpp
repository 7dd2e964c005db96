#include "course/fatbin.h"
#include "course/profile.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>

#include <sys/stat.h>
#include <unistd.h>

namespace course {

namespace {
template <class T>
T read_at(const std::string& bytes, std::size_t offset) {
  T value{};
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}
}  // namespace

EmbeddedCode parse_fatbinaries(const std::string& bytes) {
  // Container header: u32 magic, u16 version, u16 header size, u64 size of the entries.
  // Entry header: u16 kind, u16 version, u32 header size, u64 payload size, ..., u32
  // architecture at byte 28. (Layout read off nvcc's output; cuobjdump agrees with it.)
  constexpr std::uint32_t kMagic = 0xBA55ED50u;
  EmbeddedCode code;
  code.method = "fatbinary headers";
  for (std::size_t at = 0; at + 16 <= bytes.size(); at += 4) {
    if (read_at<std::uint32_t>(bytes, at) != kMagic) continue;
    const auto header_size = read_at<std::uint16_t>(bytes, at + 6);
    const auto entries_size = read_at<std::uint64_t>(bytes, at + 8);
    if (header_size < 16 || at + header_size + entries_size > bytes.size()) continue;
    std::size_t entry = at + header_size;
    const std::size_t end = entry + entries_size;
    while (entry + 32 <= end) {
      const auto kind = read_at<std::uint16_t>(bytes, entry);
      const auto entry_header_size = read_at<std::uint32_t>(bytes, entry + 4);
      const auto payload_size = read_at<std::uint64_t>(bytes, entry + 8);
      const auto arch = read_at<std::uint32_t>(bytes, entry + 28);
      if (entry_header_size < 32 || payload_size > end - entry) break;
      if (kind == 1) code.ptx.insert(static_cast<int>(arch));
      if (kind == 2) code.sass.insert(static_cast<int>(arch));
      entry += entry_header_size + payload_size;
    }
    at = (end & ~std::size_t{3}) - 4;  // resume the scan after this container (the loop adds 4)
  }
  return code;
}

EmbeddedCode parse_cuobjdump_listing(const std::string& listing) {
  EmbeddedCode code;
  code.method = "cuobjdump";
  const std::regex line(R"((ELF|PTX) file\s+\d+:.*\.(sm|compute)_(\d+)[a-z]?\.(cubin|ptx))");
  std::istringstream in(listing);
  std::string text;
  std::smatch match;
  while (std::getline(in, text)) {
    if (!std::regex_search(text, match, line)) continue;
    const int arch = std::stoi(match[3]);
    (match[1] == "ELF" ? code.sass : code.ptx).insert(arch);
  }
  return code;
}

EmbeddedCode inspect_binary(const std::string& path, const std::string& cuobjdump) {
  // The fatbinary headers first: no process to start (a test program runs under a system-call
  // filter that refuses new processes, course-sandbox -s); cuobjdump only where they say nothing.
  {
    std::ifstream file(path, std::ios::binary);
    if (file) {
      const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
      EmbeddedCode code = parse_fatbinaries(bytes);
      if (!code.sass.empty() || !code.ptx.empty()) return code;
    }
  }
  const ProfileScope phase("cuobjdump (listing)");
  if (!cuobjdump.empty()) {
    const std::string command = "\"" + cuobjdump + "\" --list-elf --list-ptx \"" + path + "\" 2>/dev/null";
    if (std::FILE* pipe = popen(command.c_str(), "r")) {
      std::string listing;
      char buffer[4096];
      while (std::size_t got = std::fread(buffer, 1, sizeof buffer, pipe)) listing.append(buffer, got);
      if (pclose(pipe) == 0) return parse_cuobjdump_listing(listing);
    }
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read " + path);
  const std::string bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  return parse_fatbinaries(bytes);
}

int sass_run_on(int cc, const std::set<int>& sass) {
  int best = 0;
  for (int arch : sass)
    if (arch / 10 == cc / 10 && arch <= cc) best = arch;
  return best;
}

std::set<int> parse_arch_list(const std::string& text) {
  std::set<int> values;
  std::istringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) values.insert(std::stoi(item));
  return values;
}

std::string to_string(const std::set<int>& values) {
  std::string text = "{";
  for (int v : values) text += (text.size() > 1 ? ", " : "") + std::to_string(v);
  return text + "}";
}

}  // namespace course

namespace course {

std::vector<FunctionSass> parse_cuobjdump_sass(const std::string& listing) {
  std::vector<FunctionSass> functions;
  std::istringstream lines(listing);
  std::string line;
  while (std::getline(lines, line)) {
    const auto at = line.find("Function : ");
    if (at != std::string::npos) {
      std::string name = line.substr(at + 11);
      while (!name.empty() && (name.back() == ' ' || name.back() == '\r')) name.pop_back();
      functions.push_back({name, ""});
    } else if (!functions.empty()) {
      functions.back().text += line + "\n";
    }
  }
  return functions;
}

namespace {
// The SASS the build wrote beside `path` for sm_<arch> (cmake/CourseSassCache.cmake), if there
// is such a file and it is newer than the program: else nothing, and cuobjdump runs.
std::optional<std::string> cached_sass(const std::string& path, int arch) {
  const std::string cache = sass_cache_path(path, arch);
  struct stat program {}, cached {};
  if (stat(path.c_str(), &program) != 0 || stat(cache.c_str(), &cached) != 0) return std::nullopt;
  const auto newer_or_same = [](const struct timespec& a, const struct timespec& b) {
    return a.tv_sec > b.tv_sec || (a.tv_sec == b.tv_sec && a.tv_nsec >= b.tv_nsec);
  };
  if (!newer_or_same(cached.st_mtim, program.st_mtim)) return std::nullopt;
  std::ifstream in(cache, std::ios::binary);
  std::string listing((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) return std::nullopt;
  return listing;
}
}  // namespace

std::string sass_cache_path(const std::string& program, int arch) {
  return program + ".sm_" + std::to_string(arch) + ".sass";
}

std::vector<FunctionSass> binary_sass(const std::string& path, const std::string& cuobjdump, int arch) {
  if (auto listing = cached_sass(path, arch)) {
    const ProfileScope phase("SASS read from the build's cache");
    return parse_cuobjdump_sass(*listing);
  }
  const ProfileScope phase("cuobjdump -sass");
  if (cuobjdump.empty()) throw std::runtime_error("no cuobjdump was found at configure time: cannot read SASS");
  const std::string command =
      "\"" + cuobjdump + "\" -sass -arch sm_" + std::to_string(arch) + " \"" + path + "\" 2>&1";
  std::string listing;
  std::FILE* pipe = popen(command.c_str(), "r");
  // (In the grader's sandbox no test program starts a process: the build's SASS cache must hold
  // this architecture, cmake/CourseSassCache.cmake.)
  if (pipe == nullptr)
    throw std::runtime_error("cannot run " + command + " (no SASS of sm_" + std::to_string(arch) +
                             " cached by the build beside the program, and no process may be started here?)");
  char buffer[65536];
  std::size_t got = 0;
  while ((got = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) listing.append(buffer, got);
  if (pclose(pipe) != 0) throw std::runtime_error(command + " failed: " + listing.substr(0, 500));
  return parse_cuobjdump_sass(listing);
}

std::map<unsigned, std::string> instructions_by_offset(const std::string& sass_text) {
  // By hand, not std::regex: a program's SASS is hundreds of thousands of lines.
  std::map<unsigned, std::string> found;
  std::istringstream lines(sass_text);
  std::string text;
  while (std::getline(lines, text)) {
    std::size_t at = text.find_first_not_of(" \t");
    if (at == std::string::npos || text.compare(at, 2, "/*") != 0) continue;
    const std::size_t close = text.find("*/", at + 2);
    if (close == std::string::npos || close == at + 2) continue;
    const std::string offset = text.substr(at + 2, close - at - 2);
    if (offset.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) continue;
    const std::size_t begin = text.find_first_not_of(" \t", close + 2);
    const std::size_t semicolon = text.find(';', close + 2);
    if (begin == std::string::npos || semicolon == std::string::npos || begin >= semicolon) continue;
    std::size_t end = semicolon;
    while (end > begin && (text[end - 1] == ' ' || text[end - 1] == '\t')) --end;
    found[static_cast<unsigned>(std::stoul(offset, nullptr, 16))] = text.substr(begin, end - begin);
  }
  return found;
}

const std::map<std::string, std::map<unsigned, std::string>>& own_sass(int arch) {
  static std::mutex mutex;
  static std::map<int, std::map<std::string, std::map<unsigned, std::string>>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto found = cache.find(arch);
  if (found != cache.end()) return found->second;
  std::map<std::string, std::map<unsigned, std::string>> functions;  // cached only once read whole
  for (const auto& f : binary_sass(own_executable(), configured_cuobjdump(), arch))
    functions[f.name] = instructions_by_offset(f.text);
  return cache.emplace(arch, std::move(functions)).first->second;
}

std::string own_executable() {
  std::vector<char> path(4096);
  const ssize_t length = readlink("/proc/self/exe", path.data(), path.size() - 1);
  return length > 0 ? std::string(path.data(), static_cast<std::size_t>(length)) : std::string();
}

std::string configured_cuobjdump() {
#ifdef COURSE_CUOBJDUMP
  return COURSE_CUOBJDUMP;
#else
  return "";
#endif
}

}  // namespace course
