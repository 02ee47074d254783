// `lockstep check`: reads history files and checks each for linearizability against one
// model, printing one verdict line per file (or one JSON object per line with --json).
// The output is the same for any --threads, apart from the milliseconds.
// Exit: 0 all valid, 1 any invalid, 2 any unknown and none invalid, 64 usage error,
// 65 any file unreadable or malformed (takes precedence: that file was not checked).
#include <fcntl.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.h"
#include "option_values.h"
#include "lockstep/checker/history_io.h"
#include "lockstep/checker/linearizability.h"
#include "lockstep/checker/run_history.h"
#include "lockstep/reports/check_report.h"

namespace lockstep::cli {
namespace {

using namespace lockstep::checker;

struct CheckOptions {
  std::string model;  // "": a run history's parts with their models, mutex for any other
  std::string format = "auto";
  std::string kv_missing = "empty";
  double time_limit_s = 10.0;
  double memory_limit_mb = 1024.0;
  unsigned threads = 0;  // one per core
  bool json = false;
  std::string html;  // a page (one file) or a folder of pages (several), "" for none
  std::vector<std::string> files;
};

constexpr size_t kShownLinearization = 12;  // text output shows the tail of long ones

// What the process holds resident, as the kernel counts it (the second field of
// /proc/self/statm, in pages); 0 where that cannot be read, which leaves the limit to
// what the search counts. Read with a buffer on the stack: any search thread may call it.
size_t resident_bytes() {
  const int fd = ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buf[128];
  const ssize_t n = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (n <= 0) return 0;
  buf[n] = '\0';
  char* end = nullptr;
  std::strtoull(buf, &end, 10);  // the total size, in pages
  const unsigned long long pages = std::strtoull(end, nullptr, 10);
  return static_cast<size_t>(pages) * static_cast<size_t>(::sysconf(_SC_PAGESIZE));
}

std::string short_event(const Event& e, size_t index, bool has_time) {
  std::string s = "event " + std::to_string(index + 1) + ": process " + std::to_string(e.process) + " " +
                  to_string(e.type) + " " + e.f;
  if (!e.key.empty()) s += " key=" + nlohmann::json(e.key).dump();
  if (!e.value.is_null()) s += " " + e.value.dump();
  if (has_time) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "  (t=%.3fs)", static_cast<double>(e.time_ns) / 1e9);
    s += buf;
  }
  return s;
}

std::string short_op(const Event& e) {
  std::string s = "p" + std::to_string(e.process) + " " + e.f;
  if (!e.value.is_null()) s += " " + e.value.dump();
  if (e.type == EventType::Info || e.type == EventType::Invoke) s += " (unknown outcome)";
  return s;
}

nlohmann::ordered_json events_json(const std::vector<Event>& es) {
  nlohmann::ordered_json a = nlohmann::ordered_json::array();
  for (const Event& e : es) a.push_back(to_json(e));
  return a;
}

void print_details(const History& h, const LinResult& r);

void print_text(const std::string& file, const History& h, const LinResult& r, long ms) {
  std::cout << file << ": " << to_string(r.verdict) << "  ops=" << r.ops << "  ms=" << ms;
  print_details(h, r);
}

// "file [lock "lock" as mutex]": which part of a run history a verdict is about.
std::string part_name(const std::string& file, const HistoryPart& p) {
  return file + " [" + p.what + " " + nlohmann::json(p.key).dump() + " as " + p.model + "]";
}

void print_details(const History& h, const LinResult& r) {
  if (r.verdict == Verdict::Unknown) {
    std::cout << "  (" << r.unknown_reason << "; explored " << r.stats.states_visited << " states, cache "
              << r.stats.cache_entries << " entries, peak " << (r.stats.peak_bytes >> 10) << " KiB, deepest "
              << r.stats.max_depth << " ops)";
  }
  std::cout << "\n";
  if (r.verdict != Verdict::Invalid) return;
  bool has_time = false;
  for (const Event& e : h.events) has_time = has_time || e.time_ns != 0;
  std::cout << "  " << r.explanation_sentence << "\n";
  if (!r.key.empty()) std::cout << "  key: " << nlohmann::json(r.key).dump() << "\n";
  std::cout << "  smallest invalid prefix: events 1-" << r.failed_event_index + 1 << " of " << h.events.size() << "\n";
  std::cout << "  involved:\n";
  for (size_t i = 0; i < r.involved.size(); ++i) {
    std::cout << "    " << short_event(r.involved[i], r.involved_indices[i], has_time) << "\n";
  }
  const auto& lin = r.partial_linearization;
  std::cout << "  partial linearization that got furthest (" << lin.size() << " ops):";
  size_t from = lin.size() > kShownLinearization ? lin.size() - kShownLinearization : 0;
  if (from > 0) std::cout << " ...";
  for (size_t i = from; i < lin.size(); ++i) std::cout << (i > from || from > 0 ? ", " : " ") << short_op(lin[i]);
  std::cout << (lin.empty() ? " (none)" : "") << "\n  state after it: " << r.final_state << "\n";
}

