// Draws a Timeline as one zoomable chart: inline SVG (readable with no script at all:
// hover text is SVG <title>), a toolbar, and the legend. Every element placed in time
// carries its times in nanoseconds (data-t="begin end"), so the page's script can redraw
// any span of the run exactly: zoom and pan by mouse (Ctrl+wheel, drag, drag on the time
// axis, double-click) and keyboard (+ - arrows 0, n/p for the next/previous violation).
// Everything is in the page; it loads nothing.
#pragma once

#include <string>

#include "lockstep/reports/timeline.h"

namespace lockstep::reports {

struct ChartOptions {
  // Operations drawn as labelled boxes in the middle of each lane, the way Porcupine draws
  // them, instead of ticks under the lock's bars: for histories that are only operations.
  bool op_boxes = false;
  // Times are positions in the history (it recorded none): the axis counts events.
  bool event_axis = false;
};

// The toolbar, the SVG and the legend, in a <div class="chart">.
std::string render_timeline_chart(const Timeline& t, const ChartOptions& o = {});

// The style and script the chart needs; a page includes each once.
const char* timeline_style();
const char* timeline_script();

// Plot width in pixels at the first view, for TimelineOptions::plot_width_px.
int timeline_plot_width();

}  // namespace lockstep::reports
