#include "history_scan.h"

#include <algorithm>
#include <map>

#include "lockstep/checker/invariants.h"

namespace lockstep::reports {

using checker::Event;
using checker::EventType;
using checker::format_seconds;
using checker::process_label;

std::vector<Hold> lock_holds(const checker::History& h) {
  std::vector<Hold> out;
  std::map<int64_t, size_t> open;  // process -> its hold in `out`
  for (const auto& e : h.events) {
    if (e.process < 0) continue;
    const bool crashed = e.type == EventType::Truth && e.f == checker::truth::kCrash && e.node < 0;
    if (e.type == EventType::Ok && checker::is_acquire(e.f)) {
      if (!open.count(e.process)) {
        open[e.process] = out.size();
        out.push_back({e.process, e.time_ns, -1});
      }
    } else if ((e.type != EventType::Truth && e.type != EventType::Invoke && checker::is_release(e.f)) || crashed) {
      if (auto it = open.find(e.process); it != open.end()) {
        out[it->second].end_ns = e.time_ns;
        open.erase(it);
      }
    }
  }
  return out;
}

std::vector<Hold> other_holders(const std::vector<Hold>& holds, int64_t process, int64_t t) {
  std::vector<Hold> out;
  for (const auto& hd : holds) {
    if (hd.process != process && hd.begin_ns < t && hd.covers(t)) out.push_back(hd);
  }
  return out;
}

std::vector<LostWrite> lost_writes(const checker::History& h, const std::string& resource_key) {
  struct Read {
    int64_t at_ns;
    nlohmann::json value;
  };
  struct Write {
    int64_t process, at_ns;
    nlohmann::json value;
  };
  std::map<int64_t, Read> last_read;  // process -> its latest ok read of the resource
  std::vector<Write> writes;          // ok writes, in completion order
  std::map<std::pair<int64_t, int64_t>, nlohmann::json> invoked;  // (process, thread) -> written value
  std::vector<LostWrite> out;
  for (const auto& e : h.events) {
    if (e.key != resource_key || e.process < 0) continue;
    if (e.f == "read" && e.type == EventType::Ok) last_read[e.process] = {e.time_ns, e.value};
    if (e.f != "write") continue;
    if (e.type == EventType::Invoke) invoked[{e.process, e.thread}] = e.value;
    if (e.type != EventType::Ok) continue;
    const nlohmann::json value = e.value.is_null() ? invoked[{e.process, e.thread}] : e.value;
    auto read = last_read.find(e.process);
    if (read != last_read.end()) {
      // The latest other write that landed after this process read: the update it erased.
      for (auto w = writes.rbegin(); w != writes.rend(); ++w) {
        if (w->at_ns <= read->second.at_ns) break;
        if (w->process == e.process) continue;
        LostWrite lw{e.process, e.time_ns, read->second.at_ns, w->process, w->at_ns, ""};
        lw.sentence = process_label(e.process) + " wrote " + value.dump() + " at " + format_seconds(e.time_ns) +
                      ", computed from its read of " + read->second.value.dump() + " at " +
                      format_seconds(read->second.at_ns) + "; " + process_label(w->process) + "'s write of " +
                      w->value.dump() + " at " + format_seconds(w->at_ns) +
                      " came in between and was overwritten: its update was lost.";
        out.push_back(std::move(lw));
        break;
      }
    }
    writes.push_back({e.process, e.time_ns, value});
  }
  return out;
}

}  // namespace lockstep::reports
