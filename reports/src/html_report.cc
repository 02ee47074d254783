// report.html: one self-contained page per scenario. The timeline is inline SVG drawn
// from the Timeline model; hover text is SVG <title>, so the page needs no script to be
// read (the one tiny script only adds a copy button and marks the page as loaded).
#include <algorithm>
#include <cstdio>
#include <map>

#include "lockstep/reports/text.h"
#include "lockstep/reports/writers.h"

namespace lockstep::reports {
namespace {

constexpr int kWidth = 1240;
constexpr int kLabelW = 132;
constexpr int kPlotW = kWidth - kLabelW - 24;
constexpr int kAxisH = 24;
constexpr int kNoteRowH = 18;  // one row of fault labels, one of violation labels
constexpr int kClientH = 40;
constexpr int kNodeH = 30;
constexpr int kGroupGap = 10;
constexpr int kPalette = 8;

std::string esc(const std::string& s) { return xml_escape(s); }

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

// "c3": the owner's colour; "t3": its light tint, for what a client merely believed.
std::string colour_class(int64_t owner, const char* prefix = "c") {
  return owner < 0 ? std::string(prefix) + "x" : prefix + std::to_string((owner - 1 + kPalette * 1000) % kPalette);
}

struct LaneBox {
  int y = 0;
  int h = 0;
};

// One row of labels above the lanes: a label that would overlap one already placed
// moves right, so "overlap 31ms" and "foreign-unlock" at the same instant stay legible.
class LabelRow {
 public:
  double place(double want, const std::string& text) {
    const double w = 7.0 * static_cast<double>(text.size()) + 6;
    double x = std::min(want, kWidth - 4 - w);
    for (bool moved = true; moved;) {
      moved = false;
      for (const auto& [a, b] : taken_) {
        if (x < b && x + w > a) {
          x = b + 2;
          moved = true;
        }
      }
    }
    taken_.push_back({x, x + w});
    return x;
  }

 private:
  std::vector<std::pair<double, double>> taken_;
};

// The SVG: computes each lane's box, then draws back to front: grid, faults, bars,
// highlights, labels.
class Svg {
 public:
  explicit Svg(const Timeline& t) : t_(t) { layout(); }

  std::string render() {
    out_ += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" viewBox=\"0 0 " + std::to_string(kWidth) +
            " " + std::to_string(height_) + "\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
            std::to_string(height_) + "\" role=\"img\" aria-label=\"Timeline of the run\">\n";
    out_ += "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
            "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fff4d6\"/>"
            "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#efc860\" stroke-width=\"2\"/></pattern>"
            "<pattern id=\"hatch-dark\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
            "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#eef0f2\"/>"
            "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#b4bac2\" stroke-width=\"2\"/></pattern></defs>\n";
    lane_backgrounds();
    axis();
    faults();
    for (const auto& l : t_.lanes) lane(l);
    highlights();
    out_ += "</svg>\n";
    return std::move(out_);
  }

 private:
  void layout() {
    int y = kAxisH + 2 * kNoteRowH + 6;
    LaneKind prev = LaneKind::Client;
    for (const auto& l : t_.lanes) {
      if (l.kind == LaneKind::Node && prev != LaneKind::Node && y > kAxisH + 2 * kNoteRowH + 6) y += kGroupGap;
      const int h = l.kind == LaneKind::Node ? kNodeH : kClientH;
      boxes_[l.id] = {y, h};
      y += h;
      prev = l.kind;
    }
    plot_bottom_ = y;
    height_ = y + 8;
  }

  double x(int64_t t) const {
    return kLabelW + static_cast<double>(t) * kPlotW / static_cast<double>(std::max<int64_t>(t_.end_ns, 1));
  }

  void rect(double x0, double x1, double y, double h, const std::string& cls, const std::string& title,
            double min_w = 1.0) {
    out_ += "<rect class=\"" + cls + "\" x=\"" + num(x0) + "\" y=\"" + num(y) + "\" width=\"" +
            num(std::max(x1 - x0, min_w)) + "\" height=\"" + num(h) + "\"";
    if (title.empty()) {
      out_ += "/>";
    } else {
      out_ += "><title>" + esc(title) + "</title></rect>";
    }
    out_ += "\n";
  }