void print_json(const std::string& file, const LinResult& r, long ms, const HistoryPart* part = nullptr) {
  nlohmann::ordered_json j;
  j["file"] = file;
  if (part) j["part"] = {{"what", part->what}, {"key", part->key}, {"model", part->model}};
  j["verdict"] = to_string(r.verdict);
  j["ops"] = r.ops;
  j["ms"] = ms;
  j["states_visited"] = r.stats.states_visited;
  j["cache_entries"] = r.stats.cache_entries;
  j["peak_bytes"] = r.stats.peak_bytes;
  j["max_depth"] = r.stats.max_depth;
  if (r.verdict == Verdict::Unknown) j["reason"] = r.unknown_reason;
  if (r.verdict == Verdict::Invalid) {
    j["explanation"] = r.explanation_sentence;
    j["key"] = r.key;
    j["failed_event"] = r.failed_event_index + 1;
    j["prefix_events"] = r.prefix.size();
    j["involved"] = events_json(r.involved);
    j["partial_linearization"] = events_json(r.partial_linearization);
    j["final_state"] = r.final_state;
  }
  std::cout << j.dump() << "\n";
}

void print_error(const std::string& file, const std::string& error, bool json) {
  std::cerr << "lockstep check: " << error << "\n";
  if (!json) return;
  nlohmann::ordered_json j;
  j["file"] = file;
  j["verdict"] = "error";
  j["error"] = error;
  std::cout << j.dump() << "\n";
}

// Where a file's page goes: --html names the page itself when one history is checked and
// ends in .html; otherwise it is a folder, and each history gets <its file name>.html.
// A part of a run history (its lock, its resource) gets its own page, named after it.
std::filesystem::path page_path(const CheckOptions& o, const std::string& file, const std::string& part) {
  const std::filesystem::path out(o.html);
  if (o.files.size() == 1 && out.extension() == ".html" && part.empty()) return out;
  const std::filesystem::path folder = out.extension() == ".html" ? out.parent_path() : out;
  const std::string base = out.extension() == ".html" && o.files.size() == 1 ? out.stem().string()
                                                                             : std::filesystem::path(file).filename().string();
  return folder / (base + (part.empty() ? "" : "." + part) + ".html");
}

bool write_page(const CheckOptions& o, const std::string& file, const History& h, const LinResult& r,
                const HistoryPart* part = nullptr) {
  const std::filesystem::path path = page_path(o, file, part ? part->what + "-" + part->key : "");
  std::error_code ec;
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
  const std::string page = reports::render_check_html({file, part ? part->model : (o.model.empty() ? "mutex" : o.model), &h, &r});
  if (ec || !write_file(path, page)) {
    std::cerr << "lockstep check: " << path.string() << ": cannot write" << (ec ? " (" + ec.message() + ")" : "") << "\n";
    return false;
  }
  if (!o.json) std::cout << "  page: " << path.string() << "\n";
  return true;
}

