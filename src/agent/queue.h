/* queue.h - the agent's bounded upload queue of encoded batches.
 *
 * A FIFO with a byte limit: adding a batch that does not fit drops the
 * oldest queued batches first (a batch larger than the whole limit is dropped
 * itself), and every drop is counted (batches, bytes, and the data time of
 * the oldest dropped batch) so the next batch can tell the server what was
 * lost. A batch being sent stays counted in the bytes until it is done.
 *
 * Ownership: the queue owns the items' data (heap) from agent_queue_push on;
 * agent_queue_take hands the front item to the caller, who either frees it
 * (agent_qitem_free) or gives it back with agent_queue_requeue. Not
 * thread-safe: the uploader holds its lock around every call. */
#ifndef JP_AGENT_QUEUE_H
#define JP_AGENT_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct agent_qitem {
    char *id;      /* batch id (heap) */
    uint8_t *data; /* zstd-compressed JSON (heap) */
    size_t len;
    int64_t data_ns; /* start of the oldest window it carries (0: none) */
    unsigned attempts;
} agent_qitem;

void agent_qitem_free(agent_qitem *it);

typedef struct agent_queue {
    agent_qitem **items; /* ring buffer */
    size_t head, count, cap;
    size_t bytes;          /* queued + in flight */
    size_t inflight_bytes; /* taken, not yet finished */
    size_t limit;          /* byte limit */
    uint64_t dropped_batches, dropped_bytes;
    int64_t oldest_dropped_ns; /* min data_ns of dropped batches, 0 none */
} agent_queue;

void agent_queue_init(agent_queue *q, size_t limit_bytes);
void agent_queue_cleanup(agent_queue *q);

/* Adds an item at the back (the queue takes it), dropping the oldest to fit.
 * Returns the number of batches dropped by this call. */
size_t agent_queue_push(agent_queue *q, agent_qitem *it);

/* Takes the front item (NULL when empty); it stays counted in bytes. */
agent_qitem *agent_queue_take(agent_queue *q);
/* A taken item is done (sent or rejected): the caller frees it. */
void agent_queue_done(agent_queue *q, const agent_qitem *it);
/* A taken item goes back to the front for another try. */
void agent_queue_requeue(agent_queue *q, agent_qitem *it);

#endif
