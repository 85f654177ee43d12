// The names of the supervisor's /metrics families (supervisor/metrics.h), shared by the files
// that count into them.
#pragma once

namespace tandem::supervisor::metric {

inline constexpr char kCommands[] = "tandem_commands_total";
inline constexpr char kRefused[] = "tandem_refused_commands_total";
inline constexpr char kMalformed[] = "tandem_malformed_messages_total";
inline constexpr char kResponses[] = "tandem_responses_total";
inline constexpr char kDropped[] = "tandem_responses_dropped_total";
inline constexpr char kPeekLatency[] = "tandem_peek_latency_seconds";
inline constexpr char kRuntimeUp[] = "tandem_runtime_up";
inline constexpr char kSegmentBytes[] = "tandem_segment_bytes";
inline constexpr char kStalled[] = "tandem_index_parts_stalled";
inline constexpr char kLoopTurns[] = "tandem_supervisor_loop_turns_total";
inline constexpr char kControllerEvents[] = "tandem_controller_events_total";
inline constexpr char kReady[] = "tandem_ready";
inline constexpr char kReconciled[] = "tandem_dataflows_reconciled_total";
inline constexpr char kObservers[] = "tandem_observer_sessions";
inline constexpr char kRuntimeStalled[] = "tandem_runtime_stalled";
inline constexpr char kRuntimeStalls[] = "tandem_runtime_stalls_total";
inline constexpr char kPeeksInFlight[] = "tandem_peeks_in_flight";
inline constexpr char kHttpConnections[] = "tandem_http_connections_total";
inline constexpr char kHttpOpen[] = "tandem_http_connections_open";
inline constexpr char kOneShotsBuilt[] = "tandem_one_shot_dataflows_built_total";
inline constexpr char kOneShotsRunning[] = "tandem_one_shot_dataflows_running";
inline constexpr char kOneShotLatency[] = "tandem_one_shot_build_to_answer_seconds";
inline constexpr char kHoldGap[] = "tandem_index_hold_gap";
inline constexpr char kHoldGapMax[] = "tandem_index_hold_gap_max";
inline constexpr char kWrites[] = "tandem_writes_total";
inline constexpr char kWriteSeconds[] = "tandem_write_seconds";
inline constexpr char kWritesInFlight[] = "tandem_writes_in_flight";
inline constexpr char kSubscribes[] = "tandem_subscribes";
inline constexpr char kSubscribeBatches[] = "tandem_subscribe_batches_total";
inline constexpr char kSubscribeRows[] = "tandem_subscribe_rows_total";
inline constexpr char kSubscribeEnds[] = "tandem_subscribe_ends_total";
inline constexpr char kSubscribeLag[] = "tandem_subscribe_lag";
inline constexpr char kSubscribeLagMax[] = "tandem_subscribe_lag_max";
inline constexpr char kLocalReaders[] = "tandem_local_readers";
inline constexpr char kLocalReadersCleared[] = "tandem_local_readers_cleared_total";
inline constexpr char kReaderTableRepairs[] = "tandem_reader_table_repairs_total";
inline constexpr char kPeekRingRecords[] = "tandem_peek_ring_records_total";
inline constexpr char kStepSeconds[] = "tandem_runtime_step_seconds";
inline constexpr char kWorkerBusy[] = "tandem_runtime_worker_busy_seconds_total";
inline constexpr char kWorkerWaiting[] = "tandem_runtime_worker_waiting_seconds_total";

}  // namespace tandem::supervisor::metric
