#include "nats_baselines.h"

#include <nats/nats.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int64_t nbl_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

// Connects to `url` with `send_asap`; returns NULL on error.
static natsConnection *connect_to(const char *url, int send_asap) {
    natsOptions *options = NULL;
    natsConnection *connection = NULL;
    if (natsOptions_Create(&options) != NATS_OK) return NULL;
    natsOptions_SetURL(options, url);
    natsOptions_SetSendAsap(options, send_asap != 0);
    natsOptions_SetNoEcho(options, true);
    if (natsConnection_Connect(&connection, options) != NATS_OK) connection = NULL;
    natsOptions_Destroy(options);
    return connection;
}

struct receive_count {
    // Relaxed is enough: the reader only waits for the number to reach a
    // target and reads no data the callback wrote.
    atomic_int received;
    atomic_llong last_ns;
};

// Counts each message and records when the latest one arrived.
static void on_counted(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure) {
    (void)nc;
    (void)sub;
    struct receive_count *count = closure;
    atomic_store_explicit(&count->last_ns, nbl_now_ns(), memory_order_relaxed);
    atomic_fetch_add_explicit(&count->received, 1, memory_order_relaxed);
    natsMsg_Destroy(msg);
}

double nbl_publish_subscribe_rate(const char *url, const char *subject, int count, int payload_size,
                                  int send_asap) {
    double rate = -1;
    struct receive_count received = {0, 0};
    natsConnection *publisher = connect_to(url, send_asap);
    natsConnection *subscriber = connect_to(url, send_asap);
    natsSubscription *subscription = NULL;
    char *payload = calloc(1, (size_t)payload_size);
    if (!publisher || !subscriber || !payload) goto done;
    if (natsConnection_Subscribe(&subscription, subscriber, subject, on_counted, &received) != NATS_OK) goto done;
    natsSubscription_SetPendingLimits(subscription, 10000000, 1 << 30);
    if (natsConnection_FlushTimeout(subscriber, 5000) != NATS_OK) goto done;
    int64_t started = nbl_now_ns();
    for (int i = 0; i < count; i++) {
        memcpy(payload, &i, sizeof i < (size_t)payload_size ? sizeof i : (size_t)payload_size);
        if (natsConnection_Publish(publisher, subject, payload, payload_size) != NATS_OK) goto done;
    }
    natsConnection_FlushTimeout(publisher, 5000);
    int64_t deadline = nbl_now_ns() + 60LL * 1000000000;
    while (atomic_load_explicit(&received.received, memory_order_relaxed) < count && nbl_now_ns() < deadline) {
        usleep(200);
    }
    if (atomic_load_explicit(&received.received, memory_order_relaxed) == count) {
        int64_t last = atomic_load_explicit(&received.last_ns, memory_order_relaxed);
        rate = (double)count / ((double)(last - started) / 1e9);
    }
done:
    if (subscription) {
        natsSubscription_Unsubscribe(subscription);
        natsSubscription_Destroy(subscription);
    }
    if (publisher) natsConnection_Destroy(publisher);
    if (subscriber) natsConnection_Destroy(subscriber);
    free(payload);
    return rate;
}

// Replies with the request's payload.
static void on_request(natsConnection *nc, natsSubscription *sub, natsMsg *msg, void *closure) {
    (void)sub;
    (void)closure;
    if (natsMsg_GetReply(msg)) {
        natsConnection_Publish(nc, natsMsg_GetReply(msg), natsMsg_GetData(msg), natsMsg_GetDataLength(msg));
    }
    natsMsg_Destroy(msg);
}

int nbl_request_reply(const char *url, const char *subject, int count, int payload_size, double *round_trips) {
    int result = -1;
    natsConnection *requester = connect_to(url, 1);
    natsConnection *responder = connect_to(url, 1);
    natsSubscription *subscription = NULL;
    char *payload = calloc(1, (size_t)payload_size);
    if (!requester || !responder || !payload) goto done;
    if (natsConnection_Subscribe(&subscription, responder, subject, on_request, NULL) != NATS_OK) goto done;
    if (natsConnection_FlushTimeout(responder, 5000) != NATS_OK) goto done;
    for (int i = 0; i < count; i++) {
        natsMsg *reply = NULL;
        int64_t started = nbl_now_ns();
        if (natsConnection_Request(&reply, requester, subject, payload, payload_size, 5000) != NATS_OK) goto done;
        round_trips[i] = (double)(nbl_now_ns() - started);
        natsMsg_Destroy(reply);
    }
    result = 0;
done:
    if (subscription) {
        natsSubscription_Unsubscribe(subscription);
        natsSubscription_Destroy(subscription);
    }
    if (requester) natsConnection_Destroy(requester);
    if (responder) natsConnection_Destroy(responder);
    free(payload);
    return result;
}

double nbl_publish_call_ns(const char *url, const char *subject, int count, int payload_size) {
    double cost = -1;
    natsConnection *publisher = connect_to(url, 0);
    char *payload = calloc(1, (size_t)payload_size);
    if (!publisher || !payload) goto done;
    int64_t started = nbl_now_ns();
    for (int i = 0; i < count; i++) {
        if (natsConnection_Publish(publisher, subject, payload, payload_size) != NATS_OK) goto done;
    }
    cost = (double)(nbl_now_ns() - started) / count;
    natsConnection_FlushTimeout(publisher, 5000);
done:
    if (publisher) natsConnection_Destroy(publisher);
    free(payload);
    return cost;
}
