#include "model/policy.h"

#include <stdio.h>
#include <string.h>

#include "base/timeutil.h"
#include "model/profile.h"

/* A temporary window is for an incident, not a back door to continuous
 * profiling: an end further out than this is refused as invalid. */
#define AGENT_UNTIL_MAX_NS (31LL * 24 * 3600 * JP_NS_PER_SEC)
#define AGENT_DELAY_MAX_NS (24LL * 3600 * JP_NS_PER_SEC)

void jp_policy_defaults_init(jp_policy_defaults *d)
{
    d->kinds = (1u << JP_KIND_CPU) | (1u << JP_KIND_ALLOC) | (1u << JP_KIND_LOCK);
    d->startup_delay_ns = 0;
    d->heap_min_ns = JP_HEAP_MIN_NS;
}

const char *jp_policy_mode_name(jp_policy_mode m)
{
    switch (m) {
    case JP_POLICY_CONTINUOUS:
        return "continuous";
    case JP_POLICY_TEMPORARY:
        return "temporary";
    case JP_POLICY_DISABLED:
        return "disabled";
    default:
        return "off";
    }
}

const char *jp_policy_threads_name(jp_policy_threads t)
{
    return t == JP_THREADS_HIGH ? "high" : t == JP_THREADS_LOW ? "low" : "off";
}

static const char *kv_get(const jp_kv *kv, size_t n, const char *key)
{
    const char *v = NULL;
    for (size_t i = 0; i < n; i++)
        if (kv[i].key && kv[i].value && strcmp(kv[i].key, key) == 0)
            v = kv[i].value; /* the last one wins, as in a YAML map */
    return v;
}

bool jp_policy_kinds_parse(const char *s, uint32_t *mask, char *msg, size_t msglen)
{
    uint32_t m = 0;
    const char *p = s;
    while (*p) {
        while (*p == ' ' || *p == ',')
            p++;
        if (!*p)
            break;
        size_t n = strcspn(p, ", ");
        char word[16];
        jp_kind k;
        if (n >= sizeof word || (memcpy(word, p, n), word[n] = '\0', !jp_kind_parse(word, &k))) {
            snprintf(msg, msglen, "unknown event '%.*s' (use %s)", (int)(n > 40 ? 40 : n), p,
                     jp_kind_list());
            return false;
        }
        m |= 1u << k;
        p += n;
    }
    if (!m) {
        snprintf(msg, msglen, "empty event list (use %s)", jp_kind_list());
        return false;
    }
    *mask = m;
    return true;
}

static void set_invalid(jp_policy *out, const char *key, const char *value, const char *why)
{
    if (out->reason && strcmp(out->reason, JP_REASON_INVALID) == 0)
        return; /* keep the first complaint */
    out->reason = JP_REASON_INVALID;
    snprintf(out->message, sizeof out->message, "%s: invalid value '%.60s': %s", key, value, why);
}

/* Parses the optional knobs; any failure marks the policy invalid. */
static void eval_knobs(const jp_kv *kv, size_t n, const jp_policy_defaults *d, jp_policy *out)
{
    const char *v;
    char why[160];
    if ((v = kv_get(kv, n, JP_ANN_EVENTS)) &&
        !jp_policy_kinds_parse(v, &out->kinds, why, sizeof why))
        set_invalid(out, JP_ANN_EVENTS, v, why);
    if ((v = kv_get(kv, n, JP_ANN_DELAY))) {
        int64_t ns;
        if (jp_duration_parse(v, &ns, NULL) != JP_OK || ns < 0)
            set_invalid(out, JP_ANN_DELAY, v, "expected a duration such as 30s or 2m");
        else if (ns > AGENT_DELAY_MAX_NS)
            set_invalid(out, JP_ANN_DELAY, v, "longer than 24h");
        else
            out->startup_delay_ns = ns;
    }
    if ((v = kv_get(kv, n, JP_ANN_HEAP))) {
        int64_t ns;
        if (jp_duration_parse(v, &ns, NULL) != JP_OK || ns <= 0)
            set_invalid(out, JP_ANN_HEAP, v, "expected a duration such as 10m");
        else if (ns < d->heap_min_ns)
            set_invalid(out, JP_ANN_HEAP, v,
                        "shorter than the agent's --heap-min-interval (each histogram pauses the "
                        "JVM for a full GC)");
        else if (ns > JP_HEAP_MAX_NS)
            set_invalid(out, JP_ANN_HEAP, v, "longer than 24h");
        else if (out->mode == JP_POLICY_TEMPORARY)
            out->heap_every_ns = ns;
        else
            out->heap_outside = true;
    }
    if ((v = kv_get(kv, n, JP_ANN_THREADS))) {
        if (strcmp(v, "off") == 0)
            out->threads = JP_THREADS_OFF;
        else if (strcmp(v, "low") == 0)
            out->threads = JP_THREADS_LOW;
        else if (strcmp(v, "high") == 0)
            out->threads = JP_THREADS_HIGH;
        else
            set_invalid(out, JP_ANN_THREADS, v, "expected off, low or high");
    }
}

