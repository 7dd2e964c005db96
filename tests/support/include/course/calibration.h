/// @file calibration.h
/// @brief The frame of every calibration program: options, the GPU check, errors, the CSV file.
#pragma once

#include <cstdio>
#include <functional>
#include <map>
#include <string>

namespace course {

/// What a calibration program was asked for on its command line.
class CalibrationArgs {
 public:
  /// Parses "--name value" pairs; throws std::invalid_argument on anything else.
  CalibrationArgs(int argc, char** argv);
  ~CalibrationArgs();
  CalibrationArgs(const CalibrationArgs&) = delete;
  CalibrationArgs& operator=(const CalibrationArgs&) = delete;

  /// The value of --name, or nullptr when it was not given.
  const char* option(const std::string& name) const;
  /// The file named by --csv, opened for writing, or nullptr (then write no CSV).
  std::FILE* csv() const { return csv_; }

 private:
  std::map<std::string, std::string> options_;
  std::FILE* csv_ = nullptr;
};

/// Runs `body` as the main of calibration program `name`: without a GPU it says why and
/// returns 0; otherwise it prints the device line first, and any exception becomes a message
/// and exit status 1.
int run_calibration(int argc, char** argv, const char* name, const std::function<void(const CalibrationArgs&)>& body);

}  // namespace course