  void text(double x, double y, const std::string& cls, const std::string& s, const char* anchor = "start") {
    out_ += "<text class=\"" + cls + "\" x=\"" + num(x) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\">" +
            esc(s) + "</text>\n";
  }

  void lane_backgrounds() {
    bool odd = false;
    for (const auto& l : t_.lanes) {
      const auto b = boxes_.at(l.id);
      rect(0, kWidth, b.y, b.h, odd ? "bg odd" : "bg", "");
      odd = !odd;
    }
  }

  void axis() {
    const int64_t step = tick_step_ns(t_.end_ns, 10);
    const int top = kAxisH - 4;
    for (int64_t t = 0; t <= t_.end_ns; t += step) {
      const double px = x(t);
      out_ += "<line class=\"grid\" x1=\"" + num(px) + "\" y1=\"" + std::to_string(top) + "\" x2=\"" + num(px) +
              "\" y2=\"" + std::to_string(plot_bottom_) + "\"/>\n";
      text(px, top - 6, "tick", tick_label(t, step, t_.end_ns), t == 0 ? "start" : "middle");
    }
    text(kLabelW - 10, kAxisH + kNoteRowH - 5, "rowlabel", "faults", "end");
    text(kLabelW - 10, kAxisH + 2 * kNoteRowH - 5, "rowlabel", "violations", "end");
  }

  std::pair<int, int> span_of(const std::vector<std::string>& lanes) const {
    int top = plot_bottom_, bottom = kAxisH + 2 * kNoteRowH + 6;
    if (lanes.empty()) return {bottom, plot_bottom_};
    for (const auto& id : lanes) {
      auto it = boxes_.find(id);
      if (it == boxes_.end()) continue;
      top = std::min(top, it->second.y);
      bottom = std::max(bottom, it->second.y + it->second.h);
    }
    return {top, bottom};
  }

  void faults() {
    for (const auto& f : t_.faults) {
      const double x0 = x(f.begin_ns), x1 = x(f.end_ns);
      const std::string title = f.label + " " + (f.lanes.empty() ? "(whole world)" : "on " + join(f.lanes)) + " [" +
                                checker::format_seconds(f.begin_ns) + ", " + checker::format_seconds(f.end_ns) + "]";
      const std::vector<std::string> all = f.lanes.empty() ? std::vector<std::string>{""} : f.lanes;
      for (const auto& id : all) {
        auto [top, bottom] = id.empty() ? span_of({}) : span_of({id});
        if (top >= bottom) continue;
        rect(x0, x1, top, bottom - top, "fault f-" + f.kind, title, 3);
      }
      const int y = kAxisH + kNoteRowH - 5;
      out_ += "<line class=\"fault-span\" x1=\"" + num(x0) + "\" y1=\"" + std::to_string(y + 2) + "\" x2=\"" +
              num(std::max(x1, x0 + 3)) + "\" y2=\"" + std::to_string(y + 2) + "\"/>\n";
      const std::string label = f.label + (f.lanes.empty() ? "" : " · " + join(f.lanes));
      text(fault_labels_.place(x0 + 2, label), y - 2, "fault-label", label);
    }
  }

  void lane(const Lane& l) {
    const auto b = boxes_.at(l.id);
    out_ += "<g class=\"lane\" data-lane=\"" + esc(l.id) + "\">\n";
    text(kLabelW - 10, b.y + b.h / 2.0 + 4, l.kind == LaneKind::Node ? "lanelabel node" : "lanelabel", l.label, "end");
    if (l.kind == LaneKind::Node) {
      for (const auto& k : l.keys) {
        rect(x(k.begin_ns), x(k.end_ns), b.y + 7, 16, "key " + colour_class(k.owner), k.title);
        if (x(k.end_ns) - x(k.begin_ns) > 64 && k.owner >= 0 && k.merged == 1) {
          text(x(k.begin_ns) + 4, b.y + 19, "keylabel", checker::process_label(k.owner));
        }
      }
    } else {
      for (const auto& h : l.holds) rect(x(h.begin_ns), x(h.end_ns), b.y + 5, 9, "hold " + colour_class(h.owner, "t"), h.title);
      for (const auto& s : l.sections) rect(x(s.begin_ns), x(s.end_ns), b.y + 16, 14, "cs " + colour_class(s.owner), s.title);
      for (const auto& o : l.ops) rect(x(o.begin_ns), x(o.end_ns), b.y + 32, 4, "op " + o.cls, o.title, 1.5);
    }
    out_ += "</g>\n";
  }

