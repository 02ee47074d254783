// The timeline is what the HTML report draws, worked out from a history before any SVG is
// written: one lane per client process and per Redis server, the lock as each client
// believed it held it, the key as each server really held it (until the lease it was set
// with ran out, not until expiry noticed), critical sections, faults as bands placed when
// they struck, failovers, how long each acquire waited, and every instance of every
// violation as a highlight. Keeping it a plain model lets tests check what the picture
// says without parsing SVG, and lets the writer cap detail on huge runs.
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
  std::string cls;     // what kind of bar, for styling: "hold", "cs", "key", "key-expired", "op-ok", ...
  std::string title;   // hover text
  int64_t merged = 1;  // bars drawn as this one when they were closer than a pixel
  std::string text = "";  // operations: what it did, "write 3", "read → 1" (drawn inside when it fits)
};

enum class LaneKind { Client, Aggregate, Node };

struct Lane {
  std::string id;  // "client-1", "node-1", "node-1-replica-1", "others": stable, used as data-lane
  std::string label;
  std::string note;  // a second line under the label: "master from 0.510s" after a failover
  LaneKind kind = LaneKind::Client;
  std::vector<Bar> holds;     // clients: acquire ok .. release completion / crash / end
  std::vector<Bar> sections;  // clients: cs-enter .. cs-exit
  std::vector<Bar> ops;       // clients: each operation, invoke .. completion
  std::vector<Bar> keys;      // nodes: key-set .. key-del / lease deadline / node crash
};

struct FaultBand {
  std::string kind;                // pause, crash, partition, clock-jump, ...
  std::string label;               // "pause 1.5s"
  std::string sentence;            // the whole fault and when it struck, for hover text
  std::vector<std::string> lanes;  // lane ids it touches; empty = the whole world
  int64_t begin_ns = 0;
  int64_t end_ns = 0;  // == begin_ns for instant faults (clock jumps)
};

// One instance of a violation. Every instance gets its own (all 16 overlaps of a run, not
// only the first the checker describes), so zooming in shows each.
struct Highlight {
  std::string property;            // the violated property
  std::vector<std::string> lanes;  // lanes it spans
  int64_t begin_ns = 0;
  int64_t end_ns = 0;  // == begin_ns: a marker at an instant (foreign unlock, the lost write)
  std::string title;
  std::string label;   // drawn in the violations row: "overlap 103ms", "lost write"
  // A cause drawn as a dashed outline from begin to end, with the marker at end: the
  // linearizability failure (the holder's acquire .. the acquire that could not be placed).
  bool cause = false;
};

// An instant worth a glance that is not itself a violation.
struct Mark {
  std::string kind;     // "deadline" (a lease ran out), "failover"
  std::string lane;     // where it is drawn (a failover: the old master)
  std::string to_lane;  // a failover: the server that took over
  int64_t at_ns = 0;
  std::string label;  // short, drawn beside it
  std::string title;  // the sentence, on hover
};

// One acquire as its client lived it: how long it waited for the lock (Jepsen's latency
// view of the lock's availability).
struct Wait {
  std::string lane;
  int64_t begin_ns = 0;
  int64_t end_ns = 0;
  std::string outcome;  // "ok", "fail", "info" (no answer: timed out, crashed, or the run ended)
  std::string title;
};

struct Timeline {
  int64_t end_ns = 0;  // right edge of the time axis
  std::vector<Lane> lanes;
  std::vector<FaultBand> faults;
  std::vector<Highlight> highlights;
  std::vector<Mark> marks;
  std::vector<Wait> waits;
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
  size_t max_waits = 2000;           // above this, the availability strip keeps the longest per pixel
};

Timeline build_timeline(const RunReport& r, const checker::History& h, const TimelineOptions& o = {});

// The name of the server behind node index `node`, as runs record it: the masters node-1 ..
// node-N first, then each master's replicas (node-1-replica-1, ...), from the scenario's
// topology ({"nodes", "replicas"}).
std::string server_name(const nlohmann::json& topology, int64_t node);

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
