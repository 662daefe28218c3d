#include "agent/queue.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void agent_qitem_free(agent_qitem *it)
{
    if (!it)
        return;
    free(it->id);
    free(it->data);
    free(it);
}

void agent_queue_init(agent_queue *q, size_t limit_bytes)
{
    memset(q, 0, sizeof *q);
    q->limit = limit_bytes;
}

void agent_queue_cleanup(agent_queue *q)
{
    for (size_t i = 0; i < q->count; i++)
        agent_qitem_free(q->items[(q->head + i) % q->cap]);
    free(q->items);
    memset(q, 0, sizeof *q);
}

static void count_drop(agent_queue *q, const agent_qitem *it)
{
    q->dropped_batches++;
    q->dropped_bytes += it->len;
    if (it->data_ns && (!q->oldest_dropped_ns || it->data_ns < q->oldest_dropped_ns))
        q->oldest_dropped_ns = it->data_ns;
}

static void grow(agent_queue *q)
{
    if (q->count < q->cap)
        return;
    size_t ncap = q->cap ? q->cap * 2 : 16;
    // NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers
    agent_qitem **n = jp_xcalloc(ncap, sizeof *n);
    for (size_t i = 0; i < q->count; i++)
        // NOLINTNEXTLINE(clang-analyzer-core.DivideZero): count <= cap, so count > 0 means cap > 0
        n[i] = q->items[(q->head + i) % q->cap];
    free(q->items);
    q->items = n;
    q->cap = ncap;
    q->head = 0;
}

static agent_qitem *pop_front(agent_queue *q)
{
    agent_qitem *it = q->items[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    q->bytes -= it->len;
    return it;
}

size_t agent_queue_push(agent_queue *q, agent_qitem *it)
{
    size_t dropped = 0;
    while (q->count && q->bytes + it->len > q->limit) {
        agent_qitem *old = pop_front(q);
        count_drop(q, old);
        agent_qitem_free(old);
        dropped++;
    }
    if (q->bytes + it->len > q->limit) {
        /* larger than what is left next to the batch in flight */
        count_drop(q, it);
        agent_qitem_free(it);
        return dropped + 1;
    }
    grow(q);
    q->items[(q->head + q->count) % q->cap] = it;
    q->count++;
    q->bytes += it->len;
    return dropped;
}

agent_qitem *agent_queue_take(agent_queue *q)
{
    if (!q->count)
        return NULL;
    agent_qitem *it = pop_front(q);
    q->bytes += it->len; /* still ours until done */
    q->inflight_bytes += it->len;
    return it;
}

void agent_queue_done(agent_queue *q, const agent_qitem *it)
{
    q->bytes -= it->len;
    q->inflight_bytes -= it->len;
}

void agent_queue_requeue(agent_queue *q, agent_qitem *it)
{
    q->inflight_bytes -= it->len;
    grow(q);
    q->head = (q->head + q->cap - 1) % q->cap;
    q->items[q->head] = it;
    q->count++;
}