  void highlights() {
    for (const auto& hl : t_.highlights) {
      auto [top, bottom] = span_of(hl.lanes);
      const double x0 = x(hl.begin_ns), x1 = x(hl.end_ns);
      const int label_y = kAxisH + 2 * kNoteRowH - 5;
      out_ += "<g class=\"violation\" data-property=\"" + esc(hl.property) + "\">\n";
      if (hl.end_ns > hl.begin_ns) {
        rect(x0, x1, top - 2, bottom - top + 4, "overlap", hl.title, 2);
        // A deadlock has no natural length (it lasts until the run ends), an overlap does.
        const std::string label = hl.property == "mutual-exclusion"
                                      ? "overlap " + format_duration(hl.end_ns - hl.begin_ns)
                                      : hl.property + " (bound exceeded)";
        text(violation_labels_.place(x0, label), label_y, "violation-label", label);
      } else {
        out_ += "<line class=\"marker\" x1=\"" + num(x0) + "\" y1=\"" + std::to_string(top - 2) + "\" x2=\"" + num(x0) +
                "\" y2=\"" + std::to_string(bottom + 2) + "\"/>\n";
        for (const auto& id : hl.lanes) {
          auto it = boxes_.find(id);
          if (it == boxes_.end()) continue;
          const double cy = it->second.y + it->second.h / 2.0;
          out_ += "<path class=\"marker-head\" d=\"M" + num(x0) + " " + num(cy - 7) + " l7 7 l-7 7 l-7 -7 z\"><title>" +
                  esc(hl.title) + "</title></path>\n";
        }
        text(violation_labels_.place(x0 - 4, hl.property), label_y, "violation-label", hl.property);
      }
      out_ += "</g>\n";
    }
  }

