// `lockstep profiles`: the library profiles a scenario may name as `"lock": {"profile":
// ...}`, one line each (library, version, what it models); `--options` adds each
// profile's options with their defaults, as the library spells them, and then the options
// of lockstep's own algorithms (`"lock": {"algorithm": ...}`), from the same kind of table.
#include <cstdio>

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

}  // namespace

CommandRunner add_profiles_command(CLI::App& app) {
  auto with_options = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("profiles", "List the library profiles (library, version, what each models)");
  cmd->add_flag("--options", *with_options, "Also list each profile's options and the library's defaults");
  return [with_options] { return list(*with_options); };
}

}  // namespace lockstep::cli
