// How wide the command's own text may be, and CLI11's help cut to that width.
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>

#include "commands.h"
#include "lockstep/text.h"

namespace lockstep::cli {

size_t terminal_columns() {
  if (const char* c = std::getenv("COLUMNS")) {
    char* end = nullptr;
    const long n = std::strtol(c, &end, 10);
    if (end != c && *end == '\0' && n >= 40 && n <= 1000) return static_cast<size_t>(n);
  }
  winsize w{};
  if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col >= 40) return w.ws_col;
  return 120;
}

std::string wrapped(std::string_view text, size_t width, size_t indent) {
  std::string out;
  for (const auto& line : wrap_words(text, width > indent + 20 ? width - indent : 20)) {
    out += (out.empty() ? "" : "\n" + std::string(indent, ' ')) + line;
  }
  return out;
}

namespace {

// CLI11 writes each description in one line after a column of names; this one breaks it
// at words, and CLI11 indents the lines after the first under the column.
class WrappingFormatter : public CLI::Formatter {
 public:
  std::string make_option_desc(const CLI::Option* opt) const override {
    return wrap(CLI::Formatter::make_option_desc(opt));
  }
  std::string make_subcommand(const CLI::App* sub) const override {
    std::stringstream out;
    CLI::detail::format_help(out, sub->get_display_name(true), wrap(sub->get_description()), column_width_);
    return out.str();
  }

 private:
  std::string wrap(const std::string& text) const {
    const size_t width = terminal_columns() - 1;
    std::string out;
    for (const auto& line : wrap_words(text, width > column_width_ + 20 ? width - column_width_ : 20)) {
      out += (out.empty() ? "" : "\n") + line;
    }
    return out;
  }
};

}  // namespace

std::shared_ptr<CLI::Formatter> wrapping_formatter() { return std::make_shared<WrappingFormatter>(); }

}  // namespace lockstep::cli
