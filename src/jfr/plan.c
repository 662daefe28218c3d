/* plan.c - compiling field plans from a chunk's metadata. */
#include "jfr/plan.h"

#include <stdlib.h>
#include <string.h>

#include "base/xalloc.h"

void jfr_plan_init(jfr_plan *pl)
{
    memset(pl, 0, sizeof *pl);
}

void jfr_plan_cleanup(jfr_plan *pl)
{
    free(pl->ops);
    memset(pl, 0, sizeof *pl);
}

static void plan_emit(jfr_plan *pl, uint8_t op, uint8_t slot, uint32_t field)
{
    pl->ops = jp_xgrow(pl->ops, &pl->cap, pl->n + 1, sizeof *pl->ops);
    pl->ops[pl->n++] = (jfr_op){.op = op, .slot = slot, .field = field};
}

/* Emits ops that skip one value of field fi, flattening inline structs. */
static void plan_skip(jfr_plan *pl, const jfr_meta *m, uint32_t fi, int depth)
{
    const jfr_field *f = &m->fields[fi];
    if (f->cpool && !f->array) {
        plan_emit(pl, JFR_OP_VARINT, 0, 0);
        return;
    }
    if (f->array || f->cls == JFR_NONE) {
        plan_emit(pl, JFR_OP_FIELD, 0, fi);
        return;
    }
    const jfr_class *c = &m->classes[f->cls];
    switch (c->prim) {
    case JFR_P_VARINT:
        plan_emit(pl, JFR_OP_VARINT, 0, 0);
        break;
    case JFR_P_BYTE:
        plan_emit(pl, JFR_OP_BYTE, 0, 0);
        break;
    case JFR_P_F32:
        plan_emit(pl, JFR_OP_F32, 0, 0);
        break;
    case JFR_P_F64:
        plan_emit(pl, JFR_OP_F64, 0, 0);
        break;
    case JFR_P_STRING:
        plan_emit(pl, JFR_OP_STRING, 0, 0);
        break;
    case JFR_P_STRUCT:
        /* Flatten small structs; deep or huge ones fall back to the generic
         * skipper, which enforces the nesting cap. */
        if (depth < 8 && pl->n + c->nfields < JFR_MAX_PLAN_OPS) {
            for (uint32_t i = 0; i < c->nfields; i++)
                plan_skip(pl, m, c->field0 + i, depth + 1);
            break;
        }
        plan_emit(pl, JFR_OP_FIELD, 0, fi);
        break;
    default:
        plan_emit(pl, JFR_OP_FIELD, 0, fi);
        break;
    }
}

static bool plan_capturable(const jfr_meta *m, const jfr_field *f)
{
    if (f->array)
        return false;
    return f->cpool || (f->cls != JFR_NONE && m->classes[f->cls].prim == JFR_P_VARINT);
}

/* The steps of a plan whose ops up to the end are integers only. */
static void plan_steps(jfr_plan *pl)
{
    pl->fast = true;
    pl->nfop = 0;
    unsigned skip = 0;
    for (size_t i = 0; pl->fast && i + 1 < pl->n; i++) {
        const jfr_op *op = &pl->ops[i];
        if (op->op == JFR_OP_VARINT && skip < 255) {
            skip++;
        } else if (op->op == JFR_OP_CAP && pl->nfop < JFR_PLAN_SLOTS) {
            pl->fop[pl->nfop++] = (jfr_fop){.skip = (uint8_t)skip, .slot = op->slot};
            skip = 0;
        } else {
            pl->fast = false;
        }
    }
}

void jfr_plan_compile(jfr_plan *pl, const jfr_meta *m, uint32_t cls, const uint32_t *caps,
                      int ncaps)
{
    pl->n = 0;
    pl->captured = 0;
    const jfr_class *c = &m->classes[cls];
    /* The plan ends at the last field anyone wants. */
    uint32_t last = 0;
    bool any = false;
    for (int s = 0; s < ncaps; s++) {
        if (caps[s] == JFR_NONE || !plan_capturable(m, &m->fields[caps[s]]))
            continue;
        any = true;
        if (caps[s] - c->field0 + 1 > last)
            last = caps[s] - c->field0 + 1;
    }
    for (uint32_t i = 0; any && i < last; i++) {
        uint32_t fi = c->field0 + i;
        int slot = -1;
        for (int s = 0; s < ncaps; s++)
            if (caps[s] == fi && plan_capturable(m, &m->fields[fi]))
                slot = s;
        if (slot >= 0) {
            plan_emit(pl, JFR_OP_CAP, (uint8_t)slot, 0);
            pl->captured |= (uint8_t)(1u << slot);
        } else {
            plan_skip(pl, m, fi, 0);
        }
    }
    plan_emit(pl, JFR_OP_END, 0, 0);
    plan_steps(pl);
    pl->varints_only = pl->n - 1 <= sizeof pl->var_slot;
    pl->nvar = 0;
    for (size_t i = 0; pl->varints_only && i + 1 < pl->n; i++) {
        const jfr_op *op = &pl->ops[i];
        if (op->op != JFR_OP_CAP && op->op != JFR_OP_VARINT)
            pl->varints_only = false;
        else
            pl->var_slot[pl->nvar++] = op->op == JFR_OP_CAP ? op->slot : JFR_PLAN_SLOTS - 1;
    }
}