  const Timeline& t_;
  std::map<std::string, LaneBox> boxes_;
  LabelRow fault_labels_, violation_labels_;
  int plot_bottom_ = 0;
  int height_ = 0;
  std::string out_;
};

constexpr const char* kStyle = R"CSS(
:root{--fg:#1d232b;--muted:#5b6573;--line:#d9dee5;--red:#d0191f;--green:#17803d;--amber:#b26a00}
*{box-sizing:border-box}
body{margin:0;padding:20px 28px 40px;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--fg);background:#fff}
h1{font-size:22px;margin:0}h2{font-size:16px;margin:26px 0 8px;border-bottom:1px solid var(--line);padding-bottom:4px}
.top{display:flex;align-items:center;gap:14px;flex-wrap:wrap}
.badge{display:inline-block;padding:2px 10px;border-radius:4px;font-weight:700;letter-spacing:.04em;color:#fff;font-size:13px}
.b-violation{background:var(--red)}.b-safe{background:var(--green)}.b-unknown{background:var(--amber)}
.b-ok{background:#e8f3ec;color:var(--green)}.b-mismatch{background:#fde8e8;color:var(--red)}
.desc{color:var(--muted);margin:6px 0 12px;max-width:1100px}
.chart{overflow-x:auto;border:1px solid var(--line);border-radius:6px;padding:6px 0;max-width:1250px}
svg.timeline{display:block;font-size:12px}
.bg{fill:#fff}.bg.odd{fill:#f6f8fa}
.grid{stroke:#e3e7ec;stroke-width:1}
.tick{fill:var(--muted);font-size:11px}
.rowlabel{fill:var(--muted);font-size:11px;font-style:italic}
.lanelabel{fill:var(--fg);font-weight:600;font-size:12.5px}.lanelabel.node{fill:#3a4656}
.hold{stroke-width:1}.cs{stroke:none}.key{stroke:none}
.keylabel{fill:#fff;font-size:11px;font-weight:600;pointer-events:none}
.op{stroke:none}.op-ok{fill:#7b8794}.op-fail{fill:#c3cad3}.op-info{fill:#9c6ade}
.fault{fill:url(#hatch);fill-opacity:.85;stroke:#d9a52f;stroke-width:1;stroke-dasharray:3 2}
.f-crash{fill:url(#hatch-dark);stroke:#6b7480}.f-partition{stroke:#7a5cc2}
.fault-span{stroke:#d9a52f;stroke-width:3}
.fault-label{fill:#8a5a00;font-size:11.5px;font-weight:600}
.overlap{fill:var(--red);fill-opacity:.22;stroke:var(--red);stroke-width:2}
.marker{stroke:var(--red);stroke-width:2}.marker-head{fill:var(--red)}
.violation-label{fill:var(--red);font-size:11.5px;font-weight:700}
.c0{fill:#2f6fdf;stroke:#2f6fdf}.c1{fill:#e07b00;stroke:#e07b00}.c2{fill:#1a9e77;stroke:#1a9e77}.c3{fill:#8e44ad;stroke:#8e44ad}
.c4{fill:#00838f;stroke:#00838f}.c5{fill:#6d4c41;stroke:#6d4c41}.c6{fill:#7c8b00;stroke:#7c8b00}.c7{fill:#3949ab;stroke:#3949ab}
.cx{fill:#9aa3ad;stroke:#9aa3ad}
.t0{fill:#d5e2fa;stroke:#2f6fdf}.t1{fill:#fbe2c2;stroke:#e07b00}.t2{fill:#c8ebe0;stroke:#1a9e77}.t3{fill:#e6d3ee;stroke:#8e44ad}
.t4{fill:#c4e6e9;stroke:#00838f}.t5{fill:#e4d9d5;stroke:#6d4c41}.t6{fill:#e7ebc2;stroke:#7c8b00}.t7{fill:#d1d6ee;stroke:#3949ab}
.tx{fill:#e3e7eb;stroke:#9aa3ad}
.legend{display:flex;flex-wrap:wrap;gap:16px;margin:8px 2px 0;color:var(--muted);font-size:12.5px}
.legend span{display:inline-flex;align-items:center;gap:6px}
.sw{display:inline-block;width:22px;height:10px;border-radius:2px}
.sw-hold{background:#d5e2fa;border:1px solid #2f6fdf}.sw-cs{background:#2f6fdf;height:12px}
.sw-key{background:linear-gradient(90deg,#2f6fdf 50%,#e07b00 50%);height:12px}
.sw-op{background:#7b8794;height:4px;width:12px}.sw-fail{background:#c3cad3}.sw-info{background:#9c6ade}.sw-fault{background:repeating-linear-gradient(45deg,#fff4d6 0 3px,#e9b949 3px 5px);border:1px dashed #d9a52f}
.sw-bad{background:rgba(208,25,31,.22);border:2px solid var(--red)}
.verdict{display:flex;gap:18px;align-items:flex-start;margin-top:22px;padding:16px 18px;border-radius:8px;border:1px solid var(--line)}
.verdict.v-violation{background:#fff5f5;border-color:#f2c4c4}.verdict.v-safe{background:#f2faf5;border-color:#bfe3cc}.verdict.v-unknown{background:#fff8ec;border-color:#f1d49c}
.big{font-size:30px;font-weight:800;letter-spacing:.03em;line-height:1}
.v-violation .big{color:var(--red)}.v-safe .big{color:var(--green)}.v-unknown .big{color:var(--amber)}
.verdict p{margin:4px 0 0}
ul.violations{margin:10px 0 0;padding-left:18px}ul.violations li{margin:4px 0}
.prop{font:600 12px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#fde8e8;color:var(--red);padding:1px 6px;border-radius:3px;margin-right:6px}
.cls{font-size:12px;padding:1px 6px;border-radius:3px;margin-right:6px;background:#eee;color:#333}
.cls-two-holders{background:#b3261e;color:#fff}.cls-damage{background:#e8710a;color:#fff}
.cls-lease-lost{background:#fbe7b3;color:#6b4e00}.cls-stuck{background:#d7d2f5;color:#3a2d8c}
.cls-unfair{background:#d6e9f8;color:#144d7a}.inconclusive{margin-top:8px;padding:6px 10px;border-left:3px solid #b08500;background:#fff8e1}
.replay{display:flex;gap:8px;align-items:center;max-width:1100px}
code,pre{font:12.5px/1.5 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
.replay code{flex:1;background:#f3f5f8;border:1px solid var(--line);border-radius:5px;padding:7px 10px;user-select:all;overflow-x:auto;white-space:nowrap}
button.copy{font:inherit;padding:6px 12px;border:1px solid #b8c0ca;border-radius:5px;background:#fff;cursor:pointer}
table{border-collapse:collapse;margin:4px 0 8px}th,td{border:1px solid var(--line);padding:4px 10px;text-align:left;vertical-align:top}
th{background:#f6f8fa;font-weight:600}
pre.excerpt{background:#f6f8fa;border:1px solid var(--line);border-radius:6px;padding:10px 12px;overflow-x:auto;max-width:1250px}
.muted{color:var(--muted)}.elided{color:var(--amber)}
.cols{display:flex;gap:32px;flex-wrap:wrap}
)CSS";

constexpr const char* kScript = R"JS(
document.querySelectorAll('button.copy').forEach(function(b){b.addEventListener('click',function(){
var el=document.getElementById(b.getAttribute('data-for'));var t=el.textContent;
function sel(){var r=document.createRange();r.selectNodeContents(el);var s=window.getSelection();s.removeAllRanges();s.addRange(r);b.textContent='Selected: press Ctrl+C';}
if(navigator.clipboard&&window.isSecureContext){navigator.clipboard.writeText(t).then(function(){b.textContent='Copied';},sel);}else{sel();}});});
document.body.setAttribute('data-ok','1');
)JS";

std::string verdict_word(const RunReport& r) {
  std::string v = r.verdict.empty() ? "unknown" : r.verdict;
  std::transform(v.begin(), v.end(), v.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return v;
}

std::string verdict_class(const RunReport& r) {
  return r.verdict == verdict::kViolation || r.verdict == verdict::kSafe ? r.verdict : "unknown";
}

std::string outcome_badge(const RunReport& r) {
  const std::string o = outcome(r);
  return "<span class=\"badge " + std::string(o == "as expected" ? "b-ok" : "b-mismatch") + "\">" + esc(o) + "</span>";
}

std::string header(const RunReport& r) {
  return "<div class=\"top\"><h1>" + esc(r.scenario) + "</h1><span class=\"badge b-" + verdict_class(r) + "\">" +
         esc(verdict_word(r)) + "</span>" + outcome_badge(r) + "<span class=\"muted\">" + esc(r.algorithm) +
         " · seed " + std::to_string(r.seed) + "</span></div>\n<p class=\"desc\">" + esc(r.description) + "</p>\n";
}

std::string legend() {
  return "<div class=\"legend\"><span><i class=\"sw sw-hold\"></i>client believes it holds the lock</span>"
         "<span><i class=\"sw sw-cs\"></i>critical section</span>"
         "<span><i class=\"sw sw-key\"></i>key on the node, coloured by owner</span>"
         "<span><i class=\"sw sw-op\"></i><i class=\"sw sw-op sw-fail\"></i><i class=\"sw sw-op sw-info\"></i>"
         "operation: ok / failed / outcome unknown</span>"
         "<span><i class=\"sw sw-fault\"></i>fault</span>"
         "<span><i class=\"sw sw-bad\"></i>violation</span>"
         "<span class=\"muted\">Hover any bar for details.</span></div>\n";
}

std::string timeline_section(const Timeline& t) {
  std::string out = "<h2>Timeline</h2>\n<div class=\"chart\">\n" + Svg(t).render() + "</div>\n" + legend();
  for (const auto& e : t.elided) out += "<p class=\"elided\">" + esc(e) + "</p>\n";
  return out;
}

std::string verdict_section(const RunReport& r) {
  std::string out = "<div class=\"verdict v-" + verdict_class(r) + "\"><div class=\"big\">" + esc(verdict_word(r)) +
                    "</div><div><p><b>" + esc(outcome(r)) + ".</b> Expected: " + esc(r.expected.text()) +
                    ". Found: " + esc(found_text(r)) + ".</p>";
  if (!r.violations.empty()) {
    out += "<ul class=\"violations\">";
    for (const auto& v : r.violations) {
      out += "<li data-class=\"" + std::string(checker::to_string(v.severity)) + "\"><span class=\"prop\">" +
             esc(v.property) + "</span><span class=\"cls cls-" + checker::to_string(v.severity) + "\">" +
             esc(checker::severity_info(v.severity).words) + "</span>" + esc(v.explanation);
      if (v.count > 1) out += " <span class=\"muted\">(" + std::to_string(v.count) + " instances; the first is described)</span>";
      out += "</li>";
    }
    out += "</ul>";
  } else if (r.verdict == verdict::kSafe) {
    out += "<p>No property was violated.</p>";
  }
  if (const std::string heading = inconclusive_heading(r); !heading.empty()) {
    out += "<div class=\"inconclusive\"><p><b>" + esc(heading) + "</b></p><ul>";
    for (const auto& why : inconclusive_reasons(r)) out += "<li>" + esc(why) + "</li>";
    out += "</ul></div>";
  }
  return out + "</div></div>\n";
}

std::string replay_section(const RunReport& r) {
  return "<h2>Replay</h2>\n<div class=\"replay\"><code id=\"replay\">" + esc(r.replay) +
         "</code><button class=\"copy\" type=\"button\" data-for=\"replay\">Copy</button></div>\n"
         "<p class=\"muted\">" + esc(replay_promise(r)) + " (this run's SHA-256 <code>" + esc(r.history_sha256) +
         "</code>).</p>\n";
}

std::string excerpt_section(const RunReport& r, const checker::History& h, size_t lines) {
  const Excerpt ex = history_excerpt(r, h, lines);
  if (ex.lines.empty()) return "";
  std::string out = "<h2>History excerpt</h2>\n<p class=\"muted\">" + esc(ex.caption) + "</p>\n<pre class=\"excerpt\">";
  for (const auto& l : ex.lines) out += esc(l) + "\n";
  return out + "</pre>\n";
}

std::string parameters_section(const RunReport& r) {
  std::string out = "<h2>Scenario</h2>\n<div class=\"cols\"><table class=\"params\">";
  for (const auto& [k, v] : parameter_rows(r)) out += "<tr><th>" + esc(k) + "</th><td>" + esc(v) + "</td></tr>";
  out += "</table><div><table class=\"faults\"><tr><th>fault</th><th>target</th><th>at</th><th>for</th><th>details</th></tr>";
  const auto rows = fault_rows(r);
  for (const auto& f : rows) {
    out += "<tr><td>" + esc(f.kind) + "</td><td>" + esc(f.target) + "</td><td>" + esc(f.at) + "</td><td>" +
           esc(f.duration) + "</td><td>" + esc(f.details) + "</td></tr>";
  }
  if (rows.empty()) out += "<tr><td colspan=\"5\" class=\"muted\">no faults</td></tr>";
  out += "</table>";
  if (r.stats.is_object() && !r.stats.empty()) {
    out += "<table class=\"stats\">";
    for (auto it = r.stats.begin(); it != r.stats.end(); ++it) {
      out += "<tr><th>" + esc(it.key()) + "</th><td>" + esc(it.value().dump()) + "</td></tr>";
    }
    out += "</table>";
  }
  return out + "</div></div>\n";
}

std::string page(const RunReport& r, const checker::History& h, const TimelineOptions& to, size_t excerpt_lines,
                 const std::vector<std::string>& notes) {
  Timeline t = build_timeline(r, h, to);
  t.elided.insert(t.elided.end(), notes.begin(), notes.end());
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
                    esc(r.scenario + " — " + verdict_word(r) + " — lockstep") + "</title>\n<style>" + kStyle +
                    "</style>\n</head>\n<body>\n";
  out += header(r) + timeline_section(t) + verdict_section(r) + replay_section(r) + excerpt_section(r, h, excerpt_lines) +
         parameters_section(r);
  out += "<script>" + std::string(kScript) + "</script>\n</body>\n</html>\n";
  return out;
}

}  // namespace

std::string render_html(const RunReport& r, const checker::History& h, const HtmlOptions& o) {
  // Each step gives up detail a reader misses least, until the page fits the budget.
  TimelineOptions to = o.timeline;
  to.plot_width_px = kPlotW;
  size_t excerpt = o.excerpt_lines;
  std::vector<std::string> notes;
  std::string html = page(r, h, to, excerpt, notes);
  for (int step = 0; html.size() > o.max_bytes && step < 4; ++step) {
    if (step == 0) to.ops = false;
    if (step == 1) to.merge_above = 0, to.merge_px = 2;
    if (step == 2) to.max_client_lanes = 0, excerpt = std::min<size_t>(excerpt, 20);
    if (step == 3) to.merge_px = 8;
    notes = {"The full page would exceed " + std::to_string(o.max_bytes / 1000) +
             " KB, so detail was dropped; history.jsonl has every event."};
    html = page(r, h, to, excerpt, notes);
  }
  return html;
}

}  // namespace lockstep::reports
