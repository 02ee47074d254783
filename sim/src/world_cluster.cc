// Redis Cluster in the simulated world: the layout (slot ranges, roles, epochs) and how
// it changes — a master flagged FAIL, its replica elected after Redis's delay, the old
// master rejoining as a replica. Every node holds its own copy of the layout, handed over
// when the world changes it; a node paused through a failover keeps the old copy until
// its pause ends, so it goes on answering for slots it no longer owns meanwhile.
//
// Simplifications, each on purpose: gossip reaches every reachable node at once, and one
// observer (the "cluster-bus" process) stands for the masters' failure reports — it
// counts the masters alive, not the reports each one sent.
#include <cstdio>

#include "lockstep/cluster_slot.h"
#include "lockstep/sim/world.h"

namespace lockstep::sim {

void World::enable_cluster() {
  ClusterLayout l;
  split_slots(node_count(), l.slot_first, l.slot_last);
  // create assigns every master an epoch of its own, 1..masters.
  l.current_epoch = static_cast<uint64_t>(node_count());
  cluster_ = std::move(l);
  for (int shard = 0; shard < node_count(); ++shard) {
    for (int pid : shards_[shard].members) add_cluster_member(pid);
  }
  push_cluster(-1);
}

void World::add_cluster_member(int pid) {
  ClusterLayout::Member m;
  char id[41];
  std::snprintf(id, sizeof id, "%016llx%016llx%08llx", static_cast<unsigned long long>(cluster_rng_.next()),
                static_cast<unsigned long long>(cluster_rng_.next()),
                static_cast<unsigned long long>(cluster_rng_.next() & 0xffffffffULL));
  m.id = id;
  m.host = procs_[pid]->name;
  m.shard = procs_[pid]->shard;
  m.master = pid == shards_[m.shard].master;
  m.config_epoch = m.master ? static_cast<uint64_t>(m.shard + 1) : 0;
  cluster_->members.push_back(m);
  cluster_pids_.push_back(pid);
}

int World::shard_of_key(std::string_view key) const {
  if (!cluster_) return 0;
  return cluster_->shard_of_slot(key_hash_slot(key));
}

int World::cluster_member(int pid) const {
  for (size_t i = 0; i < cluster_pids_.size(); ++i) {
    if (cluster_pids_[i] == pid) return static_cast<int>(i);
  }
  return -1;
}

void World::push_cluster(int except) {
  for (size_t i = 0; i < cluster_pids_.size(); ++i) {
    if (cluster_pids_[i] != except) procs_[cluster_pids_[i]]->redis->set_cluster(*cluster_, static_cast<int>(i));
  }
}

bool World::cluster_majority_reachable(int shard) const {
  int alive = 0;
  for (int s = 0; s < node_count(); ++s) {
    const Process& m = *procs_[shards_[s].master];
    if (s != shard && !m.crashed && sched_.now() >= m.paused_until_ns) ++alive;
  }
  return alive >= node_count() / 2 + 1;
}

int64_t World::cluster_mark_failed(int shard) {
  const int master = shards_[shard].master;
  cluster_->members[cluster_member(master)].failed = true;
  push_cluster(master);  // a node never flags itself
  // The replicas' ranks: 0 for the most up-to-date; the best one's delay decides.
  int best = -1;
  for (int r : shards_[shard].members) {
    const Process& p = *procs_[r];
    if (r == master || p.crashed || p.master_pid != master) continue;
    if (best < 0 || p.applied > procs_[best]->applied) best = r;
  }
  if (best < 0) return -1;
  const int64_t ms = 500 + cluster_rng_.between(0, 500);  // rank 0: no extra second
  return ms * 1'000'000;
}

// A master flagged FAIL that answers again before anyone replaced it (it had no replica
// to elect) is cleared, as Redis clears a reachable master that still serves its slots.
void World::cluster_clear_failed(int shard) {
  auto& m = cluster_->members[cluster_member(shards_[shard].master)];
  if (!m.failed) return;
  m.failed = false;
  push_cluster(-1);
}

// The winner bumps the cluster's epoch and claims its master's slots with it; the old
// master keeps its FAIL flag until it comes back as a replica.
void World::cluster_failed_over(int shard, int old_master, int new_master) {
  (void)shard;
  ClusterLayout& l = *cluster_;
  auto& winner = l.members[cluster_member(new_master)];
  winner.master = true;
  winner.failed = false;
  winner.config_epoch = ++l.current_epoch;
  l.members[cluster_member(old_master)].master = false;
  push_cluster(old_master);
}

void World::cluster_rejoined(int pid) {
  auto& m = cluster_->members[cluster_member(pid)];
  m.failed = false;
  m.master = shards_[procs_[pid]->shard].master == pid;
  push_cluster(-1);
}

}  // namespace lockstep::sim