int run_check(const CheckOptions& o) {
  ModelOptions model_options;
  if (!parse_kv_missing(o.kv_missing, model_options.kv_missing)) {
    std::cerr << "lockstep check: " << unknown_value("--kv-missing value", o.kv_missing, {"empty", "nil"}, "Values") << "\n";
    return kExitUsage;
  }
  std::unique_ptr<Model> model = make_model(o.model.empty() ? "mutex" : o.model, model_options);
  Format fmt;
  if (!model || !parse_format(o.format, fmt)) {
    std::cerr << "lockstep check: "
              << (model ? unknown_value("format", o.format, {"auto", "json", "edn", "jepsen-log"}, "Formats")
                        : unknown_value("model", o.model, model_names(), "Models"))
              << "\n";
    return kExitUsage;
  }
  // At most 2^62 bytes, so that the conversion from a double cannot overflow; NaN is 0.
  double memory_bytes = o.memory_limit_mb > 0 ? std::min(o.memory_limit_mb * 1024.0 * 1024.0, 0x1p62) : 0.0;
  // The memory limit bounds the process beyond its size now, before any file is read:
  // the history, the search and whatever the allocator keeps, together.
  Limits limits{o.time_limit_s, static_cast<size_t>(memory_bytes), o.threads, resident_bytes, resident_bytes()};
  bool any_invalid = false, any_unknown = false, any_error = false;
  auto judged = [&](const LinResult& r) {
    any_invalid = any_invalid || r.verdict == Verdict::Invalid;
    any_unknown = any_unknown || r.verdict == Verdict::Unknown;
  };
  auto ms_since = [](std::chrono::steady_clock::time_point start) {
    return static_cast<long>(
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count());
  };
  for (const std::string& file : o.files) {
    // What the last file's check freed goes back to the system, so this file has the
    // whole limit to itself (the search's pool and malloc would keep it, resident).
    release_kept_search_memory();
    ::malloc_trim(0);
    auto start = std::chrono::steady_clock::now();
    History h;
    std::string error;
    if (!read_history(file, fmt, h, error)) {
      any_error = true;
      print_error(file, error, o.json);
      continue;
    }
    // A history lockstep recorded holds a lock, a resource and ground truth: unless a
    // model was asked for, each part is checked with its own.
    if (o.model.empty() && is_run_history(h)) {
      const auto parts = run_history_parts(h);
      if (parts.empty()) {
        any_error = true;
        print_error(file, file + ": a lockstep run history without lock or resource operations to check", o.json);
      }
      for (const auto& part : parts) {
        start = std::chrono::steady_clock::now();
        const LinResult r = check_linearizable(part.ops, *make_model(part.model, model_options), limits);
        if (!r.error.empty()) {
          any_error = true;
          print_error(file, part_name(file, part) + ": " + r.error, o.json);
          continue;
        }
        judged(r);
        if (o.json) print_json(file, r, ms_since(start), &part);
        else print_text(part_name(file, part), part.ops, r, ms_since(start));
        if (!o.html.empty() && !write_page(o, file, part.ops, r, &part)) any_error = true;
      }
      std::cout.flush();
      continue;
    }
    LinResult r = check_linearizable(h, *model, limits);
    if (!r.error.empty()) {
      any_error = true;
      print_error(file, file + ": " + r.error, o.json);
      continue;
    }
    judged(r);
    if (o.json) print_json(file, r, ms_since(start));
    else print_text(file, h, r, ms_since(start));
    if (!o.html.empty() && !write_page(o, file, h, r)) any_error = true;
    std::cout.flush();
  }
  if (any_error) return kExitDataErr;
  if (any_invalid) return kExitMismatch;
  return any_unknown ? kExitUnknown : 0;
}

}  // namespace

CommandRunner add_check_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("check", "Check recorded histories for linearizability");
  auto o = std::make_shared<CheckOptions>();
  std::string models;
  for (const auto& n : model_names()) models += (models.empty() ? "" : ", ") + n;
  cmd->add_option("--model", o->model,
                  "Sequential model: " + models +
                      " (default: a lockstep run history's lock and resource each with its own; mutex otherwise)");
  cmd->add_option("--format", o->format, "History format: auto, json, edn, jepsen-log")->capture_default_str();
  cmd->add_option("--time-limit", o->time_limit_s, "Seconds per file before the verdict is unknown")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--memory-limit", o->memory_limit_mb, "MiB the process may hold beyond its start-up size, per file, before unknown")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--threads", o->threads,
                  "Threads that search a file's keys at once (default 0: one per core); the output is the "
                  "same for any number")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  cmd->add_option("--kv-missing", o->kv_missing,
                  "kv model: what a get of a never-written key returns, empty (\"\", as Jepsen's kv tests "
                  "record; nil reads as \"\" too) or nil")
      ->capture_default_str();
  cmd->add_flag("--json", o->json, "One JSON object per file instead of text");
  cmd->add_option("--html", o->html,
                  "Also write a page per history (per part of a lockstep run history): its operations on a "
                  "timeline and, when invalid, the partial linearization and the operation that could not be "
                  "placed. PATH.html for one file, else a folder");
  cmd->add_option("files", o->files, "History files")->required();
  return [o] { return run_check(*o); };
}

}  // namespace lockstep::cli
