// `lockstep profiles`: the library profiles a scenario may name as `"lock": {"profile":
// ...}`, one line each (library, version, what it models); `--options` adds each
// profile's options with their defaults, as the library spells them, and then the options
// of lockstep's own algorithms (`"lock": {"algorithm": ...}`), from the same kind of table.
#include <cstdio>
#include <set>

#include "lockstep/fault_plan.h"

#include "commands.h"
#include "lockstep/algorithms.h"
#include "lockstep/profiles.h"

namespace lockstep::cli {
namespace {

std::string default_text(const ProfileOption& o) {
  if (o.default_value.is_null()) return "null";
  return o.default_value.dump();
}

// "    name                         default  meaning", the meaning wrapped under itself.
void print_option(const std::string& name, const std::string& def, const std::string& meaning, size_t width) {
  constexpr size_t kMeaningAt = 4 + 28 + 1 + 8 + 1;
  std::printf("    %-28s %-8s %s\n", name.c_str(), def.c_str(), wrapped(meaning, width, kMeaningAt).c_str());
}

int list(bool with_options) {
  size_t w_lib = 7, w_ver = 7;
  for (const auto& p : library_profiles()) {
    w_lib = std::max(w_lib, p.library.size());
    w_ver = std::max(w_ver, p.version.size());
  }
  const size_t width = terminal_columns() - 1;
  const size_t models_at = w_lib + w_ver + 4;
  std::printf("%-*s  %-*s  %s\n", int(w_lib), "LIBRARY", int(w_ver), "VERSION", "MODELS");
  for (const auto& p : library_profiles()) {
    std::printf("%-*s  %-*s  %s\n", int(w_lib), p.library.c_str(), int(w_ver), p.version.c_str(),
                wrapped(p.description, width, models_at).c_str());
    if (!with_options) continue;
    for (const auto& o : option_table(p)) print_option(o.name, default_text(o), o.meaning, width);
  }
  std::printf("\nUse one as \"lock\": {\"profile\": \"LIBRARY@VERSION\", \"options\": {...}} in a scenario file.\n");
  if (!with_options) return 0;
  std::printf("\nThe algorithms, as \"lock\": {\"algorithm\": \"NAME\", \"options\": {...}}:\n");
  for (const auto& a : algorithms()) {
    if (!a.options) {
      std::printf("%s  (declares no option table: its options are not checked)\n", a.name.c_str());
      continue;
    }
    std::printf("%s%s\n", a.name.c_str(), a.options->empty() ? "  (no options)" : "");
    for (const auto& o : *a.options) print_option(o.name, default_text(o), o.meaning, width);
  }
  return 0;
}

// The lock's claims with one configuration, then the fault kinds it claims nothing about.
void print_assumptions(const LockInfo& info, const LockSetup& setup, size_t width) {
  std::set<std::string> claimed;
  for (const auto& a : lock_assumptions(info, setup)) {
    claimed.insert(a.fault);
    std::printf("    %-12s %s\n", a.fault.c_str(), wrapped(a.words, width, 4 + 12 + 1).c_str());
  }
  std::string none;
  for (const auto& k : fault_kind_names())
    if (!claimed.count(k)) none += (none.empty() ? "" : ", ") + k;
  if (!none.empty()) std::printf("    %-12s %s\n", "beyond", wrapped("claims nothing under " + none, width, 17).c_str());
}

// Every lock's assumptions at its defaults (a library's, per lock kind; a recipe's at a
// 10 s lease and a 1 s command timeout): what `lockstep matrix` holds a failure against.
int assumptions() {
  const size_t width = terminal_columns() - 1;
  std::printf("What each lock claims to tolerate at its defaults; anything else lies beyond its assumptions.\n");
  for (const auto& p : library_profiles()) {
    const ProfileOption* kind = find_option(p, "kind");
    for (const auto& k : kind ? kind->choices : std::vector<std::string>{""}) {
      LockSetup setup;
      if (!k.empty()) setup.options = {{"kind", k}};
      std::printf("\n%s%s\n", p.name.c_str(), k.empty() ? "" : (" (kind " + k + ")").c_str());
      print_assumptions(p, setup, width);
    }
  }
  for (const auto& a : algorithms()) {
    std::printf("\n%s (lease 10000 ms, command timeout 1000 ms)\n", a.name.c_str());
    print_assumptions(a, LockSetup{}, width);
  }
  return 0;
}

}  // namespace

CommandRunner add_profiles_command(CLI::App& app) {
  auto with_options = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("profiles", "List the library profiles (library, version, what each models)");
  cmd->add_flag("--options", *with_options, "Also list each profile's options and the library's defaults");
  auto with_assumptions = std::make_shared<bool>(false);
  cmd->add_flag("--assumptions", *with_assumptions,
                "Instead, list the faults each lock claims to tolerate, and how far (its assumptions)");
  return [with_options, with_assumptions] { return *with_assumptions ? assumptions() : list(*with_options); };
}

}  // namespace lockstep::cli
