#include "jvm/cleanup.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct slot {
    int handle; /* 0 = free */
    jvm_cleanup_fn fn;
    void *arg;
    char path[JVM_CLEANUP_PATH_MAX]; /* file slots: fn == NULL */
} slot;

static slot slots[JVM_CLEANUP_SLOTS];
static int next_handle = 1;

static int put(jvm_cleanup_fn fn, void *arg, const char *path)
{
    for (int i = 0; i < JVM_CLEANUP_SLOTS; i++) {
        if (slots[i].handle)
            continue;
        if (path && (size_t)snprintf(slots[i].path, sizeof slots[i].path, "%s", path) >=
                        sizeof slots[i].path)
            return 0;
        if (!path)
            slots[i].path[0] = '\0';
        slots[i].fn = fn;
        slots[i].arg = arg;
        if (next_handle <= 0)
            next_handle = 1;
        slots[i].handle = next_handle++;
        return slots[i].handle;
    }
    return 0;
}

int jvm_cleanup_register(jvm_cleanup_fn fn, void *arg)
{
    return fn ? put(fn, arg, NULL) : 0;
}

int jvm_cleanup_register_file(const char *path)
{
    return path && *path ? put(NULL, NULL, path) : 0;
}

void jvm_cleanup_unregister(int handle)
{
    if (handle <= 0)
        return;
    for (int i = 0; i < JVM_CLEANUP_SLOTS; i++)
        if (slots[i].handle == handle)
            slots[i].handle = 0;
}

void jvm_cleanup_run_all(void)
{
    for (;;) {
        int newest = -1;
        for (int i = 0; i < JVM_CLEANUP_SLOTS; i++)
            if (slots[i].handle && (newest < 0 || slots[i].handle > slots[newest].handle))
                newest = i;
        if (newest < 0)
            return;
        slot s = slots[newest];
        slots[newest].handle = 0; /* at most once, even if the action re-enters */
        if (s.fn)
            s.fn(s.arg);
        else
            unlink(s.path);
    }
}

void jvm_cleanup_unlink_files(void)
{
    for (int i = 0; i < JVM_CLEANUP_SLOTS; i++)
        if (slots[i].handle && !slots[i].fn) {
            unlink(slots[i].path);
            slots[i].handle = 0;
        }
}

int jvm_cleanup_pending(void)
{
    int n = 0;
    for (int i = 0; i < JVM_CLEANUP_SLOTS; i++)
        n += slots[i].handle != 0;
    return n;
}
