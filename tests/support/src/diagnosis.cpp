#include "course/diagnosis.h"

#include "course/activity.h"
#include "course/gpu_turn.h"
#include "course/settings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>

namespace course {

namespace {

std::string trimmed(const std::string& text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
}

// A recursive-descent reader of + - * / ( ) over numbers and names (letters, digits, _ and .).
class Reader {
 public:
  Reader(const std::string& text, const std::map<std::string, double>& values) : text_(text), values_(values) {}

  std::optional<double> read() {
    auto value = sum();
    skip_spaces();
    if (!value || at_ != text_.size()) return std::nullopt;
    return value;
  }

 private:
  void skip_spaces() {
    while (at_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[at_]))) ++at_;
  }
  bool take(char c) {
    skip_spaces();
    if (at_ < text_.size() && text_[at_] == c) {
      ++at_;
      return true;
    }
    return false;
  }
  std::optional<double> sum() {
    auto value = product();
    while (value) {
      if (take('+')) {
        const auto right = product();
        value = right ? std::optional<double>(*value + *right) : std::nullopt;
      } else if (take('-')) {
        const auto right = product();
        value = right ? std::optional<double>(*value - *right) : std::nullopt;
      } else {
        break;
      }
    }
    return value;
  }
  std::optional<double> product() {
    auto value = factor();
    while (value) {
      if (take('*')) {
        const auto right = factor();
        value = right ? std::optional<double>(*value * *right) : std::nullopt;
      } else if (take('/')) {
        const auto right = factor();
        if (!right || *right == 0) return std::nullopt;
        value = *value / *right;
      } else {
        break;
      }
    }
    return value;
  }
  std::optional<double> factor() {
    skip_spaces();
    if (take('(')) {
      const auto value = sum();
      return take(')') ? value : std::nullopt;
    }
    if (take('-')) {
      const auto value = factor();
      return value ? std::optional<double>(-*value) : std::nullopt;
    }
    const std::size_t start = at_;
    if (at_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[at_])) || text_[at_] == '.')) {
      while (at_ < text_.size() && (std::isdigit(static_cast<unsigned char>(text_[at_])) || text_[at_] == '.' ||
                                    text_[at_] == 'e' ||
                                    ((text_[at_] == '-' || text_[at_] == '+') && text_[at_ - 1] == 'e')))
        ++at_;
      try {
        return std::stod(text_.substr(start, at_ - start));
      } catch (const std::exception&) {
        return std::nullopt;
      }
    }
    while (at_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[at_])) || text_[at_] == '_' ||
                                  text_[at_] == '.'))
      ++at_;
    if (at_ == start) return std::nullopt;
    const auto found = values_.find(text_.substr(start, at_ - start));
    if (found == values_.end()) return std::nullopt;
    return found->second;
  }

  const std::string& text_;
  const std::map<std::string, double>& values_;
  std::size_t at_ = 0;
};

bool holds(double value, const std::string& comparison, double threshold) {
  if (comparison == "<") return value < threshold;
  if (comparison == "<=") return value <= threshold;
  if (comparison == ">") return value > threshold;
  return value >= threshold;
}

std::string with_value(std::string sentence, double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", value);
  for (std::size_t at; (at = sentence.find("{value}")) != std::string::npos;) sentence.replace(at, 7, text);
  return sentence;
}

}  // namespace

std::optional<double> evaluate_expression(const std::string& expression, const std::map<std::string, double>& values) {
  const auto value = Reader(expression, values).read();
  if (value && !std::isfinite(*value)) return std::nullopt;
  return value;
}

