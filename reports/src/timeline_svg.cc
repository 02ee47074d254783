// The timeline's SVG, drawn back to front: lane backgrounds, time grid, faults, bars,
// lease deadlines, failovers, violations, label rows, then the availability strip. Each
// element placed in time says its times (data-t), which is all the script needs to redraw
// another span; without the script the page shows the whole run.
#include "timeline_svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "lockstep/reports/text.h"
#include "lockstep/text.h"

namespace lockstep::reports {
namespace {

constexpr int kWidth = 1240;
constexpr int kLabelW = 132;
constexpr int kPlotW = kWidth - kLabelW - 24;
constexpr int kAxisH = 24;
constexpr int kNoteRowH = 18;  // one row of fault labels, one of violation labels
constexpr int kLanesTop = kAxisH + 2 * kNoteRowH + 6;
constexpr int kClientH = 40;
constexpr int kOpLaneH = 30;
constexpr int kNodeH = 30;
constexpr int kGroupGap = 10;
constexpr int kStripGap = 16;
constexpr int kStripH = 72;
constexpr int kPalette = 8;
constexpr double kLabelSlackPx = 40;  // how far right a crowded label may move from its mark

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0) s.resize(s.size() - 2);
  return s;
}

std::string times(int64_t a) { return " data-t=\"" + std::to_string(a) + "\""; }
std::string times(int64_t a, int64_t b) { return " data-t=\"" + std::to_string(a) + " " + std::to_string(b) + "\""; }

std::string title_of(const std::string& t) { return t.empty() ? "" : "<title>" + xml_escape(t) + "</title>"; }

// "c3": the owner's colour; "t3": its light tint, for what a client merely believed.
std::string colour_class(int64_t owner, const char* prefix = "c") {
  return owner < 0 ? std::string(prefix) + "x" : prefix + std::to_string((owner - 1 + kPalette * 1000) % kPalette);
}

struct LaneBox {
  int y = 0;
  int h = 0;
};

// One row of labels above the lanes: a label that would overlap one already placed moves
// right a little; one that would have to move further is hidden until a zoom makes room
// (the script places the row again at every view, and counts the hidden ones as "+N" on
// the label before them).
class LabelRow {
 public:
  // The x to draw at, or a negative number when the label does not fit.
  double place(double want, const std::string& text) {
    const double w = 7.0 * static_cast<double>(text.size()) + 6;
    const double x = std::max(want, right_ + 2);
    // Far from its mark a label would point at the wrong moment.
    if (x + w > kWidth + 20 || x - want > kLabelSlackPx) return -1;
    right_ = x + w;
    return x;
  }

 private:
  double right_ = -1e9;
};

class Svg {
 public:
  Svg(const Timeline& t, const ChartOptions& o) : t_(t), o_(o) { layout(); }

  std::string render() {
    out_ += "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" viewBox=\"0 0 " + std::to_string(kWidth) +
            " " + std::to_string(height_) + "\" width=\"" + std::to_string(kWidth) + "\" height=\"" +
            std::to_string(height_) + "\" role=\"img\" aria-label=\"Timeline of the run\">\n";
    out_ += "<defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
            "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#fff4d6\"/>"
            "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#efc860\" stroke-width=\"2\"/></pattern>"
            "<pattern id=\"hatch-dark\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
            "patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"#eef0f2\"/>"
            "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"6\" stroke=\"#b4bac2\" stroke-width=\"2\"/></pattern>"
            "<pattern id=\"hatch-key\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\" "
            "patternTransform=\"rotate(-45)\"><rect width=\"5\" height=\"5\" fill=\"#fff\"/>"
            "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"5\" stroke=\"#9aa3ad\" stroke-width=\"1.5\"/></pattern>"
            "<marker id=\"arrow\" viewBox=\"0 0 8 8\" refX=\"7\" refY=\"4\" markerWidth=\"7\" markerHeight=\"7\" "
            "orient=\"auto-start-reverse\"><path d=\"M0 0 L8 4 L0 8 z\" fill=\"#3a4656\"/></marker>"
            "<clipPath id=\"plotclip\"><rect x=\"" + std::to_string(kLabelW) + "\" y=\"0\" width=\"" +
            std::to_string(kWidth - kLabelW) + "\" height=\"" + std::to_string(height_) + "\"/></clipPath></defs>\n";
    lane_backgrounds();
    axis();
    out_ += "<g class=\"plot\" clip-path=\"url(#plotclip)\">\n";
    faults();
    for (const auto& l : t_.lanes) lane(l);
    marks();
    highlights();
    strip();
    out_ += "</g>\n";
    lane_labels();
    out_ += "<rect class=\"select\" x=\"0\" y=\"0\" width=\"0\" height=\"" + std::to_string(plot_bottom_) + "\"/>\n";
    out_ += "</svg>\n";
    return std::move(out_);
  }

  int grid_bottom() const { return plot_bottom_; }

