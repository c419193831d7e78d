// Raw cnats loops: the baselines nats-bench measures the bridge against,
// written the way a C user of cnats would write them.
#ifndef NATS_BASELINES_H
#define NATS_BASELINES_H

#include <stdint.h>

// CLOCK_MONOTONIC in nanoseconds: the clock every loop here reads, which the
// Swift side of the harness reads too, so both pay the same for a timestamp.
int64_t nbl_now_ns(void);

// Publishes `count` messages of `payload_size` bytes to `subject` on one
// connection and receives them on another (an asynchronous subscription
// counting in its callback). Returns messages per second from the first
// publish to the last message received, or a negative value on error or
// when not all arrived within 60 s. `send_asap` selects immediate flushing.
double nbl_publish_subscribe_rate(const char *url, const char *subject, int count, int payload_size,
                                  int send_asap);

// Request/reply round trips with SendAsap on both connections: a responder
// connection replies to every request with its payload; the requester calls
// natsConnection_Request `count` times. Writes each round trip in
// nanoseconds to `round_trips` (`count` entries). Returns 0, or -1 on error.
int nbl_request_reply(const char *url, const char *subject, int count, int payload_size, double *round_trips);

// The cost of one natsConnection_Publish call of `payload_size` bytes to a
// subject nobody subscribes (batched mode), in nanoseconds per call, averaged
// over `count` calls. Returns a negative value on error.
double nbl_publish_call_ns(const char *url, const char *subject, int count, int payload_size);

#endif