std::map<std::string, ExerciseDiagnosis> parse_diagnosis_rules(const std::string& text) {
  std::map<std::string, ExerciseDiagnosis> exercises;
  ExerciseDiagnosis* current = nullptr;
  DiagnosisRule* pending = nullptr;  // a `when` waiting for its `say`
  std::istringstream lines(text);
  std::string line;
  int number = 0;
  auto mistake = [&](const std::string& what) {
    throw std::invalid_argument("diagnosis rules, line " + std::to_string(number) + ": " + what);
  };
  while (std::getline(lines, line)) {
    ++number;
    line = trimmed(line);
    if (line.empty() || line[0] == '#') continue;
    const auto space = line.find(' ');
    const std::string word = line.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : trimmed(line.substr(space + 1));
    if (word == "exercise") {
      if (pending) mistake("a `when` without its `say`");
      if (rest.empty()) mistake("an exercise without a name");
      current = &exercises[rest];
      continue;
    }
    if (!current) mistake("`" + word + "` before any `exercise`");
    if (word == "stalls" || word == "timeline" || word == "launch") {
      if (!rest.empty()) mistake("`" + word + "` takes nothing after it");
      (word == "stalls" ? current->stalls : word == "timeline" ? current->timeline : current->launch) = true;
    } else if (word == "metric") {
      if (rest.empty() || rest.find(' ') != std::string::npos) mistake("`metric` takes one metric name");
      current->metrics.push_back(rest);
    } else if (word == "when") {
      if (pending) mistake("a `when` without its `say`");
      DiagnosisRule rule;
      // Expressions hold no < or >: the comparison is the last of them (with an = after it).
      const std::size_t at = rest.find_last_of("<>");
      const std::size_t width = at != std::string::npos && at + 1 < rest.size() && rest[at + 1] == '=' ? 2 : 1;
      if (at == std::string::npos) mistake("`when` needs a comparison (< <= > >=) and a number");
      rule.expression = trimmed(rest.substr(0, at));
      rule.comparison = rest.substr(at, width);
      try {
        std::size_t used = 0;
        const std::string number_text = trimmed(rest.substr(at + width));
        rule.threshold = std::stod(number_text, &used);
        if (used != number_text.size()) mistake("`when` ends with a number");
      } catch (const std::logic_error&) {
        mistake("`when` ends with a number");
      }
      if (rule.expression.empty()) mistake("`when` without an expression");
      current->rules.push_back(rule);
      pending = &current->rules.back();
    } else if (word == "say") {
      if (!pending) mistake("`say` without a `when`");
      if (rest.empty()) mistake("`say` without a sentence");
      pending->sentence = rest;
      pending = nullptr;
    } else {
      mistake("unknown word `" + word + "` (exercise, metric, stalls, timeline, launch, when, say)");
    }
  }
  if (pending) mistake("a `when` without its `say` at the end");
  return exercises;
}

std::vector<std::string> diagnose_values(const ExerciseDiagnosis& exercise, const std::map<std::string, double>& values,
                                         int limit) {
  std::vector<std::string> said;
  for (const auto& rule : exercise.rules) {
    if (static_cast<int>(said.size()) >= limit) break;
    const auto value = evaluate_expression(rule.expression, values);
    if (value && holds(*value, rule.comparison, rule.threshold)) said.push_back(with_value(rule.sentence, *value));
  }
  return said;
}

std::map<std::string, double> stall_shares(const KernelProfile& profile) {
  std::map<std::string, double> shares;
  double all = 0;
  for (const auto& reason : stall_reasons()) all += profile.total(stall_metric(reason.name));
  if (!(all > 0)) return shares;
  for (const auto& reason : stall_reasons())
    shares[std::string("stall_pct.") + reason.name] = 100 * profile.total(stall_metric(reason.name)) / all;
  return shares;
}