 private:
  void layout() {
    int y = kLanesTop;
    LaneKind prev = LaneKind::Client;
    for (const auto& l : t_.lanes) {
      if (l.kind == LaneKind::Node && prev != LaneKind::Node && y > kLanesTop) y += kGroupGap;
      const int h = l.kind == LaneKind::Node ? kNodeH : o_.op_boxes ? kOpLaneH : kClientH;
      boxes_[l.id] = {y, h};
      y += h;
      prev = l.kind;
    }
    plot_bottom_ = y;
    strip_top_ = t_.waits.empty() ? y : y + kStripGap;
    height_ = (t_.waits.empty() ? y : strip_top_ + kStripH + 14) + 8;
  }

  double x(int64_t t) const {
    return kLabelW + static_cast<double>(t) * kPlotW / static_cast<double>(std::max<int64_t>(t_.end_ns, 1));
  }

  // A bar from a to b; `min_w` keeps an instant visible at any zoom.
  void rect(int64_t a, int64_t b, double y, double h, const std::string& cls, const std::string& title,
            double min_w = 1.0, const std::string& extra = "") {
    out_ += "<rect class=\"" + cls + "\"" + times(a, b) + (min_w != 1.0 ? " data-w=\"" + num(min_w) + "\"" : "") +
            extra + " x=\"" + num(x(a)) + "\" y=\"" + num(y) + "\" width=\"" + num(std::max(x(b) - x(a), min_w)) +
            "\" height=\"" + num(h) + "\"";
    out_ += title.empty() ? "/>\n" : ">" + title_of(title) + "</rect>\n";
  }

  void vline(int64_t t, double y0, double y1, const std::string& cls) {
    out_ += "<line class=\"" + cls + "\"" + times(t) + " x1=\"" + num(x(t)) + "\" y1=\"" + num(y0) + "\" x2=\"" +
            num(x(t)) + "\" y2=\"" + num(y1) + "\"/>\n";
  }

  void text(double px, double y, const std::string& cls, const std::string& s, const char* anchor = "start") {
    out_ += "<text class=\"" + cls + "\" x=\"" + num(px) + "\" y=\"" + num(y) + "\" text-anchor=\"" + anchor + "\">" +
            xml_escape(s) + "</text>\n";
  }

  // A label in one of the rows above the lanes, at time t.
  void row_label(LabelRow& row, int64_t t, double y, const std::string& cls, const std::string& s) {
    const double px = row.place(x(t), s);
    out_ += "<text class=\"" + cls + "\"" + times(t) + " x=\"" + num(px < 0 ? x(t) : px) + "\" y=\"" + num(y) + "\"" +
            (px < 0 ? " style=\"display:none\"" : "") + ">" + xml_escape(s) + "</text>\n";
  }

  void lane_backgrounds() {
    bool odd = false;
    for (const auto& l : t_.lanes) {
      const auto b = boxes_.at(l.id);
      out_ += "<rect class=\"" + std::string(odd ? "bg odd" : "bg") + "\" x=\"0\" y=\"" + std::to_string(b.y) +
              "\" width=\"" + std::to_string(kWidth) + "\" height=\"" + std::to_string(b.h) + "\"/>\n";
      odd = !odd;
    }
    if (!t_.waits.empty()) {
      out_ += "<rect class=\"bg strip-bg\" x=\"0\" y=\"" + std::to_string(strip_top_) + "\" width=\"" +
              std::to_string(kWidth) + "\" height=\"" + std::to_string(kStripH) + "\"/>\n";
    }
  }

  void lane_labels() {
    text(kLabelW - 10, kAxisH + kNoteRowH - 5, "rowlabel", "faults", "end");
    text(kLabelW - 10, kAxisH + 2 * kNoteRowH - 5, "rowlabel", "violations", "end");
    for (const auto& l : t_.lanes) {
      const auto b = boxes_.at(l.id);
      const double mid = b.y + b.h / 2.0 + 4;
      const char* cls = l.kind == LaneKind::Node ? "lanelabel node" : "lanelabel";
      out_ += "<g class=\"lane-label\">";
      if (l.note.empty()) {
        text(kLabelW - 10, mid, cls, l.label, "end");
      } else {
        text(kLabelW - 10, mid - 5, cls, l.label, "end");
        text(kLabelW - 10, mid + 7, "lanenote", l.note, "end");
      }
      out_ += "</g>\n";
    }
    if (!t_.waits.empty()) {
      text(kLabelW - 48, strip_top_ + kStripH / 2.0 - 3, "lanelabel", "waits for", "end");
      text(kLabelW - 48, strip_top_ + kStripH / 2.0 + 11, "lanelabel", "the lock", "end");
      for (const auto& [ms, label] : strip_ticks_) text(kLabelW - 6, wait_y(ms) + 4, "tick", label, "end");
    }
  }

  // Ticks for the first view; the script writes them again for every other.
  void axis() {
    const int64_t step = o_.event_axis ? std::max<int64_t>(tick_step_ns(t_.end_ns, 10), 1'000'000)
                                       : tick_step_ns(t_.end_ns, 10);
    const int top = kAxisH - 4;
    out_ += "<g class=\"ticks\">\n";
    for (int64_t t = 0; t <= t_.end_ns; t += step) {
      vline(t, top, plot_bottom_, "grid");
      const std::string label = o_.event_axis ? std::to_string(t / 1'000'000) : tick_label(t, step, t_.end_ns);
      out_ += "<text class=\"tick\"" + times(t) + " x=\"" + num(x(t)) + "\" y=\"" + std::to_string(top - 6) +
              "\" text-anchor=\"" + (x(t) - kLabelW < 20 ? "start" : "middle") + "\">" + xml_escape(label) + "</text>\n";
    }
    out_ += "</g>\n<rect class=\"axis-hit\" x=\"" + std::to_string(kLabelW) + "\" y=\"0\" width=\"" +
            std::to_string(kPlotW) + "\" height=\"" + std::to_string(kAxisH) + "\"><title>Drag along the time axis to "
            "zoom into that span</title></rect>\n";
  }

