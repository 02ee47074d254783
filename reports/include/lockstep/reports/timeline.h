// The timeline is what the HTML report draws, worked out from a history before any SVG is
// written: one lane per client process and per Redis node, the lock as each client
// believed it held it, the key as each node really held it, critical sections, faults as
// bands, and the violations as highlights. Keeping it a plain model lets tests check what
// the picture says without parsing SVG, and lets the writer cap detail on huge runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "lockstep/checker/history.h"
#include "lockstep/reports/report.h"

namespace lockstep::reports {

struct Bar {
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  int64_t owner = -1;  // whose lock or section: picks the colour; -1 = nobody in particular
  std::string cls;     // what kind of bar, for styling: "hold", "cs", "key", "op-ok", ...
  std::string title;   // hover text
  int64_t merged = 1;  // bars drawn as this one when they were closer than a pixel
};

enum class LaneKind { Client, Aggregate, Node };

struct Lane {
  std::string id;  // "client-1", "node-1", "others": stable, used as data-lane
  std::string label;
  LaneKind kind = LaneKind::Client;
  std::vector<Bar> holds;     // clients: acquire ok .. release completion / crash / end
  std::vector<Bar> sections;  // clients: cs-enter .. cs-exit
  std::vector<Bar> ops;       // clients: each operation, invoke .. completion
  std::vector<Bar> keys;      // nodes: key-set .. key-del / key-expire / node crash
};

struct FaultBand {
  std::string kind;                // pause, crash, partition, clock-jump, ...
  std::string label;               // "pause 1.5s"
  std::vector<std::string> lanes;  // lane ids it touches; empty = the whole world
  int64_t begin_ns = 0;
  int64_t end_ns = 0;  // == begin_ns for instant faults (clock jumps)
};

struct Highlight {
  std::string property;            // the violated property
  std::vector<std::string> lanes;  // lanes it spans
  int64_t begin_ns = 0;
  int64_t end_ns = 0;  // == begin_ns: a marker at an instant (foreign unlock)
  std::string title;
};

struct Timeline {
  int64_t end_ns = 0;  // right edge of the time axis
  std::vector<Lane> lanes;
  std::vector<FaultBand> faults;
  std::vector<Highlight> highlights;
  int64_t hidden_clients = 0;  // clients folded into the "others" lane
  std::vector<std::string> elided;  // sentences saying what was left out, for the reader
};

struct TimelineOptions {
  size_t max_client_lanes = 40;      // above this, only involved clients get their own lane
  size_t collapsed_client_lanes = 8;  // how many lanes to keep when collapsing
  int64_t plot_width_px = 1000;      // for merging bars narrower than a pixel apart
  size_t merge_above = 300;          // a row with more bars than this gets merged
  double merge_px = 1.0;             // bars closer than this many pixels become one
  bool ops = true;                   // draw each operation as a tick
};

Timeline build_timeline(const RunReport& r, const checker::History& h, const TimelineOptions& o = {});

// Readable axis ticks for [0, end_ns]: a 1-2-5 step giving about `target` ticks.
int64_t tick_step_ns(int64_t end_ns, int target = 10);
// "250ms", "1.5s": a tick label, in one unit for the whole axis.
std::string tick_label(int64_t t_ns, int64_t step_ns, int64_t end_ns);

// The minimal failing excerpt of the history around a violation: the events of the
// processes involved (and the nodes' and faults' ground truth) from the start of the
// overlapping sections to their end, one readable line each, capped.
struct Excerpt {
  std::string caption;  // what the excerpt covers
  std::vector<std::string> lines;
  size_t elided = 0;  // lines left out in the middle
};
Excerpt history_excerpt(const RunReport& r, const checker::History& h, size_t max_lines = 60);

// One event as an aligned line: "  1.013000s  client-2  ok     acquire  lock  "acquired"".
std::string format_event_line(const checker::Event& e);

}  // namespace lockstep::reports