void jp_policy_eval(const jp_kv *kv, size_t n, int64_t now_ns, const jp_policy_defaults *d,
                    jp_policy *out)
{
    jp_policy_defaults defs;
    if (!d) {
        jp_policy_defaults_init(&defs);
        d = &defs;
    }
    memset(out, 0, sizeof *out);
    out->kinds = d->kinds;
    out->startup_delay_ns = d->startup_delay_ns;

    const char *prof = kv_get(kv, n, JP_ANN_PROFILE);
    if (prof && strcmp(prof, "disabled") == 0) {
        out->mode = JP_POLICY_DISABLED;
        out->reason = JP_REASON_DISABLED;
        snprintf(out->message, sizeof out->message, "%s is disabled", JP_ANN_PROFILE);
        return;
    }
    bool continuous = prof && strcmp(prof, "continuous") == 0;
    if (prof && !continuous)
        set_invalid(out, JP_ANN_PROFILE, prof, "expected continuous or disabled");

    const char *until = kv_get(kv, n, JP_ANN_UNTIL);
    bool window_open = false, window_expired = false;
    if (until) {
        int64_t t;
        if (jp_rfc3339_parse(until, &t, NULL) != JP_OK)
            set_invalid(out, JP_ANN_UNTIL, until, "expected an RFC 3339 time");
        else if (t - now_ns > AGENT_UNTIL_MAX_NS)
            set_invalid(out, JP_ANN_UNTIL, until, "more than 31 days ahead");
        else {
            out->until_ns = t;
            window_open = now_ns < t;
            window_expired = !window_open;
        }
    }
    out->mode = window_open  ? JP_POLICY_TEMPORARY
                : continuous ? JP_POLICY_CONTINUOUS
                             : JP_POLICY_OFF;
    out->threads = out->mode == JP_POLICY_TEMPORARY ? JP_THREADS_HIGH : JP_THREADS_LOW;
    eval_knobs(kv, n, d, out);
    /* the old-object sampler comes with allocation profiling (a few hundred
     * events a window at most): what is allocated, and what of it stays */
    if (out->kinds & (1u << JP_KIND_ALLOC))
        out->kinds |= 1u << JP_KIND_OLD;
    if (out->reason) /* invalid_annotation */
        return;
    if (out->mode == JP_POLICY_OFF) {
        if (window_expired) {
            char when[40];
            jp_rfc3339_format(out->until_ns, when, sizeof when);
            out->reason = JP_REASON_EXPIRED;
            snprintf(out->message, sizeof out->message, "temporary window ended at %s", when);
        } else {
            out->reason = JP_REASON_NOT_ENABLED;
            snprintf(out->message, sizeof out->message,
                     "profiling is off unless asked for (%s or %s)", JP_ANN_PROFILE, JP_ANN_UNTIL);
        }
        return;
    }
    out->profile = true;
}

int64_t jp_policy_next_change(const jp_policy *p, int64_t now_ns)
{
    return p->mode == JP_POLICY_TEMPORARY && p->until_ns > now_ns ? p->until_ns : 0;
}