  std::pair<int, int> span_of(const std::vector<std::string>& lanes) const {
    int top = plot_bottom_, bottom = kLanesTop;
    if (lanes.empty()) return {kLanesTop, plot_bottom_};
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
      const std::string title = f.label + " " + (f.lanes.empty() ? "(whole world)" : "on " + join(f.lanes)) + " [" +
                                checker::format_seconds(f.begin_ns) + ", " + checker::format_seconds(f.end_ns) + "]" +
                                (f.sentence.empty() ? "" : "\n" + f.sentence);
      const std::vector<std::string> all = f.lanes.empty() ? std::vector<std::string>{""} : f.lanes;
      for (const auto& id : all) {
        auto [top, bottom] = id.empty() ? span_of({}) : span_of({id});
        if (top >= bottom) continue;
        rect(f.begin_ns, f.end_ns, top, bottom - top, "fault f-" + f.kind, title, 3);
      }
      const int y = kAxisH + kNoteRowH - 5;
      out_ += "<line class=\"fault-span\"" + times(f.begin_ns, f.end_ns) + " data-w=\"3\" x1=\"" + num(x(f.begin_ns)) +
              "\" y1=\"" + std::to_string(y + 2) + "\" x2=\"" + num(std::max(x(f.end_ns), x(f.begin_ns) + 3)) +
              "\" y2=\"" + std::to_string(y + 2) + "\"/>\n";
      row_label(fault_labels_, f.begin_ns, y - 2, "fault-label", f.label + (f.lanes.empty() ? "" : " · " + join(f.lanes)));
    }
  }

  void lane(const Lane& l) {
    const auto b = boxes_.at(l.id);
    out_ += "<g class=\"lane\" data-lane=\"" + xml_escape(l.id) + "\">\n";
    if (l.kind == LaneKind::Node) {
      for (const auto& k : l.keys) {
        const bool expired = k.cls == "key-expired";
        rect(k.begin_ns, k.end_ns, b.y + 7, 16, expired ? "key-expired" : "key " + colour_class(k.owner), k.title);
        if (!expired && x(k.end_ns) - x(k.begin_ns) > 64 && k.owner >= 0 && k.merged == 1) {
          bar_text(k, b.y + 19, "keylabel", checker::process_label(k.owner));
        }
      }
    } else if (o_.op_boxes) {
      for (const auto& op : l.ops) {
        rect(op.begin_ns, op.end_ns, b.y + 6, 18, "opbox " + op.cls, op.title, 2);
        if (!op.text.empty()) bar_text(op, b.y + 19, "optext", op.text);
      }
    } else {
      for (const auto& h : l.holds) rect(h.begin_ns, h.end_ns, b.y + 5, 9, "hold " + colour_class(h.owner, "t"), h.title);
      for (const auto& s : l.sections) rect(s.begin_ns, s.end_ns, b.y + 16, 14, "cs " + colour_class(s.owner), s.title);
      for (const auto& o : l.ops) rect(o.begin_ns, o.end_ns, b.y + 32, 4, "op " + o.cls, o.title, 1.5);
    }
    out_ += "</g>\n";
  }

  // Text inside a bar, shown by the script only while the bar is wide enough for it.
  void bar_text(const Bar& bar, double y, const char* cls, const std::string& s) {
    const double room = x(bar.end_ns) - x(bar.begin_ns);
    // A numbered operation ("#3 write 2") shows at least its number where the rest does not fit.
    const std::string brief = s.rfind('#', 0) == 0 ? s.substr(0, s.find(' ')) : "";
    const auto fits = [&](const std::string& t) { return room >= 6.2 * static_cast<double>(t.size()) + 6; };
    const std::string shown = fits(s) ? s : !brief.empty() && fits(brief) ? brief : s;
    out_ += "<text class=\"" + std::string(cls) + "\"" + times(bar.begin_ns, bar.end_ns) + " data-dx=\"4\" data-full=\"" +
            xml_escape(s) + "\"" + (brief.empty() ? "" : " data-brief=\"" + xml_escape(brief) + "\"") + " x=\"" +
            num(x(bar.begin_ns) + 4) + "\" y=\"" + num(y) + "\"" + (fits(shown) ? "" : " style=\"display:none\"") +
            ">" + xml_escape(shown) + "</text>\n";
  }

  void marks() {
    for (const auto& m : t_.marks) {
      if (m.kind == "deadline") {
        auto it = boxes_.find(m.lane);
        if (it == boxes_.end()) continue;
        const auto b = it->second;
        out_ += "<g class=\"deadline\"" + times(m.at_ns) + " transform=\"translate(" + num(x(m.at_ns)) + ",0)\">" +
                title_of(m.title) + "<line x1=\"0\" y1=\"" + std::to_string(b.y + 2) + "\" x2=\"0\" y2=\"" +
                std::to_string(b.y + b.h - 2) + "\"/><path d=\"M-4 " + std::to_string(b.y + 1) + " h8 l-4 5 z\"/></g>\n";
      } else if (m.kind == "failover") {
        auto to = boxes_.find(m.to_lane);
        if (to == boxes_.end()) continue;
        auto from = boxes_.find(m.lane);
        const double y1 = to->second.y + to->second.h / 2.0;
        const double y0 = from != boxes_.end() ? from->second.y + from->second.h / 2.0 : kLanesTop;
        out_ += "<g class=\"failover\"" + times(m.at_ns) + " transform=\"translate(" + num(x(m.at_ns)) + ",0)\">" +
                title_of(m.title) + "<line x1=\"0\" y1=\"" + num(y0) + "\" x2=\"0\" y2=\"" + num(y1) +
                "\" marker-end=\"url(#arrow)\"/><circle cx=\"0\" cy=\"" + num(y0) + "\" r=\"3\"/></g>\n";
        row_label(fault_labels_, m.at_ns, kAxisH + kNoteRowH - 7, "fault-label failover-label", m.label);
      }
    }
  }

  void highlights() {
    // In time order, numbered, so that "violation 3 of 16" and n/p follow the run.
    std::vector<const Highlight*> order;
    for (const auto& hl : t_.highlights) order.push_back(&hl);
    std::stable_sort(order.begin(), order.end(),
                     [](const Highlight* a, const Highlight* b) { return a->begin_ns < b->begin_ns; });
    const int label_y = kAxisH + 2 * kNoteRowH - 5;
    int i = 0;
    for (const Highlight* p : order) {
      const Highlight& hl = *p;
      auto [top, bottom] = span_of(hl.lanes);
      out_ += "<g class=\"violation\" data-property=\"" + xml_escape(hl.property) + "\" data-i=\"" +
              std::to_string(++i) + "\" data-begin=\"" + std::to_string(hl.begin_ns) + "\" data-end=\"" +
              std::to_string(hl.end_ns) + "\">\n";
      const std::string label = hl.label.empty() ? hl.property : hl.label;
      if (hl.end_ns > hl.begin_ns && !hl.cause) {
        rect(hl.begin_ns, hl.end_ns, top - 2, bottom - top + 4, "overlap", hl.title, 2);
      } else {
        if (hl.cause) rect(hl.begin_ns, hl.end_ns, top - 2, bottom - top + 4, "cause", hl.title, 2);
        const int64_t at = hl.end_ns;
        vline(at, top - 2, bottom + 2, "marker");
        // The diamond goes on the lane of whoever did it: the first lane named.
        for (const auto& id : hl.lanes) {
          auto it = boxes_.find(id);
          if (it == boxes_.end()) continue;
          const double cy = it->second.y + it->second.h / 2.0;
          out_ += "<path class=\"marker-head\"" + times(at) + " transform=\"translate(" + num(x(at)) + ",0)\" d=\"M0 " +
                  num(cy - 7) + " l7 7 l-7 7 l-7 -7 z\">" + title_of(hl.title) + "</path>\n";
          if (hl.cause) break;
        }
      }
      row_label(violation_labels_, hl.cause ? hl.end_ns : hl.begin_ns, label_y, "violation-label", label);
      out_ += "</g>\n";
    }
  }

  // Jepsen's latency view of the lock: one point per acquire, at the time it was asked
  // for, as high as it waited (log scale), coloured by how it ended.
  void strip() {
    if (t_.waits.empty()) return;
    int64_t longest = 1, shortest = INT64_MAX;
    for (const auto& w : t_.waits) {
      longest = std::max(longest, w.end_ns - w.begin_ns);
      shortest = std::min(shortest, w.end_ns - w.begin_ns);
    }
    // Whole decades around the waits, at least two apart so that the scale reads.
    const int lo = std::max(-1, static_cast<int>(std::floor(std::log10(std::max<double>(shortest, 1e5) / 1e6))));
    const int hi = std::max(lo + 2, static_cast<int>(std::ceil(std::log10(std::max<double>(longest, 1e5) / 1e6))));
    lo_ms_ = std::pow(10.0, lo);
    hi_ms_ = std::pow(10.0, hi);
    for (int d : {lo, (lo + hi) / 2, hi}) {
      if (d == (lo + hi) / 2 && (d == lo || d == hi)) continue;
      const double ms = std::pow(10.0, d);
      const std::string label = ms < 1 ? num(ms) + "ms" : ms < 1000 ? num(ms) + "ms" : num(ms / 1000) + "s";
      strip_ticks_.push_back({ms, label});
      out_ += "<line class=\"strip-grid\" x1=\"" + std::to_string(kLabelW) + "\" y1=\"" + num(wait_y(ms)) + "\" x2=\"" +
              std::to_string(kWidth) + "\" y2=\"" + num(wait_y(ms)) + "\"/>\n";
    }
    out_ += "<g class=\"waits\">\n";
    for (const auto& w : t_.waits) {
      const double ms = static_cast<double>(w.end_ns - w.begin_ns) / 1e6;
      out_ += "<circle class=\"w w-" + w.outcome + "\" data-of=\"" + xml_escape(w.lane) + "\"" + times(w.begin_ns) +
              " cx=\"" + num(x(w.begin_ns)) + "\" cy=\"" + num(wait_y(ms)) + "\" r=\"2.6\">" + title_of(w.title) +
              "</circle>\n";
    }
    out_ += "</g>\n";
  }

  double wait_y(double ms) const {
    const double lo = std::log10(lo_ms_), hi = std::log10(hi_ms_);
    const double f = (std::log10(std::max(ms, lo_ms_)) - lo) / std::max(hi - lo, 1e-9);
    return strip_top_ + kStripH - 6 - f * (kStripH - 12);
  }

  const Timeline& t_;
  const ChartOptions& o_;
  std::map<std::string, LaneBox> boxes_;
  LabelRow fault_labels_, violation_labels_;
  int plot_bottom_ = 0;
  int strip_top_ = 0;
  int height_ = 0;
  double lo_ms_ = 0.1, hi_ms_ = 1000;
  std::vector<std::pair<double, std::string>> strip_ticks_;
  std::string out_;
};

