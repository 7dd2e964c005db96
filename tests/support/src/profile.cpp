#include "course/profile.h"

#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <unistd.h>

#include "course/settings.h"

namespace course {

namespace {
struct Phase {
  double ms = 0;
  long count = 0;
};
std::map<std::string, Phase>& phases() {
  static std::map<std::string, Phase> value;
  return value;
}
std::mutex& phases_mutex() {  // the GPU turn's yielding thread adds phases too
  static std::mutex mutex;
  return mutex;
}

// Milliseconds since this process started, from /proc (Linux; clock ticks, about 10 ms), or -1.
double ms_since_process_start() {
  std::ifstream stat("/proc/self/stat");
  std::string line;
  if (!std::getline(stat, line)) return -1;
  const auto close = line.rfind(')');  // the command name may hold spaces
  if (close == std::string::npos) return -1;
  std::istringstream fields(line.substr(close + 2));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i)
    if (i == 22) {
      std::ifstream uptime("/proc/uptime");
      double up = 0;
      if (!(uptime >> up)) return -1;
      return 1e3 * (up - std::stod(field) / static_cast<double>(sysconf(_SC_CLK_TCK)));
    }
  return -1;
}
}  // namespace

bool profiling() { return settings().profile; }

void profile_add(const char* name, double ms) {
  const std::lock_guard<std::mutex> guard(phases_mutex());
  Phase& phase = phases()[name];
  phase.ms += ms;
  ++phase.count;
}

void profile_print(std::FILE* out, double main_ms) {
  if (!profiling()) return;
  const double alive_ms = ms_since_process_start();
  std::fprintf(out, "[ PROFILE  ] process %.1f ms (main %.1f ms)\n", alive_ms, main_ms);
  const std::lock_guard<std::mutex> guard(phases_mutex());
  for (const auto& [name, phase] : phases())
    std::fprintf(out, "[ PROFILE  ] %s %.1f ms x%ld\n", name.c_str(), phase.ms, phase.count);
}

}  // namespace course
