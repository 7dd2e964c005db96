#include "course/calibration.h"

#include <exception>
#include <stdexcept>

#include "course/gpu.h"

namespace course {

CalibrationArgs::CalibrationArgs(int argc, char** argv) {
  for (int i = 1; i < argc; i += 2) {
    const std::string key = argv[i];
    if (key.rfind("--", 0) != 0 || i + 1 >= argc)
      throw std::invalid_argument("expected --name value pairs, got '" + key + "'");
    options_[key.substr(2)] = argv[i + 1];
  }
  if (const char* path = option("csv")) {
    csv_ = std::fopen(path, "w");
    if (csv_ == nullptr) throw std::runtime_error(std::string("cannot write ") + path);
  }
}

CalibrationArgs::~CalibrationArgs() {
  if (csv_ != nullptr) std::fclose(csv_);
}

const char* CalibrationArgs::option(const std::string& name) const {
  const auto found = options_.find(name);
  return found == options_.end() ? nullptr : found->second.c_str();
}

int run_calibration(int argc, char** argv, const char* name, const std::function<void(const CalibrationArgs&)>& body) {
  try {
    const CalibrationArgs args(argc, argv);
    if (const auto why = gpu_unavailable_reason()) {
      std::printf("%s: %s\n", name, why->c_str());
      return 0;
    }
    std::printf("device: %s\n", device_line().c_str());
    body(args);
    return 0;
  } catch (const std::exception& error) {
    std::fprintf(stderr, "%s: %s\n", name, error.what());
    return 1;
  }
}

}  // namespace course