std::string legend(const Timeline& t, const ChartOptions& o) {
  std::string out = "<div class=\"legend\">";
  if (o.op_boxes) {
    out += "<span><i class=\"sw sw-opbox\"></i>operation, from its call to its return</span>"
           "<span><i class=\"sw sw-opbox sw-info\"></i>outcome unknown</span>";
  } else {
    out += "<span><i class=\"sw sw-hold\"></i>client believes it holds the lock</span>"
           "<span><i class=\"sw sw-cs\"></i>critical section</span>"
           "<span><i class=\"sw sw-key\"></i>key on the server, coloured by owner</span>"
           "<span><i class=\"sw sw-expired\"></i>lease ran out, expiry not yet noticed</span>"
           "<span><i class=\"sw sw-deadline\"></i>lease deadline</span>"
           "<span><i class=\"sw sw-op\"></i><i class=\"sw sw-op sw-fail\"></i><i class=\"sw sw-op sw-info\"></i>"
           "operation: ok / failed / outcome unknown</span>";
  }
  out += "<span><i class=\"sw sw-fault\"></i>fault</span><span><i class=\"sw sw-bad\"></i>violation</span>";
  bool failover = false;
  for (const auto& m : t.marks) failover = failover || m.kind == "failover";
  if (failover) out += "<span><i class=\"sw sw-failover\"></i>failover: the key moves to the promoted server</span>";
  if (!t.waits.empty()) {
    out += "<span><i class=\"sw sw-dot sw-dot-ok\"></i><i class=\"sw sw-dot sw-dot-fail\"></i>"
           "<i class=\"sw sw-dot sw-dot-info\"></i>wait for the lock: got it / gave up / no answer</span>";
  }
  return out + "<span class=\"muted\">Hover any mark for details.</span></div>\n";
}

