// tandem-bench's scenarios, one file each; every one starts its own replicas and stops them.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tools/bench/bench.h"
#include "tools/bench/results.h"

namespace tandem::bench {

// A heavy maintenance load for isolation's loaded cells: the dataflows sent, the indexes that must
// be built (write frontier 2) before measuring, the index whose write frontier measures its
// progress and the input updates each of its ticks stands for.
struct HeavyLoadSpec {
  std::string what;  // for the progress line
  std::vector<pb::Command> dataflows;
  std::vector<std::string> built;
  std::string tracked;
  double updates_per_tick = 0;
  std::uint64_t build_keys = 0;  // sizes the build's time limit
  std::string shm_size;          // the replica's segment unless --shm-size (empty: the default)
};

// Isolation's machinery: one replica (solo or two-runtime) with the point-lookup index; peek
// latency idle, then with `load` running: cells "<mode>/idle" and "<mode>/loaded" (the loaded one
// with the load's updates_per_s), each cell's latencies into `distributions` when given.
// `prefix` starts the progress lines.
std::vector<Cell> IsolationCells(const Options& o, bool two_runtime, const HeavyLoadSpec& load,
                                 const std::string& prefix,
                                 std::map<std::string, std::vector<double>>* distributions);
// The headline's heavy load: a key_value source (--heavy-keys, --heavy-updates per tick) indexed by
// key and reduced (count, sum) by key % --groups, indexed.
HeavyLoadSpec HeadlineLoad(const Options& o);
// Point-lookup peek latency, {solo, two-runtime} x {idle, loaded}; each cell's latencies into
// `distributions` (for Plot).
Scenario Isolation(const Options& o, std::map<std::string, std::vector<double>>& distributions);
// The CDF of each isolation cell's latencies: a data file, a gnuplot script beside it, the PNG.
void Plot(const std::string& png, const std::map<std::string, std::vector<double>>& dists);
Scenario LookupScale(const Options& o);
Scenario Ingest(const Options& o);
Scenario Memory(const Options& o);
// "hydration": CreateDataflow -> first readable time of a key_value snapshot's index,
// 10^6 and 10^7 keys, each --workers count, with the maintenance runtime's peak memory while it
// builds over its settled size.
Scenario Hydration(const Options& o);
Scenario RedisScenario(const Options& o);
// The ZeroMQ round-trip floor (redis.cc): closed-loop round trips of a 64-byte message to an echo,
// one hop (client -> echo over TCP) or two (a forwarder in between, the supervisor's topology).
std::vector<double> ZmqFloor(const Options& o, bool forwarder);
// Point-lookup peek latency, plain vs CURVE on the controller endpoint, in the same run.
Scenario CurveScenario(const Options& o);
// Point-lookup peek latency with and without the peek fast path (DESIGN §14), in the same run.
Scenario PeekPathScenario(const Options& o);
// A redis-server of the run's own preloaded with `keys` keys (k0 ...): closed-loop GETs of random
// keys, cell "redis-get". `prefix` starts the progress lines.
Cell RedisGet(const Options& o, std::uint64_t keys, const std::string& prefix);
// One-shot aggregate queries (create, peek, drop) over a 10^5- and a 10^6-row index,
// {solo, two-runtime} x {idle, loaded}, and the memory one takes while it runs (DESIGN §8).
Scenario SlowPath(const Options& o);
// "join": throughput and memory of an incremental join of a fact stream with a changing dimension
// (both sides sources, or the dimension an imported index); "join-isolation": isolation's
// two-runtime cells with the join as the heavy load. --join-part picks.
std::vector<Scenario> Join(const Options& o);
// The join scenario's "sources" variant for another scenario (ingest's join cells): its dataflows
// on ids u<base+1..base+5>, its loads (--join-* flags), and `o` with the segment it needs.
struct JoinLoad {
  JoinTarget target;
  KeyValue fact, dim;
  Options options;
};
JoinLoad JoinSourcesLoad(const Options& o, std::uint64_t base);
// "write" (DESIGN §9): acknowledged durable writes/s into tables through the endpoint (1 and
// --write-clients writer sessions, batches of 1 and 100 rows, plain and upsert), write-to-visible
// latency while peeks run, and Redis SET/MSET (appendfsync everysec and always) in the same run.
Scenario WriteScenario(const Options& o);
// "subscribe" (DESIGN §10): freshness of a subscribe's stream (publication of a time in the segment
// -> its SubscribeBatch received), 1 and --subscribers sessions, {solo, two-runtime} x {idle,
// loaded}, and the heavy load's updates/s with --subscribers subscribers vs none.
Scenario SubscribeScenario(const Options& o);
// "local" (DESIGN §11): point lookups read in place by tandem::LocalReader from this process
// (latency at the latest time and at a given time, lookups/s from 1 and 2 threads), idle and loaded
// with isolation's heavy load, beside the network peek of the same index, Redis GET, LMDB mdb_get
// in-process and the raw TCP loopback round trip, over the same --local-keys keys.
Scenario LocalScenario(const Options& o);
// "replicas" (DESIGN §13): point-lookup peeks/s and latency through one controller::ReplicaSet in
// front of 1, 2 and 3 replicas with the same index, 8 peeks in flight; every peek to all replicas
// (first answer) and each to one (round-robin), with how busy the machine was.
Scenario ReplicasScenario(const Options& o);
// "sql" (DESIGN §15): SELECT v FROM t WHERE k = <key> through tandem-frontend (its local replica
// peeks t's primary-key index), beside the same lookup as `tandem-ctl peek` (an observer session's
// Peek of that index on that replica) and PostgreSQL 15's own point SELECT, over the same
// --sql-keys rows loaded through SQL, in --sql-rounds alternating rounds; ratio cells
// frontend/peek and frontend/postgres.
Scenario SqlScenario(const Options& o);

}  // namespace tandem::bench
