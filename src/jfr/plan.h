/* plan.h - precompiled field plans: how to walk one event type's fields.
 *
 * Internal to src/jfr. A plan is compiled once per chunk and event type from
 * the chunk's metadata: fields in wire order become skip ops, the fields of
 * interest become capture ops writing a varint into a slot, inline structs
 * are flattened, and the plan stops after the last capture (the event's size
 * tells where the next one starts). Running it is the event loop's hot path.
 * jfr_plan is caller storage (jfr_plan_init / jfr_plan_cleanup). */
#ifndef JP_JFR_PLAN_H
#define JP_JFR_PLAN_H

#include <stdbool.h>
#include <stdint.h>

#include "jfr/meta.h"

enum {
    JFR_OP_END = 0,
    JFR_OP_CAP,    /* varint -> slots[slot] */
    JFR_OP_VARINT, /* skip one varint */
    JFR_OP_BYTE,
    JFR_OP_F32,
    JFR_OP_F64,
    JFR_OP_STRING,
    JFR_OP_FIELD, /* anything else (arrays, deep structs): generic skip of fields[field] */
};

typedef struct jfr_op {
    uint8_t op;
    uint8_t slot;
    uint32_t field;
} jfr_op;

#define JFR_PLAN_SLOTS 8

/* One step of a varints-only plan: skip `skip` integers, capture the next. */
typedef struct jfr_fop {
    uint8_t skip, slot;
} jfr_fop;

typedef struct jfr_plan {
    jfr_op *ops;
    size_t n, cap;
    uint8_t captured; /* bit per slot that the plan fills */
    /* Only varints (captured or skipped): the common shape, run by a loop
     * without a switch; skipped ones land in slot JFR_PLAN_SLOTS - 1. */
    bool varints_only;
    uint8_t nvar;
    uint8_t var_slot[JFR_PLAN_SLOTS * 4];
    /* The same plan as steps, for jfr_plan_run_fast: set when the fields up
     * to the last capture are all integers (any number of them). */
    bool fast;
    uint8_t nfop;
    jfr_fop fop[JFR_PLAN_SLOTS];
} jfr_plan;

void jfr_plan_init(jfr_plan *pl);
void jfr_plan_cleanup(jfr_plan *pl);

/* Compiles the plan of class cls; caps[i] is the field index to capture
 * into slot i, or JFR_NONE. A field that is not a varint or pool key cannot
 * be captured: its slot stays unset (see pl->captured). */
void jfr_plan_compile(jfr_plan *pl, const jfr_meta *m, uint32_t cls, const uint32_t *caps,
                      int ncaps);

/* Runs the plan over one event's fields [p, end). Returns false when a
 * field runs past end or does not decode. */
static inline bool jfr_plan_run(const jfr_plan *pl, const jfr_meta *m, const uint8_t *p,
                                const uint8_t *end, uint64_t *slots)
{
    static const jfr_where quiet = {0};
    if (pl->varints_only) {
        for (unsigned i = 0; i < pl->nvar; i++)
            if (JFR_UNLIKELY(!jfr_varint(&p, end, &slots[pl->var_slot[i]])))
                return false;
        return true;
    }
    for (const jfr_op *op = pl->ops;; op++) {
        switch (op->op) {
        case JFR_OP_END:
            return true;
        case JFR_OP_CAP:
            if (!jfr_varint(&p, end, &slots[op->slot]))
                return false;
            break;
        case JFR_OP_VARINT:
            if (!jfr_varint_skip(&p, end))
                return false;
            break;
        case JFR_OP_BYTE:
            if (!jfr_bytes_skip(&p, end, 1))
                return false;
            break;
        case JFR_OP_F32:
            if (!jfr_bytes_skip(&p, end, 4))
                return false;
            break;
        case JFR_OP_F64:
            if (!jfr_bytes_skip(&p, end, 8))
                return false;
            break;
        case JFR_OP_STRING:
            if (!jfr_str_skip(&p, end))
                return false;
            break;
        default:
            if (jfr_skip_field(m, &m->fields[op->field], &p, end, 1, &quiet))
                return false;
            break;
        }
    }
}

/* One step of a `fast` plan: skip, then read. */
static inline __attribute__((always_inline)) bool jfr_step(const jfr_fop *f, const uint8_t **pp,
                                                           const uint8_t *end, const uint8_t *lim,
                                                           uint64_t *slots)
{
    if (f->skip && JFR_UNLIKELY(!jfr_varints_skip(pp, end, lim, f->skip)))
        return false;
    return jfr_varint_w(pp, end, lim, &slots[f->slot]);
}

/* Runs the steps of a `fast` plan: integers are skipped and read by word
 * operations (jfr_varints_skip, jfr_varint_w) where `lim` (the end of the
 * readable bytes, at or past `end`) allows. Two steps (a stack, then a
 * value or a state: alloc, cpu, wall, locks) run without the loop: 5 %
 * fewer instructions an allocation event. */
static inline __attribute__((always_inline)) bool jfr_steps_run(const jfr_fop *fop, unsigned nfop,
                                                                const uint8_t *p,
                                                                const uint8_t *end,
                                                                const uint8_t *lim, uint64_t *slots)
{
    if (nfop == 2) {
        if (JFR_UNLIKELY(!jfr_step(&fop[0], &p, end, lim, slots)))
            return false;
        return jfr_step(&fop[1], &p, end, lim, slots);
    }
    for (unsigned i = 0; i < nfop; i++)
        if (JFR_UNLIKELY(!jfr_step(&fop[i], &p, end, lim, slots)))
            return false;
    return true;
}

#endif