std::string toolbar(const Timeline& t) {
  const size_t n = t.highlights.size();
  std::string out =
      "<div class=\"zoombar\" role=\"toolbar\" aria-label=\"Zoom\">"
      "<button type=\"button\" data-act=\"in\" title=\"Zoom in (+, Ctrl+wheel, double-click)\">+</button>"
      "<button type=\"button\" data-act=\"out\" title=\"Zoom out (-)\">−</button>"
      "<button type=\"button\" data-act=\"left\" title=\"Earlier (←)\">←</button>"
      "<button type=\"button\" data-act=\"right\" title=\"Later (→)\">→</button>"
      "<button type=\"button\" data-act=\"reset\" title=\"The whole run (0)\">whole run</button>";
  if (n > 0) {
    out += "<span class=\"sep\"></span><button type=\"button\" data-act=\"prev\" title=\"Previous violation (p)\">◀</button>"
           "<span class=\"vnav\">violation <b class=\"vcur\">–</b> of <b class=\"vcount\">" + std::to_string(n) +
           "</b></span><button type=\"button\" data-act=\"next\" title=\"Next violation (n)\">▶</button>";
  }
  return out + "<span class=\"viewtext muted\"></span></div>\n";
}

constexpr const char* kChartStyle = R"CSS(
.chart{overflow-x:auto;border:1px solid var(--line);border-radius:6px;padding:0 0 6px;max-width:1250px;outline:none}
.chart:focus-visible{box-shadow:0 0 0 2px #8fb3f0}
.zoombar{display:flex;align-items:center;gap:6px;padding:6px 8px;border-bottom:1px solid var(--line);background:#fafbfc;font-size:12.5px;position:sticky;left:0}
.zoombar button{font:inherit;min-width:28px;padding:2px 8px;border:1px solid #b8c0ca;border-radius:4px;background:#fff;cursor:pointer}
.zoombar .sep{width:10px}.zoombar .viewtext{margin-left:auto}
svg.timeline{display:block;font-size:12px;user-select:none;cursor:grab}
svg.timeline.dragging{cursor:grabbing}
.bg{fill:#fff}.bg.odd{fill:#f6f8fa}.strip-bg{fill:#fbfbfd}
.grid{stroke:#e3e7ec;stroke-width:1}
.tick{fill:var(--muted);font-size:11px}
.axis-hit{fill:transparent;cursor:col-resize}
.select{fill:#2f6fdf;fill-opacity:.12;stroke:#2f6fdf;stroke-width:1;pointer-events:none}
.rowlabel{fill:var(--muted);font-size:11px;font-style:italic}
.lanelabel{fill:var(--fg);font-weight:600;font-size:12.5px}.lanelabel.node{fill:#3a4656}
.lanenote{fill:var(--muted);font-size:10.5px}
.hold{stroke-width:1}.cs{stroke:none}.key{stroke:none}
.key-expired{fill:url(#hatch-key);stroke:#9aa3ad;stroke-width:1;stroke-dasharray:2 2}
.keylabel,.optext{fill:#fff;font-size:11px;font-weight:600;pointer-events:none}
.optext{fill:#1d232b;font-weight:500}
.op{stroke:none}.op-ok{fill:#7b8794}.op-fail{fill:#c3cad3}.op-info{fill:#9c6ade}
.opbox{stroke-width:1}.opbox.op-ok{fill:#dde6f5;stroke:#5b7fc0}.opbox.op-fail{fill:#eef0f2;stroke:#aab2bc}.opbox.op-info{fill:#ece3f8;stroke:#9c6ade;stroke-dasharray:3 2}
.opbox.lin{fill:#d6efdf;stroke:#17803d}.opbox.stuck{fill:#fde8e8;stroke:var(--red);stroke-width:2}
.fault{fill:url(#hatch);fill-opacity:.85;stroke:#d9a52f;stroke-width:1;stroke-dasharray:3 2}
.f-crash{fill:url(#hatch-dark);stroke:#6b7480}.f-partition{stroke:#7a5cc2}
.fault-span{stroke:#d9a52f;stroke-width:3}
.fault-label{fill:#8a5a00;font-size:11.5px;font-weight:600}.failover-label{fill:#3a4656}
.deadline line{stroke:#3a4656;stroke-width:1.5;stroke-dasharray:3 2}.deadline path{fill:#3a4656}
.failover line{stroke:#3a4656;stroke-width:2}.failover circle{fill:#3a4656}
.overlap{fill:var(--red);fill-opacity:.22;stroke:var(--red);stroke-width:2;cursor:pointer}
.cause{fill:none;stroke:var(--red);stroke-width:1.5;stroke-dasharray:5 3;cursor:pointer}
.marker{stroke:var(--red);stroke-width:2}.marker-head{fill:var(--red);cursor:pointer}
.violation.current .overlap{fill-opacity:.4;stroke-width:3}.violation.current .marker{stroke-width:3}
.violation-label{fill:var(--red);font-size:11.5px;font-weight:700}
.violation.current .violation-label{text-decoration:underline}
.strip-grid{stroke:#e3e7ec;stroke-width:1;stroke-dasharray:2 3}
.w{stroke:#fff;stroke-width:.6}.w-ok{fill:#5b7fc0}.w-fail{fill:#e07b00}.w-info{fill:#9c6ade}
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
.sw-expired{background:repeating-linear-gradient(-45deg,#fff 0 3px,#9aa3ad 3px 4px);border:1px dashed #9aa3ad}
.sw-deadline{width:2px;height:14px;border-left:2px dashed #3a4656;border-radius:0}
.sw-failover{width:3px;height:14px;background:#3a4656}
.sw-opbox{background:#dde6f5;border:1px solid #5b7fc0}.sw-opbox.sw-info{background:#ece3f8;border:1px dashed #9c6ade}
.sw-op{background:#7b8794;height:4px;width:12px}.sw-fail{background:#c3cad3}.sw-info{background:#9c6ade}.sw-fault{background:repeating-linear-gradient(45deg,#fff4d6 0 3px,#e9b949 3px 5px);border:1px dashed #d9a52f}
.sw-bad{background:rgba(208,25,31,.22);border:2px solid var(--red)}
.sw-dot{width:7px;height:7px;border-radius:50%}.sw-dot-ok{background:#5b7fc0}.sw-dot-fail{background:#e07b00}.sw-dot-info{background:#9c6ade}
)CSS";

// The view is [a, b] in nanoseconds; every element with data-t is placed from it.
constexpr const char* kChartScript = R"JS(
(function(){
var chart=document.querySelector('.chart[data-end]');if(!chart)return;
var svg=chart.querySelector('svg.timeline'),NS='http://www.w3.org/2000/svg';
var X0=+chart.getAttribute('data-plot-x'),W=+chart.getAttribute('data-plot-w'),END=+chart.getAttribute('data-end');
var TOP=+chart.getAttribute('data-grid-top'),BOTTOM=+chart.getAttribute('data-grid-bottom'),VW=+chart.getAttribute('data-width');
var EVENTS=chart.getAttribute('data-unit')==='events',MIN=EVENTS?4e6:1000,SLACK=40;
var view={a:0,b:END},items=[];
svg.querySelectorAll('[data-t]').forEach(function(el){if(el.parentNode.classList.contains('ticks'))return;var t=el.getAttribute('data-t').split(' ');
items.push({el:el,tag:el.tagName.toLowerCase(),a:+t[0],b:t.length>1?+t[1]:null,w:+(el.getAttribute('data-w')||0),
dx:+(el.getAttribute('data-dx')||0),row:el.classList.contains('fault-label')?1:el.classList.contains('violation-label')?2:0});});
var ticks=svg.querySelector('g.ticks');
function X(t){return X0+(t-view.a)*W/(view.b-view.a);}
function T(x){return view.a+(x-X0)/W*(view.b-view.a);}
function cl(x){return Math.max(X0-20,Math.min(X0+W+20,x));}
function f2(x){return x.toFixed(2);}
function place(it){var el=it.el,x=X(it.a);
if(it.tag==='rect'){var x1=it.b===null?x:X(it.b),l=cl(x),r=cl(x1);el.setAttribute('x',f2(l));el.setAttribute('width',f2(Math.max(r-l,it.w||1)));}
else if(it.tag==='line'){if(it.b===null){el.setAttribute('x1',f2(x));el.setAttribute('x2',f2(x));}else{var s=cl(x);el.setAttribute('x1',f2(s));el.setAttribute('x2',f2(Math.max(cl(X(it.b)),s+it.w)));}}
else if(it.tag==='circle'){el.setAttribute('cx',f2(x));}
else if(it.tag==='text'){if(it.row)return;if(it.b!==null){var l2=Math.max(x,X0),r2=Math.min(X(it.b),X0+W),room=r2-l2,full=el.getAttribute('data-full'),br=el.getAttribute('data-brief');
el.setAttribute('x',f2(l2+it.dx));var txt=room>=full.length*6.2+6?full:br&&room>=br.length*6.2+6?br:null;
if(txt!==null&&el.textContent!==txt)el.textContent=txt;el.style.display=txt===null?'none':'';}else el.setAttribute('x',f2(x+it.dx));}
else el.setAttribute('transform','translate('+f2(x)+',0)');}
function rows(){[1,2].forEach(function(row){var right=-1e9,last=null;
function done(){if(last)last.el.textContent=last.text+(last.more?' +'+last.more:'');}
items.filter(function(it){return it.row===row;}).sort(function(p,q){return p.a-q.a;}).forEach(function(it){
if(it.text===undefined)it.text=it.el.textContent;it.more=0;var x=X(it.a),w=it.text.length*7+6;
if(x<X0-w||x>X0+W){it.el.style.display='none';return;}
var at=Math.max(x,right+2);if(at+w>VW+20||at-x>SLACK){it.el.style.display='none';if(last)last.more++;return;}
done();it.el.style.display='';it.el.setAttribute('x',f2(at));right=at+w+24;last=it;});done();});}
function stepOf(span){for(var m=1;;m*=10){var fs=[1,2,5];for(var i=0;i<3;i++){if(fs[i]*m*10>=span)return fs[i]*m;}}}
function dec(st,unit){return Math.max(0,Math.min(9,Math.ceil(-Math.log10(st/unit)-1e-9)));}
function lab(t,st){if(EVENTS)return String(Math.round(t/1e6));if(t===0)return '0';
if(view.b<2e9)return (t/1e6).toFixed(dec(st,1e6))+'ms';return (t/1e9).toFixed(dec(st,1e9))+'s';}
function when(t){if(EVENTS)return 'event '+Math.round(t/1e6);return t<2e9&&view.b<2e9?(t/1e6).toFixed(3)+'ms':(t/1e9).toFixed(6).replace(/0+$/,'').replace(/\.$/,'')+'s';}
function drawTicks(){while(ticks.firstChild)ticks.removeChild(ticks.firstChild);
var st=stepOf(view.b-view.a);if(EVENTS)st=Math.max(st,1e6);
for(var t=Math.ceil(view.a/st)*st;t<=view.b;t+=st){var x=f2(X(t)),ln=document.createElementNS(NS,'line');
ln.setAttribute('class','grid');ln.setAttribute('x1',x);ln.setAttribute('x2',x);ln.setAttribute('y1',TOP);ln.setAttribute('y2',BOTTOM);ticks.appendChild(ln);
var tx=document.createElementNS(NS,'text');tx.setAttribute('class','tick');tx.setAttribute('x',x);tx.setAttribute('y',TOP-6);
tx.setAttribute('text-anchor',X(t)-X0<20?'start':'middle');tx.textContent=lab(t,st);ticks.appendChild(tx);}}
var vtext=chart.querySelector('.viewtext');
function layout(){items.forEach(place);rows();drawTicks();
chart.setAttribute('data-view',Math.round(view.a)+' '+Math.round(view.b));
if(vtext)vtext.textContent=view.a===0&&view.b===END?'the whole run':'showing '+when(view.a)+' – '+when(view.b)+' of '+when(END);}
function setView(a,b){if(b-a<MIN){var c=(a+b)/2;a=c-MIN/2;b=c+MIN/2;}
if(b-a>=END){a=0;b=END;}else{if(a<0){b-=a;a=0;}if(b>END){a-=b-END;b=END;}}view.a=a;view.b=b;layout();}
function zoomAt(f,x){var t=T(Math.max(X0,Math.min(X0+W,x)));setView(t-(t-view.a)*f,t+(view.b-t)*f);}
function pan(px){var d=px/W*(view.b-view.a);setView(view.a+d,view.b+d);}
var vs=[].slice.call(svg.querySelectorAll('g.violation')),cur=-1,vcur=chart.querySelector('.vcur');
function go(i){if(!vs.length)return;cur=(i%vs.length+vs.length)%vs.length;
vs.forEach(function(v){v.classList.remove('current');});var g=vs[cur];g.classList.add('current');
var a=+g.getAttribute('data-begin'),b=+g.getAttribute('data-end'),w=Math.max(b>a?(b-a)*4:END/40,MIN*4),c=(a+b)/2;
setView(c-w/2,c+w/2);if(vcur)vcur.textContent=String(cur+1);chart.setAttribute('data-current',String(cur+1));}
var dragged=false;
vs.forEach(function(g,i){g.addEventListener('click',function(){if(!dragged)go(i);});});
function act(a){if(a==='in')zoomAt(0.5,X0+W/2);else if(a==='out')zoomAt(2,X0+W/2);else if(a==='reset')setView(0,END);
else if(a==='left')pan(-W/4);else if(a==='right')pan(W/4);else if(a==='next')go(cur+1);else if(a==='prev')go(cur<0?-1:cur-1);}
chart.querySelectorAll('.zoombar button').forEach(function(b){b.addEventListener('click',function(){act(b.getAttribute('data-act'));});});
function sx(ev){var r=svg.getBoundingClientRect();return (ev.clientX-r.left)*VW/r.width;}
function sy(ev){var r=svg.getBoundingClientRect();return (ev.clientY-r.top)*VW/r.width;}
svg.addEventListener('wheel',function(ev){if(ev.ctrlKey||ev.metaKey){ev.preventDefault();zoomAt(Math.pow(1.002,ev.deltaY),sx(ev));}
else if(ev.shiftKey||Math.abs(ev.deltaX)>Math.abs(ev.deltaY)){ev.preventDefault();pan(ev.shiftKey?ev.deltaY:ev.deltaX);}},{passive:false});
svg.addEventListener('dblclick',function(ev){ev.preventDefault();zoomAt(ev.shiftKey?2:0.5,sx(ev));});
var drag=null,sel=svg.querySelector('rect.select');
svg.addEventListener('mousedown',function(ev){if(ev.button!==0)return;var x=sx(ev);if(x<X0-2)return;
chart.focus({preventScroll:true});dragged=false;drag={x:x,last:x,axis:sy(ev)<TOP+4,moved:false};if(drag.axis){sel.setAttribute('x',f2(x));sel.setAttribute('width','0');}else svg.classList.add('dragging');ev.preventDefault();});
window.addEventListener('mousemove',function(ev){if(!drag)return;var x=sx(ev);if(Math.abs(x-drag.x)>3)drag.moved=true;
if(drag.axis){sel.setAttribute('x',f2(Math.min(x,drag.x)));sel.setAttribute('width',f2(Math.abs(x-drag.x)));}else{pan(drag.last-x);drag.last=x;}});
window.addEventListener('mouseup',function(ev){if(!drag)return;var d=drag;drag=null;dragged=d.moved;svg.classList.remove('dragging');
if(d.axis){sel.setAttribute('width','0');var x=sx(ev);if(Math.abs(x-d.x)>3)setView(T(Math.min(x,d.x)),T(Math.max(x,d.x)));}});
document.addEventListener('keydown',function(ev){if(ev.ctrlKey||ev.metaKey||ev.altKey)return;var tg=ev.target&&ev.target.tagName;if(tg==='INPUT'||tg==='TEXTAREA')return;
var k=ev.key,focused=chart.contains(document.activeElement),m={'+':'in','=':'in','-':'out','_':'out','0':'reset','n':'next','p':'prev'};
if(m[k]){act(m[k]);ev.preventDefault();}else if(focused&&(k==='ArrowLeft'||k==='ArrowRight')){act(k==='ArrowLeft'?'left':'right');ev.preventDefault();}});
document.addEventListener('lockstep-show',function(e){var a=e.detail.a,b=e.detail.b,w=Math.max((b-a)*4,MIN*4),c=(a+b)/2;setView(c-w/2,c+w/2);});
layout();chart.setAttribute('data-zoom-ready','1');
})();
)JS";

}  // namespace

std::string render_timeline_chart(const Timeline& t, const ChartOptions& o) {
  Svg svg(t, o);
  const std::string drawn = svg.render();
  return "<div class=\"chart\" tabindex=\"0\" data-end=\"" + std::to_string(std::max<int64_t>(t.end_ns, 1)) +
         "\" data-plot-x=\"" + std::to_string(kLabelW) + "\" data-plot-w=\"" + std::to_string(kPlotW) +
         "\" data-width=\"" + std::to_string(kWidth) + "\" data-grid-top=\"" + std::to_string(kAxisH - 4) +
         "\" data-grid-bottom=\"" + std::to_string(svg.grid_bottom()) + "\"" +
         (o.event_axis ? " data-unit=\"events\"" : "") + ">\n" + toolbar(t) + drawn + "</div>\n" + legend(t, o);
}

const char* timeline_style() { return kChartStyle; }
const char* timeline_script() { return kChartScript; }
int timeline_plot_width() { return kPlotW; }

}  // namespace lockstep::reports