std::string stall_sentence(const std::map<std::string, double>& shares) {
  std::vector<std::pair<double, std::string>> largest;
  for (const auto& reason : stall_reasons()) {
    const auto found = shares.find(std::string("stall_pct.") + reason.name);
    if (found != shares.end() && found->second > 0) largest.emplace_back(found->second, reason.meaning);
  }
  if (largest.empty()) return "";
  std::stable_sort(largest.begin(), largest.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  char share[16];
  std::snprintf(share, sizeof share, "%.0f %%", largest[0].first);
  std::string sentence = std::string("warps stalled: ") + share + " " + largest[0].second;
  if (largest.size() > 1 && largest[1].first >= 10) {
    std::snprintf(share, sizeof share, "%.0f %%", largest[1].first);
    sentence += std::string("; ") + share + " " + largest[1].second;
  }
  return sentence;
}

std::map<std::string, double> longest_kernel_launch(const Activity& recorded, const SmLimits& limits) {
  if (recorded.kernels.empty()) return {};
  auto duration = [](const KernelLaunch& k) { return k.end_ns > k.start_ns ? k.end_ns - k.start_ns : 0; };
  const KernelLaunch* longest = &recorded.kernels.front();
  for (const auto& kernel : recorded.kernels)
    if (duration(kernel) > duration(*longest)) longest = &kernel;
  return launch_figures(*longest, limits).named();
}

namespace {

// A profile's figures by name: each listed metric's total, and with `stalls` the stall shares.
void add_profile_values(const ExerciseDiagnosis& exercise, const KernelProfile& profile,
                        std::map<std::string, double>& values) {
  for (const auto& metric : exercise.metrics) values[metric] = profile.total(metric);
  if (exercise.stalls)
    for (const auto& [name, share] : stall_shares(profile)) values[name] = share;
}

std::vector<std::string> stall_metrics() {
  std::vector<std::string> metrics;
  for (const auto& reason : stall_reasons()) metrics.push_back(stall_metric(reason.name));
  return metrics;
}

}  // namespace

std::vector<std::string> diagnose(const ExerciseDiagnosis& exercise, const KernelProfile& profile,
                                  const std::map<std::string, double>& inputs, int limit) {
  if (!profile.profiled) return {};
  std::map<std::string, double> values = inputs;
  add_profile_values(exercise, profile, values);
  auto said = diagnose_values(exercise, values, limit);
  if (exercise.stalls)
    if (auto stalls = stall_sentence(stall_shares(profile)); !stalls.empty()) said.push_back(std::move(stalls));
  return said;
}

CallDiagnosis diagnose_call(const std::string& rules, const std::string& exercise, const std::function<void()>& work,
                            const std::map<std::string, double>& inputs) {
  CallDiagnosis result;
  if (!settings().diagnose) {
    result.why_not = "not asked for (--course_diagnose=1, COURSE_DIAGNOSE=1)";
    return result;
  }
  try {
    const auto exercises = parse_diagnosis_rules(rules);
    const auto found = exercises.find(exercise);
    if (found == exercises.end()) {
      result.why_not = "no diagnosis rules for " + exercise;
      return result;
    }
    const ExerciseDiagnosis& rules_of = found->second;
    std::map<std::string, double> values = inputs;
    if (rules_of.timeline || rules_of.launch) {
      Activity recorded;
      {
        const ExclusiveGpuTurn alone;  // the copies' and kernels' times, with nothing beside them
        recorded = record_activity(work);
      }
      if (rules_of.timeline)
        for (const auto& [name, value] : timeline_figures(recorded).named()) values[name] = value;
      if (rules_of.launch)
        for (const auto& [name, value] : longest_kernel_launch(recorded, current_sm_limits())) values[name] = value;
    }
    if (rules_of.metrics.empty() && !rules_of.stalls) {
      result.sentences = diagnose_values(rules_of, values);
    } else {
      // (profile_kernels holds the exclusive turn while it counts, and only then.)
      const KernelProfile profile =
          profile_kernels(work, rules_of.metrics, 16, rules_of.stalls ? stall_metrics() : std::vector<std::string>{});
      if (!profile.profiled)
        result.why_not = profile.why_not;
      else
        result.sentences = diagnose(rules_of, profile, values);
    }
  } catch (const std::exception& error) {
    result.why_not = error.what();
  }
  // Asked for and not made: the diagnosis says why (in the report, never in the verdict), so that
  // a profile the driver refused is seen as such rather than as a diagnosis with nothing to say.
  if (!result.why_not.empty()) result.sentences = {"no profile: " + result.why_not};
  return result;
}

bool wants_diagnosis(const PerfCheck& perf, const Settings& given) {
  if (!given.diagnose) return false;
  return !given.diagnose_shortfalls_only || !evaluate_ratio(perf, given.perf_scale);
}

bool wants_diagnosis(const PerfCheck& perf) { return wants_diagnosis(perf, settings()); }

void diagnose_perf(PerfCheck& perf, const std::string& rules, const std::string& exercise,
                   const std::function<void()>& work, const std::map<std::string, double>& inputs) {
  if (wants_diagnosis(perf)) perf.diagnosis = diagnose_call(rules, exercise, work, inputs).sentences;
}

}  // namespace course
