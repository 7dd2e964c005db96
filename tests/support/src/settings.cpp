#include "course/settings.h"

#include <sys/mman.h>

#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "course/perf.h"
#include "course/random.h"
#include "course/seal.h"

namespace course {

namespace {
// The settings live in pages of their own, at an address fixed when the program is linked (no
// pointer to them sits in writable memory), and are made read-only once parsed, sealed with
// mseal where the kernel has it: code under test that finds them cannot lower the perf scale or
// change the seed (a write faults). 64 KiB: a whole page on every page size Linux uses.
constexpr std::size_t kSettingsBytes = 65536;
alignas(kSettingsBytes) unsigned char settings_storage[kSettingsBytes];
static_assert(sizeof(Settings) <= kSettingsBytes);

// Made before main, before anything can read them.
struct SettingsInPlace {
  SettingsInPlace() { new (settings_storage) Settings(); }
} settings_in_place;

Settings& mutable_settings() { return *std::launder(reinterpret_cast<Settings*>(settings_storage)); }

void seal_settings() {
  if (mprotect(settings_storage, kSettingsBytes, PROT_READ) == 0)
    (void)seal_pages(settings_storage, kSettingsBytes);  // (not before Linux 6.10)
}
}  // namespace

const Settings& settings() { return mutable_settings(); }

namespace {
// A flag's value of 0 or 1; throws std::invalid_argument otherwise.
bool zero_or_one(const char* flag, const char* value) {
  if (std::strcmp(value, "0") != 0 && std::strcmp(value, "1") != 0)
    throw std::invalid_argument(std::string(flag) + " takes 0 or 1, got '" + value + "'");
  return std::strcmp(value, "1") == 0;
}
}  // namespace

Settings parse_settings_from(int* argc, char** argv) {
  Settings parsed;
  int kept = 1;
  for (int i = 1; i < *argc; ++i) {
    const std::string argument = argv[i];
    auto value_of = [&](const char* flag) -> const char* {
      const std::size_t length = std::strlen(flag);
      return argument.compare(0, length, flag) == 0 ? argv[i] + length : nullptr;
    };
    if (const char* seed = value_of("--course_seed=")) {
      parsed.seed = parse_seed(seed);
    } else if (const char* scale = value_of("--course_perf_scale=")) {
      parsed.perf_scale = parse_perf_scale(scale);
    } else if (const char* tool = value_of("--course_sanitizer=")) {
      parsed.sanitizer = tool;
    } else if (const char* profile = value_of("--course_profile=")) {
      parsed.profile = zero_or_one("--course_profile", profile);
    } else if (const char* diagnose = value_of("--course_diagnose=")) {
      const bool shortfall = std::strcmp(diagnose, "shortfall") == 0;
      if (std::strcmp(diagnose, "0") != 0 && std::strcmp(diagnose, "1") != 0 && !shortfall)
        throw std::invalid_argument("--course_diagnose takes 0, 1 or shortfall, got '" + std::string(diagnose) + "'");
      parsed.diagnose = std::strcmp(diagnose, "0") != 0;
      parsed.diagnose_shortfalls_only = shortfall;
    } else if (const char* turn = value_of("--course_gpu_lock=")) {
      if (*turn == '\0') throw std::invalid_argument("--course_gpu_lock takes the path of a lock file (or several, with commas)");
      parsed.gpu_lock = std::string(turn);
    } else if (const char* yield = value_of("--course_gpu_yield=")) {
      parsed.gpu_yield = zero_or_one("--course_gpu_yield", yield);
    } else if (const char* alone = value_of("--course_gpu_alone=")) {
      parsed.gpu_alone = zero_or_one("--course_gpu_alone", alone);
    } else if (argument.compare(0, 9, "--course_") == 0) {
      throw std::invalid_argument("unknown flag " + argument +
                                  " (--course_seed=N, --course_perf_scale=X, --course_sanitizer=TOOL, --course_profile=1, "
                                  "--course_gpu_lock=PATH[,PATH...], --course_gpu_yield=0, --course_gpu_alone=1)");
    } else {
      argv[kept++] = argv[i];
      continue;
    }
  }
  *argc = kept;
  argv[kept] = nullptr;
  return parsed;
}

void parse_settings(int* argc, char** argv) {
  mutable_settings() = parse_settings_from(argc, argv);
  seal_settings();  // once: the settings are read-only from here on
}

}  // namespace course
