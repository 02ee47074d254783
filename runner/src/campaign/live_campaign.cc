#include "lockstep/runner/live_campaign.h"

#include <algorithm>
#include <cstdio>
#include <system_error>

#include "lockstep/checker/properties.h"
#include "lockstep/random.h"

namespace lockstep::runner {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kFloorMaxMs = 24 * 3600 * 1000;

bool read_number(const std::string& digits, int64_t& out) {
  if (digits.empty() || digits.size() > 9) return false;
  for (char c : digits)
    if (c < '0' || c > '9') return false;
  out = std::stoll(digits);
  return true;
}

// The range of one time `value` within [lo, hi].
int64_t draw_within(Rng& rng, int64_t value, const VaryRange& r, int64_t lo, int64_t hi) {
  const int64_t spread = std::max(value * r.percent / 100, r.floor_ms);
  return rng.between(std::max(lo, value - spread), std::min(hi, value + spread));
}

}  // namespace

std::string parse_vary_range(const std::string& text, VaryRange& out) {
  const std::string expected = "expected P% (of each fault's time), Nms (at least), or both as P%,Nms, e.g. 50%,100ms";
  VaryRange r{0, 0};
  bool have_percent = false, have_floor = false;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string part = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    int64_t n = 0;
    if (part.size() > 1 && part.back() == '%' && !have_percent && read_number(part.substr(0, part.size() - 1), n)) {
      have_percent = true;
      if (n > 100) return "a time cannot move by more than all of it: at most 100%, found " + part;
      r.percent = static_cast<int>(n);
    } else if (part.size() > 2 && part.ends_with("ms") && !have_floor && read_number(part.substr(0, part.size() - 2), n)) {
      have_floor = true;
      r.floor_ms = n;
    } else {
      return expected + ", found \"" + text + "\"";
    }
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (r.percent == 0 && r.floor_ms == 0) return "\"" + text + "\" moves no fault: give more than 0% or 0ms";
  out = r;
  return "";
}

std::string vary_range_problem(const VaryRange& r, const Scenario& s) {
  if (r.percent < 0 || r.percent > 100) return "at most 100% of a time, found " + std::to_string(r.percent) + "%";
  if (r.floor_ms < 0 || r.floor_ms > kFloorMaxMs) return "the range in ms must be from 0 to a day";
  if (r.percent == 0 && r.floor_ms == 0) return "a range of 0% and 0ms moves no fault";
  if (r.floor_ms > s.duration_ms)
    return std::to_string(r.floor_ms) + "ms is longer than the scenario's run (duration_ms " +
           std::to_string(s.duration_ms) + "): no fault can move that far within it";
  if (s.faults.empty()) return "the scenario has no faults to move";
  return "";
}

std::string describe_vary_range(const VaryRange& r) {
  std::string text = "±" + std::to_string(r.percent) + "% of each fault's time";
  if (r.percent == 0) text = "±" + std::to_string(r.floor_ms) + "ms";
  else if (r.floor_ms > 0) text += ", at least ±" + std::to_string(r.floor_ms) + "ms";
  return text + " (at_ms, or the delay after a fault's event), within the run";
}

std::string vary_range_text(const VaryRange& r) {
  std::string text;
  if (r.percent > 0) text = std::to_string(r.percent) + "%";
  if (r.floor_ms > 0) text += (text.empty() ? "" : ",") + std::to_string(r.floor_ms) + "ms";
  return text;
}

uint64_t campaign_run_seed(uint64_t campaign_seed, uint64_t index) {
  uint64_t state = campaign_seed ^ stable_hash("live campaign");
  state += index * 0x9e3779b97f4a7c15ULL;
  // 32 bits: a seed a person can read and type, and still one of four billion.
  return splitmix64(state) & 0xffffffffULL;
}

Scenario campaign_run_scenario(const Scenario& s, uint64_t campaign_seed, uint64_t index, uint64_t runs,
                               const std::optional<VaryRange>& vary) {
  Scenario out = s;
  const std::string count = std::to_string(runs);
  std::string number = std::to_string(index);
  number.insert(0, number.size() < count.size() ? count.size() - number.size() : 0, '0');
  out.name = s.name + "-run-" + number;
  out.seed = campaign_run_seed(campaign_seed, index);
  std::string moved;
  if (vary) {
    // Its own stream: the fault times do not shift when the run's other draws change.
    Rng rng(out.seed, "fault-times");
    for (auto& f : out.faults) {
      if (f.on) {
        f.on->delay_ms = draw_within(rng, f.on->delay_ms, *vary, 0, s.duration_ms);
      } else {
        f.at_ms = draw_within(rng, f.at_ms, *vary, 0, std::max<int64_t>(0, s.duration_ms - 1));
      }
    }
  }
  out.description = "Run " + std::to_string(index) + " of " + count + " of a lockstep live campaign on " + s.name +
                    (s.file.empty() ? "" : " (" + s.file + ")") + ": seed " + std::to_string(out.seed) +
                    (vary ? ", fault times drawn within " + describe_vary_range(*vary) : "") +
                    (s.description.empty() ? "." : ". " + s.description);
  return out;
}

Scenario rebased_to(const Scenario& s, const fs::path& dir) {
  Scenario out = s;
  if (!s.workload.external()) return out;
  std::error_code ec;
  const fs::path from = fs::absolute(s.workload.command_dir.empty() ? fs::path(".") : fs::path(s.workload.command_dir), ec);
  const fs::path to = fs::absolute(dir, ec);
  for (size_t i = 0; i < out.workload.command.size(); ++i) {
    auto& word = out.workload.command[i];
    // A word that names a file from the program's folder is a path it opens there; an
    // option is left as it is, and so is a program without a '/', which is looked up in
    // PATH ("node"), whatever the folder holds.
    if (word.empty() || word.front() == '-' || fs::path(word).is_absolute()) continue;
    if (i == 0 && word.find('/') == std::string::npos) continue;
    const fs::path target = from / word;
    if (!fs::exists(target, ec)) continue;
    fs::path rel = fs::relative(target, to, ec);
    word = (ec || rel.empty() ? fs::weakly_canonical(target, ec) : rel).string();
    // Still a path, not a name to look up in PATH.
    if (i == 0 && word.find('/') == std::string::npos) word = "./" + word;
  }
  out.workload.command_dir = to.string();
  return out;
}

std::string worst_class(const reports::RunReport& r) {
  if (r.violations.empty()) return "";
  auto most = r.violations.front().severity;
  for (const auto& v : r.violations) most = std::min(most, v.severity);
  return checker::to_string(most);
}

void LiveCampaignSummary::add(const reports::RunReport& r) {
  ++runs;
  if (r.unknown()) {
    ++unknown;
  } else if (r.verdict == reports::verdict::kViolation) {
    ++broken;
    ++by_worst_class[worst_class(r)];
    for (const auto& c : r.found_classes()) ++by_class[c];
  } else {
    ++safe;
  }
}

std::string LiveCampaignSummary::break_rate_text() const {
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.0f%%", runs ? 100.0 * static_cast<double>(broken) / static_cast<double>(runs) : 0.0);
  return std::to_string(broken) + " of " + std::to_string(runs) + " run" + (runs == 1 ? "" : "s") + " broke (" + pct + ")";
}

}  // namespace lockstep::runner
