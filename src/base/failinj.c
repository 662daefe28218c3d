#include "base/failinj.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

atomic_long jp_fail_at_ = -1;

static pthread_mutex_t fail_mu = PTHREAD_MUTEX_INITIALIZER;
static long fail_calls;
static bool fail_fired;
static char fail_site[32];

static void fail_from_env(void)
{
    const char *at = getenv("JPROF_FAIL_AT"), *site = getenv("JPROF_FAIL_SITE");
    long n = 0;
    if (at && *at) {
        char *end;
        n = strtol(at, &end, 10);
        if (*end || n < 0)
            n = 0;
    }
    pthread_mutex_lock(&fail_mu);
    if (atomic_load(&jp_fail_at_) == -1) {
        fail_calls = 0;
        fail_fired = false;
        strncpy(fail_site, site ? site : "", sizeof fail_site - 1);
        atomic_store(&jp_fail_at_, n);
    }
    pthread_mutex_unlock(&fail_mu);
}

bool jp_fail_inject_slow(const char *site)
{
    if (atomic_load(&jp_fail_at_) == -1)
        fail_from_env();
    long at = atomic_load(&jp_fail_at_);
    if (at <= 0)
        return false;
    bool fail = false;
    pthread_mutex_lock(&fail_mu);
    if (!fail_site[0] || strncmp(site, fail_site, strlen(fail_site)) == 0) {
        fail_calls++;
        if (fail_calls == at) {
            fail = true;
            fail_fired = true;
        }
    }
    pthread_mutex_unlock(&fail_mu);
    return fail;
}

void jp_fail_set(long n, const char *site)
{
    pthread_mutex_lock(&fail_mu);
    fail_calls = 0;
    fail_fired = false;
    strncpy(fail_site, site ? site : "", sizeof fail_site - 1);
    fail_site[sizeof fail_site - 1] = '\0';
    atomic_store(&jp_fail_at_, n > 0 ? n : 0);
    pthread_mutex_unlock(&fail_mu);
}

long jp_fail_calls(void)
{
    pthread_mutex_lock(&fail_mu);
    long n = fail_calls;
    pthread_mutex_unlock(&fail_mu);
    return n;
}

bool jp_fail_fired(void)
{
    pthread_mutex_lock(&fail_mu);
    bool f = fail_fired;
    pthread_mutex_unlock(&fail_mu);
    return f;
}
